import fc from 'fast-check'
import type { RgbaImage } from '../../../shared/images/codecs/raster.ts'
import { decodeImage } from '../../../shared/images/codecs/index.ts'
import { QUALITY_THRESHOLDS } from '../../../shared/quality/measure.ts'
import { describe, expect, it } from 'vitest'
import { farColour, paintedComposite, received, shifted } from '../../support/scenes/composites.ts'
import { SETS, styleOf } from '../../support/scenes/held-out.ts'
import { scene, type Scene } from '../../support/scenes/index.ts'
import { judge } from '../../support/scenes/oracle.ts'
import { PART } from '../../support/scenes/types.ts'
import { localEngineResult, measuredAsServed, measureScene, SLOW, tuningScene } from './check-support.ts'

/**
 * `composite` with the shopper photo put back in strips across the torso (default: two, each a fifth of its height),
 * each strip given as where it starts and its height, in shares of the torso's height.
 */
function tornAcross(
  s: Scene,
  composite: RgbaImage,
  strips: [number, number][] = [
    [0.3, 0.2],
    [0.65, 0.2],
  ],
): RgbaImage {
  const photo = received(s)
  const [, top, , bottom] = s.truth.shopper.boxes.torso
  const height = bottom - top
  for (const [from, size] of strips) {
    const y0 = Math.round(top + from * height)
    const y1 = Math.round(top + (from + size) * height)
    composite.data.set(photo.data.subarray(y0 * photo.width * 4, y1 * photo.width * 4), y0 * photo.width * 4)
  }
  return composite
}

/** A tuning scene's shirt as the local engine puts it on: the oracle's judgement of it and the check as the service runs it. */
async function engineShirt(seed: number) {
  const s = tuningScene(seed, 'shirt')
  const jpeg = await localEngineResult(s, 'top')
  return { s, judgement: judge(s, decodeImage(jpeg, 'jpeg')), m: measuredAsServed(s, jpeg, 'top') }
}

describe('the coverage check', { timeout: SLOW }, () => {
  it('passes trousers over the legs, and fails the photo sent back unchanged: the garment is missing', () => {
    const s = tuningScene(11, 'trousers')
    const good = measureScene(s, paintedComposite(s))
    expect(good.measures['cover.thighs']).toBeGreaterThan(0.5)
    expect(good.passed).toBe(true)
    expect(measureScene(s, received(s))).toMatchObject({ passed: false, issues: ['garment_missing'] })
  })

  it('fails trousers cut short at the knees, and trousers painted over the torso too', () => {
    const s = tuningScene(11, 'trousers')
    expect(measureScene(s, paintedComposite(s, { parts: [PART.thigh, PART.hips] })).issues).toContain('garment_missing')
    const spread = measureScene(s, paintedComposite(s, { parts: [PART.thigh, PART.shin, PART.hips, PART.torso] }))
    expect(spread.issues).toContain('garment_wrong_region')
  })

  it('keeps on the body a top put on a torso the silhouette lost (a white top on a white sweep)', () => {
    // Tuning studio 3103: the shopper's white top vanishes into the paper, so the silhouette is arms, head and legs.
    const s = tuningScene(3103, 'tshirt')
    const m = measureScene(s, paintedComposite(s))
    expect(m.issues).not.toContain('garment_off_body')
    expect(m.passed).toBe(true)
    // Still off the body when it is moved off it.
    const moved = measureScene(s, paintedComposite(s, { offsetX: 0.3 * s.truth.shopper.figureHeight }))
    expect(moved.passed).toBe(false)
  })

  it('fails trousers on legs the silhouette lost in the frame: nothing there shows them put on', () => {
    // Tuning studio 7418: a white skirt over pale legs on the white sweep; the figure is read (head, top, arms, shoes), its
    // thighs and shins lie in the frame, and the silhouette shows none of them. Trousers pasted across the top and arms
    // passed: no required region could be read.
    const s = tuningScene(7418, 'trousers')
    const unchanged = measureScene(s, received(s))
    expect(unchanged.measures.bodyFound).toBe(1)
    // The legs are taken where they stand, between the top and the shoes (withLostLegRows): nothing covers them.
    expect(unchanged.measures['cover.thighs']).toBe(0)
    expect(unchanged.issues).toContain('garment_missing')
    const onTheTop = measureScene(s, paintedComposite(s, { parts: [PART.torso, PART.upperArm, PART.forearm] }))
    expect(onTheTop.passed).toBe(false)
  })

  it('keeps on the body trousers on dark legs the silhouette lost between the hips and the shoes (dim room)', () => {
    // Tuning dim 269, 3024, 6239, 7289: dark trousers or a dark skirt on a dark floor; the silhouette is the head, the
    // top and the shoes. Trousers painted on the true legs were off the body by 1.9 to 2.3 times the area they cover.
    for (const seed of [269, 3024, 6239, 7289]) {
      const s = tuningScene(seed, 'trousers')
      const good = measureScene(s, paintedComposite(s))
      expect(good.measures.offBody, s.description).toBeLessThan(0.05)
      expect(good.passed, s.description).toBe(true)
      // Sent back unchanged: missing, but for 6239, whose legs in that light already show the product's colours (alike).
      if (seed !== 6239) expect(measureScene(s, received(s)).issues, s.description).toContain('garment_missing')
      const moved = measureScene(s, paintedComposite(s, { offsetX: 0.25 * s.truth.shopper.figureHeight }))
      expect(moved.passed, s.description).toBe(false)
    }
  })

  it("fails a top torn across, the shopper's own top showing in strips between strips of it", () => {
    // Tuning photo 10517: the engine laid a shirt in strips, the dotted top between them; the strips covered 62% of the
    // torso's band, so coverage alone passed it.
    for (const [seed, kind] of [
      [1, 'shirt'],
      [4, 'tshirt'],
      [18, 'jacket'],
      [30, 'shirt'],
      [72, 'tshirt'],
    ] as const) {
      const s = tuningScene(seed, kind)
      const good = measureScene(s, paintedComposite(s))
      expect(good.measures.tornTorso, s.description).toBeLessThan(QUALITY_THRESHOLDS.torn / 3)
      expect(good.passed, s.description).toBe(true)
      const torn = tornAcross(s, paintedComposite(s))
      expect(judge(s, torn).broken, s.description).toBe(true)
      const m = measureScene(s, torn)
      expect(m.measures.tornTorso, s.description).toBeGreaterThan(QUALITY_THRESHOLDS.torn)
      expect(m.issues, s.description).toContain('garment_missing')
    }
  })

  it('never takes a good top for a torn one, and fails the torn ones the oracle calls broken (property over unseen tuning seeds)', () => {
    // Seeds 20000-29999: tuning seeds no rule here was fitted to. Two or three strips, an eighth to over a fifth of the torso
    // each, anywhere down it.
    const strip = fc.tuple(fc.double({ min: 0.05, max: 0.75, noNaN: true }), fc.double({ min: 0.12, max: 0.22, noNaN: true }))
    fc.assert(
      fc.property(fc.integer({ min: 20_000, max: 29_999 }), fc.array(strip, { minLength: 2, maxLength: 3 }), (seed, strips) => {
        const s = scene(styleOf(SETS.tuning, seed), seed)
        const kind = s.truth.product.kind
        if (!s.truth.shopper.fullLength || !['tshirt', 'shirt', 'jacket', 'dress'].includes(kind)) return
        const good = measureScene(s, paintedComposite(s))
        if (good.measures.tornTorso !== undefined)
          expect(good.measures.tornTorso, s.description).toBeLessThanOrEqual(QUALITY_THRESHOLDS.torn)
        const torn = tornAcross(s, paintedComposite(s), strips)
        if (!judge(s, torn).broken) return
        expect(measureScene(s, torn).passed, `${JSON.stringify(strips)} ${s.description}`).toBe(false)
      }),
      { numRuns: 40, seed: 30 },
    )
  })

  it("fails the local engine's shirt laid in strips over a dotted top (photo 10517), which coverage alone passed", async () => {
    const s = tuningScene(10517, 'shirt')
    const result = decodeImage(await localEngineResult(s, 'top'), 'jpeg')
    expect(judge(s, result).broken).toBe(true)
    const m = measureScene(s, result)
    expect(m.measures['cover.torso']).toBeGreaterThanOrEqual(QUALITY_THRESHOLDS.cover.torso)
    expect(m.measures.tornTorso).toBeGreaterThan(QUALITY_THRESHOLDS.torn)
    expect(m.issues).toEqual(['garment_missing'])
  })

  it("fails camel trousers cut at the knees over dark legs: bare legs are not the trousers in an engine's shadow", () => {
    // Tuning soft 10666: the legs below a skirt, dark skin, came within 12 of the camel's deepest shading (gain 0.35),
    // so the shins were taken as already wearing the product's colour and not required.
    const s = tuningScene(10666, 'trousers')
    const good = measureScene(s, paintedComposite(s))
    expect(good.passed).toBe(true)
    const cut = paintedComposite(s, { parts: [PART.hips, PART.thigh] })
    expect(judge(s, cut).broken).toBe(true)
    const m = measureScene(s, cut)
    expect(m.measures['alike.shins']).toBeUndefined()
    expect(m.measures['cover.shins']).toBeLessThan(QUALITY_THRESHOLDS.cover.shins)
    expect(m.issues).toContain('garment_missing')
  })

  it('reads dim 10844 whole at both sizes since the lamp rule, and passes the shirt the engine now puts on its torso', async () => {
    // A dim room, a lit shade at the edge reddening the wall above it. Before 2026-11-30 the shade's rows were a band
    // of subject: read on the measuring copy the legs were lost (0.65 of the photo's height), at 320 px whole (0.82, the
    // truth), and the engine laid the shirt on the shoulders alone. This scene was the one test of measuring a figure on
    // both readings (QUALITY_THRESHOLDS.statureAtSizeDoubt). No full-length top of 1–300 and 3001–3400, nor a dim one of
    // 6001–6300 and 7001–7300, reads so differently at the two sizes now: that path has no scene to test it on.
    const { judgement, m } = await engineShirt(10844)
    expect(judgement.broken).toBe(false)
    expect(Math.abs(m.measures.statureAtSize - 1)).toBeLessThan(0.05)
    expect(m.issues).toEqual([])
  })

  it('fails a shirt whose sleeve went on over a dresser the silhouette joined to the hip (dim 13589), not one painted on the body', async () => {
    // A dim room: the dresser beside the figure came out of the segmentation with it, and the local engine laid the
    // shirt's side over it. On the silhouette with the dresser the envelope took it in: off the body 0.
    const { s, judgement, m } = await engineShirt(13589)
    expect(measureScene(s, paintedComposite(s)).passed).toBe(true)
    expect(judgement.issues).toContain('garment_off_body')
    expect(m.measures.blockBeside).toBeGreaterThan(0.02)
    expect(m.measures.offBody).toBeGreaterThan(QUALITY_THRESHOLDS.offBody)
    expect(m.issues).toContain('garment_off_body')
  })

  it('keeps on the body the arms of a broad figure hanging against its torso (soft 11186), with nothing beside it cleared', async () => {
    // Torso and arms are one thick mass here: measured from the backdrop alone, the arms were taken for a block beside
    // the body, and the blouse's sleeves on them were off the body (1.19).
    const { judgement, m } = await engineShirt(11186)
    expect(judgement.broken).toBe(false)
    expect(m.measures.blockBeside).toBe(0)
    expect(m.issues).toEqual([])
  })

  it.each([
    ['dim', 13924, 'skirt', 'hips'],
    ['studio', 13948, 'trousers', 'thighs'],
  ] as const)(
    'fails the %s %i %s the local engine laid over just half of the %s band',
    { timeout: SLOW },
    async (style, seed, kind, region) => {
      // Neither scene was drawn for the check: both came from seeds nobody had looked at, charged before 2026-11-30.
      const s = scene(style, seed)
      const jpeg = await localEngineResult(s, 'bottom')
      expect(judge(s, decodeImage(jpeg, 'jpeg')).issues).toContain('garment_missing')
      const m = measuredAsServed(s, jpeg, 'bottom', kind)
      expect(m.measures[`cover.${region}`]).toBeGreaterThan(0.5)
      expect(m.measures[`cover.${region}`]).toBeLessThan(QUALITY_THRESHOLDS.cover[region])
      expect(m.issues).toContain('garment_missing')
    },
  )

  it('fails the garment moved off the body', () => {
    const s = tuningScene(11, 'trousers')
    const m = measureScene(s, paintedComposite(s, { offsetX: 0.25 * s.truth.shopper.figureHeight }))
    expect(m.passed).toBe(false)
    expect(m.issues.some((i) => i === 'garment_off_body' || i === 'garment_missing')).toBe(true)
  })

  it('never passes a broken composite of a tuning scene the oracle calls broken (property over tuning seeds)', () => {
    // Full-length tuning scenes; a light product over a light top is left out (the oracle's known blind spot).
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 400 }), fc.constantFrom('far-colour', 'unchanged', 'shifted'), (seed, broken) => {
        const s = scene(styleOf(SETS.tuning, seed), seed)
        if (!s.truth.shopper.fullLength || s.description.includes('light on light')) return
        const good = paintedComposite(s)
        const result =
          broken === 'far-colour'
            ? paintedComposite(s, { colours: [farColour(s)] })
            : broken === 'unchanged'
              ? received(s)
              : shifted(good, Math.round(0.05 * s.shopper.width))
        if (!judge(s, result).broken) return
        expect(measureScene(s, result).passed, `${broken} ${s.description}`).toBe(false)
      }),
      { numRuns: 6, seed: 26 },
    )
  })
})
