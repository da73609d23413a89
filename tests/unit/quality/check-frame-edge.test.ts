import { describe, expect, it } from 'vitest'
import { decodeImage } from '../../../shared/images/codecs/index.ts'
import { paintedComposite } from '../../support/scenes/composites.ts'
import { judge } from '../../support/scenes/oracle.ts'
import { PART } from '../../support/scenes/types.ts'
import { localEngineResult, measuredAsServed, measureScene, SLOW, tuningScene } from './check-support.ts'

/**
 * Tuning photos the frame cuts between the knees and the ankles (from a survey of the knee-cut photos of gowns and
 * trousers of seeds 1–700). Their shins' band lies mostly below the frame and cannot be read, so it was not required,
 * and a gown or trousers ending at the knees passed (studio 3 on main 9a8fa08).
 */
const CUT = [
  { seed: 3, kind: 'gown' },
  { seed: 198, kind: 'trousers' },
  { seed: 334, kind: 'gown' },
] as const

describe('a gown or trousers on a figure the frame cuts above the ankles', { timeout: SLOW }, () => {
  it('fails one that ends at the knees: the legs on the frame’s last rows show through', () => {
    for (const { seed, kind } of CUT) {
      const s = tuningScene(seed, kind)
      expect(s.truth.shopper.framing, s.description).toBe('knee')
      const parts = kind === 'trousers' ? [PART.hips, PART.thigh] : [PART.torso, PART.hips, PART.thigh]
      const cut = paintedComposite(s, { parts })
      expect(judge(s, cut).broken, s.description).toBe(true)
      const m = measureScene(s, cut)
      // The shins' band could not be read: the frame's last rows stand in for it.
      expect(m.measures['cover.shins'], s.description).toBeUndefined()
      expect(m.measures['cover.frameEdge'], s.description).toBeLessThan(0.1)
      expect(m.issues, s.description).toContain('garment_missing')
    }
  })

  it('reads the legs above the ankles when the frame ends past where its stature puts them', () => {
    // Dim 10484: short dark hair lost in the dark, the stature read off the shoulders 0.71 of the truth, the frame's end
    // at 0.98 of it. The local engine put a gown on to mid-thigh there (charged, once skirts were drawn in); read on the
    // frame's last rows, past the ankles by that stature, the legs were not required at all.
    const s = tuningScene(10484, 'train-gown')
    expect(s.truth.shopper.framing).toBe('knee')
    const cut = paintedComposite(s, { parts: [PART.torso, PART.hips, PART.thigh] })
    expect(judge(s, cut).broken).toBe(true)
    const m = measureScene(s, cut)
    expect(m.measures['cover.frameEdge']).toBeLessThan(0.4)
    expect(m.issues).toContain('garment_missing')
    expect(measureScene(s, paintedComposite(s)).measures['cover.frameEdge']).toBeGreaterThan(0.6)
  })

  it('leaves the legs to the shins’ band where it can be read: trousers to the ankles pass', async () => {
    // Photo 3387: full length, its feet joined to the floor's shadow read as cut off by the frame, its stature read 1.09
    // of the truth. The last rows above where that stature puts the ankles are its shoes, and trousers covering the
    // shins to the ankles were refused when they were read.
    const s = tuningScene(3387, 'trousers')
    const jpeg = await localEngineResult(s, 'bottom')
    expect(judge(s, decodeImage(jpeg, 'jpeg')).broken).toBe(false)
    const m = measuredAsServed(s, jpeg, 'bottom', 'trousers')
    expect(m.measures['cover.shins']).toBeGreaterThan(0.4)
    expect(m.measures['cover.frameEdge']).toBeUndefined()
    expect(m.passed).toBe(true)
  })

  it('passes one that reaches the frame’s edge', () => {
    for (const { seed, kind } of CUT) {
      const s = tuningScene(seed, kind)
      const m = measureScene(s, paintedComposite(s))
      expect(m.measures['cover.frameEdge'], s.description).toBeGreaterThan(0.6)
      expect(m.passed, s.description).toBe(true)
    }
  })
})
