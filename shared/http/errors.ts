import { HTTPException } from 'hono/http-exception'
import type { TryOnFailure } from '../failure.ts'

/** An entry of the error catalogue: the HTTP status, when the code is answered, and its message or an example of it. */
interface CatalogueEntry {
  status: 400 | 401 | 402 | 403 | 405 | 409 | 413 | 422 | 429 | 500 | 503
  when: string
  /** The message itself where it is fixed; an example where it names the request's details. */
  message: string
}

/** A settlement answer's tryOnId in the catalogue's example. */
const EXAMPLE_TRY_ON_ID = '3f2c5a9e-7b1d-4c8e-9a6f-2d4e8b1c0a57'

/**
 * Every error the API answers with (docs/api.md, "Errors"): the one place a code's status, meaning and message live.
 * The OpenAPI document's error responses are written from it; the README's error table is checked against it.
 */
export const errorCatalogue = {
  invalid_request: {
    status: 400,
    when: 'Not JSON, wrong `Content-Type`, a missing or invalid field, a bad `X-Tryon-Scenario` or `Idempotency-Key`.',
    message: 'userPhoto is required: a public image URL, a data URI or base64',
  },
  image_unreachable: {
    status: 400,
    when: 'An image URL cannot be fetched (network, status, timeout, refused address).',
    message: 'productImage: could not fetch the image: HTTP 404',
  },
  image_too_small: {
    status: 400,
    when: 'An image is under 1 KB.',
    message: 'userPhoto: image is smaller than 1 KB (512 bytes); images must be at least 1 KB',
  },
  image_too_large: {
    status: 400,
    when: 'An image is over 10 MB or 40 megapixels.',
    message: 'userPhoto: image is 9000×6000 (54.0 megapixels); images may have at most 40 megapixels',
  },
  unsupported_image: {
    status: 400,
    when: 'An image is not a JPEG, PNG or WebP, or its pixels cannot be decoded.',
    message:
      'userPhoto: image is not a readable JPEG, PNG or WebP (the format is read from the bytes, not from the URL or data URI); ' +
      'send a JPEG, PNG or WebP image',
  },
  image_too_complex: {
    status: 400,
    when:
      'Decoding an image would take more work than a request may spend: too many progressive JPEG scans, a lossy WebP over ' +
      '2048 × 2048, or a PNG or lossless WebP over 12 megapixels.',
    message: 'userPhoto: it has more than the 100 progressive scans a JPEG may have; re-save it as a baseline JPEG',
  },
  person_not_found: {
    status: 400,
    when: "No person can be found in `userPhoto` (the local engine, or FASHN's PoseError); the same photo would fail again.",
    message: 'No person found in userPhoto: send a photo of a person, head to feet for a wedding dress',
  },
  authentication_required: {
    status: 401,
    when: 'No `X-API-Key` header, a malformed or unknown key, or a key anywhere in the query string.',
    message: 'Authentication required',
  },
  insufficient_credits: {
    status: 402,
    when: 'The balance cannot pay for the call (1 credit, 2 for a wedding dress).',
    message: 'Insufficient credits',
  },
  key_inactive: { status: 403, when: 'The key is deactivated.', message: 'This API key is inactive' },
  origin_not_allowed: {
    status: 403,
    when: 'The key is restricted to origins and `Origin` is missing or not one of them.',
    message: 'This API key is not authorized for this origin; send the Origin header of an allowed site',
  },
  method_not_allowed: { status: 405, when: 'Any method but `POST` (and the CORS `OPTIONS`).', message: 'Use POST with a JSON body' },
  idempotency_key_in_progress: {
    status: 409,
    when: 'A request with the same `Idempotency-Key` is still running.',
    message: 'A request with this Idempotency-Key is still being processed; retry after it completes',
  },
  payload_too_large: {
    status: 413,
    when: 'The body is over 30 MB; refused before it is read whole.',
    message: 'The request body exceeds 30 MB; send large images as URLs',
  },
  idempotency_key_reused: {
    status: 422,
    when: 'The `Idempotency-Key` was used in the last 24 hours with a different body.',
    message: 'This Idempotency-Key was already used with a different request body',
  },
  ai_content_rejected: {
    status: 422,
    when: 'The generation engine rejected the content.',
    message: 'The generation engine rejected the content of these images. No credits were charged.',
  },
  rate_limited: {
    status: 429,
    when:
      "The key's try-ons per minute, or its try-ons per minute from this client address, are used up " +
      '(browser keys: 10 a minute per address by default).',
    message: 'Too many try-ons from this key or from your address; retry after the number of seconds in Retry-After. Nothing was charged.',
  },
  daily_cap_reached: {
    status: 429,
    when: "The key's credits per day (a spend cap, set per key) are used up, counting try-ons still running; resets at midnight UTC.",
    message: 'This key has reached its daily credit limit; retry after the number of seconds in Retry-After. Nothing was charged.',
  },
  free_deliveries_exhausted: {
    status: 429,
    when:
      'The key has had its free results for the day (refunded wedding dresses and results that failed their check), in total or ' +
      'from this client address (browser keys: 20 and 5 by default): a wedding-dress request is answered before anything is ' +
      'generated; a result that fails its check is then not delivered.',
    message:
      'This key has had as many refunded wedding-dress results today as it may; wedding-dress try-ons resume after the number of ' +
      'seconds in Retry-After. Nothing was charged.',
  },
  internal_error: {
    status: 500,
    when: 'An unexpected failure; retrying is safe.',
    message: 'Internal error. No credits were charged; you may retry.',
  },
  generation_failed: {
    status: 500,
    when: 'The engine failed or took too long; retrying is safe.',
    message: 'Image generation failed. No credits were charged; you may retry.',
  },
  storage_failed: {
    status: 500,
    when: 'The result could not be stored; retrying is safe.',
    message: 'The result could not be stored. No credits were charged; you may retry.',
  },
  database_unavailable: {
    status: 500,
    when: 'The database could not be reached in time; credits held for the call are returned, retrying is safe.',
    message: 'The service is temporarily unavailable. Credits held for this request are returned automatically; you may retry.',
  },
  settlement_unknown: {
    status: 500,
    when:
      'The database did not confirm whether the try-on was charged, even after retries (it may have been). Retry with the same ' +
      '`Idempotency-Key`: a charged try-on is replayed, an uncharged one runs again once its hold is returned.',
    message:
      `The service could not confirm whether try-on ${EXAMPLE_TRY_ON_ID} was charged. Retry with the same Idempotency-Key: ` +
      'you get its result if it was charged; otherwise its credits are returned automatically and the retry runs again.',
  },
  bridal_preprocessing_failed: {
    status: 503,
    when: 'Wedding-dress pre-processing crashed; generation was cancelled and fully refunded.',
    message:
      'Wedding-dress processing is temporarily unavailable. Generation was cancelled and no credits were charged; please retry later.',
  },
  service_busy: {
    status: 503,
    when: 'Too many try-ons are being generated by the embedded engine at once; nothing was charged. Retry after `Retry-After` seconds.',
    message: 'The service is busy with other try-ons. No credits were charged; retry in a few seconds.',
  },
} as const satisfies Record<string, CatalogueEntry>

export type ErrorCode = keyof typeof errorCatalogue
export type ErrorStatus = (typeof errorCatalogue)[ErrorCode]['status']

export const errorCodes = Object.keys(errorCatalogue) as [ErrorCode, ...ErrorCode[]]

/** What the edge proxy in front of the function answers for a path it does not know (docs/api.md, "Errors"), and so do we. */
export const GATEWAY_NOT_FOUND = { error: 'requested path is invalid' } as const

export interface ErrorBody {
  success: false
  error: string
  errorCode: ErrorCode
}

/** The one error type of the service: handlers throw it, `onError` renders it. Its status follows from its code. */
export class ApiError extends HTTPException {
  readonly code: ErrorCode
  override readonly status: ErrorStatus
  readonly headers: Record<string, string>

  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    const { status } = errorCatalogue[code]
    super(status, { message })
    this.name = 'ApiError'
    this.code = code
    this.status = status
    this.headers = headers
  }

  get body(): ErrorBody {
    return { success: false, error: this.message, errorCode: this.code }
  }
}

/** The error with the catalogue's message, for the codes whose message is fixed. */
export const catalogued = (code: ErrorCode, headers?: Record<string, string>) => new ApiError(code, errorCatalogue[code].message, headers)

export const authenticationRequired = () => catalogued('authentication_required')
export const insufficientCredits = () => catalogued('insufficient_credits')
export const databaseUnavailable = () => catalogued('database_unavailable')
export const internalError = () => catalogued('internal_error')

/** The abuse limits' 429s; every one carries Retry-After and charges nothing. */
export function limitExceeded(
  code: 'rate_limited' | 'daily_cap_reached' | 'free_deliveries_exhausted',
  retryAfterSeconds: number,
): ApiError {
  return catalogued(code, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) })
}

/** A settlement may have committed and the database could not be asked again (docs/decisions.md, docs/api.md "Retries and idempotency"). */
export function settlementUnknown(tryOnId: string): ApiError {
  return new ApiError('settlement_unknown', errorCatalogue.settlement_unknown.message.replace(EXAMPLE_TRY_ON_ID, tryOnId))
}

/**
 * The one translation from the domain's failure (shared/failure.ts) to the answer: its code, the catalogue's words
 * unless the failure's own are the caller's, and when to retry.
 */
export function toApiError(failure: TryOnFailure): ApiError {
  if (failure.kind === 'settlement_unknown' && failure.tryOnId) return settlementUnknown(failure.tryOnId)
  const message = failure.tellsCaller ? failure.message : errorCatalogue[failure.kind].message
  const wait = failure.retryAfterSeconds
  return new ApiError(failure.kind, message, wait === undefined ? {} : { 'Retry-After': String(wait) })
}
