import type { RgbaImage } from '../../images/codecs/raster.ts'
import { downscaleToFit } from '../../images/resize.ts'
import { analyseBody, defaultLayout, type BodyLayout } from './person.ts'
import { isHeadPart, looksLikePerson } from './presence.ts'
import { segmentForeground, type Mask, type Segmentation } from './segmentation.ts'

/**
 * The long sides of the copies a shopper photo is read on, in turn, until one shows a person: landmarks need shape, not
 * detail. A copy of another size averages the photo otherwise: a dim face's noisy skin, a brick's mortar lines or a
 * figure's thin outline come out otherwise, and a figure lost at one size is often whole at another.
 */
export const READING_SIDES = [320, 200, 400] as const
/** The size read first, and the only one when it shows a person. */
export const READING_SIDE = READING_SIDES[0]

/** A shopper photo read: its silhouette, the landmarks read from it, and the person they show. */
export interface ShopperReading {
  segmentation: Segmentation
  /** The landmarks the silhouette shows, found or not, before the person-presence test. */
  silhouette: BodyLayout
  /** The silhouette's landmarks when they show a person (presence.ts), else the centred default (not `found`). */
  body: BodyLayout
}

/** A reading of a shopper photo, with the copy it was read on. */
export interface SizedReading extends ShopperReading {
  small: RgbaImage
}

/**
 * Reads the shopper on a copy of their photo READING_SIDE long, and when no person came out, on copies of the other
 * READING_SIDES (never larger than the photo, each size once). The first reading that shows a person is kept; none does:
 * the first reading.
 */
export function readShopperAtSizes(photo: RgbaImage): SizedReading {
  let first: SizedReading | undefined
  const tried = new Set<number>()
  for (const side of READING_SIDES) {
    const small = downscaleToFit(photo, side)
    if (tried.has(small.width)) continue
    tried.add(small.width)
    const reading = { small, ...readShopper(small) }
    if (reading.body.found && (!first || seenOn(first.small, reading.segmentation.mask))) return reading
    first ??= reading
  }
  return first as SizedReading
}

/**
 * Whether the figure a reading at another size found is a person on the first copy too: its silhouette, carried to that
 * copy by nearest pixels, has landmarks there, and the person-presence test passes on that copy's pixels. A size is
 * tried again for the mask it cuts, not for another throw of the presence test's dice (a dress form alone passed it at
 * one size of three).
 */
function seenOn(photo: RgbaImage, mask: Mask): boolean {
  const carried = nearestMask(mask, photo.width, photo.height)
  const silhouette = analyseBody(carried, coverageOf(carried))
  return silhouette.found && looksLikePerson(photo, carried, silhouette)
}

/** The share of a mask's pixels it marks. */
function coverageOf(mask: Mask): number {
  let count = 0
  for (const v of mask.data) count += v
  return count / mask.data.length
}

/** A mask resized by its nearest pixels. */
export function nearestMask(mask: Mask, width: number, height: number): Mask {
  if (mask.width === width && mask.height === height) return mask
  const data = new Uint8Array(width * height)
  for (let y = 0; y < height; y++) {
    const sy = Math.min(mask.height - 1, Math.floor(((y + 0.5) * mask.height) / height))
    for (let x = 0; x < width; x++)
      data[y * width + x] = mask.data[sy * mask.width + Math.min(mask.width - 1, Math.floor(((x + 0.5) * mask.width) / width))]
  }
  return { width, height, data }
}

/**
 * Reads where the shopper is in a small copy of their photo. A figure against a brick wall is often lost the first
 * time: bricks of other tones than the wall's edges stand out as subject and join the head or the arms. When no person
 * came out, a second reading clears such a wall by its tones (SegmentOptions.wallColours) and is kept if it shows one.
 * The engine and the quality check read a photo through here, so they read the same figure.
 */
export function readShopper(photo: RgbaImage): ShopperReading {
  const first = read(photo, segmentForeground(photo, { backdrop: 'room' }))
  if (first.body.found) return first
  const cleared = segmentForeground(photo, { backdrop: 'room', wallColours: true })
  if (!cleared.wallColoursCleared) return first
  const second = read(photo, cleared)
  return second.body.found ? second : first
}

/** How many parts above the figure, one above the other, a reading that found no person is tried without. */
const PARTS_ABOVE = 2
/** Share of the silhouette's height from its top within which such a part ends. */
const PART_ABOVE_ZONE = 0.3

/**
 * segmentation.ts keeps a part straight above the figure as its head (hair that a face of the wall's colour cut off).
 * A stain on the wall or a lamp above the head is kept the same way, and read as the head it hides the shoulders or
 * fails the head's tests: when no person came out, the silhouette is read again without the part above its first empty
 * rows, and the figure below kept if it is one. Not when that part is a head (presence.ts isHeadPart): it is the person's
 * head above a top of the backdrop's colour, and what is below it alone is a skirt read as a head (studio 8283).
 */
function read(photo: RgbaImage, segmentation: Segmentation): ShopperReading {
  const first = readFigure(photo, segmentation)
  let rest = segmentation
  for (let k = 0; k < PARTS_ABOVE && !first.person; k++) {
    const cut = withoutTopPart(rest.mask)
    if (!cut || isHeadPart(photo, rest.mask, cut.part)) break
    rest = { ...rest, mask: cut.mask, coverage: coverageOf(cut.mask) }
    const below = readFigure(photo, rest)
    if (below.person) return below.reading
  }
  return first.reading
}

function readFigure(photo: RgbaImage, segmentation: Segmentation): { reading: ShopperReading; person: boolean } {
  const silhouette = analyseBody(segmentation.mask, segmentation.coverage)
  const person = silhouette.found && looksLikePerson(photo, segmentation.mask, silhouette)
  return { reading: { segmentation, silhouette, body: person ? silhouette : defaultLayout(photo.width, photo.height) }, person }
}

/**
 * The mask without its topmost part, when empty rows near its top part it from the rest, and the rows of that part (its
 * last excluded); undefined when none do.
 */
function withoutTopPart({ width, height, data }: Mask): { mask: Mask; part: [number, number] } | undefined {
  const empty = (y: number) => data.subarray(y * width, (y + 1) * width).every((v) => v === 0)
  let top = 0
  while (top < height && empty(top)) top++
  let last = height - 1
  while (last > top && empty(last)) last--
  let gap = top
  while (gap <= last && !empty(gap)) gap++
  if (gap > top + PART_ABOVE_ZONE * (last - top)) return undefined
  const part: [number, number] = [top, gap]
  while (gap <= last && empty(gap)) gap++
  const out = Uint8Array.from(data)
  out.fill(0, 0, gap * width)
  return { mask: { width, height, data: out }, part }
}
