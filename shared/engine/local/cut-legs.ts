import type { RgbaImage } from '../../images/codecs/raster.ts'
import { median } from '../../median.ts'
import { SHOULDER_SHARE, type BodyLayout } from './person.ts'
import type { Mask } from './segmentation.ts'

/**
 * Rows between the legs' end and the frame's bottom edge, as a share of the frame, within which legs may run on. A band
 * of floor 0.08 and 0.15 of the frame tall took the legs of photo 16062 and dim 16514 (2026-12-01, at 0.07 then): read
 * standing on its top, gowns went on down to it only, above the legs in the band, and were charged.
 */
const RUN_ON_GAP = 0.16
/** The stature the shoulders give over the one the legs' end gives, from which the legs' end is not the feet. */
const SHOULDERS_TALLER = 1.17
/** Share of the pixels below the legs that must be nearer the legs' colours than the floor's beside them. */
const LIKE_THE_LEGS = 0.5
/** Pixels below the legs compared, at most (spread evenly across the legs' columns). */
const BELOW_SAMPLES = 1500
/** Pixels of the floor beside the legs each is compared with on its row, at most (spread evenly). */
const FLOOR_SAMPLES = 48
/** A foot's width as a share of the stature: rows below the legs' end narrower than this are a streak, not a shadow. */
const FOOT = 0.025
/** The legs' rows whose colours the pixels below them are compared with, as a share of the frame's height. */
const LEG_ROWS = 0.05

/**
 * The silhouette with its legs carried down to the frame's bottom edge, when the legs' end a few rows above it is a
 * band of floor that took their bottom rows and not the feet (dim 7219: dark trousers on a dark skirting; flat 6140:
 * striped legs on a blue floor band); undefined otherwise. Read as feet, that end made a figure cut at the knees a
 * short full-length one, and a skirt went on at the chest. Three things must agree:
 * - the end lies within RUN_ON_GAP of the frame's edge, and nothing of the silhouette wider than a FOOT lies below it;
 * - the head-to-shoulder distance gives a figure SHOULDERS_TALLER than the end does: on 1,131 tuning photos read with
 *   their feet (seeds 1-300, 3001-3400, 6001-6300, 7001-7300), 1.19 to 1.62 for those cut at the knees, at most 1.14
 *   for the full-length ones that pass the other two tests;
 * - the pixels below the legs continue them: LIKE_THE_LEGS of them are nearer a colour of their own column of leg
 *   than any colour of the floor beside the legs on their row (stripes, a shadow, a seam all count as the legs').
 */
export function legsRunOn(photo: RgbaImage, mask: Mask, body: BodyLayout): Mask | undefined {
  const { width, height, data } = mask
  if (!body.found || !body.feetVisible || photo.width !== width || photo.height !== height) return undefined
  const end = Math.round(body.floorY)
  if (end < 0 || end >= height - 1 || height - 1 - end > RUN_ON_GAP * height) return undefined
  const stature = end - body.headTop
  if (stature <= 0 || (body.shoulderY - body.headTop) / SHOULDER_SHARE < SHOULDERS_TALLER * stature) return undefined
  // A shadow pooled round the feet runs on below the floor line (pooledShadowFloor): the legs must end the silhouette,
  // but for a streak narrower than a foot (person.ts reads the soles above such streaks too).
  const foot = Math.max(3, FOOT * stature)
  for (let y = end + 1; y < height; y++) {
    let count = 0
    for (let x = 0; x < width; x++) count += data[y * width + x]
    if (count >= foot) return undefined
  }
  const legs: number[] = []
  for (let x = 0; x < width; x++) if (data[end * width + x]) legs.push(x)
  if (legs.length === 0) return undefined
  const first = legs[0]
  const last = legs[legs.length - 1]
  const span = last - first + 1
  const pixels = photo.data
  const distance = (i: number, j: number) =>
    Math.hypot(pixels[i * 4] - pixels[j * 4], pixels[i * 4 + 1] - pixels[j * 4 + 1], pixels[i * 4 + 2] - pixels[j * 4 + 2])
  const legTop = Math.max(0, end - Math.max(3, Math.round(LEG_ROWS * height)))
  // The work is bounded whatever the photo: at most BELOW_SAMPLES pixels below the legs, each against FLOOR_SAMPLES of
  // the floor beside them on its row (a crafted figure with wide legs on a noisy floor took 23 ms a reading before).
  const columns = everyNth(legs, Math.ceil((legs.length * (height - 1 - end)) / BELOW_SAMPLES))
  let like = 0
  let compared = 0
  for (let y = end + 1; y < height; y++) {
    const beside = besideOnRow(mask, y, first, last, span)
    if (beside.length === 0) continue
    const floor = everyNth(beside, Math.ceil(beside.length / FLOOR_SAMPLES))
    for (const x of columns) {
      const here = y * width + x
      let toLeg = Number.POSITIVE_INFINITY
      for (let ly = legTop; ly <= end; ly++) if (data[ly * width + x]) toLeg = Math.min(toLeg, distance(here, ly * width + x))
      let toFloor = Number.POSITIVE_INFINITY
      for (const f of floor) toFloor = Math.min(toFloor, distance(here, f))
      compared++
      if (toLeg < toFloor) like++
    }
  }
  if (compared === 0 || like < LIKE_THE_LEGS * compared) return undefined
  const out = Uint8Array.from(data)
  for (let y = end + 1; y < height; y++) for (const x of legs) out[y * width + x] = 1
  return { width, height, data: out }
}

/** The pixels of row `y` (as indices) within `reach` either side of columns from–to that the silhouette leaves out. */
function besideOnRow({ width, data }: Mask, y: number, from: number, to: number, reach: number): number[] {
  const beside: number[] = []
  for (let x = Math.max(0, from - reach); x <= Math.min(width - 1, to + reach); x++)
    if ((x < from || x > to) && !data[y * width + x]) beside.push(y * width + x)
  return beside
}

/** Every `step`th item of a list, from its first (the list itself for a step of 1 or less). */
function everyNth<T>(items: T[], step: number): T[] {
  return step <= 1 ? items : items.filter((_, i) => i % step === 0)
}

/** Rows between the silhouette's end and the shoes below it, as a share of its stature, at least. */
const SHOES_GAP = 0.1
/** The stature the shoes may give, at most, as a multiple of the silhouette's. */
const SHOES_TALLER = 1.6
/** RGB distance from the floor beside it on its row from which a pixel is something on the floor, at least ... */
const SHOE_CONTRAST = 24
/** ... and as a multiple of the floor's own spread on that row. */
const FLOOR_SPREAD = 3
/** A shoe's height as a share of the stature, at most: a run of rows taller than this is no pair of shoes. */
const SHOE_TALL = 0.08
/** Rows of floor below the shoes, as a share of the stature, at least. */
const SOLE_MARGIN = 0.01
/**
 * Rows the frame shows below the silhouette's end, as a share of its stature, at least: room for the gap, the shoes and
 * floor below them. Tuning photos read whole measured 0.12–0.13 where the grain of a floor at the frame's edge passed
 * for shoes; those whose legs were lost on a dark floor 0.2 and more.
 */
const SHOES_ROOM = 0.16

/**
 * The silhouette with legs down to the shoes below it, when dark legs on a dark floor were lost between its end (a
 * skirt's hem) and shoes of another colour standing on the floor (dim 11104: blue shoes under dark legs; dim 6139);
 * undefined otherwise. Below the silhouette's end by SHOES_GAP of its stature (feet that end it have their shadow next
 * to them), each row's pixels under its last rows are compared with the floor beside them on that row, as wide again
 * (its median colour and spread: a floor of several tones, planks or tiles, counts as floor); the lowest run of rows
 * with a FOOT's width of pixels unlike it is the shoes, if it is no taller than a pair of shoes and floor shows below it.
 * The work is a few passes over the rows below the figure of the copy it is read on (READING_SIDES, at most 400 px).
 */
export function shoesBelow(photo: RgbaImage, mask: Mask, body: BodyLayout): Mask | undefined {
  const { width, height, data } = mask
  if (!body.found || !body.feetVisible || photo.width !== width || photo.height !== height) return undefined
  let last = height - 1
  const rowCount = (y: number) => {
    let n = 0
    for (let x = 0; x < width; x++) n += data[y * width + x]
    return n
  }
  while (last > 0 && rowCount(last) === 0) last--
  const stature = last - body.headTop
  if (stature <= 0) return undefined
  let bandFrom = width
  let bandTo = -1
  for (let y = Math.max(0, last - Math.round(0.05 * stature)); y <= last; y++)
    for (let x = 0; x < width; x++)
      if (data[y * width + x]) {
        bandFrom = Math.min(bandFrom, x)
        bandTo = Math.max(bandTo, x)
      }
  const span = bandTo - bandFrom + 1
  const from = last + Math.ceil(SHOES_GAP * stature)
  const to = Math.min(height - 1, Math.floor(body.headTop + SHOES_TALLER * stature))
  if (span < 3 || from >= to || height - 1 - last < SHOES_ROOM * stature) return undefined
  const pixels = photo.data
  const marked = new Uint8Array(width * height)
  const counts = new Int32Array(height)
  const half = Math.ceil(span / 2)
  for (let y = from; y <= to; y++) {
    const floor = besideOnRow(mask, y, bandFrom, bandTo, half)
    if (floor.length < 4) continue
    const colour = [0, 1, 2].map((c) => median(floor.map((i) => pixels[i * 4 + c])))
    const away = (i: number) => Math.hypot(pixels[i * 4] - colour[0], pixels[i * 4 + 1] - colour[1], pixels[i * 4 + 2] - colour[2])
    const spread = median(floor.map(away))
    const limit = Math.max(SHOE_CONTRAST, FLOOR_SPREAD * spread)
    for (let x = bandFrom; x <= bandTo; x++)
      if (away(y * width + x) > limit) {
        marked[y * width + x] = 1
        counts[y]++
      }
  }
  const foot = Math.max(2, FOOT * stature)
  let sole = to
  while (sole >= from && counts[sole] < foot) sole--
  // Legs the frame cuts run on to its edge: shoes stand on floor that shows below them.
  if (sole < from || sole > height - 1 - Math.max(2, SOLE_MARGIN * stature)) return undefined
  let top = sole
  while (top - 1 >= from && counts[top - 1] >= foot) top--
  if (sole - top + 1 < 2 || sole - top + 1 > SHOE_TALL * (sole - body.headTop)) return undefined
  const out = Uint8Array.from(data)
  for (let x = bandFrom; x <= bandTo; x++) {
    let shod = false
    for (let y = top; y <= sole; y++)
      if (marked[y * width + x]) {
        out[y * width + x] = 1
        shod = true
      }
    if (shod) for (let y = last + 1; y < top; y++) out[y * width + x] = 1
  }
  return { width, height, data: out }
}
