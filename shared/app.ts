import { Hono, type Context, type MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { HTTPException } from 'hono/http-exception'
import type { RequestIdVariables } from 'hono/request-id'
import { credentialFrom, redactKeys, urlCarriesKey, type Credential } from './auth/api-key.ts'
import type { KeyVerdict } from './billing/store.ts'
import type { Deps, Logger } from './deps.ts'
import { storefrontCors, normalizeOrigin } from './http/cors.ts'
import { ApiError, authenticationRequired, GATEWAY_NOT_FOUND, insufficientCredits, limitExceeded, type ErrorCode } from './http/errors.ts'
import { parseTryOnRequest } from './http/request.ts'
import { shareRoutes } from './http/share.ts'
import { apiErrorOf } from './tryon/outcomes.ts'
import { runTryOn } from './tryon/run.ts'

type Env = {
  Variables: RequestIdVariables & { credential: Credential; origin: string | null; errorCode: ErrorCode }
}

/** Paths the function answers at: Supabase's gateway strips /functions/v1, other hosts may not. */
export const FUNCTION_PATHS = ['/tryon-api', '/functions/v1/tryon-api'] as const

export function createApp(appDeps: Deps): Hono<Env> {
  // Whatever a log line carries (a path, a URL, an error message), a key-shaped string in it is redacted.
  const deps: Deps = { ...appDeps, log: redactingLog(appDeps.log) }
  const api = new Hono<Env>()
  api.use(storefrontCors())
  api.post(
    '/',
    authenticate,
    bodyLimit({ maxSize: deps.config.maxBodyBytes, onError: (c) => refuseOversizedBody(deps, c) }),
    async (c) => {
      const credential = c.get('credential')
      const origin = c.get('origin')
      const { input, idempotency } = await refuseInvalid(deps, c, () => parseTryOnRequest(c.req.raw, credential.mode, deps.config.maxBodyBytes))

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
      switch (begun.verdict) {
        case 'ok':
          break
        case 'insufficient_credits':
          throw insufficientCredits()
        case 'replay':
          return c.json(begun.response, 200, { 'Idempotent-Replayed': 'true' })
        case 'idempotency_in_progress':
          throw new ApiError('idempotency_key_in_progress', 'A request with this Idempotency-Key is still being processed; retry after it completes')
        case 'idempotency_mismatch':
          throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request body')
        case 'rate_limited':
        case 'daily_cap_reached':
        case 'free_deliveries_exhausted':
          throw limitExceeded(begun.verdict, begun.retryAfterSeconds)
        default:
          throw keyRefusal(begun.verdict)
      }

      const result = await runTryOn(deps, { tryOnId, keyMode: credential.mode, input, requestId: c.get('requestId') })
      return c.json(result, 200)
    },
  )
  api.all('/', () => {
    throw new ApiError('method_not_allowed', 'Use POST with a JSON body', { Allow: 'POST, OPTIONS' })
  })
  api.route('/s', shareRoutes(deps))

  const app = new Hono<Env>()
  app.use(requestId)
  app.use(requestLog(deps))
  for (const path of FUNCTION_PATHS) app.route(path, api)
  app.notFound((c) => c.json(GATEWAY_NOT_FOUND, 404))
  app.onError((error, c) => renderError(deps, error, c))
  return app
}

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

/**
 * A request refused before billing starts still answers 401/403 first when its key
 * cannot be used, so a caller without a valid key learns nothing about validation.
 */
async function refuseInvalid<T>(deps: Deps, c: Context<Env>, parse: () => Promise<T>): Promise<T> {
  try {
    return await parse()
  } catch (error) {
    if (error instanceof ApiError) await requireUsableKey(deps, c)
    throw error
  }
}

async function refuseOversizedBody(deps: Deps, c: Context<Env>): Promise<never> {
  await requireUsableKey(deps, c)
  const megabytes = Math.round(deps.config.maxBodyBytes / 1024 / 1024)
  throw new ApiError('payload_too_large', `The request body exceeds ${megabytes} MB; send large images as URLs`)
}

async function requireUsableKey(deps: Deps, c: Context<Env>): Promise<void> {
  const verdict = await deps.billing.authorize(c.get('credential').keyHash, c.get('origin'), deps.clock())
  if (verdict !== 'ok') throw keyRefusal(verdict)
}

function keyRefusal(verdict: Exclude<KeyVerdict, 'ok'>): ApiError {
  switch (verdict) {
    case 'invalid_key':
      return authenticationRequired()
    case 'key_inactive':
      return new ApiError('key_inactive', 'This API key is inactive')
    case 'origin_not_allowed':
      return new ApiError('origin_not_allowed', 'This API key is not authorized for this origin; send the Origin header of an allowed site')
  }
}

function renderError(deps: Deps, error: Error, c: Context<Env>): Response {
  let apiError: ApiError
  if (error instanceof ApiError) {
    apiError = error
  } else if (error instanceof HTTPException && error.status < 500) {
    apiError = new ApiError('invalid_request', error.message || 'Bad request')
  } else {
    apiError = apiErrorOf(error, { log: deps.log, context: { requestId: c.get('requestId') }, during: 'request' })
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
      durationMs: Math.round(performance.now() - started),
    })
  }
}
