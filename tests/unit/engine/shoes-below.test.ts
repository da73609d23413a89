import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { drawShopper } from '../../../devstack/samples/shopper-photo.ts'
import { readShopper } from '../../../shared/engine/local/shopper-reading.ts'
import { decodeImage } from '../../../shared/images/codecs/index.ts'
import { judge } from '../../support/scenes/oracle.ts'
import { localEngineResult, measuredAsServed, tuningScene } from '../quality/check-support.ts'
import { readScene } from '../../support/scenes/reading.ts'

type Rgb = [number, number, number]

/** The sample shopper's shoes (devstack/samples/shopper-photo.ts), repainted below. */
const SAMPLE_SHOES: Rgb = [28, 28, 30]

/**
 * A dim room: the sample shopper in a skirt over legs of the floor's colour, on a floor of one colour from the top of
 * the frame down, the shoes repainted `shoes` (the floor's colour: no shoes to see), and grain of ±`grain`.
 */
function dimRoom(o: { floor: Rgb; shirt: Rgb; skirt: Rgb; shoes: Rgb; legs: number; hem: number; grain: number; seed: number }) {
  const { image, geometry: g } = drawShopper({
    width: 240,
    height: 320,
    background: o.floor,
    shirtColor: o.shirt,
    trouserColor: o.floor.map((v) => v + o.legs) as Rgb,
    skinTone: o.floor.map((v) => v + o.legs) as Rgb,
    seed: o.seed,
  })
  const H = g.figureHeight
  const at = (f: number) => g.headTop + f * H
  const { width, data } = image
  let state = o.seed
  const grain = () => {
    state = (state * 1103515245 + 12345) % 2147483648
    return ((state / 2147483648) * 2 - 1) * o.grain
  }
  for (let y = 0; y < image.height; y++)
    for (let x = 0; x < width; x++) {
      const p = (y * width + x) * 4
      const shoe = data[p] === SAMPLE_SHOES[0] && data[p + 1] === SAMPLE_SHOES[1] && data[p + 2] === SAMPLE_SHOES[2]
      // A skirt flaring from the hips (0.44 of the stature) to its hem.
      const t = (y - at(0.44)) / (at(o.hem) - at(0.44))
      const skirt = t >= 0 && t <= 1 && Math.abs(x - g.centreX) <= (0.11 + 0.05 * t) * H
      const colour = skirt ? o.skirt : shoe ? o.shoes : undefined
      if (colour) data.set(colour, p)
      const n = grain()
      for (let c = 0; c < 3; c++) data[p + c] = Math.max(0, Math.min(255, data[p + c] + n))
    }
  return { image, g, hemY: at(o.hem) }
}

const dark = fc.tuple(fc.integer({ min: 14, max: 50 }), fc.integer({ min: 12, max: 40 }), fc.integer({ min: 8, max: 36 }))
const colour = fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }))
const apart = (a: Rgb, b: Rgb) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2])

describe('legs lost on a dark floor between a skirt and the shoes', () => {
  it.each([
    ['dim', 11104],
    ['dim', 6139],
  ] as const)('reads %s %i standing on its shoes, its stature within 4% of the truth', (style, seed) => {
    // A dark skirt's hem ended the silhouette (0.74 and 0.78 of the stature); the engine put trousers on to its hem.
    const { truth, analysis, off } = readScene(style, seed)
    expect(truth.fullLength).toBe(true)
    expect(analysis.body.feetVisible).toBe(true)
    expect(off(analysis.body.floorY, truth.floorY)).toBeLessThan(0.04)
  })

  // 18-33 s on 2 cores in a whole run (2026-12-01): over the default 30 s once, as the property tests of the readings are given.
  it('stands a figure on shoes of another colour than the floor, whatever the colours, the hem and the grain', { timeout: 120_000 }, () => {
    const room = fc.record({
      floor: dark,
      shirt: colour,
      skirt: colour,
      shoes: colour,
      legs: fc.integer({ min: -4, max: 4 }),
      hem: fc.double({ min: 0.62, max: 0.78, noNaN: true }),
      grain: fc.integer({ min: 0, max: 6 }),
      seed: fc.integer({ min: 1, max: 1_000_000 }),
    })
    let read = 0
    fc.assert(
      fc.property(room, (o) => {
        fc.pre(apart(o.shirt, o.floor) > 60 && apart(o.skirt, o.floor) > 60 && apart(o.shoes, o.floor) > 60)
        const { image, g } = dimRoom(o)
        const { body } = readShopper(image)
        fc.pre(body.found)
        read++
        expect(Math.abs(body.floorY - g.floorY) / g.figureHeight).toBeLessThan(0.04)
      }),
      { numRuns: 40 },
    )
    // Found as a person in most rooms drawn: the property is not held by rooms skipped.
    expect(read).toBeGreaterThanOrEqual(30)
  })

  it('leaves a figure with no shoes to see standing on its hem', () => {
    let read = 0
    fc.assert(
      fc.property(
        dark,
        colour,
        colour,
        fc.double({ min: 0.62, max: 0.78, noNaN: true }),
        fc.integer({ min: 1, max: 1e6 }),
        (floor, shirt, skirt, hem, seed) => {
          fc.pre(apart(shirt, floor) > 60 && apart(skirt, floor) > 60)
          const { image, g, hemY } = dimRoom({ floor, shirt, skirt, shoes: floor, legs: 0, hem, grain: 3, seed })
          const { body } = readShopper(image)
          fc.pre(body.found)
          read++
          expect(body.floorY).toBeLessThan(hemY + 0.05 * g.figureHeight)
        },
      ),
      { numRuns: 25 },
    )
    expect(read).toBeGreaterThanOrEqual(18)
  })

  it("takes no grain of a floor at the frame's edge for shoes (photo 287, read as the measured check reads it)", async () => {
    // The check reads the photo on its 256 px copy of the 512 px decode: there the silhouette ends at the true soles,
    // 0.12 of the stature above the frame's edge, and a few pixels of the floor's grain in its last rows stood 0.1 lower.
    // Taken for shoes, they made the figure a tenth taller and good trousers were refused on the torso.
    const s = tuningScene(287, 'trousers')
    const jpeg = await localEngineResult(s, 'bottom')
    expect(judge(s, decodeImage(jpeg, 'jpeg')).broken).toBe(false)
    const m = measuredAsServed(s, jpeg, 'bottom', 'trousers')
    expect(m.issues).toEqual([])
    expect(m.measures.statureAtSize).toBeGreaterThan(0.95)
  })
})
