import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { airUnderArms, compositeGarment } from '../../../shared/engine/local/composite.ts'
import { fitGarment } from '../../../shared/engine/local/fit.ts'
import type { GarmentCutout } from '../../../shared/engine/local/garment.ts'
import { defaultLayout, type BodyLayout } from '../../../shared/engine/local/person.ts'
import type { Mask } from '../../../shared/engine/local/segmentation.ts'
import { createRgba } from '../../../shared/images/codecs/raster.ts'
import type { GarmentCategory } from '../../../shared/engine/types.ts'

const W = 200
const H = 400
const unit = { x: 1, y: 1 }

/**
 * A figure's mask: its torso between the layout's torso spans from the shoulders to the hips, and either side an arm 6
 * pixels wide leaving the torso `gap` pixels out at the shoulders and moving out `slope` pixels a row below them.
 */
function figureMask(body: BodyLayout, gap: number, slope: number): { mask: Mask; arm: (y: number) => [number, number] } {
  const data = new Uint8Array(W * H)
  const arm = (y: number): [number, number] => {
    const out = gap + slope * Math.max(0, y - body.shoulderY)
    return [body.torso.left[0] - out - 6, body.torso.left[0] - out]
  }
  for (let y = Math.ceil(body.shoulderY); y < body.hipY; y++) {
    for (let x = 0; x < W; x++) {
      const [a0, a1] = arm(y)
      const mirrored = W - 1 - x
      const inTorso = x >= body.torso.left[y] && x <= body.torso.right[y]
      const inArm = (x >= a0 && x < a1) || (mirrored >= a0 && mirrored < a1)
      if (inTorso || inArm) data[y * W + x] = 1
    }
  }
  return { mask: { width: W, height: H, data }, arm }
}

/**
 * A plain white top as wide as the photo at every row: it spans the air beside the torso, whatever the arms do. Its
 * body is the middle `body` of its width.
 */
function wideTop(body = 0.4): GarmentCutout {
  const image = createRgba(100, 120)
  image.data.fill(255)
  const rows = (v: number) => new Float32Array(120).fill(v)
  return {
    image,
    left: rows(0),
    right: rows(100),
    torsoLeft: rows(50 - 50 * body),
    torsoRight: rows(50 + 50 * body),
    topWidth: 100,
    waistRow: 0.35,
    hasLegs: false,
    separated: true,
  }
}

/** The garment drawn on a black photo of the figure: which pixels it covered. */
function dressed(body: BodyLayout, mask: Mask, category: GarmentCategory, top = wideTop()): (x: number, y: number) => boolean {
  const photo = createRgba(W, H)
  for (let i = 0; i < W * H; i++) photo.data[i * 4 + 3] = 255
  const placement = fitGarment(top, category, body, unit)
  compositeGarment(photo, mask, unit, top, placement, body.figureHeight, airUnderArms(mask, body, category))
  return (x, y) => photo.data[(y * W + Math.round(x)) * 4] > 0
}

const figure = (): BodyLayout => ({ ...defaultLayout(W, H), found: true })

describe('the air under a raised arm', () => {
  it('keeps a top out of the air between the torso and an arm held out, and on the torso', () => {
    const body = figure()
    const { mask, arm } = figureMask(body, 4, 0.3)
    const covered = dressed(body, mask, 'top')
    const y = Math.round(body.shoulderY + 0.6 * (body.waistY - body.shoulderY))
    const [, armRight] = arm(y)
    const torsoLeft = body.torso.left[y]
    expect(torsoLeft - armRight).toBeGreaterThan(15)
    // Mid-air is bare either side; the torso is dressed to its edge.

    expect(covered((armRight + torsoLeft) / 2, y)).toBe(false)
    expect(covered(W - 1 - (armRight + torsoLeft) / 2, y)).toBe(false)
    expect(covered(W / 2, y)).toBe(true)
    expect(covered(body.torso.left[y] + 2, y)).toBe(true)
  })

  it('keeps a body cut wider than the torso over narrow air beside an arm hanging near, and out of wide air', () => {
    // Arms hanging 12 pixels from the torso, and a top whose body alone is wider than the torso and that air.
    const body = figure()
    const { mask, arm } = figureMask(body, 12, 0)
    const covered = dressed(body, mask, 'top', wideTop(0.9))
    const y = Math.round((body.shoulderY + body.waistY) / 2)
    const [, armRight] = arm(y)
    expect(airUnderArms(mask, body, 'top').spans.some((v) => v > 0)).toBe(true)
    for (let x = Math.ceil(armRight); x < body.torso.left[y]; x++) expect(covered(x, y), `air at ${x}`).toBe(true)
    // Arms held 30 pixels out (0.08 of the height): the same body is kept out of the air's middle.
    const out = figureMask(body, 30, 0)
    const apart = dressed(body, out.mask, 'top', wideTop(0.9))
    expect(apart((out.arm(y)[1] + body.torso.left[y]) / 2, y)).toBe(false)
    expect(apart(W / 2, y)).toBe(true)
  })

  it('leaves a dress its width below the waist, and trousers everywhere, and finds no air beside arms that touch', () => {
    const body = figure()
    const { mask } = figureMask(body, 4, 0.6)
    const { spans, firstRow } = airUnderArms(mask, body, 'dress')
    expect(firstRow + spans.length / 4).toBeLessThanOrEqual(Math.ceil(body.waistY))
    expect(airUnderArms(mask, body, 'bottom').spans.length).toBe(0)
    const touching = figureMask(body, 0, 0)
    const air = airUnderArms(touching.mask, body, 'top').spans
    for (let i = 0; i < air.length; i += 2) expect(air[i + 1] - air[i]).toBeLessThanOrEqual(0)
  })

  it('never dresses air more than a margin from torso and arm, nor leaves the torso bare (property over arm poses)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 30 }), fc.double({ min: 0, max: 1.2, noNaN: true }), (gap, slope) => {
        const body = figure()
        const { mask, arm } = figureMask(body, gap, slope)
        const covered = dressed(body, mask, 'top')
        const margin = 0.01 * body.figureHeight
        for (let y = Math.ceil(body.shoulderY); y < Math.floor(body.hipY); y++) {
          expect(covered(W / 2, y)).toBe(true)
          // An arm out of the frame, or out of reach of the torso, leaves nothing to tell air from a garment's width.
          const [, armRight] = arm(y)
          if (armRight < 1 || body.torso.left[y] - armRight >= 0.3 * body.figureHeight - 1) continue
          for (let x = Math.ceil(armRight + margin + 1); x < body.torso.left[y] - margin - 1; x++) {
            expect(covered(x, y), `air at ${x},${y}`).toBe(false)
          }
        }
      }),
      { numRuns: 40, seed: 26 },
    )
  })
})
