import { describe, expect, it } from 'vitest'
import { createLocalPretreatment } from '../../../shared/bridal/local-pretreatment.ts'
import { createLocalTrainScorer } from '../../../shared/bridal/local-scorer.ts'
import { generateWithTrain } from '../../../shared/bridal/pipeline.ts'
import { decodeImage } from '../../../shared/images/codecs/index.ts'
import { createLocalEngine } from '../../../shared/engine/local/index.ts'
import { TryOnFailure } from '../../../shared/failure.ts'
import { toApiError } from '../../../shared/http/errors.ts'
import { judgeResult, makeBridalScene } from '../../support/bridal-scenes.ts'
import { asInput } from '../../support/images.ts'

/** Seeds of neither the bench's tuning range nor its held-out one: scenes nobody looked at while tuning. */
const SEEDS = [700001, 700002, 700003, 700004, 700005, 700006]

describe('wedding-dress verdicts on generated scenes', () => {
  it('draws the same scene for the same seed, and different scenes for different seeds', { timeout: 60_000 }, () => {
    expect(makeBridalScene(SEEDS[0]).person.bytes).toEqual(makeBridalScene(SEEDS[0]).person.bytes)
    expect(makeBridalScene(SEEDS[0]).description).not.toBe(makeBridalScene(SEEDS[1]).description)
  })

  it('never charges 2 credits for a result whose product is off the body, nor for a garment without a train', {
    timeout: 180_000,
  }, async () => {
    const engine = createLocalEngine()
    const steps = { pretreatment: createLocalPretreatment(), scorer: createLocalTrainScorer() }
    for (const seed of SEEDS) {
      const scene = makeBridalScene(seed)
      const request = { person: asInput(scene.person), garment: asInput(scene.product), category: 'dress' as const }
      try {
        const { image, bridal } = await generateWithTrain(engine, steps, request, { threshold: 0.5, log: () => {}, tryOnId: String(seed) })
        const chargedTwo = bridal.reason === 'train_rendered' || bridal.reason === 'score_unavailable'
        if (!chargedTwo) continue
        expect(scene.hasTrain, `${seed}: ${scene.description}`).toBe(true)
        expect(judgeResult(scene, decodeImage(image.bytes, 'jpeg')).onBody, `${seed}: ${scene.description}`).toBe(true)
      } catch (error) {
        // A generation that fails is refunded: never a charge, whatever the scene.
        expect(error).toBeInstanceOf(TryOnFailure)
        expect(toApiError(error as TryOnFailure).code, `${seed}`).toBe('generation_failed')
      }
    }
  })
})
