import { readFile } from 'node:fs/promises'
import { Hono } from 'hono'
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
  return html.replace('<script type="application/json" id="playground-config">{}</script>', () => `<script type="application/json" id="playground-config">${json}</script>`)
}

const samples: Record<string, { type: string; draw: () => Uint8Array }> = {
  'shopper.jpg': { type: 'image/jpeg', draw: demoShopperPhoto },
  'bride.jpg': { type: 'image/jpeg', draw: demoBrideShopperPhoto },
  'tshirt.png': { type: 'image/png', draw: demoGarmentPhoto },
  'gown.png': { type: 'image/png', draw: demoGownPhoto },
}

// Shops load the widget and read the reference from their own origins: these are public, cross-origin files.
const publicHeaders = (type: string) => ({ 'Content-Type': type, 'Access-Control-Allow-Origin': '*', 'Cache-Control': 'no-cache' })

/**
 * The dev stack's web pages: the widget, the OpenAPI document and its reference page always; the
 * playground at `/` only when given the key it runs with (the demo key, never in production).
 * Files are read on each request, so an edit shows on reload.
 */
export function createWebRoutes(options: { playgroundKey?: () => string | undefined }): Hono {
  const web = new Hono()
  web.get('/tryon-widget.js', async (c) => c.body(await readFile(webFile('tryon-widget.js'), 'utf8'), 200, publicHeaders('text/javascript; charset=utf-8')))
  web.get('/openapi.json', async (c) => c.body(await readFile(OPENAPI_FILE, 'utf8'), 200, publicHeaders('application/json')))
  web.get('/docs', async (c) => c.html(await readFile(webFile('docs.html'), 'utf8')))

  const { playgroundKey } = options
  if (!playgroundKey) return web
  web.get('/', async (c) => {
    const apiKey = playgroundKey()
    if (!apiKey) return c.text('The playground is starting; reload in a moment.', 503, { 'Retry-After': '1' })
    const endpoint = `${new URL(c.req.url).origin}/functions/v1/tryon-api`
    return c.html(await playgroundPage({ apiKey, endpoint, assets: '' }))
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
