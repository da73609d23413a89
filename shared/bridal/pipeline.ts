import { garmentCategoryOf } from '../engine/category.ts'
import { TryOnFailure } from '../failure.ts'
import { generatedImageOf, wholeImage } from '../engine/outcome.ts'
import type { GeneratedImage, ResultImage, TryOnEngine, TryOnRequest } from '../engine/types.ts'
import type { Logger } from '../log.ts'
import type { BridalSteps, PretreatmentOutcome, ScoreOutcome } from './ports.ts'

/** Why a wedding-dress try-on was billed as it was; also the outcome its settlement is recorded under. */
export type BridalReason = 'train_rendered' | 'train_score_low' | 'score_unavailable' | 'train_pretreatment_unavailable'

/** The `bridal` object of a wedding-dress response (docs/api.md, "Wedding-dress mode"). */
export interface BridalVerdict {
  applied: boolean
  trainScore: number | null
  reason: BridalReason
}

export interface BridalGeneration<Image extends ResultImage = ResultImage> {
  /** The engine's image; bytes once the judge has read it. */
  image: Image | GeneratedImage
  bridal: BridalVerdict
}

/**
 * Wedding-dress mode: pre-treat the gown, generate with its train, score the train, and decide.
 * A pre-treatment that is unavailable (or finds no train to render: a top, trousers, a short dress) gives the
 * garment without a train at 1 credit; the refund row is for gowns whose train the engine failed to render.
 * A pre-treatment that crashes stops everything before generation (503). A scorer that is unavailable or
 * fails leaves the verdict open (score null). Engine failures become their usual errors; the caller refunds them.
 */
export async function generateWithTrain<Image extends ResultImage>(
  engine: TryOnEngine<Image>,
  steps: BridalSteps,
  request: TryOnRequest,
  options: { threshold: number; log: Logger; tryOnId: string },
): Promise<BridalGeneration<Image>> {
  const { person, garment, signal, decodeBudget } = request
  let prepared: PretreatmentOutcome
  try {
    prepared = await steps.pretreatment.prepare({ person, garment, clothingType: request.clothingType, signal, decodeBudget })
  } catch (error) {
    // A deadline, or a refusal that is not a crash (the service is busy): the caller's to answer.
    if (signal?.aborted || error instanceof TryOnFailure) throw error
    options.log({
      level: 'error',
      msg: 'bridal pre-treatment crashed',
      tryOnId: options.tryOnId,
      step: steps.pretreatment.name,
      error: describe(error),
    })
    throw new TryOnFailure('bridal_preprocessing_failed', 'the wedding-dress pre-treatment crashed')
  }

  // A train of no length is nothing to render: the same row as a pre-treatment that cannot run (1 credit).
  if (prepared.kind === 'prepared' && !(prepared.train.length > 0))
    prepared = { kind: 'unavailable', reason: 'the pre-treatment prepared no train' }
  if (prepared.kind === 'unavailable') {
    options.log({
      level: 'warn',
      msg: 'train pre-treatment unavailable; the gown is tried on without a train',
      tryOnId: options.tryOnId,
      reason: prepared.reason,
    })
    // A garment that is no gown is tried on as what it is: the caller's hint ("Top", "Jacket") whatever the
    // pre-treatment could read, else what the pre-treatment read it as, else the engine's own reading. With neither a
    // hint nor a reading (a gown the pre-treatment could not read) it stays a dress.
    const named = garmentCategoryOf(request.clothingType, 'standard')
    const read = prepared.category === 'unknown' ? undefined : prepared.category
    const asWhatItIs = named || prepared.category ? { ...request, category: named ?? read } : request
    const image = generatedImageOf(await engine.generate(asWhatItIs))
    return { image, bridal: { applied: false, trainScore: null, reason: 'train_pretreatment_unavailable' } }
  }

  // A photo the pre-treatment gave floor room is the one generated from and judged against.
  const shopper = prepared.person ?? person
  // The judge reads the result, so a download under way is read whole first.
  const image = await wholeImage(
    generatedImageOf(await engine.generate({ ...request, person: shopper, garment: prepared.garment, train: prepared.train })),
  )
  const scored = await scoreSafely(steps, { result: image, person: shopper, garment, signal, decodeBudget }, options)
  if (scored.kind === 'unavailable') return { image, bridal: { applied: true, trainScore: null, reason: 'score_unavailable' } }
  const trainScore = roundScore(scored.score)
  const applied = trainScore >= options.threshold
  return { image, bridal: { applied, trainScore, reason: applied ? 'train_rendered' : 'train_score_low' } }
}

async function scoreSafely(
  steps: BridalSteps,
  request: Parameters<BridalSteps['scorer']['score']>[0],
  options: { log: Logger; tryOnId: string },
): Promise<ScoreOutcome> {
  try {
    const scored = await steps.scorer.score(request)
    if (scored.kind === 'scored' && !Number.isFinite(scored.score))
      return { kind: 'unavailable', reason: `the scorer returned ${scored.score}` }
    if (scored.kind === 'unavailable')
      options.log({ level: 'warn', msg: 'train score unavailable', tryOnId: options.tryOnId, reason: scored.reason })
    return scored
  } catch (error) {
    options.log({ level: 'error', msg: 'train scorer failed', tryOnId: options.tryOnId, step: steps.scorer.name, error: describe(error) })
    return { kind: 'unavailable', reason: 'the scorer failed' }
  }
}

/** Scores are reported to three decimals and the verdict is taken on the reported number. */
function roundScore(score: number): number {
  return Math.round(Math.min(1, Math.max(0, score)) * 1000) / 1000
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error)
}
