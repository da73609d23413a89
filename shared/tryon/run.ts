import { generateWithTrain, type BridalVerdict } from '../bridal/pipeline.ts'
import type { BillingStore } from '../billing/store.ts'
import type { Deps, ServiceConfig } from '../deps.ts'
import type { KeyMode } from '../auth/api-key.ts'
import { garmentCategoryOf } from '../engine/category.ts'
import { generatedImageOf, generationFailed, wholeImage } from '../engine/outcome.ts'
import type { InputImage, ResultImage, TryOnEngine, TryOnRequest } from '../engine/types.ts'
import type { QualityCheckLevel, Settlement } from '../billing/store.ts'
import { onServiceSide, TryOnFailure, type FailureKind } from '../failure.ts'
import { intakeImage } from '../images/intake.ts'
import { createDecodeBudget } from '../images/codecs/raster.ts'
import { resultPath } from '../storage/result-store.ts'
import { raceDeadline } from './deadline.ts'
import type { TryOnInput } from './input.ts'
import { bridalStepsForRequest, engineForRequest } from './engines.ts'
import { failureOf, type DeliveredOutcome } from './outcomes.ts'
import { checkQuality, qualityLevelOf, type QualityAnswer } from './quality.ts'
import { settleResolvingLostReplies, SettlementUnknown } from './settle.ts'

/** What a try-on uses of the service's dependencies, and no more. */
export interface TryOnDeps
  extends Pick<Deps, 'store' | 'engines' | 'bridal' | 'fetchImage' | 'ids' | 'clock' | 'log' | 'judge' | 'measure'> {
  billing: Pick<BillingStore, 'settle' | 'freeDelivery'>
  config: Pick<
    ServiceConfig,
    'generationTimeoutMs' | 'maxDecodedPixelsPerRequest' | 'imageLimits' | 'trainThreshold' | 'storeTimeoutMs' | 'settlementRetry'
  >
}

export interface TryOnJob {
  tryOnId: string
  keyMode: KeyMode
  input: TryOnInput
  requestId?: string
  /** The key's own check level (`admin keys quality`); null or absent: the default (shared/tryon/quality.ts). */
  qualityCheck?: QualityCheckLevel | null
}

export interface TryOnSuccess {
  success: true
  tryOnId: string
  shortId: string | null
  resultUrl: string
  creditsRemaining: number
  creditsCharged: number
  bridal?: BridalVerdict
  quality?: QualityAnswer
}

/** What a generation produced and the outcome billing settles on. */
interface Generation {
  image: ResultImage
  outcome: DeliveredOutcome
  bridal?: BridalVerdict
  quality?: QualityAnswer
}

/**
 * Steps 4–7 of a request, after the credits are reserved: intake, generate, store, settle.
 * Every exit settles the reservation: a thrown error refunds it in full before propagating.
 */
export async function runTryOn(deps: TryOnDeps, job: TryOnJob): Promise<TryOnSuccess> {
  const engine = job.keyMode === 'test' ? deps.engines.test : deps.engines.live
  // A timer cleared when the request ends, rather than AbortSignal.timeout's, which lives on for the full limit.
  const limit = new AbortController()
  const timer = setTimeout(
    () => limit.abort(new DOMException('the try-on deadline passed', 'TimeoutError')),
    deps.config.generationTimeoutMs,
  )
  const endsAt = Date.now() + deps.config.generationTimeoutMs
  const deadline = limit.signal
  const durationsMs: Record<string, number> = {}
  const timed = async <T>(step: string, work: () => Promise<T>): Promise<T> => {
    const started = performance.now()
    try {
      return await work()
    } finally {
      durationsMs[step] = Math.round(performance.now() - started)
    }
  }
  let delivered: Delivered | undefined
  // Where the result was written, once it was: a try-on that then ends without a delivery removes it.
  let storedAt: string | undefined
  // From here on a charge may have committed, so a failure can no longer be answered "nothing was charged".
  let chargeSent = false
  const context = { tryOnId: job.tryOnId, requestId: job.requestId, productKind: job.input.productKind, keyMode: job.keyMode }
  try {
    const [person, garment] = await timed('intake', () => intakeBoth(deps, job.input, deadline))
    const request: TryOnRequest = {
      person,
      garment,
      category: garmentCategoryOf(job.input.clothingType, job.input.productKind),
      clothingType: job.input.clothingType,
      locale: job.input.locale,
      signal: deadline,
      remainingMs: () => endsAt - Date.now(),
      decodeBudget: createDecodeBudget(deps.config.maxDecodedPixelsPerRequest),
    }
    const forcedEngine = engineForRequest(engine, job.input.scenario, deadline)
    const generated = await timed('generate', () =>
      job.input.productKind === 'wedding-dress'
        ? generateWedding(deps, job, forcedEngine, request)
        : generateStandard(deps, job, forcedEngine, request),
    )
    const generation = await timed('check', () => checked(deps, job, request, generated, context))
    if (generation.outcome === 'quality_failed') await timed('limits', () => freeDeliveryHeld(deps, job))

    const path = resultPath(job.tryOnId, generation.image.contentType, deps.clock())
    const resultUrl = await timed('store', () => storeResult(deps, path, generation.image, context))
    storedAt = path
    delivered = { resultUrl, bridal: generation.bridal, quality: generation.quality }
    chargeSent = true
    const producedBy = generation.image.engine ?? engine.name
    const settlement = await timed('settle', () =>
      settleResolvingLostReplies(
        deps.billing,
        {
          tryOnId: job.tryOnId,
          outcome: generation.outcome,
          shortId: deps.ids.shortId(),
          resultPath: path,
          // A fallback chain records the engine that actually produced the image.
          engine: producedBy,
          response: {
            success: true,
            tryOnId: job.tryOnId,
            resultUrl,
            ...(generation.bridal && { bridal: generation.bridal }),
            ...(generation.quality && { quality: generation.quality }),
          },
          quality: generation.quality ?? null,
        },
        deps.config.settlementRetry,
      ),
    )
    // Swept while its settlement was lost (only past the sweeper's TTL): refunded, so not delivered.
    if (settlement.status !== 'succeeded')
      throw new TryOnFailure('database_unavailable', 'The result could not be recorded in time. No credits were charged; you may retry.', {
        tellsCaller: true,
      })
    deps.log({
      level: 'info',
      msg: 'tryon',
      ...context,
      outcome: generation.outcome,
      creditsCharged: settlement.creditsCharged,
      engine: producedBy,
      trainScore: generation.bridal?.trainScore,
      ...(generation.quality && { quality: generation.quality }),
      durationsMs,
      ...(settlement.retried > 0 && { settleRetries: settlement.retried }),
    })
    return successOf(job.tryOnId, delivered, settlement)
  } catch (error) {
    if (error instanceof SettlementUnknown) {
      deps.log({ level: 'error', msg: 'tryon', ...context, outcome: 'settlement_unknown', error: error.message, durationsMs })
      throw settlementUnknown(job.tryOnId, error.message)
    }
    const failure = failureOf(error, {
      log: deps.log,
      context: { tryOnId: job.tryOnId, requestId: job.requestId },
      during: 'tryOn',
      deadline,
    })
    const refunded = await timed('refund', () => refund(deps, job, failure.kind))
    if (refunded?.status === 'succeeded') {
      // The charge had committed after all: the caller gets what it paid for, never "no credits were charged".
      deps.log({
        level: 'warn',
        msg: 'tryon',
        ...context,
        outcome: 'charged',
        creditsCharged: refunded.creditsCharged,
        chargedDespite: failure.kind,
        durationsMs,
      })
      if (delivered) return successOf(job.tryOnId, delivered, refunded)
      throw chargedWithoutResult(job.tryOnId, refunded.creditsCharged)
    }
    // The database says the try-on ended without a delivery: what it stored goes now. Without that answer it stays
    // until the sweeper ends the try-on, which queues it for removal (tryon.queue_undelivered_results).
    if (storedAt && refunded) await timed('discard', () => discardResult(deps, storedAt!, context))
    if (!refunded && chargeSent) {
      deps.log({ level: 'error', msg: 'tryon', ...context, outcome: 'settlement_unknown', error: failure.message, durationsMs })
      throw settlementUnknown(job.tryOnId, failure.message)
    }
    deps.log({
      level: onServiceSide(failure.kind) ? 'error' : 'warn',
      msg: 'tryon',
      ...context,
      outcome: failure.kind,
      creditsCharged: 0,
      durationsMs,
    })
    throw failure
  } finally {
    clearTimeout(timer)
  }
}

/** A stored result, once it exists: what a success answers with besides the settlement's figures. */
interface Delivered {
  resultUrl: string
  bridal?: BridalVerdict
  quality?: QualityAnswer
}

function successOf(tryOnId: string, delivered: Delivered, settlement: Settlement): TryOnSuccess {
  return {
    success: true,
    tryOnId,
    shortId: settlement.shortId,
    resultUrl: delivered.resultUrl,
    creditsRemaining: settlement.balance,
    creditsCharged: settlement.creditsCharged,
    ...(delivered.bridal && { bridal: delivered.bridal }),
    ...(delivered.quality && { quality: delivered.quality }),
  }
}

/**
 * The result checked before it is billed (docs/billing.md, "Checked results"): a result that fails is still
 * delivered, settled as quality_failed (0 credits, no short id). The check reads the whole image, so a download still
 * under way is read to its end first.
 */
async function checked(
  deps: TryOnDeps,
  job: TryOnJob,
  request: TryOnRequest,
  generation: Generation,
  context: Record<string, unknown>,
): Promise<Generation> {
  const level = qualityLevelOf(job.qualityCheck, job.keyMode, deps.judge, job.input.scenario)
  if (level === 'off') return generation
  const check = async (made: Generation): Promise<Generation> => {
    const image = await wholeImage(made.image)
    const quality = await checkQuality({
      level,
      request,
      image,
      // Measured as a floor-length gown with a train only when one was prepared: a short dress or a top sent as a
      // wedding dress is generated without one, and is measured as what it is.
      weddingDress: job.input.productKind === 'wedding-dress' && made.bridal?.reason !== 'train_pretreatment_unavailable',
      scenario: job.input.scenario,
      judge: job.keyMode === 'live' ? deps.judge : undefined,
      measure: deps.measure,
      signal: request.signal,
      log: deps.log,
      context,
    })
    return { ...made, image, quality, outcome: quality?.passed === false ? 'quality_failed' : made.outcome }
  }
  const first = await check(generation)
  if (first.outcome !== 'quality_failed' || job.input.scenario === 'quality_failed') return first
  // Failed, with another engine after the one that made it and time left: generated once more there (a wedding dress
  // through its whole pipeline, its train scored again), checked again.
  const engines = job.keyMode === 'test' ? deps.engines.test : deps.engines.live
  const next = engines.after?.(first.image.engine ?? engines.name)
  const left = request.remainingMs?.() ?? 0
  if (!next || !request.signal || left < REGENERATION_MIN_MS) return first
  deps.log({ level: 'info', msg: 'result failed its check; generating again on the next engine', ...context, next: next.name, left })
  try {
    const engine = engineForRequest(next, undefined, request.signal)
    const again = await (job.input.productKind === 'wedding-dress'
      ? generateWedding(deps, job, engine, request)
      : generateStandard(deps, job, engine, request))
    const made = await wholeImage(again.image)
    return await check({ ...again, image: { ...made, engine: made.engine ?? next.name } })
  } catch (error) {
    // The second try is a bonus: whatever stops it, the first result is delivered as it was checked.
    deps.log({ level: 'warn', msg: 'generating again after a failed check did not finish', ...context, error: String(error) })
    return first
  }
}

/**
 * A result that failed its check is delivered free only within the key's free deliveries of the day (docs/billing.md,
 * "Checked results"): past them it is not delivered, so that results made to fail (a product photo that misleads the
 * check, a prompt injected into the judge) cannot be had for nothing without end. Answered 429
 * free_deliveries_exhausted and refunded, as a wedding dress past them is refused.
 */
async function freeDeliveryHeld(deps: TryOnDeps, job: TryOnJob): Promise<void> {
  const free = await deps.billing.freeDelivery(job.tryOnId, deps.clock())
  if (free.held) return
  throw new TryOnFailure(
    'free_deliveries_exhausted',
    'This result did not pass its quality check, and this key has had as many free results today as it may, so it is not ' +
      'delivered. Nothing was charged; try another photo (full length, facing the camera, plain background), or retry ' +
      'after the number of seconds in Retry-After.',
    { tellsCaller: true, retryAfterSeconds: free.retryAfterSeconds },
  )
}

/**
 * A result that failed its check is generated again on the next engine only with this much of the deadline left: the
 * engines take 5 s to 2 minutes (docs/engines.md), and the first result is delivered free if the second runs out.
 */
const REGENERATION_MIN_MS = 15_000

/** Unreachable while only this request settles its try-on; kept so the answer could never claim a refund. */
function chargedWithoutResult(tryOnId: string, credits: number): TryOnFailure {
  return new TryOnFailure(
    'internal_error',
    `Try-on ${tryOnId} was charged ${credits} credit(s) but its result could not be returned. ` +
      'Retry with the same Idempotency-Key to receive it, or contact support with this tryOnId.',
    { tellsCaller: true },
  )
}

/** A settlement may have committed and the database could not be asked again: the answer names the try-on. */
function settlementUnknown(tryOnId: string, cause: string): TryOnFailure {
  return new TryOnFailure('settlement_unknown', cause, { tryOnId })
}

/** Both images are fetched or decoded at once; the first failure cancels the other. */
async function intakeBoth(deps: TryOnDeps, input: TryOnInput, deadline: AbortSignal): Promise<[InputImage, InputImage]> {
  const abort = new AbortController()
  const signal = AbortSignal.any([deadline, abort.signal])
  const intake = { fetchImage: deps.fetchImage, limits: deps.config.imageLimits }
  const both = Promise.all([
    intakeImage('userPhoto', input.userPhoto, intake, signal),
    intakeImage('productImage', input.productImage, intake, signal),
  ])
  both.catch(() => abort.abort())
  return both
}

async function generateStandard(deps: TryOnDeps, job: TryOnJob, engine: TryOnEngine, request: TryOnRequest): Promise<Generation> {
  const outcome = await engine.generate(request)
  if (outcome.kind !== 'generated') {
    deps.log({
      level: 'warn',
      msg: 'engine did not generate',
      tryOnId: job.tryOnId,
      requestId: job.requestId,
      engine: engine.name,
      kind: outcome.kind,
      reason: outcome.reason,
    })
  }
  return { image: generatedImageOf(outcome), outcome: 'generated' }
}

async function generateWedding(deps: TryOnDeps, job: TryOnJob, engine: TryOnEngine, request: TryOnRequest): Promise<Generation> {
  const steps = bridalStepsForRequest(deps.bridal[job.keyMode], job.input.scenario, deps.config.trainThreshold, request.signal)
  const { image, bridal } = await generateWithTrain(engine, steps, request, {
    threshold: deps.config.trainThreshold,
    log: deps.log,
    tryOnId: job.tryOnId,
  })
  return { image, outcome: bridal.reason, bridal }
}

/**
 * Stores the result; one still downloading from the provider streams straight into storage. A write abandoned at the
 * store's time limit may still land: it is removed then, since its try-on was refunded.
 */
async function storeResult(deps: TryOnDeps, path: string, image: ResultImage, context: Record<string, unknown>): Promise<string> {
  const body = 'bytes' in image ? image.bytes : image.stream
  const put = deps.store.put(path, body, image.contentType)
  try {
    return await raceDeadline(put, AbortSignal.timeout(deps.config.storeTimeoutMs), 'storing the result')
  } catch (error) {
    put.then(
      () => discardResult(deps, path, { ...context, late: true }),
      () => {},
    )
    // The provider's download stopped short (its size cap, its timeout): the generation failed, not the storage.
    const download = 'bytes' in image ? undefined : image.downloadError()
    if (download !== undefined) {
      deps.log({
        level: 'error',
        msg: 'result download failed while it was being stored',
        path,
        engine: image.engine,
        error: String(download),
      })
      throw generationFailed()
    }
    deps.log({ level: 'error', msg: 'result store failed', path, error: String(error) })
    throw new TryOnFailure('storage_failed', `the result could not be stored: ${String(error)}`)
  }
}

/** Removes a result whose try-on ended without a delivery; one the store cannot remove now is queued in the database. */
async function discardResult(deps: TryOnDeps, path: string, context: Record<string, unknown>): Promise<void> {
  try {
    await raceDeadline(deps.store.remove(path), AbortSignal.timeout(deps.config.storeTimeoutMs), 'removing the result')
  } catch (error) {
    deps.log({
      level: 'warn',
      msg: 'undelivered result not removed yet; it stays queued for removal',
      ...context,
      path,
      error: String(error),
    })
  }
}

/**
 * Returns the reservation, resolving a lost reply like a charge does. Undefined when the database could not
 * be asked: nothing was charged (only a settlement with a delivered outcome charges), and the sweeper returns
 * the credits after its TTL. A settlement whose status is 'succeeded' means an earlier charge had committed.
 */
async function refund(deps: TryOnDeps, job: TryOnJob, outcome: FailureKind): Promise<Settlement | undefined> {
  try {
    return await settleResolvingLostReplies(deps.billing, { tryOnId: job.tryOnId, outcome }, deps.config.settlementRetry)
  } catch (error) {
    deps.log({
      level: 'error',
      msg: 'refund failed; the sweeper will return the credits',
      tryOnId: job.tryOnId,
      requestId: job.requestId,
      error: String(error),
    })
    return undefined
  }
}
