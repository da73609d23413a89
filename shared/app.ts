import { OpenAPIHono, type Hook } from '@hono/zod-openapi'
import { Hono } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import type { Deps } from './deps.ts'
import { storefrontCors } from './http/cors.ts'
import { catalogued, GATEWAY_NOT_FOUND } from './http/errors.ts'
import { authenticate, redactingLog, renderError, requestId, requestLog, type Env } from './http/middleware.ts'
import { API_KEY_SCHEME, PUBLIC_PATH } from './http/openapi.ts'
import { bodyTooLarge, invalidRequest } from './http/request.ts'
import { shareHandler, shareRoute } from './http/share.ts'
import { preflightRoute, readBody, tryOnHandler, tryOnRoute } from './http/tryon.ts'

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
  api.openapi({ ...tryOnRoute, middleware: [authenticate, declaredTooLarge, readBody(deps)] }, tryOnHandler(deps))
  api.openAPIRegistry.registerPath(preflightRoute)
  api.openAPIRegistry.registerComponent('securitySchemes', 'apiKey', API_KEY_SCHEME)
  api.all('/', () => {
    throw catalogued('method_not_allowed', { Allow: 'POST, OPTIONS' })
  })
  api.openapi(shareRoute, shareHandler({ billing: deps.billing, store: deps.store, sharePages: deps.config.sharePages }))

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
