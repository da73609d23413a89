import { describe, expect, it } from 'vitest'
import type { RgbaImage } from '../../../shared/images/codecs/raster.ts'
import { paintedComposite, received } from '../../support/scenes/composites.ts'
import { judge } from '../../support/scenes/oracle.ts'
import { PART, type ProductKind, type Scene } from '../../support/scenes/types.ts'
import { measureScene, SLOW, tuningScene } from './check-support.ts'

describe('the figure’s height when the photo does not show it whole', { timeout: SLOW }, () => {
  it('reads a figure cut at the knees from its shoulders: a jacket down to the shins is on the wrong region', () => {
    // Tuning flat 15: cut between the knees and the ankles; the landmarks read the figure 1.21 times its height, so the
    // shins lay below the regions measured and a jacket hung to them passed.
    const s = kneeScene(15, 'jacket')
    const long = paintedComposite(s, { parts: [PART.torso, PART.hips, PART.thigh, PART.shin] })
    expect(judge(s, long).issues).toContain('garment_wrong_region')
    const m = measureScene(s, long)
    expect(m.issues).toContain('garment_wrong_region')
    expect(m.measures['cover.shins']).toBeGreaterThan(0.3)
  })

  it('measures both ways a figure read far shorter than its shoulders give, and fails trousers stopping at the knees', () => {
    // Tuning dim 264: dark shins on a dark floor; the silhouette ended at the knees and read 0.8 of the figure, so
    // trousers from the chest to the knees covered "thighs and shins" of that figure. The reading now stands the figure
    // on its shoes (cut-legs.ts shoesBelow); with the shoes painted out in the floor's colour, it is read short again.
    const s = tuningScene(264, 'trousers')
    const good = paintedComposite(s)
    expect(judge(s, good).broken).toBe(false)
    const short = paintedComposite(s, { parts: [PART.hips, PART.thigh] })
    expect(judge(s, short).issues).toContain('garment_missing')
    expect(measureScene(s, good).measures.statureRead).toBeGreaterThan(0.95)
    expect(measureScene(s, good).passed).toBe(true)
    expect(measureScene(s, short).issues).toContain('garment_missing')

    const shopper = withoutShoes(s, received(s))
    const passed = measureScene(s, withoutShoes(s, good), { shopper })
    expect(passed.measures.statureRead).toBeLessThan(0.84)
    expect(passed.measures['shoulders.cover.shins']).toBeGreaterThan(0.4)
    expect(passed.passed).toBe(true)
    const failed = measureScene(s, withoutShoes(s, short), { shopper })
    expect(failed.passed).toBe(false)
    expect(failed.issues).toContain('garment_missing')
  })

  it('measures the shins the silhouette lost below a skirt, where the shoulders put them, and fails trousers to the hem', () => {
    // Tuning dim 6134: a skirt over dark legs in a dim room; the silhouette ended at the hem (0.77 of the figure), and
    // measured by the shoulders it had no shins at all: trousers stopping at the hem passed both ways. Read on its
    // shoes, and with them painted out.
    const s = tuningScene(6134, 'trousers')
    const short = paintedComposite(s, { parts: [PART.hips, PART.thigh] })
    expect(judge(s, short).issues).toContain('garment_missing')
    const good = paintedComposite(s)
    expect(judge(s, good).broken).toBe(false)
    expect(measureScene(s, short).issues).toContain('garment_missing')
    expect(measureScene(s, good).passed).toBe(true)

    const shopper = withoutShoes(s, received(s))
    const failed = measureScene(s, withoutShoes(s, short), { shopper })
    expect(failed.measures.statureRead).toBeLessThan(0.84)
    expect(failed.measures['shoulders.cover.shins']).toBeLessThan(0.4)
    expect(failed.issues).toContain('garment_missing')
    // Down to the ankles, the same trousers cover the carried shins.
    expect(measureScene(s, withoutShoes(s, good), { shopper }).measures['shoulders.cover.shins']).toBeGreaterThan(0.4)
  })
})

/** An image of the scene with the shoes' box painted, row by row, in the floor's colour just beside it. */
function withoutShoes(s: Scene, image: RgbaImage): RgbaImage {
  const out = { ...image, data: image.data.slice() }
  const [x0, y0, x1, y1] = s.truth.shopper.boxes.feet!.map(Math.round)
  const beside = Math.max(0, x0 - 4)
  for (let y = Math.max(0, y0 - 2); y <= Math.min(image.height - 1, y1 + 2); y++) {
    const floor = out.data.slice((y * image.width + beside) * 4, (y * image.width + beside) * 4 + 4)
    for (let x = beside; x <= Math.min(image.width - 1, x1 + 4); x++) out.data.set(floor, (y * image.width + x) * 4)
  }
  return out
}

describe('a figure cut at the knees whose top is the wall’s colour', { timeout: SLOW }, () => {
  it('measures the hips from the waistband below the hidden top: a skirt on the thighs is missing', () => {
    // Tuning soft 3281: a pink top on a pink wall, a bun on the head. Its shoulders' distance from the top of the bun read
    // the figure 1.3 times its height, the hips band lay on the thighs, and a skirt put on the thighs passed.
    const s = kneeScene(3281, 'skirt')
    const low = paintedComposite(s, { parts: [PART.thigh] })
    expect(judge(s, low).issues).toContain('garment_missing')
    const m = measureScene(s, low)
    expect(m.issues).toContain('garment_missing')
    expect(m.measures['cover.hips']).toBeLessThan(0.5)
  })

  it('takes the hidden torso down to the waistband as the body: a jacket on it is not off the body', () => {
    // Tuning soft 6296: a light top on a light wall, arms held out and lost with it, a strand of long hair alone beside
    // the torso's centre. A jacket on the torso was measured off the body; slid down to the hips, it is missing.
    const s = kneeScene(6296, 'jacket')
    const low = paintedComposite(s, { parts: [PART.hips, PART.thigh] })
    expect(judge(s, low).broken).toBe(true)
    expect(measureScene(s, low).passed).toBe(false)
  })
})

/** A tuning scene cut at the knees whose product painted where it belongs is good to the oracle and passes the check. */
function kneeScene(seed: number, kind: ProductKind): Scene {
  const s = tuningScene(seed, kind)
  expect(s.truth.shopper.framing).toBe('knee')
  const good = paintedComposite(s)
  expect(judge(s, good).broken).toBe(false)
  expect(measureScene(s, good).passed).toBe(true)
  return s
}
