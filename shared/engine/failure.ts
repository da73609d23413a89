/** Why a try-on ended without a result; each is refunded in full (shared/tryon/outcomes.ts gives its error code). */
export type FailureKind =
  | 'content_rejected'
  | 'unsupported_image'
  | 'person_not_found'
  | 'generation_failed'
  | 'bridal_preprocessing_failed'
  | 'service_busy'

/**
 * An expected failure, thrown through the steps of a try-on with what happened. The caller is told the error
 * catalogue's words for its kind (shared/http/errors.ts), or for an unsupported image this message. Anything else
 * thrown is a bug or an outage. `retryAfterSeconds`: when the caller may try again (a busy service says so).
 */
export class TryOnFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message)
    this.name = 'TryOnFailure'
  }
}
