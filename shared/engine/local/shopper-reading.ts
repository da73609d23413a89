import type { RgbaImage } from '../../images/codecs/raster.ts'
import { downscaleToFit } from '../../images/resize.ts'
import { legsRunOn, shoesBelow } from './cut-legs.ts'
import { analyseBody, defaultLayout, staturedByShoulders, type BodyLayout } from './person.ts'
import { isHeadPart, looksLikePerson } from './presence.ts'
import { closeVertically, maskBounds, segmentForeground, type Mask, type Segmentation } from './segmentation.ts'
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
  const unblocked = first.person ? undefined : withoutBlockBesideHead(segmentation.mask)
  if (unblocked) {
    const beside = readFigure(photo, { ...segmentation, mask: unblocked, coverage: coverageOf(unblocked) })
    if (beside.person) return beside.reading
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

/** The rows from the silhouette's top, as a share of its rows, where a block beside the head may begin: the head and neck. */
const BESIDE_HEAD_ZONE = 0.15
/** Share of a block's columns a row must cover to be a row of it: an object on the wall is solid; an arm raised is not as wide. */
const BLOCK_FILL = 0.9
/**
 * The smallest block taken out, as shares of the silhouette's rows, tall and wide: a picture's frame is 0.18-0.2 tall
 * and 0.14 wide on those photos; a lock of hair either side of a face lost against a white sweep, 0.05 by 0.05 (studio
 * 14178, whose locks taken out left a lock for the head and trousers went on the chest).
 */
const BLOCK_MIN_ROWS = 0.1
const BLOCK_MIN_WIDTH = 0.06
/**
 * How far down the silhouette's rows a block may reach: an object on the wall beside the head ends above the hips (a
 * frame 0.1-0.3 of the figure's height). Half a garment laid flat, one shoulder beside the neckline, runs to the hem.
 */
const BLOCK_LOWEST = 0.45
/**
 * How far below the silhouette's top a block begins, at least, as a share of its rows: the head is the figure's top. A
 * garment laid flat has its shoulders level, both at its top on either side of the neckline (bench:person 20032).
 */
const BLOCK_BELOW_TOP = 0.03

/**
 * An object on the wall beside the head (a picture's frame) is subject, and where the arm or a hand touches it, one part
 * with the figure: the shoulders then read out to its far side, or the centre line runs through it, and no person comes
 * out (flat 14965, 15185, 15205, 15980 of the sets drawn 2026-11-30, a frame touching a hand or an arm). Apart
 * from the head's run on the rows of the head and neck (the silhouette's first rows), another run is no part of a standing
 * person: its columns, on every row from there down that it fills nearly whole (BLOCK_FILL), are taken out, and the arm
 * beside them is kept. Undefined when there is no such block. Tried only when no person came out otherwise.
 */
export function withoutBlockBesideHead(mask: Mask): Mask | undefined {
  const { width, height, data } = mask
  const bounds = maskBounds(mask)
  if (!bounds) return undefined
  const top = bounds.y0
  const last = bounds.y1 - 1
  const rows = last - top
  if (rows < 10) return undefined
  // The figure's centre line: the mean column of its pixels, which its body outweighs an object beside the head with.
  let sumX = 0
  let n = 0
  for (let y = top; y <= last; y++) for (let x = 0, i = y * width; x < width; x++, i++) if (data[i]) (sumX += x), n++
  const cx = sumX / n
  const out = Uint8Array.from(data)
  const sides = new Set<boolean>()
  for (let y = top; y <= top + BESIDE_HEAD_ZONE * rows; y++) {
    const runs = runsOf(data, width, y)
    const head = nearestRun(runs, cx)
    for (const [a, b] of runs) {
      // The head's run is the one across the centre line, or nearest to it; a run of a block taken out already is past.
      if (b - a + 1 < Math.max(3, BLOCK_MIN_WIDTH * rows) || a === head?.[0] || !out[y * width + a] || !out[y * width + b]) continue
      const filled = (row: number) => {
        let k = 0
        for (let x = a; x <= b; x++) k += data[row * width + x]
        return k >= BLOCK_FILL * (b - a + 1)
      }
      let from = y
      while (from > top && filled(from - 1)) from--
      let to = y
      while (to < last && filled(to + 1)) to++
      if (from - top < BLOCK_BELOW_TOP * rows || to - from + 1 < BLOCK_MIN_ROWS * rows || to - top > BLOCK_LOWEST * rows) continue
      if (!squareOuterSide(data, width, [a, b], [from, to], a > cx)) continue
      for (let row = from; row <= to; row++) out.fill(0, row * width + a, row * width + b + 1)
      sides.add(a > cx)
    }
  }
  // Blocks on both sides of the head are its own: hair falling either side of a face the backdrop took.
  return sides.size === 1 ? { width, height, data: out } : undefined
}

/** Share of a block's rows on which its outer side may run on past its columns (its outline's antialiasing, a corner). */
const OUTER_RUN_ON = 0.2

/**
 * Whether a block's side away from the head is straight: on most of its rows the run through its columns ends there, or
 * at the frame's side. An arm may join it on the side facing the head; a garment's shoulder, sloping out to the sleeve,
 * widens away from it.
 */
function squareOuterSide(data: Uint8Array, width: number, [a, b]: [number, number], [from, to]: [number, number], right: boolean): boolean {
  const margin = Math.max(2, Math.round(0.1 * (b - a + 1)))
  let past = 0
  for (let y = from; y <= to; y++) {
    const row = y * width
    if (right) {
      let end = b
      while (end + 1 < width && data[row + end + 1]) end++
      if (end > b + margin && end < width - 1) past++
    } else {
      let start = a
      while (start > 0 && data[row + start - 1]) start--
      if (start < a - margin && start > 0) past++
    }
  }
  return past <= OUTER_RUN_ON * (to - from + 1)
}

/** The runs of set pixels along a row, as [first, last] columns. */
function runsOf(data: Uint8Array, width: number, y: number): [number, number][] {
  const runs: [number, number][] = []
  for (let x = 0; x < width; x++) {
    if (!data[y * width + x]) continue
    const a = x
    while (x + 1 < width && data[y * width + x + 1]) x++
    runs.push([a, x])
  }
  return runs
}

/** The run across column `cx`, or the nearest to it. */
function nearestRun(runs: [number, number][], cx: number): [number, number] | undefined {
  let best: [number, number] | undefined
  let bestDistance = Infinity
  for (const run of runs) {
    const distance = Math.max(0, run[0] - cx, cx - run[1])
    if (distance < bestDistance) (best = run), (bestDistance = distance)
  }
  return best
}
