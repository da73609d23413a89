import { Hono } from 'hono'
import { redactKeys } from '../shared/auth/api-key.ts'
import { jsonLogger, type Logger } from '../shared/log.ts'
import { GATEWAY_NOT_FOUND } from '../shared/http/errors.ts'
import { RESULT_CACHE_CONTROL } from '../shared/storage/result-store.ts'
import { readObject } from '../adapters/local-store.ts'
import { createWebRoutes } from './web.ts'

interface FetchHandler {
  /** `env` is what the server passed with the request (on Node, the connection): the function reads the socket's address from it. */
  fetch(request: Request, env?: unknown): Response | Promise<Response>
}

/**
 * The dev stack's front door, shaped like Supabase's: /functions/v1/<name> reaches the
 * function with the prefix stripped, public objects are served from disk, and every other
 * path gets the edge proxy's 404 with its tracing header. It also serves the storefront widget, the
 * OpenAPI document and its reference page, and, given the demo key, the playground at `/`.
 */
export function createGateway(options: {
  functionApp: FetchHandler
  storageRoot: string
  bucket: string
  /** The key the playground runs with; without it `/` is a 404 like every other unknown path. */
  playgroundKey?: () => string | undefined
  /** The `Host` values the web pages answer to (the loopback names of the port the stack listens on). */
  pageHosts?: () => ReadonlySet<string>
  log?: Logger
}): Hono {
  const log = options.log ?? jsonLogger
  const gateway = new Hono()
  gateway.use(async (c, next) => {
    await next()
    c.res.headers.set('sb-request-id', crypto.randomUUID())
  })

  const forward = async (request: Request, env: unknown) => {
    const url = new URL(request.url)
    url.pathname = url.pathname.slice('/functions/v1'.length)
    const inner = new Request(url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal: request.signal,
      duplex: 'half',
    } as RequestInit)
    const response = await options.functionApp.fetch(inner, env)
    // An answer given before the body was read whole (401, 413...) ends the connection, and says so,
    // so a client does not send its next request down a socket the server is about to drop.
    if (inner.body !== null && (!inner.bodyUsed || response.status === 413)) response.headers.set('Connection', 'close')
    return response
  }
  gateway.all('/functions/v1/tryon-api', (c) => forward(c.req.raw, c.env))
  gateway.all('/functions/v1/tryon-api/*', (c) => forward(c.req.raw, c.env))

  gateway.on(['GET', 'HEAD'], '/storage/v1/object/public/:bucket/*', async (c) => {
    const notFound = () => c.json({ statusCode: '404', error: 'not_found', message: 'Object not found' }, 404)
    // The raw path: a malformed escape (`%.jpg`) or a name no file can have is an object that does not exist.
    const raw = new URL(c.req.url).pathname
    const prefix = `/storage/v1/object/public/${options.bucket}/`
    if (!raw.startsWith(prefix)) return notFound()
    let path: string
    try {
      path = decodeURIComponent(raw.slice(prefix.length))
    } catch {
      return notFound()
    }
    const object = path.includes('\0') ? null : await readObject(options.storageRoot, options.bucket, path)
    if (!object) return notFound()
    // Node's HTTP server leaves the body out of HEAD responses by itself.
    return c.body(object.bytes as Uint8Array<ArrayBuffer>, 200, {
      'Content-Type': object.contentType,
      'Content-Length': String(object.bytes.byteLength),
      'Cache-Control': RESULT_CACHE_CONTROL,
      'Access-Control-Allow-Origin': '*',
    })
  })

  gateway.route('/', createWebRoutes({ playgroundKey: options.playgroundKey, hosts: options.pageHosts }))
  gateway.notFound((c) => c.json(GATEWAY_NOT_FOUND, 404))
  // Hono's default prints the stack to stderr and answers text; this logs one redacted line and answers JSON.
  gateway.onError((error, c) => {
    log({
      level: 'error',
      msg: 'gateway error',
      method: c.req.method,
      path: redactKeys(new URL(c.req.url).pathname),
      error: redactKeys(String(error)),
    })
    return c.json({ success: false, error: 'Internal error', errorCode: 'internal_error' }, 500)
  })
  return gateway
}
