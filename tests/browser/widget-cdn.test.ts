import { readFile } from 'node:fs/promises'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tryOnSuccessSchema } from '../../shared/http/tryon.ts'
import { deployWidget, readWidget } from '../../scripts/deploy-widget.ts'
import { startFakeStorage, type FakeStorage } from '../support/fake-storage.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../support/images.ts'
import { startTestStack, type TestStack } from '../support/stack.ts'
import { launchChromium, screenshot, type Chromium } from './chromium.ts'
import { SHOP_HOST_RULES, startHttpsShop, type HttpsShop } from './https-shop.ts'

const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}
const close = (server: Server | undefined) =>
  new Promise<void>((resolve) => {
    if (!server) return resolve()
    server.closeAllConnections()
    server.close(() => resolve())
  })

/**
 * A Supabase project's front door in miniature: /storage/v1/ goes to Storage (the fake), everything else to the
 * function (the dev stack), both on one origin, as `https://<ref>.supabase.co` serves both.
 */
function projectGateway(routes: { storage: string; functions: string }): Server {
  const hopByHop = ['host', 'connection', 'content-length', 'transfer-encoding', 'content-encoding', 'keep-alive']
  const forwardable = (headers: IncomingHttpHeaders | Headers) => {
    const out: Record<string, string> = {}
    const entries = headers instanceof Headers ? [...headers] : Object.entries(headers)
    for (const [name, value] of entries) if (typeof value === 'string' && !hopByHop.includes(name)) out[name] = value
    return out
  }
  return createServer(async (request, response) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const base = request.url!.startsWith('/storage/v1/') ? routes.storage : routes.functions
    const answer = await fetch(base + request.url, {
      method: request.method,
      headers: forwardable(request.headers),
      body: chunks.length ? Buffer.concat(chunks) : undefined,
    })
    response.writeHead(answer.status, forwardable(answer.headers)).end(Buffer.from(await answer.arrayBuffer()))
  })
}

/**
 * The widget on a shop's page (https://shop.example.com:<port>) loaded from somewhere else than the API
 * (http://127.0.0.1:<port>): from a CDN that mirrors npm (http://localhost:<port>/npm/tryon-widget@<version>/…,
 * the path jsDelivr uses), or from the project's public Storage bucket, where `npm run deploy:widget` put it.
 */
describe('the widget loaded from a CDN or from Storage, in Chromium', () => {
  let t: TestStack
  let storage: FakeStorage
  let browser: Chromium
  let shop: HttpsShop
  let cdn: Server
  let gateway: Server
  let cdnScript: string
  let gatewayUrl: string
  let storageScript: string
  let version: string
  const pages = new Map<string, string>()
  const photo = makeShopperPhoto({ width: 600, height: 1000 })
  const garment = `data:image/png;base64,${Buffer.from(makeGarmentPhoto({ kind: 'tshirt', color: [30, 90, 160], format: 'png' }).bytes).toString('base64')}`

  beforeAll(async () => {
    ;[t, storage, browser] = await Promise.all([
      startTestStack(),
      startFakeStorage({ buckets: ['tryon-assets'] }),
      launchChromium({ hostRules: SHOP_HOST_RULES }),
    ])
    version = (await readWidget()).version
    const packageFile = await readFile(new URL('../../web/tryon-widget.js', import.meta.url))
    cdn = createServer((request, response) => {
      if (request.url !== `/npm/tryon-widget@${version}/tryon-widget.js`) return response.writeHead(404).end()
      response
        .writeHead(200, { 'Content-Type': 'application/javascript; charset=utf-8', 'Access-Control-Allow-Origin': '*' })
        .end(packageFile)
    })
    cdnScript = `http://localhost:${await listen(cdn)}/npm/tryon-widget@${version}/tryon-widget.js`
    gateway = projectGateway({ storage: storage.url, functions: t.stack.url })
    gatewayUrl = `http://127.0.0.1:${await listen(gateway)}`
    storageScript = (await deployWidget({ url: gatewayUrl, key: storage.key })).url
    shop = await startHttpsShop((request, response) => {
      if (request.url === '/favicon.ico') return response.writeHead(204).end()
      const html = pages.get(request.url ?? '')
      if (html === undefined) return response.writeHead(404).end()
      response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(html)
    })
  })

  afterAll(async () => {
    await browser?.close()
    await shop?.close()
    await Promise.all([close(cdn), close(gateway)])
    await storage?.close()
    await t?.close()
  })

  /** A product page loading the widget from `script`; the tag carries `endpoint` only when given one. */
  async function openProductPage(options: { script: string; apiKey: string; endpoint?: string }) {
    const path = `/product-${pages.size}`
    const endpoint = options.endpoint ? ` endpoint="${options.endpoint}"` : ''
    pages.set(
      path,
      `<!doctype html><meta charset="utf-8"><title>Product</title><script type="module" src="${options.script}"></script>` +
        `<tryon-button api-key="${options.apiKey}" product-image="${garment}" locale="en"${endpoint}></tryon-button>`,
    )
    const { page, errors } = await browser.newPage()
    const consoleErrors: string[] = []
    page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text()))
    const apiCalls: string[] = []
    page.on('request', (request) => request.url().includes('/functions/v1/') && apiCalls.push(`${request.method()} ${request.url()}`))
    const script = page.waitForResponse(options.script)
    await page.goto(`${shop.origin}${path}`)
    expect((await script).status()).toBe(200)
    await page.waitForFunction(() => customElements.get('tryon-button') !== undefined)
    return { page, errors, consoleErrors, apiCalls }
  }

  /** Chooses the photo and sends it; resolves with the API response's status and body. */
  async function tryOn(page: Page) {
    await page.getByRole('button', { name: 'Try it on' }).click()
    await page
      .locator('tryon-button input[type=file]:not([capture])')
      .setInputFiles({ name: 'me.jpg', mimeType: 'image/jpeg', buffer: Buffer.from(photo.bytes) })
    const answered = page.waitForResponse(
      (response) => response.url().includes('/functions/v1/tryon-api') && response.request().method() === 'POST',
    )
    await page.getByRole('button', { name: 'Create my try-on' }).click()
    const response = await answered
    await page.locator('tryon-button').getByText('Your try-on is ready.').waitFor()
    return {
      url: response.url(),
      origin: await response.request().headerValue('origin'),
      body: tryOnSuccessSchema.parse(await response.json()),
    }
  }

  it('from a CDN without an endpoint: a console error that says what to add, and a disabled button', async () => {
    const key = await t.createKey({ credits: 1, origins: [] })
    const { page, errors, consoleErrors, apiCalls } = await openProductPage({ script: cdnScript, apiKey: key.apiKey })

    const button = page.getByRole('button', { name: 'Try it on' })
    expect(await button.isDisabled()).toBe(true)
    expect(consoleErrors).toEqual([
      `<tryon-button>: the endpoint attribute is required when tryon-widget.js is not served by the try-on API's own host ` +
        `(it was loaded from ${cdnScript}). Add endpoint="https://<project-ref>.supabase.co/functions/v1/tryon-api"; ` +
        'the button stays disabled until then.',
    ])
    await screenshot(page, 'widget-cdn-no-endpoint')
    await button.click({ force: true })
    expect(await page.locator('tryon-button').evaluate((element) => element.shadowRoot!.querySelector('dialog')!.open)).toBe(false)

    // Naming the endpoint later brings the button to life, without a second console error.
    await page.locator('tryon-button').evaluate((element, url) => element.setAttribute('endpoint', url), t.stack.functionUrl)
    expect(await button.isEnabled()).toBe(true)
    expect(consoleErrors).toHaveLength(1)
    expect(apiCalls).toEqual([])
    expect(errors).toEqual([])
  })

  it('knows the API host only where the API serves the script: the dev stack and the project Storage', async () => {
    const { page } = await openProductPage({ script: cdnScript, apiKey: 'vto_test_unused' })
    const scripts = [
      'https://cdn.jsdelivr.net/npm/tryon-widget@0.1.0/tryon-widget.js',
      'https://unpkg.com/tryon-widget@0.1.0/tryon-widget.js',
      'https://shop.example.com/assets/index-3f2a9c.js',
      'https://abcdefgh.supabase.co/storage/v1/object/public/tryon-assets/tryon-widget/0.1.0/tryon-widget.js',
      'https://api.shop.example/storage/v1/object/public/tryon-assets/tryon-widget/0.1.0/tryon-widget.js',
      'http://127.0.0.1:54321/tryon-widget.js',
    ]
    // A string, so that vitest leaves this import() alone: it runs in the page, on the module it already loaded.
    const endpoints: unknown = await page.evaluate(
      `import(${JSON.stringify(cdnScript)}).then(({ defaultEndpoint }) => ${JSON.stringify(scripts)}.map((url) => defaultEndpoint(url)))`,
    )
    expect(endpoints).toEqual([
      null,
      null,
      null,
      'https://abcdefgh.supabase.co/functions/v1/tryon-api',
      'https://api.shop.example/functions/v1/tryon-api',
      'http://127.0.0.1:54321/functions/v1/tryon-api',
    ])
  })

  it('from a CDN with the endpoint: a try-on from the shop origin on a key restricted to it', async () => {
    const key = await t.createKey({ credits: 2, origins: [shop.origin] })
    const { page, errors, consoleErrors } = await openProductPage({ script: cdnScript, apiKey: key.apiKey, endpoint: t.stack.functionUrl })
    const result = await tryOn(page)

    expect(result).toMatchObject({ url: t.stack.functionUrl, origin: shop.origin, body: { creditsCharged: 1, creditsRemaining: 1 } })
    expect(await t.balanceOf(key)).toBe(1)
    await screenshot(page, 'widget-cdn-result')
    expect(consoleErrors).toEqual([])
    expect(errors).toEqual([])
  })

  it('from the project Storage, as deploy:widget uploaded it: no endpoint needed, the API on the same host answers', async () => {
    expect(storageScript).toBe(`${gatewayUrl}/storage/v1/object/public/tryon-assets/tryon-widget/${version}/tryon-widget.js`)
    const key = await t.createKey({ credits: 1, origins: [shop.origin] })
    const { page, errors, consoleErrors } = await openProductPage({ script: storageScript, apiKey: key.apiKey })
    const result = await tryOn(page)

    expect(result).toMatchObject({
      url: `${gatewayUrl}/functions/v1/tryon-api`,
      origin: shop.origin,
      body: { creditsCharged: 1, creditsRemaining: 0 },
    })
    expect(await t.balanceOf(key)).toBe(0)
    expect(consoleErrors).toEqual([])
    expect(errors).toEqual([])
  })
})
