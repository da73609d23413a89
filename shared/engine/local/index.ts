import type { EngineOutcome, GarmentCategory, GeneratedImage, InputImage, NoImageOutcome, TryOnEngine, TryOnRequest } from '../types.ts'
import { encodeJpeg, ImageDecodeError, type DecodeBudget, type RgbaImage } from '../../images/codecs/index.ts'
import { airUnderArms, compositeGarment } from './composite.ts'
import { fitGarment } from './fit.ts'
import { extractGarment, guessCategory } from './garment.ts'
import type { BodyLayout } from './person.ts'
import { resizeArea } from '../../images/resize.ts'
import type { Segmentation } from './segmentation.ts'
import { readShopperAtSizes } from './shopper-reading.ts'
import { renderTrain } from './train.ts'
import { decodeUpright } from '../../images/upright.ts'

export interface LocalEngineOptions {
  /** Long side of the generated image at most (the person photo is shrunk to it, never enlarged). */
  maxOutputSide?: number
  jpegQuality?: number
}

/** The long side the engine keeps of a shopper photo; the steps of a wedding dress read the photo at it too, so it is decoded once. */
export const DEFAULT_OUTPUT_SIDE = 1536
/** The garment is warped from a copy this large at most; more would be scaled away again. */
const GARMENT_SIDE = 768
/** A photo narrower than this on either side cannot show a person; the shopper must send another one. */
const MIN_PERSON_SIDE = 32

type Stage<T> = { ok: true; value: T } | { ok: false; outcome: NoImageOutcome }

/**
 * The embedded, offline try-on engine: cuts the garment out of its product photo, finds the person's
 * silhouette and landmarks, warps the garment onto the body row by row and shades it with the photo's own light.
 * Pure TypeScript on Web-standard APIs, deterministic: the same inputs always give the same JPEG bytes.
 */
export function createLocalEngine(options: LocalEngineOptions = {}): TryOnEngine<GeneratedImage> {
  const maxOutputSide = options.maxOutputSide ?? DEFAULT_OUTPUT_SIDE
  const jpegQuality = options.jpegQuality ?? 88
  return {
    name: 'local',
    async generate(request: TryOnRequest): Promise<EngineOutcome<GeneratedImage>> {
      try {
        return await tryOn(request, maxOutputSide, jpegQuality)
      } catch (error) {
        return { kind: 'failed', reason: `local engine error: ${error instanceof Error ? error.message : String(error)}` }
      }
    },
  }
}

async function tryOn(request: TryOnRequest, maxOutputSide: number, jpegQuality: number): Promise<EngineOutcome<GeneratedImage>> {
  const aborted = async (): Promise<boolean> => {
    // Let pending events (a client disconnect, a timeout) run so an abort can be seen between stages.
    await new Promise((resolve) => setTimeout(resolve, 0))
    return request.signal?.aborted === true
  }
  const abortedOutcome: NoImageOutcome = { kind: 'failed', reason: 'aborted' }
  if (request.signal?.aborted) return abortedOutcome

  // The garment first: it decodes at the smaller scale, so a request with one broken image fails at the lower cost.
  const garmentDecoded = decode(request.garment, 'productImage', GARMENT_SIDE, request.decodeBudget)
  if (!garmentDecoded.ok) return garmentDecoded.outcome
  const personDecoded = decode(request.person, 'userPhoto', maxOutputSide, request.decodeBudget)
  if (!personDecoded.ok) return personDecoded.outcome
  // The photo's own size (as displayed), not that of the copy shrunk for the engine.
  const { width, height } = request.person
  if (Math.min(width, height) < MIN_PERSON_SIDE) {
    // Not an engine failure a retry could fix: the same photo would fail again.
    return {
      kind: 'invalid_input',
      reason:
        `The shopper photo (userPhoto) could not be used: it is ${width}×${height} pixels, too small to show a person; ` +
        `send a photo at least ${MIN_PERSON_SIDE} pixels on each side`,
    }
  }
  if (await aborted()) return abortedOutcome

  const person = personDecoded.value
  const { small, segmentation, body } = analyseShopper(person, floorRowsIn(request.person, person.height))
  const garment = extractGarment(garmentDecoded.value)
  const category: GarmentCategory = request.category ?? guessCategory(garment, request.clothingType)
  const scale = { x: person.width / small.width, y: person.height / small.height }
  // Never a guess at where a body might be: a garment pasted where there is none is a broken picture.
  if (!body.found) return { kind: 'no_person', reason: 'local engine: no person was found in the shopper photo' }
  const placement = fitGarment(garment, category, body, scale)
  if (await aborted()) return abortedOutcome

  const air = airUnderArms(segmentation.mask, body, category)
  const dressed = compositeGarment(person, segmentation.mask, scale, garment, placement, body.figureHeight * scale.y, air)
  // A train lies on the floor past the feet: without both in the photo there is nowhere to draw it.
  if (request.train && category === 'dress' && body.feetVisible) {
    const footing = { ankleY: body.ankleY * scale.y, floorY: body.floorY * scale.y, figureHeight: body.figureHeight * scale.y }
    renderTrain(dressed, garment, placement, footing, request.train)
  }
  if (await aborted()) return abortedOutcome

  let bytes = encodeJpeg(dressed, jpegQuality)
  // Practically impossible, but a result must never be a copy of what was sent.
  if (sameBytes(bytes, request.person.bytes) || sameBytes(bytes, request.garment.bytes)) bytes = encodeJpeg(dressed, jpegQuality - 1)
  return { kind: 'generated', image: { bytes, contentType: 'image/jpeg' } }
}

export interface ShopperAnalysis {
  /** The copy the analysis ran on. */
  small: RgbaImage
  segmentation: Segmentation
  body: BodyLayout
}

/**
 * Where the shopper is in their photo, read from a small copy of it. The engine, the train pre-treatment and
 * the train scorer all read a photo through here, from the same pixels, so they agree on where the feet are.
 * `addedFloorRows` (in this image's rows) of floor the pre-treatment added at the bottom are left out of the
 * analysis, so the photo reads as it was sent; `small` and the mask still cover them, at the same scale.
 */
export function analyseShopper(person: RgbaImage, addedFloorRows = 0): ShopperAnalysis {
  const added = Math.max(0, Math.min(person.height - MIN_PERSON_SIDE, Math.round(addedFloorRows)))
  if (added === 0) {
    const { small, segmentation, body } = readShopperAtSizes(person)
    return { small, segmentation, body }
  }
  const photo: RgbaImage = {
    width: person.width,
    height: person.height - added,
    data: person.data.subarray(0, person.width * (person.height - added) * 4),
  }
  const { small: smallPhoto, segmentation, body } = readShopperAtSizes(photo)
  const height = Math.max(smallPhoto.height, Math.round((person.height * smallPhoto.height) / photo.height))
  const small = smallPhoto.width === person.width && height === person.height ? person : resizeArea(person, smallPhoto.width, height)
  const mask = new Uint8Array(smallPhoto.width * height)
  mask.set(segmentation.mask.data)
  return { small, segmentation: { ...segmentation, mask: { width: smallPhoto.width, height, data: mask } }, body }
}

/** The floor rows the pre-treatment added to an input photo, in rows of its decoded copy of `height` rows. */
export function floorRowsIn(input: InputImage, height: number): number {
  return input.addedFloorRows && input.height > 0 ? (input.addedFloorRows * height) / input.height : 0
}

/** The shopper photo decoded, upright and sized as the engine takes it, ready for analyseShopper; its decode counts against `budget`. */
export function shopperPixels(person: InputImage, maxOutputSide = DEFAULT_OUTPUT_SIDE, budget?: DecodeBudget): RgbaImage {
  return decodeUpright(person, { side: maxOutputSide, budget })
}

function decode(input: InputImage, field: 'userPhoto' | 'productImage', side: number, budget: DecodeBudget | undefined): Stage<RgbaImage> {
  try {
    return { ok: true, value: decodeUpright(input, { side, budget }) }
  } catch (error) {
    if (!(error instanceof ImageDecodeError)) throw error
    return { ok: false, outcome: { kind: 'invalid_input', reason: `${field} could not be decoded: ${error.message}` } }
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}
