import { describe, expect, it } from 'vitest'
import { airUnderArms, compositeGarment } from '../../../shared/engine/local/composite.ts'
import { fitGarment } from '../../../shared/engine/local/fit.ts'
import type { GarmentCutout } from '../../../shared/engine/local/garment.ts'
import { defaultLayout, type BodyLayout } from '../../../shared/engine/local/person.ts'
import type { Mask } from '../../../shared/engine/local/segmentation.ts'
import { createRgba, type RgbaImage } from '../../../shared/images/codecs/raster.ts'

/**
 * The local engine carries the shopper's folds onto the garment it puts on (shared/engine/local/composite.ts, shadingMap):
 * a shadow is the same on any cloth. The print of the shopper's own top is not: striped tops showed their stripes
 * through a pale gown (photo 6217, studio 8418).
 */
const W = 200
const H = 400
const unit = { x: 1, y: 1 }
type Rgb = [number, number, number]

const figure = (): BodyLayout => ({ ...defaultLayout(W, H), found: true })

/** The torso between the layout's spans, shoulders to hips: the whole figure the mask shows. */
function torsoMask(body: BodyLayout): Mask {
  const data = new Uint8Array(W * H)
  for (let y = Math.ceil(body.shoulderY); y < body.hipY; y++)
    for (let x = Math.ceil(body.torso.left[y]); x <= body.torso.right[y]; x++) data[y * W + x] = 1
  return { width: W, height: H, data }
}

/** A plain top of one grey, wide enough to cover the torso at every row. */
function greyTop(level = 160): GarmentCutout {
  const image = createRgba(100, 120)
  for (let i = 0; i < 100 * 120; i++) image.data.set([level, level, level, 255], i * 4)
  const rows = (v: number) => new Float32Array(120).fill(v)
  return {
    image,
    left: rows(0),
    right: rows(100),
    torsoLeft: rows(20),
    torsoRight: rows(80),
    topWidth: 100,
    waistRow: 0.35,
    hasLegs: false,
    separated: true,
  }
}

/** A shopper photo whose top shows `colour(x, y)` on the torso, on a mid-grey wall. */
function shopper(body: BodyLayout, colour: (x: number, y: number) => Rgb): RgbaImage {
  const photo = createRgba(W, H)
  const mask = torsoMask(body)
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) photo.data.set([...(mask.data[y * W + x] ? colour(x, y) : ([120, 120, 120] as Rgb)), 255], (y * W + x) * 4)
  return photo
}

/** The grey top put on the shopper: the mean luminance of each row's middle, from below the shoulders to the waist. */
function dressedRows(body: BodyLayout, photo: RgbaImage): number[] {
  const mask = torsoMask(body)
  const top = greyTop()
  compositeGarment(photo, mask, unit, top, fitGarment(top, 'top', body, unit), body.figureHeight, airUnderArms(mask, body, 'top'))
  const rows: number[] = []
  for (let y = Math.ceil(body.shoulderY + 0.04 * body.figureHeight); y < body.waistY; y++) {
    let sum = 0
    let n = 0
    for (let x = W / 2 - 12; x <= W / 2 + 12; x++, n++) {
      const o = (y * W + x) * 4
      sum += 0.299 * photo.data[o] + 0.587 * photo.data[o + 1] + 0.114 * photo.data[o + 2]
    }
    rows.push(sum / n)
  }
  return rows
}

const spread = (values: number[]) => Math.max(...values) - Math.min(...values)

/**
 * How much more unevenly the garment comes out on a top striped in `a` and `b` than on a plain top of either: a plain
 * top's own light (lit a little by the wall at its edges) is no print.
 */
function printShown(a: Rgb, b: Rgb, period: number): number {
  const body = figure()
  const striped = spread(dressedRows(body, shopper(body, stripes(body, a, b, period))))
  return (
    striped -
    Math.max(
      ...[a, b].map((c) =>
        spread(
          dressedRows(
            body,
            shopper(body, () => c),
          ),
        ),
      ),
    )
  )
}

/** Horizontal stripes `period` of the figure's height apart, half of each in `a` and half in `b`. */
const stripes = (body: BodyLayout, a: Rgb, b: Rgb, period: number) => (_: number, y: number) =>
  Math.floor((y - body.shoulderY) / ((period * body.figureHeight) / 2)) % 2 === 0 ? a : b

describe("the shopper's folds on the garment put on", () => {
  it('carries a shadow across the top onto the garment', () => {
    const body = figure()
    // A plain blue top with a shadow 0.02 of the height deep across it, a third of the way down the torso: 20% darker.
    const shadowAt = body.shoulderY + 0.35 * (body.waistY - body.shoulderY)
    const rows = dressedRows(
      body,
      shopper(body, (_, y) => (Math.abs(y - shadowAt) < 0.01 * body.figureHeight ? [48, 72, 136] : [60, 90, 170])),
    )
    const at = Math.round(shadowAt - (body.shoulderY + 0.04 * body.figureHeight))
    const away = rows[at + Math.round(0.06 * body.figureHeight)]
    expect(rows[at]).toBeLessThan(0.93 * away)
  })

  it('leaves out the stripes of a top in two tones of one hue (navy over pink) and of two hues (lime over grey)', () => {
    const body = figure()
    const navyPink = dressedRows(body, shopper(body, stripes(body, [70, 90, 170], [240, 170, 200], 0.025)))
    const limeGrey = dressedRows(body, shopper(body, stripes(body, [150, 210, 110], [120, 124, 120], 0.06)))
    // The garment's grey, 160, shaded by the shopper's stripes as folds came out 130 to 190.
    expect(spread(navyPink)).toBeLessThan(8)
    expect(spread(limeGrey)).toBeLessThan(8)
  })

  // Stripes of two hues (a channel rises as another falls): left out at any width.
  const HUES: [string, Rgb, Rgb][] = [
    ['lime over grey', [150, 210, 110], [120, 124, 120]],
    ['grey over orange', [128, 128, 128], [235, 140, 40]],
    ['purple over yellow', [120, 60, 150], [230, 210, 70]],
  ]
  it.each(HUES.flatMap(([name, a, b]) => [0.015, 0.025, 0.04].map((period) => [name, period, a, b] as const)))(
    'leaves out %s stripes %f of the height apart: the garment as even as on a plain top of either',
    (_, period, a, b) => expect(printShown(a, b, period)).toBeLessThan(12),
  )

  // Stripes of one hue, lighter and darker, move every channel the same way: they are told from folds by how often they
  // cross the fold blur, which stripes about 0.025 of the height apart do. Known limits: such stripes as wide as a fold
  // (0.04 apart) are still carried as folds (64 levels on the grey for navy over white); finer ones (0.015) leave a band
  // or two where they beat against the shading's half-resolution grid (35).
  const TONES: [string, Rgb, Rgb][] = [
    ['navy over white', [30, 40, 90], [235, 235, 235]],
    ['red over white', [190, 30, 40], [240, 240, 240]],
    ['black over white', [20, 20, 20], [230, 230, 230]],
    ['blue over pink', [80, 100, 180], [240, 170, 200]],
  ]
  it.each(TONES)('leaves out %s stripes 0.025 of the height apart', (_, a, b) => expect(printShown(a, b, 0.025)).toBeLessThan(12))
})
