import { expect } from 'vitest'
import { createRgba, type RgbaImage } from '../../../shared/images/codecs/raster.ts'
import { createLocalEngine } from '../../../shared/engine/local/index.ts'
import type { GarmentCategory } from '../../../shared/engine/types.ts'
import {
  measureResult,
  type MeasureInput,
  type QualityCategory,
  type QualityMeasurement,
  type QualityProductKind,
} from '../../../shared/quality/measure.ts'
import { measureJob } from '../../../shared/quality/measured-check.ts'
import { asInput } from '../../support/images.ts'
import { received } from '../../support/scenes/composites.ts'
import { SETS, styleOf } from '../../support/scenes/held-out.ts'
import { scene, type Scene } from '../../support/scenes/index.ts'
import type { ProductKind, Rgb } from '../../support/scenes/types.ts'
import { decodeImage } from '../../../shared/images/codecs/index.ts'
import { checkCategoryOf } from '../../../scripts/tune-quality-categories.ts'

export const SLOW = 120_000

/** A tuning scene known to show this product (asserted, so a change to the generator shows here first). */
export function tuningScene(seed: number, kind: ProductKind): Scene {
  const s = scene(styleOf(SETS.tuning, seed), seed)
  expect(s.truth.product.kind, s.description).toBe(kind)
  return s
}

/** The measured checks on a result for a scene, with the scene's product named as the service would name it. */
export function measureScene(s: Scene, result: RgbaImage, extra: Partial<MeasureInput> = {}): QualityMeasurement {
  return measureResult({
    shopper: received(s),
    product: decodeImage(s.product.bytes, s.product.format),
    result,
    ...checkCategoryOf(s.truth.product.kind),
    weddingDress: s.request.productType === 'wedding-dress',
    ...extra,
  })
}

/** A flat image of one colour, with `paint` run on each pixel to draw on it. */
export function canvas(width: number, height: number, fill: Rgb, paint?: (x: number, y: number) => Rgb | undefined): RgbaImage {
  const image = createRgba(width, height)
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const c = paint?.(x, y) ?? fill
      image.data.set([c[0], c[1], c[2], 255], (y * width + x) * 4)
    }
  return image
}

/** The local engine's own result (JPEG bytes) for a scene's photos. */
export async function localEngineResult(s: Scene, category: GarmentCategory): Promise<Uint8Array> {
  const outcome = await createLocalEngine().generate({ person: asInput(s.shopper), garment: asInput(s.product), category })
  if (outcome.kind !== 'generated' || !('bytes' in outcome.image)) throw new Error(`expected an image, got ${outcome.kind}`)
  return outcome.image.bytes
}

/** The measured check on a JPEG result as the service runs it (measureJob: the photos decoded at 512 px). */
export function measuredAsServed(s: Scene, jpeg: Uint8Array, category: QualityCategory, productKind?: QualityProductKind) {
  return measureJob({
    shopper: asInput(s.shopper),
    product: asInput(s.product),
    result: { bytes: jpeg, contentType: 'image/jpeg' },
    category,
    productKind,
    weddingDress: false,
  })
}
