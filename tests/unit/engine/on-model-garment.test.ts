import { describe, expect, it } from 'vitest'
import { extractGarment, garmentMask } from '../../../shared/engine/local/garment.ts'
import { withoutModel } from '../../../shared/engine/local/on-model.ts'
import { segmentForeground, type Mask } from '../../../shared/engine/local/segmentation.ts'
import { downscaleToFit } from '../../../shared/images/resize.ts'
import { garmentKinds, makeGarmentPhoto } from '../../support/images.ts'
import { scene } from '../../support/scenes/index.ts'
import type { StyleName } from '../../support/scenes/held-out.ts'

/** A tuning scene's product photo, its analysis copy, what stands out from its backdrop and the true product pixels. */
function productPhoto(style: StyleName, seed: number) {
  const drawn = scene(style, seed)
  const image = drawn.product.pixels
  const small = downscaleToFit(image, 256)
  const foreground = segmentForeground(small, { smoothRadius: 2 }).mask
  return { drawn, image, small, foreground, truth: drawn.truth.product }
}

/** Intersection over union of a mask on the analysis copy with the product's true pixels (sampled at the same spots). */
function overlap(mask: Mask, truth: Uint8Array, width: number, height: number): number {
  let both = 0
  let either = 0
  for (let y = 0; y < mask.height; y++) {
    for (let x = 0; x < mask.width; x++) {
      const tx = Math.min(width - 1, Math.floor(((x + 0.5) * width) / mask.width))
      const ty = Math.min(height - 1, Math.floor(((y + 0.5) * height) / mask.height))
      const inTruth = truth[ty * width + tx] === 1
      const inMask = mask.data[y * mask.width + x] === 1
      if (inTruth && inMask) both++
      if (inTruth || inMask) either++
    }
  }
  return both / either
}

function sameMask(a: Mask, b: Mask): boolean {
  return a.width === b.width && a.height === b.height && a.data.every((v, i) => v === b.data[i])
}

describe('garment cut from an on-model product photo', () => {
  it('keeps a T-shirt without the legs below it, so its colour is the shirt’s and not the skin’s (tuning photo 97)', () => {
    const { drawn, image, small, foreground, truth } = productPhoto('photo', 97)
    expect(truth.convention).toBe('on-model')
    expect(overlap(garmentMask(small, foreground), truth.mask, image.width, image.height)).toBeGreaterThan(0.9)
    // The cutout is as tall as the shirt: no legs pasted below its hem.
    let top = image.height
    let bottom = 0
    for (let i = 0; i < truth.mask.length; i++) {
      if (!truth.mask[i]) continue
      top = Math.min(top, Math.floor(i / image.width))
      bottom = Math.max(bottom, Math.floor(i / image.width) + 1)
    }
    const cut = extractGarment(image)
    expect(cut.image.height).toBeLessThan((bottom - top) * 1.1)
    // Most of the cutout carries the shirt's own (navy) colour, not the model's skin.
    const navy = drawn.truth.product.coloursInScene[0]
    let opaque = 0
    let navyLike = 0
    for (let i = 0; i < cut.image.width * cut.image.height; i++) {
      if (cut.image.data[i * 4 + 3] < 128) continue
      opaque++
      const d = [0, 1, 2].reduce((sum, c) => sum + Math.abs(cut.image.data[i * 4 + c] - navy[c]), 0)
      if (d < 90) navyLike++
    }
    expect(navyLike / opaque).toBeGreaterThan(0.6)
  })

  it('cuts a train gown without the arms beside its bodice (tuning dim 74 and photo 47)', () => {
    for (const [style, seed] of [
      ['dim', 74],
      ['photo', 47],
    ] as const) {
      const { image, small, foreground, truth } = productPhoto(style, seed)
      expect(truth.convention).toBe('on-model')
      expect(overlap(garmentMask(small, foreground), truth.mask, image.width, image.height), `${style} ${seed}`).toBeGreaterThan(0.94)
    }
  })

  it('keeps a striped dress whole on a model (tuning flat 20)', () => {
    const { image, small, foreground, truth } = productPhoto('flat', 20)
    expect(truth.convention).toBe('on-model')
    expect(truth.pattern).toBe('stripes')
    expect(overlap(garmentMask(small, foreground), truth.mask, image.width, image.height)).toBeGreaterThan(0.9)
  })

  it('leaves a garment the colour of the model’s skin as it was cut before (tuning studio 838: camel skirt, tan skin)', () => {
    const { small, foreground, truth } = productPhoto('studio', 838)
    expect(truth.convention).toBe('on-model')
    expect(sameMask(withoutModel(small, foreground), foreground)).toBe(true)
  })
})

describe('garment cut from a photo without a model', () => {
  it('leaves striped and skin-coloured products on a flat-lay, a mannequin or white-on-white as they were', () => {
    const photos: [StyleName, number][] = [
      ['dim', 39], // camel/pink stripes shirt, flat-lay
      ['studio', 88], // striped dress, ghost mannequin
      ['soft', 26], // blush train gown, flat-lay
      ['dim', 49], // champagne train gown, white-on-white
      ['photo', 207], // blush train gown, flat-lay
      ['flat', 15], // blush jacket, white-on-white
    ]
    for (const [style, seed] of photos) {
      const { small, foreground, truth } = productPhoto(style, seed)
      expect(truth.convention).not.toBe('on-model')
      expect(sameMask(withoutModel(small, foreground), foreground), `${style} ${seed}`).toBe(true)
    }
  })

  it('leaves every generated product photo kind as it was', () => {
    for (const kind of garmentKinds) {
      for (const color of [
        [40, 120, 200],
        [226, 184, 150],
      ] as [number, number, number][]) {
        const small = downscaleToFit(makeGarmentPhoto({ kind, color, width: 320, height: 400 }).pixels, 256)
        const foreground = segmentForeground(small, { smoothRadius: 2 }).mask
        expect(sameMask(withoutModel(small, foreground), foreground), `${kind} ${color}`).toBe(true)
      }
    }
  })
})
