import type { EngineOutcome, GarmentCategory, InputImage, TryOnEngine, TryOnRequest } from '../types.ts'
import { decodeImage, encodeJpeg, ImageDecodeError, type RgbaImage } from './codecs/index.ts'
import { compositeGarment } from './composite.ts'
import { fitGarment } from './fit.ts'
import { extractGarment, guessCategory } from './garment.ts'
import { analyseBody } from './person.ts'
import { downscaleToFit } from './resize.ts'
import { segmentForeground } from './segmentation.ts'
import { renderTrain } from './train.ts'

export interface LocalEngineOptions {
  /** Long side of the generated image at most (the person photo is shrunk to it, never enlarged). */
  maxOutputSide?: number
  jpegQuality?: number
}

/** Silhouette analysis runs on a small copy: landmarks need shape, not detail. */
const ANALYSIS_SIDE = 320
/** The garment is warped from a copy this large at most; more would be scaled away again. */
const GARMENT_SIDE = 768

type Stage<T> = { ok: true; value: T } | { ok: false; outcome: EngineOutcome }

/**
 * The embedded, offline try-on engine: cuts the garment out of its product photo, finds the person's
 * silhouette and landmarks, warps the garment onto the body row by row and shades it with the photo's own light.
 * Pure TypeScript on Web-standard APIs, deterministic: the same inputs always give the same JPEG bytes.
 */
export function createLocalEngine(options: LocalEngineOptions = {}): TryOnEngine {
  const maxOutputSide = options.maxOutputSide ?? 1536
  const jpegQuality = options.jpegQuality ?? 88
  return {
    name: 'local',
    async generate(request: TryOnRequest): Promise<EngineOutcome> {
      try {
        return await tryOn(request, maxOutputSide, jpegQuality)
      } catch (error) {
        return { kind: 'failed', reason: `local engine error: ${error instanceof Error ? error.message : String(error)}` }
      }
    },
  }
}

async function tryOn(request: TryOnRequest, maxOutputSide: number, jpegQuality: number): Promise<EngineOutcome> {
  const aborted = async (): Promise<boolean> => {
    // Let pending events (a client disconnect, a timeout) run so an abort can be seen between stages.
    await new Promise((resolve) => setTimeout(resolve, 0))
    return request.signal?.aborted === true
  }
  const abortedOutcome: EngineOutcome = { kind: 'failed', reason: 'aborted' }
  if (request.signal?.aborted) return abortedOutcome

  const personDecoded = decode(request.person, 'userPhoto', maxOutputSide)
  if (!personDecoded.ok) return personDecoded.outcome
  const garmentDecoded = decode(request.garment, 'productImage', GARMENT_SIDE)
  if (!garmentDecoded.ok) return garmentDecoded.outcome
  if (await aborted()) return abortedOutcome

  const person = downscaleToFit(personDecoded.value, maxOutputSide)
  const small = downscaleToFit(person, ANALYSIS_SIDE)
  const segmentation = segmentForeground(small)
  const body = analyseBody(segmentation.mask, segmentation.coverage)
  const garment = extractGarment(downscaleToFit(garmentDecoded.value, GARMENT_SIDE))
  const category: GarmentCategory = request.category ?? guessCategory(garment, request.clothingType)
  const scale = { x: person.width / small.width, y: person.height / small.height }
  const placement = fitGarment(garment, category, body, scale)
  if (await aborted()) return abortedOutcome

  const mask = body.found ? segmentation.mask : { ...segmentation.mask, data: new Uint8Array(segmentation.mask.data.length).fill(1) }
  const dressed = compositeGarment(person, mask, scale, garment, placement, body.figureHeight * scale.y)
  if (request.train && category === 'dress') {
    const footing = { ankleY: body.ankleY * scale.y, floorY: body.floorY * scale.y, figureHeight: body.figureHeight * scale.y }
    renderTrain(dressed, garment, placement, footing, request.train)
  }
  if (await aborted()) return abortedOutcome

  let bytes = encodeJpeg(dressed, jpegQuality)
  // Practically impossible, but a result must never be a copy of what was sent.
  if (sameBytes(bytes, request.person.bytes) || sameBytes(bytes, request.garment.bytes)) bytes = encodeJpeg(dressed, jpegQuality - 1)
  return { kind: 'generated', image: { bytes, contentType: 'image/jpeg' } }
}

function decode(input: InputImage, field: 'userPhoto' | 'productImage', minLongSide: number): Stage<RgbaImage> {
  try {
    return { ok: true, value: decodeImage(input.bytes, input.format, { minLongSide }) }
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
