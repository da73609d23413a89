import { garmentCategoryOf, namesTrainlessGarment } from '../engine/category.ts'
import type { TrainSpec } from '../engine/types.ts'
import { ImageDecodeError, type RgbaImage } from '../images/codecs/index.ts'
import { extractGarment, type GarmentCutout } from '../engine/local/garment.ts'
import type { GarmentShape } from '../engine/local/garment-shape.ts'
import { analyseShopper, floorRowsIn, shopperPixels } from '../engine/local/index.ts'
import type { BodyLayout } from '../engine/local/person.ts'
import type { Mask } from '../engine/local/segmentation.ts'
import { decodeUpright } from '../images/upright.ts'
import { padWithFloor } from './floor-room.ts'
import type { PretreatmentOutcome, TrainGuidance, TrainPretreatment } from './ports.ts'

/** The gown's shape is measured on a small copy: a silhouette needs no detail. */
const ANALYSIS_SIDE = 256

/** Each engine's way of taking a train (see TrainGuidance); an unknown engine is taken to accept none. */
export const TRAIN_GUIDANCE: Record<string, TrainGuidance> = { local: 'draws', gemini: 'prompt', fashn: 'none', vertex: 'none' }

/**
 * The train a gown of this shape gets, from how its train lies in the product photo: as long beyond the
 * hem as the photo shows it against the gown's length, and as wide as it spreads beyond the skirt's flare.
 */
export function trainFor(shape: GarmentShape): TrainSpec {
  const gownLength = Math.max(1, shape.hemRow - shape.top)
  const beyondHem = Math.max(0, shape.bottom - shape.hemRow) / gownLength
  return { length: clamp(0.08 + 0.6 * beyondHem, 0.12, 0.25), spread: clamp(shape.flareBeyondTrend, 1.4, 2.2) }
}

/**
 * The embedded pre-treatment, for an engine that takes a train as `guidance`. It finds the gown in its
 * product photo and reads its train; a garment with no train (a top, trousers, a short or floor-length dress
 * without one), or one that cannot be cut out cleanly, is `unavailable`: a standard try-on at 1 credit.
 * It then checks that the shopper photo can take a train: with the feet out of the photo there is no floor
 * to lay it on and no engine should invent the legs (`unavailable`); with the feet too near the bottom edge
 * the photo is padded with floor, so the train fits in the picture. An engine that draws the train also needs
 * the person found; one that is only asked is left to read a photo our analysis cannot.
 */
export function createLocalPretreatment(options: { guidance?: TrainGuidance } = {}): TrainPretreatment {
  const guidance = options.guidance ?? 'draws'
  return {
    name: 'local',
    async prepare({ person, garment, clothingType, decodeBudget }): Promise<PretreatmentOutcome> {
      // Named a top, a jacket or trousers by the caller: no train to read, whatever the photo's outline suggests (a
      // T-shirt photographed spread out was read as a gown with a train and dressed as one, tuning studio 7603).
      if (namesTrainlessGarment(clothingType))
        return {
          kind: 'unavailable',
          reason: 'the garment named has no train to render',
          category: garmentCategoryOf(clothingType, 'standard'),
        }
      let cutout: GarmentCutout
      let shopper: RgbaImage
      try {
        cutout = extractGarment(decodeUpright(garment, { side: ANALYSIS_SIDE, budget: decodeBudget }))
        shopper = shopperPixels(person, undefined, decodeBudget)
      } catch (error) {
        // The engine reports an undecodable image as a 400; here it only means there is nothing to measure.
        if (error instanceof ImageDecodeError) return { kind: 'unavailable', reason: 'an image could not be decoded' }
        throw error
      }
      if (cutout.separated && cutout.hasLegs)
        return { kind: 'unavailable', reason: 'the garment has no train to render', category: 'bottom' }
      if (!cutout.separated || !cutout.shape)
        return { kind: 'unavailable', reason: 'no gown could be cut cleanly out of the product photo' }
      // A top, trousers or a short dress has no train to render: a standard try-on at 1 credit, never a free image.
      if (!cutout.shape.hasTrain) {
        const dress = cutout.shape.lengthOverBodice >= 2 && cutout.shape.skirtOverBodice >= 1
        return { kind: 'unavailable', reason: 'the garment has no train to render', category: dress ? 'dress' : 'unknown' }
      }
      const train = trainFor(cutout.shape)

      const { small, body, segmentation } = analyseShopper(shopper, floorRowsIn(person, shopper.height))
      const footing = footingOf(body)
      // An engine that draws the train needs to know where the feet are; one we only ask is guided by our
      // reading of the photo where it is sure, and left to read the photo itself where not.
      if (footing === 'no-feet' || (footing === 'no-body' && guidance === 'draws')) return { kind: 'unavailable', reason: FOOTING[footing] }
      if (footing === 'no-body') return { kind: 'prepared', garment, train }
      const room = (small.height - 1 - body.floorY) / body.figureHeight
      const wanted = train.length + 0.02
      if (room >= wanted) return { kind: 'prepared', garment, train }
      const rows = Math.ceil(((wanted - room) * body.figureHeight * person.height) / small.height)
      try {
        return { kind: 'prepared', garment, train, person: padWithFloor(person, rows, standingOnEdge(segmentation.mask), decodeBudget) }
      } catch (error) {
        if (error instanceof ImageDecodeError) return { kind: 'unavailable', reason: 'the photo could not be given floor room' }
        throw error
      }
    },
  }
}

/**
 * Where across the photo the shopper reaches its bottom rows (feet, shoes, their shadow), widened a little:
 * the floor added below is not drawn on from there.
 */
function standingOnEdge(mask: Mask): (t: number) => boolean {
  const { width, height, data } = mask
  const rows = Math.max(2, Math.round(height * 0.04))
  const margin = Math.max(2, Math.round(width * 0.02))
  const columns = new Uint8Array(width)
  for (let y = height - rows; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (!data[y * width + x]) continue
      for (let k = Math.max(0, x - margin); k <= Math.min(width - 1, x + margin); k++) columns[k] = 1
    }
  }
  return (t) => columns[Math.min(width - 1, Math.max(0, Math.floor(t * width)))] === 1
}

type Footing = 'ok' | 'no-body' | 'no-feet'

const FOOTING: Record<Exclude<Footing, 'ok'>, string> = {
  'no-body': 'no person was found in the shopper photo',
  'no-feet': 'the feet are not in the shopper photo',
}

function footingOf(body: BodyLayout): Footing {
  if (!body.found) return 'no-body'
  if (!body.feetVisible) return 'no-feet'
  return 'ok'
}

function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v
}
