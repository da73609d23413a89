import { describe, expect, it } from 'vitest'
import { drawShopper } from '../../../devstack/samples/shopper-photo.ts'
import type { RgbaImage } from '../../../shared/images/codecs/raster.ts'
import { readShopper } from '../../../shared/engine/local/shopper-reading.ts'

describe('reading a shopper photo', () => {
  it('reads the figure below a stain on the wall above its head, which the segmentation keeps as a head', () => {
    const wall: [number, number, number] = [200, 196, 188]
    for (const [wide, tall] of [
      [2.4, 4],
      [3, 4],
      [3, 8],
    ]) {
      const { image: drawn, geometry: g } = drawShopper({ width: 214, height: 320, background: wall, shirtColor: [150, 40, 60] })
      // More wall above the figure, and a darker streak on it 2.4 to 3 heads wide, well clear of the head.
      const above = 48
      const image: RgbaImage = {
        width: drawn.width,
        height: drawn.height + above,
        data: new Uint8Array(drawn.width * (drawn.height + above) * 4),
      }
      for (let i = 0; i < drawn.width * above; i++) image.data.set([...wall, 255], i * 4)
      image.data.set(drawn.data, drawn.width * above * 4)
      const half = (wide * 0.108 * g.figureHeight) / 2
      for (let y = 24; y < 24 + tall; y++)
        for (let x = Math.round(g.centreX - half); x < g.centreX + half; x++) image.data.set([120, 112, 100], (y * image.width + x) * 4)
      const { body } = readShopper(image)
      expect(body.found).toBe(true)
      expect(Math.abs(body.headTop - (g.headTop + above)) / g.figureHeight).toBeLessThan(0.02)
      expect(Math.abs(body.shoulderY - (g.shoulderY + above)) / g.figureHeight).toBeLessThan(0.03)
    }
  })
})
