import { describe, expect, it } from 'vitest'
import { measureResult } from '../../../shared/quality/measure.ts'
import { paintedComposite, resized, shifted, withFloorBelow } from '../../support/scenes/composites.ts'
import { canvas, measureScene, SLOW, tuningScene } from './check-support.ts'

describe('the framing check', { timeout: SLOW }, () => {
  it('passes a good composite, the same result at another size, and floor added below in wedding-dress mode', () => {
    const s = tuningScene(11, 'trousers')
    const good = paintedComposite(s)
    expect(measureScene(s, good)).toMatchObject({ passed: true, issues: [] })
    expect(measureScene(s, resized(good, Math.round(good.width * 1.7), Math.round(good.height * 1.7))).passed).toBe(true)
    const floor = measureScene(s, withFloorBelow(good, Math.round(0.3 * good.height)), { weddingDress: true })
    expect(floor.measures.extraHeight).toBeCloseTo(0.3, 1)
    expect(floor.passed).toBe(true)
  })

  it('fails floor added below outside wedding-dress mode, and a result squeezed to another aspect', () => {
    const s = tuningScene(11, 'trousers')
    const good = paintedComposite(s)
    expect(measureScene(s, withFloorBelow(good, Math.round(0.3 * good.height)))).toMatchObject({
      passed: false,
      issues: ['framing_changed'],
      score: 0,
    })
    expect(measureScene(s, resized(good, good.width, Math.round(good.height * 0.9))).issues).toEqual(['framing_changed'])
  })

  it('fails a result moved sideways by 5% of its width', () => {
    const s = tuningScene(11, 'trousers')
    const m = measureScene(s, shifted(paintedComposite(s), Math.round(0.05 * s.shopper.width)))
    // On this smooth backdrop the shift shows most in the head and the legs, which no longer lie where they were.
    expect(m.passed).toBe(false)
    expect(m.issues.some((i) => i === 'framing_changed' || i === 'person_changed')).toBe(true)
  })

  it('fails a background that changed far from the person', () => {
    // A plain synthetic picture: a dark figure on a grey wall, the wall repainted in the result.
    const figure = (x: number, y: number) => (Math.abs(x - 100) < 18 && y > 40 && y < 280 ? ([40, 40, 90] as const) : undefined)
    const shopper = canvas(200, 300, [150, 150, 150], (x, y) => (figure(x, y) ? [...figure(x, y)!] : undefined))
    const result = canvas(200, 300, [150, 190, 150], (x, y) => (figure(x, y) ? [...figure(x, y)!] : undefined))
    const product = canvas(100, 100, [255, 255, 255], (x, y) => (x > 20 && x < 80 && y > 20 && y < 80 ? [40, 40, 90] : undefined))
    const m = measureResult({ shopper, product, result, category: 'top' })
    expect(m.measures.backgroundDeltaE).toBeGreaterThan(6)
    expect(m.issues).toContain('framing_changed')
    expect(measureResult({ shopper, product, result: shopper, category: 'top' }).measures.backgroundDeltaE).toBe(0)
  })
})
