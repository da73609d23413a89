import { OpenAPIHono, type Hook } from '@hono/zod-openapi'
import { Hono, type Context, type MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { HTTPException } from 'hono/http-exception'
import type { RequestIdVariables } from 'hono/request-id'
import { credentialFrom, redactKeys, urlCarriesKey, type Credential } from './auth/api-key.ts'
import type { KeyVerdict } from './billing/store.ts'
import type { Deps, Logger } from './deps.ts'
import { storefrontCors, normalizeOrigin } from './http/cors.ts'
import {
  ApiError,
  authenticationRequired,
  catalogued,
  GATEWAY_NOT_FOUND,
  insufficientCredits,
  limitExceeded,
  toApiError,
  type ErrorCode,
} from './http/errors.ts'
import { API_KEY_SCHEME, PUBLIC_PATH } from './http/openapi.ts'
import { bodyTooLarge, invalidRequest, readTryOnBody, tryOnInputOf, type TryOnBodyRead } from './http/request.ts'
import { preflightRoute, shareRoute, tryOnRoute } from './http/routes.ts'
import type { TryOnSuccessBody } from './http/schemas.ts'
import { shareHandler } from './http/share.ts'
import { failureOf } from './tryon/outcomes.ts'
import { runTryOn } from './tryon/run.ts'

type Env = {
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

/** Paths the function answers at: Supabase's gateway strips /functions/v1, other hosts may not. */
export const FUNCTION_PATHS = ['/tryon-api', PUBLIC_PATH] as const

export function createApp(appDeps: Deps): OpenAPIHono<Env> {
  // Whatever a log line carries (a path, a URL, an error message), a key-shaped string in it is redacted.
  const deps: Deps = { ...appDeps, log: redactingLog(appDeps.log) }
  // The routes' validation: a failed check is a 400 with its first issue (auth precedence: see keyFirst).
  const validationHook: Hook<unknown, Env, string, unknown> = (result) => {
    if (!result.success) throw invalidRequest(result.error)
  }
  const api = new OpenAPIHono<Env>({ defaultHook: validationHook })
  // A Content-Length over the cap is refused before reading; readBody's counter catches a missing or lying one.
  const declaredTooLarge = bodyLimit({
    maxSize: deps.config.maxBodyBytes,
    onError: () => Promise.reject(bodyTooLarge(deps.config.maxBodyBytes)),
  })
  api.use(storefrontCors())
  api.openapi({ ...tryOnRoute, middleware: [authenticate, declaredTooLarge, readBody(deps)] }, async (c) => {
    const credential = c.get('credential')
    const origin = c.get('origin')
    const { input, idempotency } = await tryOnInputOf(c.req.valid('json'), c.req.valid('header'), c.get('body'), credential.mode)

    const tryOnId = deps.ids.tryOnId()
    const clientHash = await deps.clients.hash(deps.clients.addressOf(c.req.raw, c.env))
    const begun = await deps.billing.begin({
      keyHash: credential.keyHash,
      origin,
      tryOnId,
      productKind: input.productKind,
      clothingType: input.clothingType,
      parentUrl: input.parentUrl,
      locale: input.locale,
      idempotency,
      clientHash,
      now: deps.clock(),
    })
    c.set('keyChecked', true)
    switch (begun.verdict) {
      case 'ok':
        break
      case 'insufficient_credits':
        throw insufficientCredits()
      case 'replay':
        return c.json(begun.response as TryOnSuccessBody, 200, { 'Idempotent-Replayed': 'true' })
      case 'idempotency_in_progress':
        throw catalogued('idempotency_key_in_progress')
      case 'idempotency_mismatch':
        throw catalogued('idempotency_key_reused')
      case 'rate_limited':
      case 'daily_cap_reached':
      case 'free_deliveries_exhausted':
        throw limitExceeded(begun.verdict, begun.retryAfterSeconds)
      default:
        throw keyRefusal(begun.verdict)
    }

    const result = await runTryOn(deps, { tryOnId, keyMode: credential.mode, input, requestId: c.get('requestId') })
    return c.json(result, 200)
  })
  api.openAPIRegistry.registerPath(preflightRoute)
  api.openAPIRegistry.registerComponent('securitySchemes', 'apiKey', API_KEY_SCHEME)
  api.all('/', () => {
    throw catalogued('method_not_allowed', { Allow: 'POST, OPTIONS' })
  })
  api.openapi(shareRoute, shareHandler(deps))

  const app = new OpenAPIHono<Env>()
  app.use(requestId)
  app.use(requestLog(deps))
  // The documented path, and the one Supabase's gateway hands the function (a plain Hono: not documented twice).
  app.route(PUBLIC_PATH, api)
  app.route(FUNCTION_PATHS[0], new Hono<Env>().route('/', api))
  app.notFound((c) => c.json(GATEWAY_NOT_FOUND, 404))
  app.onError((error, c) => renderError(deps, error, c))
  return app
}

/** Reads the body ahead of the route's validators, which then validate what it read (see readTryOnBody). */
function readBody(deps: Deps): MiddlewareHandler<Env> {
  return async (c, next) => {
    let read: TryOnBodyRead
    try {
      read = await readTryOnBody(c.req.raw, deps.config.maxBodyBytes)
    } catch (error) {
      // What readTryOnBody refuses is an ApiError; anything else is the body stream's own error: the client stopped
      // sending (Node: "aborted", Deno: BadResource). Not a failure of ours, and nobody is left to read an answer.
      if (!(error instanceof HTTPException)) throw new ClientClosedRequest(error)
      throw error
    }
    c.set('body', read)
    // The route's json validator asks c.req.json(), which would re-serialise and parse a cached body: answer it directly.
    const parsed = Promise.resolve(read.forSchema)
    c.req.json = <T>() => parsed as Promise<T>
    await next()
  }
}

/** The client closed its connection before it sent its whole request, so no answer can reach it. */
class ClientClosedRequest extends Error {
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
const requestId: MiddlewareHandler<Env> = async (c, next) => {
  const sent = c.req.header('x-request-id')
  const id = sent !== undefined && CLIENT_REQUEST_ID.test(sent) && redactKeys(sent) === sent ? sent : crypto.randomUUID()
  c.set('requestId', id)
  c.header('X-Request-Id', id)
  await next()
}

function redactingLog(log: Logger): Logger {
  const redact = (value: unknown): unknown => {
    if (typeof value === 'string') return redactKeys(value)
    if (Array.isArray(value)) return value.map(redact)
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v)]))
    return value
  }
  return (entry) => log(redact(entry) as Record<string, unknown>)
}

/** Step 1: a well-formed key in the X-API-Key header, and none in the URL. No database call. */
const authenticate: MiddlewareHandler<Env> = async (c, next) => {
  if (urlCarriesKey(new URL(c.req.url))) throw authenticationRequired()
  const credential = await credentialFrom(c.req.header('x-api-key'))
  if (!credential) throw authenticationRequired()
  c.set('credential', credential)
  c.set('origin', normalizeOrigin(c.req.header('origin')))
  await next()
}

function keyRefusal(verdict: Exclude<KeyVerdict, 'ok'>): ApiError {
  return verdict === 'invalid_key' ? authenticationRequired() : catalogued(verdict)
}

/**
 * Auth precedence: a request refused before billing began (its body, its headers, its size) still gets its 401/403
 * first when its key cannot be used, so a caller without a usable key learns nothing about validation.
 */
async function keyFirst(deps: Deps, refusal: ApiError, c: Context<Env>): Promise<ApiError> {
  const credential = c.get('credential')
  if (refusal.status >= 500 || !credential || c.get('keyChecked')) return refusal
  const verdict = await deps.billing.authorize(credential.keyHash, c.get('origin'), deps.clock())
  return verdict === 'ok' ? refusal : keyRefusal(verdict)
}

function answerOf(deps: Deps, error: unknown, c: Context<Env>): ApiError {
  // A 4xx of Hono's own (a validator's) is a malformed request; anything else goes through the one mapping.
  if (!(error instanceof ApiError) && error instanceof HTTPException && error.status < 500) {
    return new ApiError('invalid_request', error.message || 'Bad request')
  }
  if (error instanceof ApiError) return error
  return toApiError(failureOf(error, { log: deps.log, context: { requestId: c.get('requestId') }, during: 'request' }))
}

async function renderError(deps: Deps, error: Error, c: Context<Env>): Promise<Response> {
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

function requestLog(deps: Deps): MiddlewareHandler<Env> {
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
