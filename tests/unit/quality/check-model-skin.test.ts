import { describe, expect, it } from 'vitest'
import { decodeImage } from '../../../shared/images/codecs/index.ts'
import { downscaleToFit } from '../../../shared/images/resize.ts'
import { extractGarment } from '../../../shared/engine/local/garment.ts'
import { ciede2000, labOf } from '../../../shared/quality/colour.ts'
import { dominantColours } from '../../../shared/quality/measure.ts'
import { paintedComposite } from '../../support/scenes/composites.ts'
import { judge } from '../../support/scenes/oracle.ts'
import { localEngineResult, measuredAsServed, measureScene, SLOW, tuningScene } from './check-support.ts'

const product = (s: ReturnType<typeof tuningScene>) => decodeImage(s.product.bytes, s.product.format)
const nearest = (colours: ReturnType<typeof dominantColours>, rgb: [number, number, number]) =>
  Math.min(...colours.map((c) => ciede2000(c, labOf(rgb))))

// An on-model product photo whose garment was lost against the backdrop (white stripes on white) stands out as the
// model's head over a bare torso and arms. That bust was the cut-out, its skin the product's colour, and the local
// engine's skirt of soft 20511, the model's body laid on the shopper's legs, passed at 1 and was charged.
describe('the skin of a model whose garment did not come out', { timeout: SLOW }, () => {
  it('fails the local engine skirt of soft 20511, a bare bust laid on the legs', async () => {
    const s = tuningScene(20511, 'skirt')
    const jpeg = await localEngineResult(s, 'bottom')
    expect(judge(s, decodeImage(jpeg, 'jpeg')).broken).toBe(true)
    const m = measuredAsServed(s, jpeg, 'bottom', 'skirt')
    expect(m.passed).toBe(false)
    expect(m.issues).toContain('colour_changed')
  })

  it('still passes soft 20511 in the skirt of its product photo', () => {
    const s = tuningScene(20511, 'skirt')
    const painted = paintedComposite(s)
    expect(judge(s, painted).broken).toBe(false)
    const good = measureScene(s, painted)
    expect(good.issues).toEqual([])
    expect(good.passed).toBe(true)
  })

  // A whole model came out, in a dress of their own skin's brown: that brown is the dress's (soft 20541).
  it('keeps the brown of a dress on a model of the same brown', () => {
    const s = tuningScene(20541, 'dress')
    expect(nearest(dominantColours(product(s)), s.truth.product.colours[0].rgb)).toBeLessThan(8)
  })

  it('takes the skin of the bust of soft 20511 out of the product colours, and keeps the white of its stripes', () => {
    const s = tuningScene(20511, 'skirt')
    const small = downscaleToFit(product(s), 112)
    const skin = extractGarment(small).bustSkin
    expect(skin).toBeDefined()
    const colours = dominantColours(product(s))
    expect(nearest(colours, skin!)).toBeGreaterThan(10)
    expect(nearest(colours, s.truth.product.colours[0].rgb)).toBeLessThan(8)
    // A whole model is no bust (soft 20541).
    const whole = downscaleToFit(product(tuningScene(20541, 'dress')), 112)
    expect(extractGarment(whole).bustSkin).toBeUndefined()
  })
})
