import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { Hono, type Context } from 'hono'
import { demoBrideShopperPhoto, demoGarmentPhoto, demoGownPhoto, demoShopperPhoto } from './sample-images.ts'

const webFile = (name: string) => new URL(`../web/${name}`, import.meta.url)
const OPENAPI_FILE = new URL('../openapi.json', import.meta.url)

/** What the playground page is rendered with. */
export interface PlaygroundConfig {
  apiKey: string
  /** The try-on endpoint the widget calls. */
  endpoint: string
  /** Where the widget, the reference and the sample images are served: '' for the page's own origin. */
  assets: string
}

/** The playground page with its configuration inlined (JSON inside a script element, `<` escaped). */
export async function playgroundPage(config: PlaygroundConfig): Promise<string> {
  const html = await readFile(webFile('playground.html'), 'utf8')
  const json = JSON.stringify(config).replaceAll('<', '\\u003c')
  return html.replace(
    '<script type="application/json" id="playground-config">{}</script>',
    () => `<script type="application/json" id="playground-config">${json}</script>`,
  )
}

const samples: Record<string, { type: string; draw: () => Uint8Array }> = {
  'shopper.jpg': { type: 'image/jpeg', draw: demoShopperPhoto },
  'bride.jpg': { type: 'image/jpeg', draw: demoBrideShopperPhoto },
  'tshirt.png': { type: 'image/png', draw: demoGarmentPhoto },
  'gown.png': { type: 'image/png', draw: demoGownPhoto },
}

// Shops load the widget and read the reference from their own origins: these are public, cross-origin files.
const publicHeaders = (type: string) => ({ 'Content-Type': type, 'Access-Control-Allow-Origin': '*', 'Cache-Control': 'no-cache' })

/** The inline scripts a page runs, by hash, so its CSP allows them and nothing injected. */
function scriptHashes(html: string): string[] {
  const hashes: string[] = []
  for (const [, attributes, body] of html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)) {
    if (/\bsrc=|type="application\/json"/.test(attributes)) continue
    hashes.push(`'sha256-${createHash('sha256').update(body).digest('base64')}'`)
  }
  return hashes
}

/**
 * A page of the dev stack: framed by nobody, and running only its own scripts (the widget's shadow DOM brings its
 * styles inline). The playground holds a live key, so no other site may embed or script it.
 */
function page(c: Context, html: string): Response {
  const csp = [
    "default-src 'self'",
    `script-src 'self' ${scriptHashes(html).join(' ')}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "connect-src 'self' data: blob:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ')
  return c.html(html, 200, {
    'Content-Security-Policy': csp,
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
  })
}

/**
 * The dev stack's web pages: the widget, the OpenAPI document and its reference page always; the
 * playground at `/` only when given the key it runs with (the demo key, never in production).
 * Files are read on each request, so an edit shows on reload.
 */
export function createWebRoutes(options: { playgroundKey?: () => string | undefined; hosts?: () => ReadonlySet<string> }): Hono {
  const web = new Hono()
  // Only to the names the stack listens on: a DNS-rebinding page (evil.example resolving to 127.0.0.1) sends its own
  // name as Host and must not read the playground's key.
  const { hosts } = options
  if (hosts) {
    web.use(async (c, next) => {
      const host = c.req.header('host')?.toLowerCase() ?? ''
      if (!hosts().has(host))
        return c.json(
          { success: false, error: 'This dev stack only answers pages to its own loopback address', errorCode: 'misdirected_request' },
          421,
        )
      await next()
    })
  }
  web.get('/tryon-widget.js', async (c) =>
    c.body(await readFile(webFile('tryon-widget.js'), 'utf8'), 200, publicHeaders('text/javascript; charset=utf-8')),
  )
  web.get('/openapi.json', async (c) => c.body(await readFile(OPENAPI_FILE, 'utf8'), 200, publicHeaders('application/json')))
  web.get('/docs', async (c) => page(c, await readFile(webFile('docs.html'), 'utf8')))

  const { playgroundKey } = options
  if (!playgroundKey) return web
  web.get('/', async (c) => {
    const apiKey = playgroundKey()
    if (!apiKey) return c.text('The playground is starting; reload in a moment.', 503, { 'Retry-After': '1' })
    const endpoint = `${new URL(c.req.url).origin}/functions/v1/tryon-api`
    return page(c, await playgroundPage({ apiKey, endpoint, assets: '' }))
  })
  const drawn = new Map<string, Uint8Array>()
  web.get('/playground/samples/:name', (c) => {
    const name = c.req.param('name')
    const sample = Object.hasOwn(samples, name) ? samples[name] : undefined
    if (!sample) return c.notFound()
    if (!drawn.has(name)) drawn.set(name, sample.draw())
    return c.body(drawn.get(name) as Uint8Array<ArrayBuffer>, 200, publicHeaders(sample.type))
  })
  return web
}
