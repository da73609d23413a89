import { describe, expect, it } from 'vitest'
import type { RgbaImage } from '../../../shared/images/codecs/raster.ts'
import { defaultLayout, type BodyLayout } from '../../../shared/engine/local/person.ts'
import type { Mask } from '../../../shared/engine/local/segmentation.ts'
import { readHem } from '../../../shared/engine/local/waist.ts'
import { readScene } from '../../support/scenes/reading.ts'

type Rgb = [number, number, number]

/** A 200×400 photo: a figure 380 rows tall from row 10, its top from the shoulders to `hem`, its bottoms below. */
function figure(top: (y: number) => Rgb, bottoms: Rgb, hem: number, gain = 1): { photo: RgbaImage; body: BodyLayout } {
  const width = 200
  const height = 400
  const data = new Uint8Array(width * height * 4)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const inside = x >= 70 && x < 130 && y >= 75 && y < 390
      const colour: Rgb = !inside ? [222, 216, 205] : y < hem ? top(y) : bottoms
      data.set([...colour.map((c) => Math.round(c * gain)), 255], (y * width + x) * 4)
    }
  }
  const layout = defaultLayout(width, height)
  const body: BodyLayout = {
    ...layout,
    found: true,
    headTop: 10,
    figureHeight: 380,
    centreX: 100,
    shoulderWidth: 70,
    shoulderY: 75,
    waistY: 10 + 0.4 * 380,
  }
  return { photo: { width, height, data }, body }
}

describe('the hem of the top, where bottoms go on', () => {
  const trueHem = 10 + 0.4 * 380

  it.each([-0.12, -0.07, -0.03, 0.03, 0.05, 0.08])('finds the hem from a waist read %f of the stature off', (off) => {
    const { photo, body } = figure(() => [40, 90, 160], [60, 60, 70], trueHem)
    const read = readHem(photo, { ...body, waistY: trueHem - off * 380 })
    expect(Math.abs(read.hemY! - trueHem)).toBeLessThanOrEqual(1)
  })

  it("passes over a striped top's bars and finds its hem", () => {
    const stripes = (y: number): Rgb => (Math.floor(y / 5) % 2 ? [240, 240, 235] : [30, 40, 120])
    const { photo, body } = figure(stripes, [150, 40, 40], trueHem)
    const read = readHem(photo, { ...body, waistY: trueHem + 0.04 * 380 })
    // Within a hundredth of the stature: the last bar above the hem weighs on the means either side of it.
    expect(Math.abs(read.hemY! - trueHem)).toBeLessThan(0.01 * 380)
  })

  it("passes over a top's bars too broad to average out, whose edges stand out more than its hem", () => {
    // Dark and green bars 7 rows each (the means take 11), over yellow trousers: a bar's edge differs more than the hem.
    const bars = (y: number): Rgb => (Math.floor((y - 2) / 7) % 2 ? [36, 38, 46] : [176, 223, 142])
    const { photo, body } = figure(bars, [255, 230, 85], trueHem)
    const read = readHem(photo, { ...body, waistY: trueHem + 0.01 * 380 })
    expect(Math.abs(read.hemY! - trueHem)).toBeLessThanOrEqual(1)
  })

  it('finds the hem in a dim room, where every colour lies near black', () => {
    const { photo, body } = figure(() => [150, 60, 90], [40, 50, 110], trueHem, 0.35)
    const read = readHem(photo, { ...body, waistY: trueHem + 0.05 * 380 })
    expect(Math.abs(read.hemY! - trueHem)).toBeLessThanOrEqual(1)
  })

  // Dim 10839: a grey-blue top over navy trousers, 7 apart across the hem in a room near black. Here 8.6 apart (under
  // the 16 asked of a lit band): dim, the contrast asked goes down with the band's lightness, to 0.35 of it at most.
  it('finds the hem of a dark top over darker bottoms in a dim room, though their colours differ by less than 16', () => {
    const { photo, body } = figure(() => [118, 131, 152], [60, 72, 115], trueHem, 0.35)
    const read = readHem(photo, { ...body, waistY: trueHem - 0.06 * 380 })
    expect(Math.abs(read.hemY! - trueHem)).toBeLessThanOrEqual(1)
  })

  it('still reads no hem in a dim room between colours too near to tell there', () => {
    const { photo, body } = figure(() => [120, 30, 50], [128, 36, 54], trueHem, 0.35)
    expect(readHem(photo, { ...body, waistY: trueHem + 0.05 * 380 }).hemY).toBeUndefined()
  })

  // Seeds not looked at while the dim rule was made: where bottoms go on (the hem, else the silhouette's waist) came 0.05
  // of the stature or more off the true waist on 18 of these 60 dim photos before it, on 8 after.
  it('puts the top of the bottoms near the true waist on most dim photos of seeds 50004-50299', { timeout: 60_000 }, () => {
    let off = 0
    for (let seed = 50_004; seed < 50_300; seed += 5) {
      const { truth, analysis, off: apart } = readScene('dim', seed)
      const body = analysis.body
      if (body.found && apart(body.hemY ?? body.waistY, truth.boxes.torso[3]) > 0.05) off++
    }
    expect(off).toBeLessThanOrEqual(11)
  })

  it('keeps the layout when the top and the bottoms are one colour (a dress) or too near to tell', () => {
    const same = figure(() => [120, 30, 50], [120, 30, 50], trueHem)
    const body = { ...same.body, waistY: trueHem + 0.05 * 380 }
    expect(readHem(same.photo, body)).toBe(body)
    const near = figure(() => [120, 30, 50], [126, 34, 52], trueHem)
    expect(readHem(near.photo, body).hemY).toBeUndefined()
  })

  it('looks for the hem only near the waist the silhouette gives: a hem a fifth of the stature away is not it', () => {
    const { photo, body } = figure(() => [40, 90, 160], [60, 60, 70], trueHem + 0.2 * 380)
    expect(readHem(photo, body).hemY).toBeUndefined()
  })

  it('never reads the hem nearer the shoulders than a tenth of the stature: the top begins there', () => {
    // A waist read 0.1 high puts the reach's top above the shoulders, where the backdrop meets the top.
    const { photo, body } = figure(() => [40, 90, 160], [40, 90, 160], trueHem)
    const read = readHem(photo, { ...body, waistY: trueHem - 0.1 * 380 })
    expect(read.hemY).toBeUndefined()
  })

  /** The silhouette of figure(): its top from the shoulders to `hem`, and below a gap, from row `legsFrom`, legs at `legs`. */
  function silhouette(hem: number, legsFrom: number, legs: [number, number][]): Mask {
    const mask: Mask = { width: 200, height: 400, data: new Uint8Array(200 * 400) }
    for (let y = 75; y < 390; y++) {
      const spans: [number, number][] = y < hem ? [[70, 130]] : y >= legsFrom ? legs : []
      for (const [a, b] of spans) mask.data.fill(1, y * 200 + a, y * 200 + b)
    }
    return mask
  }
  // A top near the backdrop's colour (CIEDE2000 under the hem's 16) over bottoms of the backdrop's own: no colour tells.
  const pale: Rgb = [236, 226, 196]
  const backdrop: Rgb = [222, 216, 205]

  it('finds the hem where the silhouette stops below the top, over bottoms of the backdrop’s colour', () => {
    const { photo, body } = figure(() => pale, backdrop, trueHem)
    const at = { ...body, waistY: trueHem - 0.06 * 380 }
    expect(readHem(photo, at).hemY).toBeUndefined()
    expect(readHem(photo, at, silhouette(trueHem, 300, [[88, 112]])).hemY).toBe(trueHem)
  })

  it('takes no gap for the hem where two legs apart leave the centre empty down to the ankles, nor a gap of a row or two', () => {
    const { photo, body } = figure(() => pale, backdrop, trueHem)
    const at = { ...body, waistY: trueHem - 0.06 * 380 }
    const apart: [number, number][] = [
      [70, 84],
      [116, 130],
    ]
    expect(readHem(photo, at, silhouette(trueHem, trueHem, apart)).hemY).toBeUndefined()
    expect(readHem(photo, at, silhouette(trueHem, trueHem + 3, [[88, 112]])).hemY).toBeUndefined()
  })

  it('reads no hem for a figure not found', () => {
    const { photo, body } = figure(() => [40, 90, 160], [60, 60, 70], trueHem)
    const absent = { ...body, found: false, waistY: trueHem + 20 }
    expect(readHem(photo, absent)).toBe(absent)
  })

  // Tuning scenes whose silhouette put the waist low: dim 3119 (leggings joined under a skirt's place, 0.067 low; a skirt
  // put on there was charged broken), studio 63 (0.080), dim 89 (0.073).
  // Studio 8218: black and green bars over yellow trousers, the hem read at a bar's edge and white trousers put on over
  // the top, charged. Dim 7054: the waist read 0.118 low, the hem out of reach before the reach was widened. Soft 206:
  // bars as broad as the window, the neckline's first read as the hem once the reach was widened, before the bars'
  // colours were looked for two windows off. Studio 6153: a pale top over a white skirt lost on the sweep, the colours
  // across the hem 16 apart, the waist read 0.06 high and trousers put on there, charged once the check took the legs
  // where they stand. Dim 10839: a figure cut at the knees, read short (its hair lost in the dark), a skirt put on 0.06 of
  // the stature above the hem of a top 7 from the trousers' colour, charged.
  it.each([
    ['dim', 3119],
    ['studio', 63],
    ['dim', 89],
    ['studio', 8218],
    ['dim', 7054],
    ['soft', 206],
    ['studio', 6153],
    ['dim', 10839],
  ] as const)('reads %s %i with the hem within 0.01 of the stature of the true waist', (style, seed) => {
    const { truth, analysis, off } = readScene(style, seed)
    expect(analysis.body.found).toBe(true)
    expect(off(analysis.body.hemY!, truth.boxes.torso[3])).toBeLessThan(0.01)
  })
})
