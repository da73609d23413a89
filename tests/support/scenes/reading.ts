import { analyseShopper, shopperPixels } from '../../../shared/engine/local/index.ts'
import { asInput } from '../images.ts'
import type { StyleName } from './held-out.ts'
import { scene } from './index.ts'

/**
 * A tuning scene's shopper read by the local engine: the scene's truth, the engine's analysis, the scale from the copy it
 * was read on to the photo, and how far a landmark read lies from the true one, as a share of the true stature.
 */
export function readScene(style: StyleName, seed: number) {
  const drawn = scene(style, seed)
  const truth = drawn.truth.shopper
  const pixels = shopperPixels(asInput(drawn.shopper))
  const analysis = analyseShopper(pixels)
  const scale = pixels.height / analysis.small.height
  const off = (read: number, real: number) => Math.abs(read * scale - real) / truth.figureHeight
  return { truth, analysis, scale, off }
}
