import { describe, expect, it } from 'vitest'
import { extractGarment } from '../../../shared/engine/local/garment.ts'
import { chooseProduct, type ProductSpec } from '../../support/scenes/garments.ts'
import { ALL_STYLES, SETS, styleOf } from '../../support/scenes/held-out.ts'
import { drawProductPhoto } from '../../support/scenes/product-photo.ts'
import { Rng } from '../../support/scenes/rng.ts'
import type { StyleName } from '../../support/scenes/types.ts'

/** The product photo of a tuning scene, drawn as scene() draws it, with the rows its garment's own pixels span. */
function productOf(seed: number) {
  const style: StyleName = styleOf(SETS.tuning, seed)
  const rng = new Rng(seed, ALL_STYLES.indexOf(style) + 1)
  const spec: ProductSpec = chooseProduct(rng.fork(1))
  const draw = () => {
    const { photo, mask } = drawProductPhoto(rng.fork(2), spec)
    const { width, height } = photo.pixels
    let first = height
    let last = -1
    for (let i = 0; i < width * height; i++) {
      if (!mask[i]) continue
      const y = Math.floor(i / width)
      first = Math.min(first, y)
      last = Math.max(last, y)
    }
    return { photo: photo.pixels, garmentRows: last - first + 1 }
  }
  return { spec, draw }
}

/** The widest row of a cut-out's opaque pixels. */
function widestRow({ width, height, data }: { width: number; height: number; data: Uint8Array }): number {
  let widest = 0
  for (let y = 0; y < height; y++) {
    let left = -1
    let right = -1
    for (let x = 0; x < width; x++) {
      if (data[(y * width + x) * 4 + 3] < 128) continue
      if (left < 0) left = x
      right = x
    }
    widest = Math.max(widest, right - left + 1)
  }
  return widest
}

describe('a product photographed on a hanger', () => {
  it('is cut out without the hook and the bar (soft 10596: a T-shirt measured 3 px across its top, on the hook)', () => {
    const { spec, draw } = productOf(10596)
    expect(spec.convention).toBe('hanger')
    const { photo, garmentRows } = draw()
    const cut = extractGarment(photo)
    // Its top rows are the shoulders, not a hook: across them it is most of the garment's width.
    expect(cut.topWidth).toBeGreaterThan(0.5 * widestRow(cut.image))
    // As tall as the garment itself (the hook and the bar added 17% on 41446fa).
    expect(Math.abs(cut.image.height / garmentRows - 1)).toBeLessThan(0.08)
  })

  it('is cut out as tall as the garment, over hanger products of seeds the rule was not tuned on', () => {
    const deviations: number[] = []
    for (let seed = 30001; seed <= 30400; seed++) {
      const { spec, draw } = productOf(seed)
      if (spec.convention !== 'hanger') continue
      const { photo, garmentRows } = draw()
      const cut = extractGarment(photo)
      deviations.push(Math.abs(cut.image.height / garmentRows - 1))
    }
    expect(deviations.length).toBeGreaterThanOrEqual(40)
    // On 41446fa: 9 of these 55 were off by more than 10% (a hook kept, or the shoulders dropped with the bar's rows),
    // one by 47%, and 5% on average. Three stay: two light gowns keep a light hanger's bar (its colour is theirs), 11%
    // and 14%; a T-shirt whose bar showed no hook loses its shoulders with the bar's rows, 12%.
    expect(deviations.filter((d) => d > 0.1).length).toBeLessThanOrEqual(3)
    expect(Math.max(...deviations)).toBeLessThan(0.15)
    expect(deviations.reduce((a, b) => a + b, 0) / deviations.length).toBeLessThan(0.03)
  }, 60_000)
})
