import type { InputImage } from '../engine/types.ts'
import { decodeImage, ImageDecodeError, type RgbaImage } from '../engine/local/codecs/index.ts'
import { extractGarment } from '../engine/local/garment.ts'
import { analyseBody, type BodyLayout } from '../engine/local/person.ts'
import { downscaleToFit, resizeArea } from '../engine/local/resize.ts'
import { segmentForeground } from '../engine/local/segmentation.ts'
import type { ScoreOutcome, TrainScorer } from './ports.ts'

/** Scoring compares silhouettes, so it runs on small copies of both images. */
const ANALYSIS_SIDE = 320
/** Summed RGB difference above which a pixel counts as changed by the try-on (JPEG noise stays below it). */
const CHANGED = 24
/** A changed pixel is fabric when it came at least this much closer to the garment's colour (summed RGB). */
const TOWARDS_GARMENT = 12
/** Gaps this narrow inside a run of changed pixels are noise, not an opening in the fabric. */
const GAP = 2
/** How far past the floor line a well-rendered train reaches, as a fraction of the wearer's height. */
const TRAIN_REACH = 0.15

/** What the scorer measured, each in [0, 1]; the score combines them. */
export interface TrainMeasures {
  /** Rows from the knees to the ankles where the skirt is unbroken: the train grows out of the skirt. */
  continuity: number
  /** Rows from the ankles to where a train should end that carry fabric at least a shoulder width wide. */
  coverage: number
  /** The train's widest point against twice the shoulder width. */
  spread: number
}

export function combineMeasures(m: TrainMeasures): number {
  return Math.round(m.continuity * (0.55 * m.coverage + 0.45 * m.spread) * 1000) / 1000
}

/**
 * The embedded train scorer: finds where the wearer stands in the shopper photo, then measures on the
 * generated image the fabric the try-on added below the feet. A photo without floor below the feet (cropped
 * at the shins, or the figure touching the bottom edge) leaves no room for a train and scores low.
 */
export function createLocalTrainScorer(): TrainScorer {
  return {
    name: 'local',
    async score({ result, person, garment }): Promise<ScoreOutcome> {
      let generated: RgbaImage
      let original: RgbaImage
      let fabric: Rgb
      try {
        generated = downscaleToFit(decodeImage(result.bytes, formatOf(result.contentType), { minLongSide: ANALYSIS_SIDE }), ANALYSIS_SIDE)
        original = toSize(decodeImage(person.bytes, person.format, { minLongSide: ANALYSIS_SIDE }), generated.width, generated.height)
        fabric = meanColour(extractGarment(downscaleToFit(decodeImage(garment.bytes, garment.format, { minLongSide: 256 }), 256)).image)
      } catch (error) {
        if (error instanceof ImageDecodeError) return { kind: 'unavailable', reason: `an image could not be decoded for scoring: ${error.message}` }
        throw error
      }
      return { kind: 'scored', score: combineMeasures(measureTrain(generated, original, fabric)) }
    },
  }
}

export type Rgb = [number, number, number]

export function measureTrain(generated: RgbaImage, original: RgbaImage, fabric: Rgb): TrainMeasures {
  const segmentation = segmentForeground(original)
  const body = analyseBody(segmentation.mask, segmentation.coverage)
  if (!body.found) return { continuity: 0, coverage: 0, spread: 0 }
  const widthAt = fabricRunWidths(generated, original, fabric, body)
  const shoulder = Math.max(1, body.shoulderWidth)

  let skirtRows = 0
  let unbroken = 0
  for (let y = Math.ceil(body.kneeY); y < Math.min(generated.height, body.ankleY); y++) {
    skirtRows++
    if (widthAt(y) >= 0.5 * shoulder) unbroken++
  }
  // Knees below the bottom edge: no skirt to see, so no continuity either.
  const continuity = skirtRows > 0 ? unbroken / Math.max(skirtRows, (body.ankleY - body.kneeY) * 0.5) : 0

  const reachEnd = body.floorY + TRAIN_REACH * body.figureHeight
  const expectedRows = Math.max(1, reachEnd - body.ankleY)
  let covered = 0
  let widest = 0
  for (let y = Math.max(0, Math.ceil(body.ankleY)); y < Math.min(generated.height, reachEnd); y++) {
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
 * Width of the run of added fabric across the wearer's centre line on a row (0 where there is none). A pixel
 * is fabric when the try-on changed it and changed it towards the garment's colour, so a white gown is still
 * found on a light floor and a shadow or a seam of the photo is not.
 */
function fabricRunWidths(generated: RgbaImage, original: RgbaImage, fabric: Rgb, body: BodyLayout): (y: number) => number {
  const { width } = generated
  const a = generated.data
  const b = original.data
  const towards = (d: Uint8Array, i: number) => Math.abs(d[i] - fabric[0]) + Math.abs(d[i + 1] - fabric[1]) + Math.abs(d[i + 2] - fabric[2])
  const changed = (x: number, y: number) => {
    const i = (y * width + x) * 4
    if (Math.abs(a[i] - b[i]) + Math.abs(a[i + 1] - b[i + 1]) + Math.abs(a[i + 2] - b[i + 2]) <= CHANGED) return false
    return towards(b, i) - towards(a, i) >= TOWARDS_GARMENT
  }
  const reach = Math.max(1, Math.round(body.shoulderWidth / 2))
  const centre = Math.round(body.centreX)
  return (y) => {
    // Start from the changed pixel nearest the centre line, within half a shoulder width of it.
    let seed = -1
    for (let d = 0; d <= reach && seed < 0; d++) {
      if (centre - d >= 0 && centre - d < width && changed(centre - d, y)) seed = centre - d
      else if (centre + d < width && centre + d >= 0 && changed(centre + d, y)) seed = centre + d
    }
    if (seed < 0) return 0
    const extend = (from: number, step: number) => {
      let edge = from
      let gap = 0
      for (let x = from + step; x >= 0 && x < width; x += step) {
        if (changed(x, y)) {
          edge = x
          gap = 0
        } else if (++gap > GAP) break
      }
      return edge
    }
    return extend(seed, 1) - extend(seed, -1) + 1
  }
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
