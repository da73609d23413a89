import { DatabaseUnavailable } from '../billing/store.ts'
import type { BridalReason } from '../bridal/pipeline.ts'
import type { BridalSteps, TrainPretreatment } from '../bridal/ports.ts'
import type { EngineOutcome, TryOnEngine } from '../engine/types.ts'
import { TryOnFailure } from '../failure.ts'
import type { Logger } from '../log.ts'
import type { Scenario } from './scenarios.ts'

/**
 * What a try-on that delivered a result is settled under; one that failed is settled under its error code, and
 * refunded in full. The credits each keeps: the refund table at tryon.credits_for_outcome, in
 * supabase/migrations/20261123000200_credit_functions.sql.
 */
export type DeliveredOutcome = 'generated' | BridalReason

const FORCED = 'forced by X-Tryon-Scenario'

/**
 * A test key's X-Tryon-Scenario forces the engine's answer, so integrators can
 * exercise their error handling (and our refunds) without a real failure.
 */
export function withScenario(engine: TryOnEngine, scenario: Scenario | undefined): TryOnEngine {
  const forced: EngineOutcome | undefined =
    scenario === 'content_rejected'
      ? { kind: 'rejected', reason: `${FORCED}: content_rejected` }
      : scenario === 'generation_failed'
        ? { kind: 'failed', reason: `${FORCED}: generation_failed` }
        : undefined
  if (!forced) return engine
  return { name: engine.name, generate: async () => forced }
}

/** The train a forced score is given when the product photo shows none (the shortest the pre-treatment prepares). */
const FORCED_TRAIN = { length: 0.12, spread: 1.4 }

/**
 * A forced score needs a train to score: a product the pre-treatment finds no train in (a trainless gown, a top)
 * is prepared as it is with the shortest train, so the scenario's outcome is the one answered whatever the photo holds.
 */
function alwaysPrepared(pretreatment: TrainPretreatment): TrainPretreatment {
  return {
    name: pretreatment.name,
    prepare: async (request) => {
      const prepared = await pretreatment.prepare(request)
      return prepared.kind === 'prepared' ? prepared : { kind: 'prepared', garment: request.garment, train: FORCED_TRAIN }
    },
  }
}

/** A test key's X-Tryon-Scenario forces a bridal branch (DESIGN.md §4). */
export function withBridalScenario(steps: BridalSteps, scenario: Scenario | undefined, threshold: number): BridalSteps {
  switch (scenario) {
    case 'bridal_preprocessing_crash':
      return {
        ...steps,
        pretreatment: { name: steps.pretreatment.name, prepare: () => Promise.reject(new Error(`${FORCED}: bridal_preprocessing_crash`)) },
      }
    case 'train_pretreatment_unavailable':
      return {
        ...steps,
        pretreatment: {
          name: steps.pretreatment.name,
          prepare: async () => ({ kind: 'unavailable', reason: `${FORCED}: train_pretreatment_unavailable` }),
        },
      }
    case 'train_score_low':
      // Half the threshold (rounded like any score): low whatever the threshold is set to (0 makes every score pass).
      return {
        pretreatment: alwaysPrepared(steps.pretreatment),
        scorer: { name: steps.scorer.name, score: async () => ({ kind: 'scored', score: threshold / 2 }) },
      }
    case 'train_score_unavailable':
      return {
        pretreatment: alwaysPrepared(steps.pretreatment),
        scorer: { name: steps.scorer.name, score: async () => ({ kind: 'unavailable', reason: `${FORCED}: train_score_unavailable` }) },
      }
    default:
      return steps
  }
}

/** Where an error surfaced, which names its log line: in a try-on's steps, or anywhere else in a request. */
const unexpectedLogs = {
  request: { databaseUnavailable: 'database unavailable', unexpected: 'unhandled error' },
  tryOn: { databaseUnavailable: 'database unavailable during a try-on', unexpected: 'try-on failed unexpectedly' },
} as const

export interface FailureReport {
  log: Logger
  /** Fields that name the request (and the try-on) in the log line. */
  context: Record<string, unknown>
  during: keyof typeof unexpectedLogs
  /** The try-on's deadline: an error once it passed is a generation that took too long. */
  deadline?: AbortSignal
}

/**
 * The one mapping from anything thrown to the failure the caller is answered with (shared/http/errors.ts,
 * `toApiError`). An expected failure is one already; anything else is the service's: the database out of reach,
 * the deadline passed, or a bug, logged with its stack.
 */
export function failureOf(error: unknown, report: FailureReport): TryOnFailure {
  if (error instanceof TryOnFailure) return error
  const logs = unexpectedLogs[report.during]
  if (error instanceof DatabaseUnavailable) {
    report.log({ level: 'error', msg: logs.databaseUnavailable, ...report.context, error: error.message })
    return new TryOnFailure('database_unavailable', error.message)
  }
  if (report.deadline?.aborted) {
    return new TryOnFailure('generation_failed', 'Image generation took too long. No credits were charged; you may retry.', {
      tellsCaller: true,
    })
  }
  const described = error instanceof Error ? (error.stack ?? String(error)) : String(error)
  report.log({ level: 'error', msg: logs.unexpected, ...report.context, error: described })
  return new TryOnFailure('internal_error', error instanceof Error ? error.message : String(error))
}
