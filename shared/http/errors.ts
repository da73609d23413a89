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
  internal_error: 500,
  generation_failed: 500,
  storage_failed: 500,
  database_unavailable: 500,
  bridal_preprocessing_failed: 503,
} as const

export type ErrorCode = keyof typeof errorStatus
export type ErrorStatus = (typeof errorStatus)[ErrorCode]

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

export function databaseUnavailable(): ApiError {
  return new ApiError('database_unavailable', 'The service is temporarily unavailable. Credits held for this request are returned automatically; you may retry.')
}
