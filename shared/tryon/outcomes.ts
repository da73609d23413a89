import { DatabaseUnavailable } from '../billing/store.ts'
import type { BridalReason } from '../bridal/pipeline.ts'
import { TryOnFailure } from '../failure.ts'
import type { Logger } from '../log.ts'

/**
 * What a try-on that delivered a result is settled under; one that failed is settled under its error code, and
 * refunded in full. The credits each keeps: the refund table at tryon.credits_for_outcome, in
 * supabase/migrations/20261123000200_credit_functions.sql.
 */
export type DeliveredOutcome = 'generated' | BridalReason | 'quality_failed'

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
