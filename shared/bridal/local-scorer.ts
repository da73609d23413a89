import type { InputImage } from '../engine/types.ts'
import { decodeImage, ImageDecodeError, type RgbaImage } from '../images/codecs/index.ts'
import { extractGarment } from '../engine/local/garment.ts'
import { analyseShopper, floorRowsIn, shopperPixels, type ShopperAnalysis } from '../engine/local/index.ts'
import type { BodyLayout } from '../engine/local/person.ts'
import { resizeArea } from '../images/resize.ts'
import { decodeUpright } from '../images/upright.ts'
import type { ScoreOutcome, TrainScorer } from './ports.ts'

/** Scoring compares silhouettes, so it runs on small copies of both images. */
const ANALYSIS_SIDE = 320
/** Summed RGB difference above which a pixel counts as changed by the try-on (JPEG noise stays below it). */
const CHANGED = 24
/** Gaps this narrow inside a run of fabric (a share of the shoulder width) are lace, texture or noise, not an opening. */
const GAP = 0.15
/** How far past the floor line a well-rendered train reaches, as a fraction of the wearer's height. */
const TRAIN_REACH = 0.15
/** Less floor than this below the feet (a share of the wearer's height) leaves nothing to measure a train on. */
const MIN_FLOOR_ROOM = 0.02
/** Share of the legs, from the knees to the ankles, the gown must cover for its train to be judged at all. */
const MIN_LEG_COVER = 0.6

/** What the scorer measured, each in [0, 1]; the score combines them. */
export interface TrainMeasures {
  /** Rows from the knees to the ankles where the skirt is unbroken: the train grows out of the skirt. */
  continuity: number
  /** Rows from the floor line to where a train should end that carry fabric at least a shoulder width wide. */
  coverage: number
  /** The train's widest point against twice the shoulder width. */
  spread: number
}

export function combineMeasures(m: TrainMeasures): number {
  return Math.round(m.continuity * (0.55 * m.coverage + 0.45 * m.spread) * 1000) / 1000
}

export type Rgb = [number, number, number]

/** Why the scorer cannot judge a result: each is a precondition of its measurement, checked before it. */
export type Unmeasurable = 'framing' | 'no-body' | 'no-feet' | 'no-floor' | 'legs-uncovered'

const UNMEASURABLE: Record<Unmeasurable, string> = {
  framing: 'the result is framed differently from the shopper photo',
  'no-body': 'no person was found in the shopper photo',
  'no-feet': 'the feet are not in the shopper photo',
  'no-floor': 'there is no floor below the feet in the shopper photo',
  'legs-uncovered': 'the garment does not cover the legs in the result',
}

/**
 * The embedded train scorer: finds where the wearer stands in the shopper photo, then measures on the
 * generated image the fabric the try-on laid on the floor past the feet. It only scores what it can see:
 * a result framed unlike the photo, a photo without a person, feet or floor below them, or a result whose
 * gown does not cover the legs are `unavailable` (trainScore null), never a confident 0 or 1.
 */
export function createLocalTrainScorer(): TrainScorer {
  return {
    name: 'local',
    async score({ result, person, garment, decodeBudget: budget }): Promise<ScoreOutcome> {
      let generated: RgbaImage
      let original: RgbaImage
      let fabric: Rgb
      let shopper: ShopperAnalysis
      try {
        // A provider's result has no header we checked: the decoder's own pixel limit is what bounds it.
        const decoded = decodeImage(result.bytes, formatOf(result.contentType), { minLongSide: ANALYSIS_SIDE, budget })
        if (Math.abs(decoded.width / decoded.height - person.width / person.height) > 0.02 * (person.width / person.height)) {
          return { kind: 'unavailable', reason: UNMEASURABLE.framing }
        }
        const photo = shopperPixels(person, undefined, budget)
        shopper = analyseShopper(photo, floorRowsIn(person, photo.height))
        original = shopper.small
        generated = toSize(decoded, original.width, original.height)
        fabric = meanColour(extractGarment(decodeUpright(garment, { side: 256, budget })).image)
      } catch (error) {
        if (error instanceof ImageDecodeError)
          return { kind: 'unavailable', reason: `an image could not be decoded for scoring: ${error.message}` }
        throw error
      }
      const measured = measureTrain(generated, original, fabric, shopper.body)
      if ('unmeasurable' in measured) return { kind: 'unavailable', reason: UNMEASURABLE[measured.unmeasurable] }
      return { kind: 'scored', score: combineMeasures(measured) }
    },
  }
}

export function measureTrain(
  generated: RgbaImage,
  original: RgbaImage,
  fabric: Rgb,
  body: BodyLayout,
): TrainMeasures | { unmeasurable: Unmeasurable } {
  if (!body.found) return { unmeasurable: 'no-body' }
  if (!body.feetVisible) return { unmeasurable: 'no-feet' }
  if (original.height - 1 - body.floorY < MIN_FLOOR_ROOM * body.figureHeight) return { unmeasurable: 'no-floor' }
  // On the body, fabric is judged by colour alone (a gown of the legs' own colour changes them little); on
  // the floor it must also have changed the photo, or the floor itself would pass for a train.
  const onBody = fabricTest(generated, original, fabric, false)
  if (legCover(body, generated.width, onBody) < MIN_LEG_COVER) return { unmeasurable: 'legs-uncovered' }
  const widthAt = fabricRunWidths(generated.width, fabricTest(generated, original, fabric, true), body)
  const skirtWidthAt = fabricRunWidths(generated.width, onBody, body)
  // Arms held out or on the hips widen the measured shoulders; a figure's shoulders are about a quarter of its height.
  const shoulder = Math.max(1, Math.min(body.shoulderWidth, 0.26 * body.figureHeight))

  let skirtRows = 0
  let unbroken = 0
  for (let y = Math.ceil(body.kneeY); y < Math.min(generated.height, body.ankleY); y++) {
    skirtRows++
    if (skirtWidthAt(y) >= 0.5 * shoulder) unbroken++
  }
  const continuity = skirtRows > 0 ? unbroken / Math.max(skirtRows, (body.ankleY - body.kneeY) * 0.5) : 0

  // The train is what lies past the floor line (a floor-length skirt is wide at the ankles too), judged
  // within the frame: a photo with little floor is not asked for fabric past its edge.
  const trainFrom = body.floorY + 0.01 * body.figureHeight
  const reachEnd = Math.min(generated.height, body.floorY + TRAIN_REACH * body.figureHeight)
  const expectedRows = Math.max(1, reachEnd - trainFrom)
  let covered = 0
  let widest = 0
  for (let y = Math.max(0, Math.ceil(trainFrom)); y < reachEnd; y++) {
    const width = widthAt(y)
    widest = Math.max(widest, width)
    if (width >= shoulder) covered++
  }
  return {
    continuity: Math.min(1, continuity),
    coverage: Math.min(1, covered / expectedRows),
    spread: Math.min(1, widest / (2 * shoulder)),
  }
}

/**
 * A pixel shows the gown's fabric when the try-on changed it and its colour is the gown's, allowing for the
 * shading a train lying on a floor takes on (darker folds, a shaded far end): so a white train shows on a
 * light floor, and a shadow, a seam of the photo or the shopper's own clothes do not.
 */
function fabricTest(generated: RgbaImage, original: RgbaImage, fabric: Rgb, mustChange: boolean): (x: number, y: number) => boolean {
  const { width } = generated
  const a = generated.data
  const b = original.data
  const fabricLuma = luma(fabric[0], fabric[1], fabric[2])
  return (x, y) => {
    const i = (y * width + x) * 4
    if (mustChange && Math.abs(a[i] - b[i]) + Math.abs(a[i + 1] - b[i + 1]) + Math.abs(a[i + 2] - b[i + 2]) <= CHANGED) return false
    const l = luma(a[i], a[i + 1], a[i + 2])
    if (l < 0.55 * fabricLuma || l > Math.min(255, 1.15 * fabricLuma + 4)) return false
    const k = fabricLuma / Math.max(1, l)
    return Math.abs(a[i] * k - fabric[0]) + Math.abs(a[i + 1] * k - fabric[1]) + Math.abs(a[i + 2] * k - fabric[2]) < 45
  }
}

/** Share of the legs' area, from the knees to the ankles, that shows the gown's fabric in the result. */
function legCover(body: BodyLayout, width: number, isFabric: (x: number, y: number) => boolean): number {
  let hits = 0
  let count = 0
  for (let y = Math.ceil(body.kneeY); y < Math.floor(body.ankleY); y++) {
    const from = Math.max(0, Math.round(body.legs.left[y]))
    const to = Math.min(width - 1, Math.round(body.legs.right[y]))
    for (let x = from; x <= to; x++) {
      count++
      if (isFabric(x, y)) hits++
    }
  }
  return count ? hits / count : 0
}

/** Width of the run of fabric across the wearer's centre line on a row (0 where there is none). */
function fabricRunWidths(width: number, isFabric: (x: number, y: number) => boolean, body: BodyLayout): (y: number) => number {
  const reach = Math.max(1, Math.round(body.shoulderWidth / 2))
  const gapLimit = Math.max(2, Math.round(GAP * body.shoulderWidth))
  const centre = Math.round(body.centreX)
  return (y) => {
    // Start from the fabric pixel nearest the centre line, within half a shoulder width of it.
    let seed = -1
    for (let d = 0; d <= reach && seed < 0; d++) {
      if (centre - d >= 0 && centre - d < width && isFabric(centre - d, y)) seed = centre - d
      else if (centre + d < width && centre + d >= 0 && isFabric(centre + d, y)) seed = centre + d
    }
    if (seed < 0) return 0
    const extend = (from: number, step: number) => {
      let edge = from
      let gap = 0
      for (let x = from + step; x >= 0 && x < width; x += step) {
        if (isFabric(x, y)) {
          edge = x
          gap = 0
        } else if (++gap > gapLimit) break
      }
      return edge
    }
    return extend(seed, 1) - extend(seed, -1) + 1
  }
}

function luma(r: number, g: number, b: number): number {
  return 0.299 * r + 0.587 * g + 0.114 * b
}

/** The garment's mean colour, weighted by its alpha. */
function meanColour(image: RgbaImage): Rgb {
  const sum = [0, 0, 0]
  let weight = 0
  for (let i = 0; i < image.data.length; i += 4) {
    const a = image.data[i + 3]
    for (let c = 0; c < 3; c++) sum[c] += image.data[i + c] * a
    weight += a
  }
  return weight > 0 ? [sum[0] / weight, sum[1] / weight, sum[2] / weight] : [128, 128, 128]
}

function toSize(image: RgbaImage, width: number, height: number): RgbaImage {
  if (image.width === width && image.height === height) return image
  if (image.width >= width && image.height >= height) return resizeArea(image, width, height)
  const data = new Uint8Array(width * height * 4)
  for (let y = 0; y < height; y++) {
    const sy = Math.min(image.height - 1, Math.floor(((y + 0.5) * image.height) / height))
    for (let x = 0; x < width; x++) {
      const sx = Math.min(image.width - 1, Math.floor(((x + 0.5) * image.width) / width))
      data.set(image.data.subarray((sy * image.width + sx) * 4, (sy * image.width + sx) * 4 + 4), (y * width + x) * 4)
    }
  }
  return { width, height, data }
}

function formatOf(contentType: string): InputImage['format'] {
  return contentType === 'image/png' ? 'png' : contentType === 'image/webp' ? 'webp' : 'jpeg'
}
