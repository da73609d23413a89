import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { drawGarment } from '../../../devstack/samples/garment-photo.ts'
import { drawShopper, shopperGeometry, type Box, type ShopperPhotoOptions } from '../../../devstack/samples/shopper-photo.ts'
import type { RgbaImage } from '../../../shared/images/codecs/index.ts'
import { analyseBody } from '../../../shared/engine/local/person.ts'
import { segmentForeground, type Mask } from '../../../shared/engine/local/segmentation.ts'
import { makeFlatImage, makeNoiseImage } from '../../support/images.ts'

/** Share of a box's pixels that the mask marks as subject. */
function subjectShare(mask: Mask, [x0, y0, x1, y1]: Box): number {
  let inside = 0
  let total = 0
  for (let y = Math.ceil(y0); y < Math.floor(y1); y++) {
    for (let x = Math.ceil(x0); x < Math.floor(x1); x++) {
      inside += mask.data[y * mask.width + x]
      total++
    }
  }
  expect(total).toBeGreaterThan(0)
  return inside / total
}

const backdrops: [string, ShopperPhotoOptions][] = [
  ['a plain studio backdrop', { width: 200, height: 300 }],
  ['a graded backdrop', { width: 200, height: 300, background: 'gradient' }],
  ['a mid-tone coloured backdrop', { width: 200, height: 300, background: [90, 110, 100] }],
  ['a dark skin tone', { width: 200, height: 300, skinTone: [92, 60, 44] }],
  ['a half-length framing', { width: 200, height: 300, fullLength: false }],
  ['a landscape frame', { width: 360, height: 240 }],
]

describe('person segmentation', () => {
  it.each(backdrops)('separates the figure from %s', (_, options) => {
    const { image, geometry } = drawShopper(options)
    const { mask, coverage } = segmentForeground(image)
    expect([mask.width, mask.height]).toEqual([image.width, image.height])
    for (const box of [geometry.face, geometry.torso, ...geometry.thighs, ...geometry.shins]) {
      expect(subjectShare(mask, box), `body box ${box.map(Math.round)}`).toBeGreaterThan(0.98)
    }
    for (const box of geometry.background) expect(subjectShare(mask, box), `background box ${box.map(Math.round)}`).toBe(0)
    const marked = mask.data.reduce((n, v) => n + v, 0)
    expect(coverage).toBeCloseTo(marked / mask.data.length, 6)
    expect(coverage).toBeGreaterThan(0.1)
    expect(coverage).toBeLessThan(0.45)
  })

  it('keeps the legs below a band of clothes the colour of the wall, in a room photo', () => {
    const backdrop: [number, number, number] = [236, 233, 228]
    const { image, geometry } = drawShopper({ width: 200, height: 300, background: backdrop })
    // Shorts of the wall's own colour: a band across the hips and thighs cuts the figure in two.
    for (let y = Math.round(geometry.hipY); y < Math.round(geometry.crotchY + 0.08 * geometry.figureHeight); y++) {
      for (let x = 0; x < image.width; x++) image.data.set(backdrop, (y * image.width + x) * 4)
    }
    const { mask } = segmentForeground(image, { backdrop: 'room' })
    expect(subjectShare(mask, geometry.torso)).toBeGreaterThan(0.95)
    for (const box of geometry.shins) expect(subjectShare(mask, box)).toBeGreaterThan(0.95)
    for (const box of geometry.background) expect(subjectShare(mask, box)).toBe(0)
  })

  it('keeps the shoes on their shadow below a figure whose legs are the white of the sweep, and no rug beside it', () => {
    const sweep: [number, number, number] = [246, 246, 246]
    const draw = () => drawShopper({ width: 214, height: 320, background: sweep, shirtColor: [150, 40, 60] })
    const { image, geometry } = draw()
    const H = geometry.figureHeight
    // White trousers clipped to the sweep: nothing of the legs from the hips to the ankles comes out. The studio's
    // soft shadow spreads wider than the arms.
    const ankles = geometry.headTop + 0.955 * H
    const clear = (photo: RgbaImage, from: number, to: number) => {
      for (let y = Math.round(from); y < Math.round(to); y++)
        for (let x = 0; x < photo.width; x++) photo.data.set(sweep, (y * photo.width + x) * 4)
    }
    const shadow = (photo: RgbaImage, cx: number, rx: number) => {
      for (let y = 0; y < photo.height; y++)
        for (let x = 0; x < photo.width; x++)
          if (((x - cx) / rx) ** 2 + ((y - geometry.floorY) / (0.015 * H)) ** 2 <= 1 && photo.data[(y * photo.width + x) * 4] > 200)
            photo.data.set([214, 214, 216], (y * photo.width + x) * 4)
    }
    clear(image, geometry.hipY, ankles)
    shadow(image, geometry.centreX, 0.26 * H)
    const { mask, coverage } = segmentForeground(image, { backdrop: 'room' })
    const feet: Box = [geometry.centreX - 8, ankles + 2, geometry.centreX + 8, geometry.floorY]
    expect(subjectShare(mask, feet)).toBeGreaterThan(0.3)
    expect(subjectShare(mask, geometry.torso)).toBeGreaterThan(0.95)
    const body = analyseBody(mask, coverage)
    expect(body.found).toBe(true)
    expect(Math.abs(body.floorY - geometry.floorY) / H).toBeLessThan(0.035)

    // A flat shadow off to the side, under nobody, is floor and stays out.
    const aside = draw().image
    clear(aside, geometry.hipY, aside.height)
    shadow(aside, aside.width - 0.12 * H, 0.1 * H)
    const rug: Box = [aside.width - 0.18 * H, geometry.floorY - 2, aside.width - 0.06 * H, geometry.floorY + 2]
    expect(subjectShare(segmentForeground(aside, { backdrop: 'room' }).mask, rug)).toBe(0)
  })

  it('keeps the legs standing on a shadow wider than the figure, below a band of clothes the wall hides, in its columns only', () => {
    const wall: [number, number, number] = [236, 233, 228]
    const { image, geometry } = drawShopper({ width: 240, height: 300, background: wall })
    const H = geometry.figureHeight
    // Trousers the wall's colour from the hips to mid-thigh: the legs below are a part of their own.
    for (let y = Math.round(geometry.hipY); y < Math.round(geometry.crotchY + 0.1 * H); y++)
      for (let x = 0; x < image.width; x++) image.data.set(wall, (y * image.width + x) * 4)
    // A dark contact shadow under the feet, far wider than the figure with its arms, joined to the feet.
    const rx = 0.42 * H
    for (let y = 0; y < image.height; y++)
      for (let x = 0; x < image.width; x++)
        if (((x - geometry.centreX) / rx) ** 2 + ((y - geometry.floorY) / (0.02 * H)) ** 2 <= 1)
          image.data.set([70, 68, 66], (y * image.width + x) * 4)
    const { mask, coverage } = segmentForeground(image, { backdrop: 'room' })
    for (const box of geometry.shins) expect(subjectShare(mask, box)).toBeGreaterThan(0.95)
    expect(subjectShare(mask, geometry.torso)).toBeGreaterThan(0.95)
    // The shadow's tips, beyond the figure's columns, stay floor.
    const tip = (x: number): Box => [x - 3, geometry.floorY - 1, x + 3, geometry.floorY + 1]
    expect(subjectShare(mask, tip(geometry.centreX - 0.36 * H))).toBe(0)
    expect(subjectShare(mask, tip(geometry.centreX + 0.36 * H))).toBe(0)
    const body = analyseBody(mask, coverage)
    expect(body.found).toBe(true)
    expect(Math.abs(body.figureHeight - H) / H).toBeLessThan(0.05)
  })

  it('clears a brick wall by its tones on a second reading, keeping the figure in front of it', () => {
    const wall: [number, number, number] = [196, 200, 202]
    const { image, geometry } = drawShopper({ width: 214, height: 320, background: wall, shirtColor: [150, 40, 60] })
    // Bricks 9 px high and 20 wide, each of its own tone, a 1 px line of lighter mortar between them.
    for (let y = 0; y < image.height; y++) {
      const row = Math.floor(y / 9)
      for (let x = 0; x < image.width; x++) {
        const o = (y * image.width + x) * 4
        if (image.data[o] !== wall[0] || image.data[o + 1] !== wall[1] || image.data[o + 2] !== wall[2]) continue
        const brick = Math.floor((x + (row % 2) * 10) / 20)
        const mortar = y % 9 === 0 || (x + (row % 2) * 10) % 20 === 0
        const tone = mortar ? 1.12 : 0.8 + 0.12 * Math.sin(row * 7.3 + brick * 3.1)
        image.data.set(
          wall.map((c) => Math.min(255, Math.round(c * tone))),
          o,
        )
      }
    }
    const first = segmentForeground(image, { backdrop: 'room' })
    const second = segmentForeground(image, { backdrop: 'room', wallColours: true })
    expect(first.wallColoursCleared).toBe(false)
    expect(second.wallColoursCleared).toBe(true)
    expect(subjectShare(second.mask, geometry.torso)).toBeGreaterThan(0.95)
    for (const box of geometry.shins) expect(subjectShare(second.mask, box)).toBeGreaterThan(0.95)
    for (const box of geometry.background) expect(subjectShare(second.mask, box)).toBe(0)
  })

  it('keeps the arms beside a top the white of the sweep, and nothing beside a figure that came out whole', () => {
    const sweep: [number, number, number] = [250, 250, 250]
    const { image, geometry: d } = drawShopper({ width: 214, height: 320, background: sweep })
    const H = d.figureHeight
    // A white top and white shorts clipped to the sweep: from the neck's base to the thighs only the arms below the
    // sleeves show, apart from the legs.
    const beside = (x: number, y: number) => y > d.shoulderY + 0.1 * H && Math.abs(x - d.centreX) > 0.9 * d.shoulderHalfWidth
    for (let y = Math.round(d.shoulderY - 0.02 * H); y < Math.round(d.crotchY + 0.05 * H); y++)
      for (let x = 0; x < image.width; x++) if (!beside(x, y)) image.data.set(sweep, (y * image.width + x) * 4)
    // No shadow spreading past the feet to join the arms' columns to the legs.
    for (let y = Math.round(d.ankleY); y < image.height; y++)
      for (let x = 0; x < image.width; x++) if (Math.abs(x - d.centreX) > 0.1 * H) image.data.set(sweep, (y * image.width + x) * 4)
    const armRows = (mask: Mask) => {
      let rows = 0
      for (let y = Math.round(d.shoulderY + 0.12 * H); y < Math.round(d.hipY); y++) {
        let arm = false
        for (let x = 0; x < mask.width; x++) arm ||= beside(x, y) && mask.data[y * mask.width + x] === 1
        rows += arm ? 1 : 0
      }
      return rows / (Math.round(d.hipY) - Math.round(d.shoulderY + 0.12 * H))
    }
    expect(armRows(segmentForeground(image, { backdrop: 'room' }).mask)).toBeGreaterThan(0.8)
    // A blob beside a whole figure is not an arm.
    const { image: whole } = drawShopper({ width: 214, height: 320, background: sweep })
    const [x0, y0] = [Math.round(d.centreX + 2 * d.shoulderHalfWidth), Math.round(d.waistY)]
    for (let y = y0; y < y0 + 0.15 * H; y++) for (let x = x0; x < x0 + 6; x++) whole.data.set([40, 40, 40], (y * whole.width + x) * 4)
    const { mask } = segmentForeground(whole, { backdrop: 'room' })
    expect(subjectShare(mask, [x0, y0, x0 + 6, y0 + 0.15 * H])).toBe(0)
  })

  it("leaves out a picture on the wall at the frame's side, taller than a lamp's shade, that the arm overlaps", () => {
    const picture = (top: number, tall: number, right: number, inner: [number, number, number], left = 0) => {
      const wall: [number, number, number] = [180, 206, 190]
      const { image, geometry } = drawShopper({ width: 180, height: 320, background: wall, shirtColor: [150, 40, 60] })
      // The frame runs past the photo's side; only the wall is painted, so the figure stands in front of it.
      const [y0, y1] = [Math.round(top * image.height), Math.round((top + tall) * image.height)]
      for (let y = y0; y < y1; y++) {
        for (let x = left; x < right; x++) {
          const o = (y * image.width + x) * 4
          if (Math.abs(image.data[o] - wall[0]) + Math.abs(image.data[o + 1] - wall[1]) + Math.abs(image.data[o + 2] - wall[2]) > 12)
            continue
          const edge = y - y0 < 3 || y1 - 1 - y < 3 || right - 1 - x < 3 || (left > 0 && x - left < 3)
          image.data.set(edge ? [60, 60, 64] : inner, o)
        }
      }
      const segmentation = segmentForeground(image, { backdrop: 'room' })
      return { segmentation, geometry, clear: [0, y0, Math.min(right, geometry.centreX - 0.2 * geometry.figureHeight), y1] as Box }
    }
    // The frame's right side on the arm, from the head's top to below the shoulders: 18% of the height.
    const H = shopperGeometry(180, 320).figureHeight
    const armOuter = 90 - 0.19 * H
    const { segmentation, geometry, clear } = picture(0.1, 0.18, Math.round(armOuter + 3), [248, 248, 248])
    expect(subjectShare(segmentation.mask, clear)).toBe(0)
    expect(subjectShare(segmentation.mask, geometry.torso)).toBeGreaterThan(0.95)
    const body = analyseBody(segmentation.mask, segmentation.coverage)
    expect(body.found).toBe(true)
    expect(body.shoulderWidth).toBeLessThan(0.35 * H)
    // A frame that stops a pixel or two short of the side, its corner on the arm, is the same.
    const short = picture(0.1, 0.18, Math.round(armOuter + 3), [200, 230, 215], 2)
    expect(subjectShare(short.segmentation.mask, short.clear)).toBe(0)
    expect(analyseBody(short.segmentation.mask, short.segmentation.coverage).shoulderWidth).toBeLessThan(0.35 * H)

    fc.assert(
      fc.property(
        fc.double({ min: 0.04, max: 0.45, noNaN: true }),
        fc.double({ min: 0.05, max: 0.22, noNaN: true }),
        fc.integer({ min: Math.round(armOuter - 25), max: Math.round(armOuter + 4) }),
        fc.constantFrom<[number, number, number]>([248, 248, 248], [69, 81, 104], [120, 60, 50], [230, 200, 120]),
        (top, tall, right, inner) => {
          // Where the arm overlaps the frame on most of its rows, where the frame ends cannot be told.
          const [y0, y1, shoulders] = [top * 320, (top + tall) * 320, shopperGeometry(180, 320).shoulderY + 0.03 * H]
          fc.pre(right < armOuter - 4 || Math.min(y1, shoulders) - y0 >= 0.6 * (y1 - y0))
          const {
            segmentation: { mask },
            geometry: g,
            clear: box,
          } = picture(top, tall, right, inner)
          expect(subjectShare(mask, box)).toBe(0)
          expect(subjectShare(mask, g.torso)).toBeGreaterThan(0.95)
        },
      ),
      { numRuns: 25, seed: 26 },
    )
  })

  it('keeps one connected subject: a stray blob in the backdrop is dropped', () => {
    const { image, geometry } = drawShopper({ width: 200, height: 300 })
    const [x0, y0] = geometry.background[2].map(Math.ceil)
    for (let y = y0; y < y0 + 8; y++) for (let x = x0; x < x0 + 8; x++) image.data.set([20, 20, 20, 255], (y * image.width + x) * 4)
    const { mask } = segmentForeground(image)
    expect(subjectShare(mask, [x0, y0, x0 + 8, y0 + 8])).toBe(0)
    expect(subjectShare(mask, geometry.torso)).toBeGreaterThan(0.98)
  })

  it('follows the alpha channel of a cut-out', () => {
    const { image } = drawGarment({ kind: 'dress', color: [230, 230, 230], width: 160, height: 160, transparentBackground: true })
    const { mask } = segmentForeground(image)
    let agree = 0
    for (let i = 0; i < mask.data.length; i++) if (mask.data[i] === (image.data[i * 4 + 3] >= 128 ? 1 : 0)) agree++
    expect(agree / mask.data.length).toBeGreaterThan(0.99)
  })

  it.each([
    ['a flat frame', makeFlatImage({ width: 120, height: 180, color: [200, 190, 180] }).pixels],
    ['random noise', makeNoiseImage({ width: 120, height: 180 }).pixels],
  ] as [string, RgbaImage][])('finds no subject in %s', (_, image) => {
    const { coverage } = segmentForeground(image)
    expect(coverage).toBeLessThan(0.02)
  })

  it('reports a busy backdrop as noise', () => {
    const plain = segmentForeground(drawShopper({ width: 120, height: 180 }).image)
    const noisy = segmentForeground(makeNoiseImage({ width: 120, height: 180 }).pixels)
    expect(plain.backgroundNoise).toBeLessThan(5)
    expect(noisy.backgroundNoise).toBeGreaterThan(50)
  })
})
