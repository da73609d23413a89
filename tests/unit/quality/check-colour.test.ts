import { describe, expect, it } from 'vitest'
import { labOf } from '../../../shared/quality/colour.ts'
import { dominantColours } from '../../../shared/quality/measure.ts'
import { ciede2000 } from '../../../shared/quality/colour.ts'
import { farColour, paintedComposite } from '../../support/scenes/composites.ts'
import { canvas, measureScene, SLOW, tuningScene } from './check-support.ts'

describe('the colour check', { timeout: SLOW }, () => {
  it('reads a product photo white-on-white or on a flat backdrop as the garment, not its backdrop', () => {
    const tee = (x: number, y: number) => Math.abs(x - 80) < 40 + (y < 60 ? 25 : 0) && y > 30 && y < 140
    const red = dominantColours(canvas(160, 170, [250, 250, 250], (x, y) => (tee(x, y) ? [200, 30, 40] : undefined)))
    expect(red.length).toBeGreaterThan(0)
    expect(Math.min(...red.map((c) => ciede2000(c, labOf([200, 30, 40]))))).toBeLessThan(3)
    const cream = dominantColours(canvas(160, 170, [120, 110, 100], (x, y) => (tee(x, y) ? [240, 232, 215] : undefined)))
    expect(Math.min(...cream.map((c) => ciede2000(c, labOf([240, 232, 215]))))).toBeLessThan(3)
  })

  it('passes the product in its own colours, and fails it in another colour', () => {
    const s = tuningScene(11, 'trousers')
    const good = measureScene(s, paintedComposite(s))
    expect(good.measures.colourDeltaE).toBeLessThan(6)
    expect(good.passed).toBe(true)
    const wrong = measureScene(s, paintedComposite(s, { colours: [farColour(s)] }))
    expect(wrong.passed).toBe(false)
    expect(wrong.issues).toContain('colour_changed')
    expect(wrong.measures.colourDeltaE).toBeGreaterThan(12)
  })
})
