/** Every error the API can answer with, and the HTTP status it maps to (DESIGN.md §4). */
export const errorStatus = {
  invalid_request: 400,
  image_unreachable: 400,
  image_too_small: 400,
  image_too_large: 400,
  unsupported_image: 400,
  authentication_required: 401,
  insufficient_credits: 402,
  key_inactive: 403,
  origin_not_allowed: 403,
  method_not_allowed: 405,
  idempotency_key_in_progress: 409,
  payload_too_large: 413,
  idempotency_key_reused: 422,
  ai_content_rejected: 422,
  rate_limited: 429,
  daily_cap_reached: 429,
  free_deliveries_exhausted: 429,
  internal_error: 500,
  generation_failed: 500,
  storage_failed: 500,
  database_unavailable: 500,
  settlement_unknown: 500,
  bridal_preprocessing_failed: 503,
  service_busy: 503,
} as const

export type ErrorCode = keyof typeof errorStatus
export type ErrorStatus = (typeof errorStatus)[ErrorCode]

/** What the edge proxy in front of the function answers for a path it does not know (spec §7), and so do we. */
export const GATEWAY_NOT_FOUND = { error: 'requested path is invalid' } as const

/** The two messages the spec fixes word for word. */
export const AUTHENTICATION_REQUIRED = 'Authentication required'
export const INSUFFICIENT_CREDITS = 'Insufficient credits'

export interface ErrorBody {
  success: false
  error: string
  errorCode: ErrorCode
}

/** The one error type of the service: handlers throw it, `onError` renders it. */
export class ApiError extends Error {
  readonly code: ErrorCode
  readonly status: ErrorStatus
  readonly headers: Record<string, string>

  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message)
    this.name = 'ApiError'
    this.code = code
    this.status = errorStatus[code]
    this.headers = headers
  }

  get body(): ErrorBody {
    return { success: false, error: this.message, errorCode: this.code }
  }

  /** 4xx errors are the caller's to fix; they never cost a credit. */
  get isClientError(): boolean {
    return this.status < 500
  }
}

export const authenticationRequired = () =>
  new ApiError('authentication_required', AUTHENTICATION_REQUIRED)

export const insufficientCredits = () => new ApiError('insufficient_credits', INSUFFICIENT_CREDITS)

/** The messages of the abuse limits' 429s; every one carries Retry-After and charges nothing. */
export const LIMIT_MESSAGES = {
  rate_limited: 'Too many try-ons from this key or from your address; retry after the number of seconds in Retry-After. Nothing was charged.',
  daily_cap_reached: 'This key has reached its daily credit limit; retry after the number of seconds in Retry-After. Nothing was charged.',
  free_deliveries_exhausted:
    'This key has had as many refunded wedding-dress results today as it may; wedding-dress try-ons resume after the number of seconds in Retry-After. Nothing was charged.',
} as const

export function limitExceeded(code: keyof typeof LIMIT_MESSAGES, retryAfterSeconds: number): ApiError {
  return new ApiError(code, LIMIT_MESSAGES[code], { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) })
}

export function databaseUnavailable(): ApiError {
  return new ApiError('database_unavailable', 'The service is temporarily unavailable. Credits held for this request are returned automatically; you may retry.')
}

/** A settlement may have committed and the database could not be asked again (DESIGN.md §4, issue 19). */
export function settlementUnknown(tryOnId: string): ApiError {
  return new ApiError(
    'settlement_unknown',
    `The service could not confirm whether try-on ${tryOnId} was charged. Retry with the same Idempotency-Key: ` +
      'you get its result if it was charged; otherwise its credits are returned automatically and the retry runs again.',
  )
}
