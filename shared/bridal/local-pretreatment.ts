import type { InputImage, TrainSpec } from '../engine/types.ts'
import { decodeImage, ImageDecodeError } from '../engine/local/codecs/index.ts'
import { LONG_DRESS_RATIO } from '../engine/local/fit.ts'
import { extractGarment, type GarmentCutout } from '../engine/local/garment.ts'
import { downscaleToFit } from '../engine/local/resize.ts'
import type { PretreatmentOutcome, TrainPretreatment } from './ports.ts'

/** The gown's shape is measured on a small copy: a silhouette needs no detail. */
const ANALYSIS_SIDE = 256

/** The gown's outline, in proportions of the product photo (independent of its resolution). */
export interface GownSilhouette {
  /** Length over the width across the shoulders: at LONG_DRESS_RATIO or more the gown reaches the floor. */
  lengthOverTop: number
  /** Hem width over length: how much the skirt flares; a gown photographed with its train spread is wide. */
  flare: number
}

export function measureGown(cutout: GarmentCutout): GownSilhouette {
  const { height } = cutout.image
  const hemWidths: number[] = []
  for (let y = Math.floor(height * 0.94); y < height; y++) hemWidths.push(cutout.right[y] - cutout.left[y])
  hemWidths.sort((a, b) => a - b)
  const hemWidth = hemWidths[hemWidths.length >> 1] ?? 0
  return { lengthOverTop: height / Math.max(1, cutout.topWidth), flare: hemWidth / Math.max(1, height) }
}

/**
 * The train a gown of this shape gets: a floor-length gown's hem is extended on the floor, longer and wider
 * the more its skirt flares (sized here against the wearer's height; the engine scales it to the photo).
 * A hem above the ankles (a short dress, a top) has no train: length 0.
 */
export function trainFor(silhouette: GownSilhouette): TrainSpec {
  if (silhouette.lengthOverTop < LONG_DRESS_RATIO) return { length: 0, spread: 1 }
  return { length: clamp(0.3 * silhouette.flare - 0.08, 0.03, 0.16), spread: clamp(1 + silhouette.flare, 1.2, 2) }
}

/** The embedded pre-treatment: finds the gown in its product photo and derives its train from its silhouette. */
export function createLocalPretreatment(): TrainPretreatment {
  return {
    name: 'local',
    async prepare({ garment }): Promise<PretreatmentOutcome> {
      let cutout: GarmentCutout
      try {
        cutout = extractGarment(downscaleToFit(decodeImage(garment.bytes, garment.format, { minLongSide: ANALYSIS_SIDE }), ANALYSIS_SIDE))
      } catch (error) {
        // The engine reports an undecodable image as a 400; here it only means there is no gown to measure.
        if (error instanceof ImageDecodeError) return { kind: 'unavailable', reason: 'the product image could not be decoded' }
        throw error
      }
      if (!cutout.separated) return { kind: 'unavailable', reason: 'no gown stands out from the product photo background' }
      return { kind: 'prepared', garment, train: trainFor(measureGown(cutout)) }
    },
  }
}

function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v
}
