import { generateWithTrain, withBridalScenario, type BridalVerdict } from '../bridal/pipeline.ts'
import type { Deps } from '../deps.ts'
import type { KeyMode } from '../auth/api-key.ts'
import { garmentCategoryOf } from '../engine/category.ts'
import { generatedImageOf, withScenario } from '../engine/outcome.ts'
import type { GeneratedImage, InputImage, TryOnEngine, TryOnRequest } from '../engine/types.ts'
import { ApiError } from '../http/errors.ts'
import type { TryOnInput } from '../http/request.ts'
import { intakeImage } from '../images/intake.ts'
import { resultPath } from '../storage/result-store.ts'

export interface TryOnJob {
  tryOnId: string
  keyMode: KeyMode
  input: TryOnInput
  requestId?: string
}

export interface TryOnSuccess {
  success: true
  tryOnId: string
  shortId: string | null
  resultUrl: string
  creditsRemaining: number
  creditsCharged: number
  bridal?: BridalVerdict
}

/** What a generation produced and the outcome billing settles on. */
interface Generation {
  image: GeneratedImage
  outcome: string
  bridal?: BridalVerdict
}

/**
 * Steps 4–7 of a request, after the credits are reserved: intake, generate, store, settle.
 * Every exit settles the reservation: a thrown error refunds it in full before propagating.
 */
export async function runTryOn(deps: Deps, job: TryOnJob): Promise<TryOnSuccess> {
  const engine = job.keyMode === 'test' ? deps.engines.test : deps.engines.live
  const deadline = AbortSignal.timeout(deps.config.generationTimeoutMs)
  try {
    const [person, garment] = await intakeBoth(deps, job.input, deadline)
    const request: TryOnRequest = {
      person,
      garment,
      category: garmentCategoryOf(job.input.clothingType, job.input.productKind),
      clothingType: job.input.clothingType,
      locale: job.input.locale,
      signal: deadline,
    }
    const forcedEngine = withScenario(engine, job.input.scenario)
    const generation = job.input.productKind === 'wedding-dress'
      ? await generateWedding(deps, job, forcedEngine, request)
      : await generateStandard(deps, job, forcedEngine, request)

    const path = resultPath(job.tryOnId, generation.image.contentType, deps.clock())
    const resultUrl = await storeResult(deps, path, generation.image)
    const settlement = await deps.billing.settle({
      tryOnId: job.tryOnId,
      outcome: generation.outcome,
      shortId: deps.ids.shortId(),
      resultPath: path,
      engine: engine.name,
      response: { success: true, tryOnId: job.tryOnId, resultUrl, ...(generation.bridal && { bridal: generation.bridal }) },
    })
    return {
      success: true,
      tryOnId: job.tryOnId,
      shortId: settlement.shortId,
      resultUrl,
      creditsRemaining: settlement.balance,
      creditsCharged: settlement.creditsCharged,
      ...(generation.bridal && { bridal: generation.bridal }),
    }
  } catch (error) {
    const apiError = error instanceof ApiError ? error : unexpected(deps, job, error, deadline)
    await refund(deps, job, apiError.code)
    throw apiError
  }
}

/** Both images are fetched or decoded at once; the first failure cancels the other. */
async function intakeBoth(deps: Deps, input: TryOnInput, deadline: AbortSignal): Promise<[InputImage, InputImage]> {
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

async function generateStandard(deps: Deps, job: TryOnJob, engine: TryOnEngine, request: TryOnRequest): Promise<Generation> {
  const outcome = await engine.generate(request)
  if (outcome.kind !== 'generated') {
    deps.log({ level: 'warn', msg: 'engine did not generate', tryOnId: job.tryOnId, requestId: job.requestId, engine: engine.name, kind: outcome.kind, reason: outcome.reason })
  }
  return { image: generatedImageOf(outcome), outcome: 'generated' }
}

async function generateWedding(deps: Deps, job: TryOnJob, engine: TryOnEngine, request: TryOnRequest): Promise<Generation> {
  const steps = withBridalScenario(deps.bridal[job.keyMode], job.input.scenario, deps.config.trainThreshold)
  const { image, bridal } = await generateWithTrain(engine, steps, request, { threshold: deps.config.trainThreshold, log: deps.log, tryOnId: job.tryOnId })
  return { image, outcome: bridal.reason, bridal }
}

async function storeResult(deps: Deps, path: string, image: GeneratedImage): Promise<string> {
  try {
    return await deps.store.put(path, image.bytes, image.contentType)
  } catch (error) {
    deps.log({ level: 'error', msg: 'result store failed', path, error: String(error) })
    throw new ApiError('storage_failed', 'The result could not be stored. No credits were charged; you may retry.')
  }
}

function unexpected(deps: Deps, job: TryOnJob, error: unknown, deadline: AbortSignal): ApiError {
  if (deadline.aborted) {
    return new ApiError('generation_failed', 'Image generation took too long. No credits were charged; you may retry.')
  }
  deps.log({ level: 'error', msg: 'try-on failed unexpectedly', tryOnId: job.tryOnId, requestId: job.requestId, error: error instanceof Error ? error.stack ?? error.message : String(error) })
  return new ApiError('internal_error', 'Internal error. No credits were charged; you may retry.')
}

/** If even the refund fails (database down), the sweeper returns the credits after its TTL. */
async function refund(deps: Deps, job: TryOnJob, outcome: string): Promise<void> {
  try {
    await deps.billing.settle({ tryOnId: job.tryOnId, outcome })
  } catch (error) {
    deps.log({ level: 'error', msg: 'refund failed; the sweeper will return the credits', tryOnId: job.tryOnId, requestId: job.requestId, error: String(error) })
  }
}
