/**
 * Why a request ends without a result, in the error catalogue's codes (shared/http/errors.ts, where each one's
 * status and words live): the domain names the failure, the HTTP layer answers it (`toApiError`). A try-on that
 * fails this way is refunded in full.
 */
export type FailureKind =
  // The request's images refused at intake: nothing was generated.
  | 'invalid_request'
  | 'image_unreachable'
  | 'image_too_small'
  | 'image_too_large'
  | 'unsupported_image'
  | 'image_too_complex'
  // The engine's answer.
  | 'ai_content_rejected'
  | 'person_not_found'
  | 'generation_failed'
  // The wedding-dress steps.
  | 'bridal_preprocessing_failed'
  // Capacity, storage and billing.
  | 'free_deliveries_exhausted'
  | 'service_busy'
  | 'storage_failed'
  | 'insufficient_credits'
  | 'database_unavailable'
  | 'settlement_unknown'
  | 'internal_error'

/** Failures on the service's side (answered 5xx): logged as errors, the caller's own as warnings. */
const SERVICE_SIDE: ReadonlySet<FailureKind> = new Set<FailureKind>([
  'generation_failed',
  'bridal_preprocessing_failed',
  'service_busy',
  'storage_failed',
  'database_unavailable',
  'settlement_unknown',
  'internal_error',
])

export const onServiceSide = (kind: FailureKind): boolean => SERVICE_SIDE.has(kind)

export interface FailureOptions {
  /** When the caller may try again (a busy service says so). */
  retryAfterSeconds?: number
  /** The message is the caller's answer; otherwise the catalogue's fixed words are, and the message is for the log. */
  tellsCaller?: boolean
  /** The try-on a settlement_unknown failure names. */
  tryOnId?: string
}

/**
 * An expected failure, thrown through the steps of a request with what happened. Anything else thrown is a bug or an
 * outage (shared/tryon/outcomes.ts, `failureOf`).
 */
export class TryOnFailure extends Error {
  readonly retryAfterSeconds?: number
  readonly tellsCaller: boolean
  readonly tryOnId?: string

  constructor(
    readonly kind: FailureKind,
    message: string,
    options: FailureOptions = {},
  ) {
    super(message)
    this.name = 'TryOnFailure'
    this.retryAfterSeconds = options.retryAfterSeconds
    this.tellsCaller = options.tellsCaller ?? false
    this.tryOnId = options.tryOnId
  }
}

/** A refusal of the request's input, told to the caller in its own words (which field, and why). */
export const refusal = (kind: FailureKind, message: string): TryOnFailure => new TryOnFailure(kind, message, { tellsCaller: true })
