import type { GeneratedImage, InputImage } from '../engine/types.ts'
import { decodeImage, type DecodeBudget } from '../images/codecs/index.ts'
import { decodeUpright } from '../images/upright.ts'
import { measureResult, type QualityCategory, type QualityMeasurement, type QualityProductKind } from './measure.ts'

/** The long side the shopper and product photos are read at for the measurements (they work on 256 px copies). */
export const MEASURE_SIDE = 512

/** One result to measure against the photos it was made from: what the measured check decodes and compares. */
export interface MeasureJob {
  shopper: InputImage
  product: InputImage
  result: Pick<GeneratedImage, 'bytes' | 'contentType'>
  category?: QualityCategory
  productKind?: QualityProductKind
  weddingDress: boolean
  /** The request's budget: the decodes are charged to it, and its decoded copy of a photo is reused. */
  decodeBudget?: DecodeBudget
  signal?: AbortSignal
}

/**
 * The decoding and measuring of the measured check (shared/tryon/quality.ts), as one step a platform may run off the
 * request's thread (shared/engine/local/steps.ts): 100–250 ms of CPU for a 40 MP photo. Throws what decoding throws.
 */
export function measureJob(job: MeasureJob): QualityMeasurement {
  const budget = job.decodeBudget
  return measureResult({
    shopper: decodeUpright(job.shopper, { side: MEASURE_SIDE, budget }),
    product: decodeUpright(job.product, { side: MEASURE_SIDE, budget }),
    result: decodeImage(job.result.bytes, formatOf(job.result.contentType), budget ? { budget } : {}),
    category: job.category,
    productKind: job.productKind,
    weddingDress: job.weddingDress,
  })
}

function formatOf(contentType: GeneratedImage['contentType']): 'jpeg' | 'png' | 'webp' {
  return contentType === 'image/png' ? 'png' : contentType === 'image/webp' ? 'webp' : 'jpeg'
}
