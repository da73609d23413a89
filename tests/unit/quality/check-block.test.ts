import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { RgbaImage } from '../../../shared/images/codecs/raster.ts'
import { measureResult, QUALITY_THRESHOLDS } from '../../../shared/quality/measure.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../../support/images.ts'
import { SLOW } from './check-support.ts'

type Rgb = [number, number, number]
const RED: Rgb = [200, 40, 40]
const redTee = makeGarmentPhoto({ kind: 'tshirt', color: RED, width: 200, height: 200, format: 'png' })

/** A copy of `image` with `inside` painted `colour`. */
function painted(image: RgbaImage, colour: Rgb, inside: (x: number, y: number) => boolean): RgbaImage {
  const data = Uint8Array.from(image.data)
  for (let y = 0; y < image.height; y++) for (let x = 0; x < image.width; x++) if (inside(x, y)) data.set(colour, (y * image.width + x) * 4)
  return { ...image, data }
}

describe('a block of the room joined to the figure beside its hips', { timeout: SLOW }, () => {
  it('is no body: a top laid over it fails off the body, the same top on the torso alone passes (property)', () => {
    const shade = fc.integer({ min: 20, max: 120 })
    fc.assert(
      fc.property(
        fc.record({
          seed: fc.integer({ min: 1, max: 10_000 }),
          side: fc.constantFrom(-1, 1),
          // The block's width and height and where its top is, in statures; it overlaps the hanging hand.
          wide: fc.double({ min: 0.2, max: 0.3, noNaN: true }),
          tall: fc.double({ min: 0.2, max: 0.35, noNaN: true }),
          top: fc.double({ min: 0.42, max: 0.52, noNaN: true }),
          block: fc.tuple(shade, shade, shade),
        }),
        ({ seed, side, wide, tall, top, block }) => {
          const { pixels, geometry: g } = makeShopperPhoto({ width: 360, height: 480, seed, format: 'png' })
          const H = g.figureHeight
          const at = (f: number) => g.headTop + f * H
          const near = g.centreX + side * 0.12 * H
          const far = near + side * wide * H
          const inBlock = (x: number, y: number) =>
            y >= at(top) && y < at(top + tall) && x >= Math.min(near, far) && x < Math.max(near, far)
          const shopper = painted(pixels, block, inBlock)
          const onTorso = (x: number, y: number) => y >= at(0.19) && y < at(0.48) && Math.abs(x - g.centreX) < 0.085 * H
          const measure = (result: RgbaImage) => measureResult({ shopper, product: redTee.pixels, result, category: 'top' })
          const good = measure(painted(shopper, RED, onTorso))
          expect(good.issues).toEqual([])
          // The top's side run on over the block, as the local engine laid it when the block was taken for the body.
          const over = measure(painted(shopper, RED, (x, y) => onTorso(x, y) || inBlock(x, y)))
          expect(over.measures.offBody).toBeGreaterThan(QUALITY_THRESHOLDS.offBody)
          expect(over.issues).toContain('garment_off_body')
        },
      ),
      { numRuns: 30, seed: 26_1130 },
    )
  })
})
