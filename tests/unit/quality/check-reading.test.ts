import { describe, expect, it } from 'vitest'
import { farColour, paintedComposite } from '../../support/scenes/composites.ts'
import { judge } from '../../support/scenes/oracle.ts'
import { PART } from '../../support/scenes/types.ts'
import { decodeUpright } from '../../../shared/images/upright.ts'
import { MEASURE_SIDE } from '../../../shared/quality/measured-check.ts'
import { asInput } from '../../support/images.ts'
import { localEngineResult, measuredAsServed, measureScene, SLOW, tuningScene } from './check-support.ts'

describe('where the check reads the figure', { timeout: SLOW }, () => {
  it('measures by the figure the engine finds at another size when the measuring copy shows no person', () => {
    // Tuning photo 272 (docs/quality-evaluation.md): a brick wall whose bricks the 256-px copy joins to the figure: no
    // figure is read there, and a handbag laid on the torso passed. The engine's 320-px copy reads the figure right.
    const s = tuningScene(272, 'bag')
    const onTorso = paintedComposite(s, { parts: [PART.torso, PART.hips] })
    expect(judge(s, onTorso).issues).toContain('garment_wrong_region')
    // The shopper photo decoded as the service decodes it for the check (measured-check.ts).
    const m = measureScene(s, onTorso, { shopper: decodeUpright(asInput(s.shopper), { side: MEASURE_SIDE }) })
    expect(m.measures.bodyFound).toBe(1)
    expect(m.issues).toContain('garment_wrong_region')
  })

  it('fails a bag whose result changed the torso, in any colour, and passes the bag held by the hand', () => {
    // Flat 7030: the engine cut a black prop out of the bag's product photo and laid it on the torso as a top. No pixel
    // of it shows the bag's colours, so the product's coverage of the torso was nil; the torso itself changed.
    const s = tuningScene(272, 'bag')
    const byTheHand = measureScene(s, paintedComposite(s))
    expect(byTheHand.passed).toBe(true)
    expect(byTheHand.measures.torsoChanged).toBeLessThan(0.05)
    const onTorso = measureScene(s, paintedComposite(s, { parts: [PART.torso], colours: [farColour(s)] }))
    expect(onTorso.issues).toContain('garment_wrong_region')
    expect(onTorso.measures.torsoChanged).toBeGreaterThan(0.6)
  })

  // Photo 18227: a white top with purple dots on a pale brick wall, arms held out. The silhouette lost the torso but for
  // a line of hair, so the check had no torso to measure, and the handbag the local engine laid on it as a top passed and
  // was charged.
  it('measures the torso where the silhouette lost it against the wall, and fails a bag laid on it', async () => {
    const s = tuningScene(18227, 'bag')
    const onTorso = paintedComposite(s, { parts: [PART.torso] })
    expect(judge(s, onTorso).issues).toContain('garment_wrong_region')
    const painted = measureScene(s, onTorso, { shopper: decodeUpright(asInput(s.shopper), { side: MEASURE_SIDE }) })
    expect(painted.issues).toContain('garment_wrong_region')
    expect(painted.measures.torsoChanged).toBeGreaterThan(0.6)
    const engine = await localEngineResult(s, 'top')
    expect(measuredAsServed(s, engine, 'bag').issues).toContain('garment_wrong_region')
  })
})
