import type { Context, MiddlewareHandler } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { RequestIdVariables } from 'hono/request-id'
import { credentialFrom, redactKeys, urlCarriesKey, type Credential } from '../auth/api-key.ts'
import type { KeyVerdict } from '../billing/store.ts'
import type { Deps, Logger } from '../deps.ts'
import { failureOf } from '../tryon/outcomes.ts'
import { normalizeOrigin } from './cors.ts'
import { ApiError, authenticationRequired, catalogued, toApiError, type ErrorCode } from './errors.ts'
import type { TryOnBodyRead } from './request.ts'

/** What the middleware leaves on a request's context for the routes and for the error answer. */
export type Env = {
  Variables: RequestIdVariables & {
    credential: Credential
    origin: string | null
    errorCode: ErrorCode
    body: TryOnBodyRead
    /** Set once billing has begun, which checks the key: a refusal from then on needs no check of its own. */
    keyChecked: true
    /** How the request's body stopped arriving, when its client went away. */
    clientClosed: string
  }
}

/** The client closed its connection before it sent its whole request, so no answer can reach it. */
export class ClientClosedRequest extends Error {
  constructor(cause: unknown) {
    // The runtime's words for it, without a stack: the request line's `reason`.
    super(cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause))
    this.name = 'ClientClosedRequest'
  }
}

/** nginx's status for a client that went away (ngx_http_request.h, NGX_HTTP_CLIENT_CLOSED_REQUEST): logged, never sent. */
const CLIENT_CLOSED_REQUEST = 499

/** A client's X-Request-Id up to 64 characters of [A-Za-z0-9._-], and not key-shaped; anything else gets an id of ours. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/

/**
 * Hono's requestId middleware accepts up to 255 word characters, a key included; this one is stricter, since the id
 * is logged and echoed. The header's raw value is never logged.
 */
export const requestId: MiddlewareHandler<Env> = async (c, next) => {
  const sent = c.req.header('x-request-id')
  const id = sent !== undefined && CLIENT_REQUEST_ID.test(sent) && redactKeys(sent) === sent ? sent : crypto.randomUUID()
  c.set('requestId', id)
  c.header('X-Request-Id', id)
  await next()
}

export function redactingLog(log: Logger): Logger {
  const redact = (value: unknown): unknown => {
    if (typeof value === 'string') return redactKeys(value)
    if (Array.isArray(value)) return value.map(redact)
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v)]))
    return value
  }
  return (entry) => log(redact(entry) as Record<string, unknown>)
}

/** Step 1: a well-formed key in the X-API-Key header, and none in the URL. No database call. */
export const authenticate: MiddlewareHandler<Env> = async (c, next) => {
  if (urlCarriesKey(new URL(c.req.url))) throw authenticationRequired()
  const credential = await credentialFrom(c.req.header('x-api-key'))
  if (!credential) throw authenticationRequired()
  c.set('credential', credential)
  c.set('origin', normalizeOrigin(c.req.header('origin')))
  await next()
}

export function keyRefusal(verdict: Exclude<KeyVerdict, 'ok'>): ApiError {
  return verdict === 'invalid_key' ? authenticationRequired() : catalogued(verdict)
}

/**
 * Auth precedence: a request refused before billing began (its body, its headers, its size) still gets its 401/403
 * first when its key cannot be used, so a caller without a usable key learns nothing about validation.
 */
export async function keyFirst(deps: Deps, refusal: ApiError, c: Context<Env>): Promise<ApiError> {
  const credential = c.get('credential')
  if (refusal.status >= 500 || !credential || c.get('keyChecked')) return refusal
  const verdict = await deps.billing.authorize(credential.keyHash, c.get('origin'), deps.clock())
  return verdict === 'ok' ? refusal : keyRefusal(verdict)
}

export function answerOf(deps: Deps, error: unknown, c: Context<Env>): ApiError {
  // A 4xx of Hono's own (a validator's) is a malformed request; anything else goes through the one mapping.
  if (!(error instanceof ApiError) && error instanceof HTTPException && error.status < 500) {
    return new ApiError('invalid_request', error.message || 'Bad request')
  }
  if (error instanceof ApiError) return error
  return toApiError(failureOf(error, { log: deps.log, context: { requestId: c.get('requestId') }, during: 'request' }))
}

export async function renderError(deps: Deps, error: Error, c: Context<Env>): Promise<Response> {
  // Logged once, by the request line (info: the client's doing, not a 5xx); the status is for that line alone.
  if (error instanceof ClientClosedRequest) {
    c.set('clientClosed', error.message)
    return new Response(null, { status: CLIENT_CLOSED_REQUEST })
  }
  let apiError = answerOf(deps, error, c)
  try {
    apiError = await keyFirst(deps, apiError, c)
  } catch (failure) {
    apiError = answerOf(deps, failure, c)
  }
  c.set('errorCode', apiError.code)
  return c.json(apiError.body, apiError.status, apiError.headers)
}

export function requestLog(deps: Deps): MiddlewareHandler<Env> {
  return async (c, next) => {
    const started = performance.now()
    await next()
    deps.log({
      level: c.res.status >= 500 ? 'error' : 'info',
      msg: 'request',
      requestId: c.get('requestId'),
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      errorCode: c.get('errorCode'),
      ...(c.get('clientClosed') && { reason: `the client went away before its body arrived (${c.get('clientClosed')})` }),
      durationMs: Math.round(performance.now() - started),
    })
  }
}
