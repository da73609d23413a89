import { describe, expect, it } from 'vitest'
import { farColour, paintedComposite, paintedParts } from '../../support/scenes/composites.ts'
import { PART } from '../../support/scenes/types.ts'
import { measureScene, SLOW, tuningScene } from './check-support.ts'

describe('the person check', { timeout: SLOW }, () => {
  it('passes a composite that leaves the head as it was', () => {
    const s = tuningScene(11, 'trousers')
    const m = measureScene(s, paintedComposite(s))
    expect(m.measures.headDeltaE).toBeLessThan(2)
    expect(m.issues).not.toContain('person_changed')
  })

  it('fails a composite with the face painted over, or the hair', () => {
    for (const part of [PART.face, PART.hair]) {
      const s = tuningScene(11, 'trousers')
      const m = measureScene(s, paintedParts(paintedComposite(s), s, [part], farColour(s)))
      expect(m.issues, `part ${part}`).toContain('person_changed')
      expect(m.passed).toBe(false)
      expect(m.score).toBeLessThan(0.5)
    }
  })
})
