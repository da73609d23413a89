import { Hono } from 'hono'
import { GATEWAY_NOT_FOUND } from '../shared/app.ts'
import { RESULT_CACHE_CONTROL } from '../shared/storage/result-store.ts'
import { readObject } from './local-store.ts'
import { createWebRoutes } from './web.ts'

interface FetchHandler {
  fetch(request: Request): Response | Promise<Response>
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
}): Hono {
  const gateway = new Hono()
  gateway.use(async (c, next) => {
    await next()
    c.res.headers.set('sb-request-id', crypto.randomUUID())
  })

  const forward = async (request: Request) => {
    const url = new URL(request.url)
    url.pathname = url.pathname.slice('/functions/v1'.length)
    const inner = new Request(url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal: request.signal,
      duplex: 'half',
    } as RequestInit)
    const response = await options.functionApp.fetch(inner)
    // An answer given before the body was read whole (401, 413...) ends the connection, and says so,
    // so a client does not send its next request down a socket the server is about to drop.
    if (inner.body !== null && (!inner.bodyUsed || response.status === 413)) response.headers.set('Connection', 'close')
    return response
  }
  gateway.all('/functions/v1/tryon-api', (c) => forward(c.req.raw))
  gateway.all('/functions/v1/tryon-api/*', (c) => forward(c.req.raw))

  gateway.on(['GET', 'HEAD'], '/storage/v1/object/public/:bucket/*', async (c) => {
    const bucket = c.req.param('bucket')
    const path = decodeURIComponent(c.req.path.slice(`/storage/v1/object/public/${bucket}/`.length))
    const object = bucket === options.bucket ? await readObject(options.storageRoot, bucket, path) : null
    if (!object) return c.json({ statusCode: '404', error: 'not_found', message: 'Object not found' }, 404)
    // Node's HTTP server leaves the body out of HEAD responses by itself.
    return c.body(object.bytes as Uint8Array<ArrayBuffer>, 200, {
      'Content-Type': object.contentType,
      'Content-Length': String(object.bytes.byteLength),
      'Cache-Control': RESULT_CACHE_CONTROL,
      'Access-Control-Allow-Origin': '*',
    })
  })

  gateway.route('/', createWebRoutes({ playgroundKey: options.playgroundKey }))
  gateway.notFound((c) => c.json(GATEWAY_NOT_FOUND, 404))
  return gateway
}
