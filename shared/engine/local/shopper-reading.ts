import type { RgbaImage } from '../../images/codecs/raster.ts'
import { downscaleToFit } from '../../images/resize.ts'
import { legsRunOn, shoesBelow } from './cut-legs.ts'
import { analyseBody, defaultLayout, staturedByShoulders, type BodyLayout } from './person.ts'
import { isHeadPart, looksLikePerson } from './presence.ts'
import { closeVertically, segmentForeground, type Mask, type Segmentation } from './segmentation.ts'
import { readHem } from './waist.ts'

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
 *
 * A silhouette cut by short runs of empty rows is read with them bridged (bridgedStripes): first when it has STRIPED runs
 * or more (a striped top, whose bars the other readings measure as a jagged torso), else when no person came out.
 */
function read(photo: RgbaImage, segmentation: Segmentation): ShopperReading {
  const stacked = segmentation.stacked ?? segmentation.mask
  const stripes = stripeRows(stacked)
  const bridged = () => {
    const mask = stripes && bridgedStripes(stacked, stripes.longest)
    return mask ? readFigure(photo, { ...segmentation, mask, coverage: coverageOf(mask) }) : undefined
  }
  const striped = stripes !== undefined && stripes.runs >= STRIPED
  if (striped) {
    const whole = bridged()
    if (whole?.person) return whole.reading
  }
  const first = readFigure(photo, segmentation)
  let rest = segmentation
  for (let k = 0; k < PARTS_ABOVE && !first.person; k++) {
    const cut = withoutTopPart(rest.mask)
    if (!cut || isHeadPart(photo, rest.mask, cut.part)) break
    rest = { ...rest, mask: cut.mask, coverage: coverageOf(cut.mask) }
    const below = readFigure(photo, rest)
    if (below.person) return below.reading
  }
  if (!first.person && !striped) {
    const whole = bridged()
    if (whole?.person) return whole.reading
  }
  return first.reading
}

function readFigure(photo: RgbaImage, seen: Segmentation): { reading: ShopperReading; person: boolean } {
  let segmentation = seen
  let silhouette = analyseBody(seen.mask, seen.coverage)
  // Legs whose last rows a band of floor took are carried to the frame's edge, and the figure read cut there, as tall as
  // its shoulders make it: the gap the frame leaves between two cut legs is no crotch, and legs the band left only
  // their outlines of end in rows too narrow for the feet's test (flat 3040).
  const carried = legsRunOn(photo, seen.mask, silhouette)
  if (carried) {
    const coverage = coverageOf(carried)
    const cut = analyseBody(carried, coverage)
    if (cut.found) {
      segmentation = { ...seen, mask: carried, coverage }
      silhouette = staturedByShoulders({ ...cut, feetVisible: false })
    }
  } else {
    // Dark legs lost on a dark floor between a skirt's hem and shoes of another colour: the figure stands on the shoes.
    const shod = shoesBelow(photo, seen.mask, silhouette)
    if (shod) {
      const coverage = coverageOf(shod)
      const standing = analyseBody(shod, coverage)
      if (standing.found && standing.feetVisible) {
        segmentation = { ...seen, mask: shod, coverage }
        silhouette = standing
      }
    }
  }
  const person = silhouette.found && looksLikePerson(photo, segmentation.mask, silhouette)
  if (person) silhouette = readHem(photo, silhouette, segmentation.mask)
  return { reading: { segmentation, silhouette, body: person ? silhouette : defaultLayout(photo.width, photo.height) }, person }
}

/** Longest run of empty rows inside a silhouette read as a stripe of the backdrop's colour: a share of its rows. */
const STRIPE_GAP = 0.03
/** Runs of such rows from which a silhouette is read as striped, bridged before anything else. */
const STRIPED = 2
/** Where a top's stripes lie, as shares of the silhouette's rows from its top: below the head, above the knees. */
const STRIPES_ZONE: [number, number] = [0.08, 0.7]

/**
 * The runs of empty rows within a silhouette (between its first and last rows) no longer than STRIPE_GAP of its rows:
 * how many, and that longest length. Undefined when there are none, or when any run of empty rows is longer or lies
 * outside STRIPES_ZONE: a top's stripes cut the figure between its head and its legs, a texture's pieces anywhere (and
 * a head standing alone above a white top, belowLoneHead's, is parted from the rest by more). A striped top
 * in the backdrop's colour leaves a run between each two bars (studio 8708); a figure cut once (a white belt) one.
 */
function stripeRows({ width, height, data }: Mask): { runs: number; longest: number } | undefined {
  const empty = (y: number) => data.subarray(y * width, (y + 1) * width).every((v) => v === 0)
  let top = 0
  while (top < height && empty(top)) top++
  let last = height - 1
  while (last > top && empty(last)) last--
  const rows = last - top + 1
  const longest = Math.max(1, Math.round(STRIPE_GAP * rows))
  let runs = 0
  for (let y = top + 1; y < last; y++) {
    if (!empty(y)) continue
    let end = y
    while (end + 1 < last && empty(end + 1)) end++
    if (end - y + 1 > longest) return undefined
    if (y - top < STRIPES_ZONE[0] * rows || end - top > STRIPES_ZONE[1] * rows) return undefined
    runs++
    y = end
  }
  return runs > 0 ? { runs, longest } : undefined
}

/**
 * A top striped in the backdrop's colour (white bars on a white sweep) cuts the silhouette into bars, and no figure, or
 * a jagged one, reads from them (studio 8708; the bars wider than the legs are taken back first, segmentation.ts
 * keepStacked: studio 7413). The mask with every column's runs of backdrop no longer than `longest`, between subject
 * above and below, filled; undefined when there is none.
 */
function bridgedStripes({ width, height, data }: Mask, longest: number): Mask | undefined {
  const out = Uint8Array.from(data)
  return closeVertically(out, width, height, longest) > 0 ? { width, height, data: out } : undefined
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
