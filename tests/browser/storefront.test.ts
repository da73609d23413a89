import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { gzipSync } from 'node:zlib'
import { join } from 'node:path'
import type { Page, Request } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureDemoKey } from '../../devstack/demo.ts'
import { startDevStack, type DevStack } from '../../devstack/stack.ts'
import { playgroundPage } from '../../devstack/web.ts'
import { decodeBase64 } from '../../shared/images/base64.ts'
import { readImageHeader } from '../../shared/images/sniff.ts'
import { errorBodySchema } from '../../shared/http/responses.ts'
import { tryOnSuccessSchema } from '../../shared/http/tryon.ts'
import { createKey, createTestDatabase, ledgerCheck, type CreatedKey, type TestDatabase } from '../support/database.ts'
import { makeShopperPhoto } from '../support/images.ts'
import { launchChromium, screenshot, type Chromium } from './chromium.ts'

/**
 * The playground as a shop would host it: the page on one origin (http://localhost:<port>), the API,
 * the widget script and the sample images on another (http://127.0.0.1:<port>), so every call the
 * widget makes is a real cross-origin request with a preflight.
 */
describe('storefront widget in Chromium, across origins', () => {
  let db: TestDatabase
  let dataDir: string
  let stack: DevStack
  let shop: Server
  let shopUrl: string
  let browser: Chromium
  let demoKey: string
  const photo = makeShopperPhoto({ width: 1200, height: 2000, fullLength: true })

  beforeAll(async () => {
    ;[db, dataDir, browser] = await Promise.all([
      createTestDatabase('postgres'),
      mkdtemp(join(tmpdir(), 'tryon-browser-')),
      launchChromium(),
    ])
    stack = await startDevStack({ env: {}, dataDir, port: 0, dbPort: 0, databaseUrl: db.url, log: () => {}, playgroundKey: () => demoKey })
    demoKey = (await ensureDemoKey(stack.sql, dataDir)).apiKey

    shop = createServer(async (request, response) => {
      if (request.url !== '/') return response.writeHead(404).end()
      const html = await playgroundPage({ apiKey: demoKey, endpoint: stack.functionUrl, assets: stack.url })
      response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(html)
    })
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve))
    shopUrl = `http://localhost:${(shop.address() as AddressInfo).port}`
  })

  afterAll(async () => {
    await browser?.close()
    await new Promise((resolve) => shop?.close(resolve))
    await stack?.stop()
    await db?.close()
    await rm(dataDir, { recursive: true, force: true })
  })

  const balanceOf = async (key: CreatedKey) => (await stack.sql`select tryon.credit_balance(${key.keyId})::float8 as n`)[0].n

  /** Opens the shop page and sets the playground up as a developer would. */
  async function openShop(options: { apiKey: string; productType?: string; scenario?: string; locale?: string }) {
    const { page, errors } = await browser.newPage()
    await page.goto(shopUrl)
    await page.locator('body[data-ready="true"]').waitFor()
    await page.fill('#api-key', options.apiKey)
    if (options.productType) await page.selectOption('#product-type', options.productType)
    if (options.scenario) await page.selectOption('#scenario', options.scenario)
    if (options.locale) await page.selectOption('#locale', options.locale)
    return { page, errors }
  }

  /** Opens the dialog from the keyboard, chooses the photo and sends it; resolves with the API request. */
  async function tryOnWith(page: Page, names: { open: string; go: string }): Promise<Request> {
    await page.getByRole('button', { name: names.open }).press('Enter')
    await page.getByRole('dialog').waitFor()
    expect(await dialogState(page)).toMatchObject({ open: true, focused: 'INPUT' })
    await page
      .locator('tryon-button input[type=file]:not([capture])')
      .setInputFiles({ name: 'me.jpg', mimeType: 'image/jpeg', buffer: Buffer.from(photo.bytes) })
    const sent = page.waitForRequest((request) => request.url() === stack.functionUrl && request.method() === 'POST')
    await page.getByRole('button', { name: names.go }).click()
    return sent
  }

  const dialogState = (page: Page) =>
    page.locator('tryon-button').evaluate((element) => {
      const root = element.shadowRoot!
      const result = root.querySelector<HTMLImageElement>('img.result')!
      return {
        open: root.querySelector('dialog')!.open,
        focused: root.activeElement?.tagName ?? null,
        resultLoaded: result.complete && result.naturalWidth > 0 && !root.querySelector('figure')!.hidden,
      }
    })

  it('sends a resized photo from the shop origin, shows the result, and the credits go down', async () => {
    const key = await createKey(stack.sql, { credits: 3 })
    const { page, errors } = await openShop({ apiKey: key.apiKey, locale: 'en' })
    const request = await tryOnWith(page, { open: 'Try it on', go: 'Create my try-on' })

    expect((await request.allHeaders()).origin).toBe(shopUrl)
    const userPhoto: string = request.postDataJSON().userPhoto
    expect(userPhoto).toMatch(/^data:image\/jpeg;base64,/)
    const sentHeader = readImageHeader(decodeBase64(userPhoto.slice(userPhoto.indexOf(',') + 1))!)
    expect(sentHeader).toMatchObject({ format: 'jpeg', width: Math.round((1200 * 1536) / 2000), height: 1536 })

    await page.getByText('Your try-on is ready.', { exact: true }).first().waitFor()
    const response = await request.response()
    expect(response?.headers()['access-control-allow-origin']).toBe(shopUrl)
    const body = tryOnSuccessSchema.parse(await response!.json())
    expect(body).toMatchObject({ creditsCharged: 1, creditsRemaining: 2 })

    await page.locator('#result').waitFor()
    expect(await dialogState(page)).toEqual({ open: true, focused: 'FIGCAPTION', resultLoaded: true })
    expect(await page.locator('#credits').textContent()).toBe('2')
    expect(await page.locator('#status').textContent()).toBe('200')
    expect(JSON.parse((await page.locator('#json').textContent())!)).toEqual(body)
    expect(await balanceOf(key)).toBe(2)
    const ledger = await ledgerCheck(stack.sql, key.accountId)
    expect(ledger).toMatchObject({ balance: 2, ledgerBalance: 2, reserved: 0, heldByTryOns: 0 })
    await screenshot(page, 'tryon-result')

    // The result has a shortId: the shopper can copy its share link, which opens the image without a key.
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: shopUrl })
    await page.locator('tryon-button').getByRole('button', { name: 'Copy link' }).click()
    await page.locator('tryon-button').getByRole('status').getByText('Link copied.').waitFor()
    const link = await page.evaluate(() => navigator.clipboard.readText())
    expect(link).toBe(`${stack.functionUrl}/s/${body.shortId}`)
    const shared = await fetch(link, { redirect: 'manual' })
    expect(shared.status).toBe(302)
    expect(shared.headers.get('location')).toBe(body.resultUrl)

    await page.keyboard.press('Escape')
    expect(await dialogState(page)).toMatchObject({ open: false, focused: 'BUTTON' })
    expect(errors).toEqual([])
  })

  it('shows the 403 message to a shopper on a site the key is not restricted to, and charges nothing', async () => {
    const key = await createKey(stack.sql, { credits: 3, origins: ['https://shop.example.com'] })
    const { page, errors } = await openShop({ apiKey: key.apiKey, locale: 'en' })
    await tryOnWith(page, { open: 'Try it on', go: 'Create my try-on' })

    const alert = page.locator('tryon-button').getByRole('alert')
    await alert.getByText('Try-on is not enabled for this website.').waitFor()
    expect(errorBodySchema.parse(JSON.parse((await page.locator('#json').textContent())!))).toMatchObject({
      errorCode: 'origin_not_allowed',
    })
    expect(await page.locator('#status').textContent()).toBe('403')
    expect(await balanceOf(key)).toBe(3)
    await screenshot(page, 'tryon-403-origin')
    expect(errors).toEqual([])
  })

  it('shows the 402 message, in French when the page asks for it, for a key with no credits', async () => {
    const key = await createKey(stack.sql, { credits: 0 })
    const { page, errors } = await openShop({ apiKey: key.apiKey, locale: 'fr' })
    await tryOnWith(page, { open: 'Essayer', go: 'Créer mon essayage' })

    const alert = page.locator('tryon-button').getByRole('alert')
    // Shopper words: the shop's credits are not the shopper's business (the playground's `debug` line names the 402).
    await alert.getByText('L’essayage est indisponible pour le moment sur cette boutique. Revenez plus tard.').waitFor()
    expect(await page.locator('tryon-button .debug').textContent()).toBe('HTTP 402 insufficient_credits: Insufficient credits')
    expect(JSON.parse((await page.locator('#json').textContent())!)).toEqual({
      success: false,
      error: 'Insufficient credits',
      errorCode: 'insufficient_credits',
    })
    // Sending again cannot help: no retry button, the photo picker has the focus.
    expect(await page.getByRole('button', { name: 'Réessayer' }).isVisible()).toBe(false)
    expect(await dialogState(page)).toMatchObject({ focused: 'INPUT' })
    await screenshot(page, 'tryon-402-credits-fr')
    expect(errors).toEqual([])
  })

  it('tells the shopper, in French, that try-on is unavailable for now when the key has reached its daily cap', async () => {
    const key = await createKey(stack.sql, { credits: 3 })
    await stack.sql`select tryon.set_key_limits(${key.keyId}, '{"dailyCredits": 0}')`
    const { page, errors } = await openShop({ apiKey: key.apiKey, locale: 'fr' })
    const request = await tryOnWith(page, { open: 'Essayer', go: 'Créer mon essayage' })

    await page
      .locator('tryon-button')
      .getByRole('alert')
      .getByText('L’essayage est indisponible pour le moment sur cette boutique. Revenez plus tard.')
      .waitFor()
    const response = await request.response()
    expect(response?.status()).toBe(429)
    expect(Number(response?.headers()['retry-after'])).toBeGreaterThan(0)
    expect(errorBodySchema.parse(JSON.parse((await page.locator('#json').textContent())!))).toMatchObject({
      errorCode: 'daily_cap_reached',
    })
    expect(await balanceOf(key)).toBe(3)
    expect(errors).toEqual([])
  })

  it('gives wedding-dress guidance and shows the train verdict and what was charged', async () => {
    const key = await createKey(stack.sql, { credits: 2 })
    const { page, errors } = await openShop({ apiKey: key.apiKey, productType: 'wedding-dress', scenario: 'train_score_low', locale: 'en' })
    await page.getByRole('button', { name: 'Try it on' }).click()
    expect(
      await page
        .getByRole('dialog')
        .getByText(/use a full-length photo: standing, facing the camera, feet visible/)
        .isVisible(),
    ).toBe(true)
    await page.keyboard.press('Escape')
    const request = await tryOnWith(page, { open: 'Try it on', go: 'Create my try-on' })
    expect((await request.allHeaders())['x-tryon-scenario']).toBe('train_score_low')
    expect(request.postDataJSON()).toMatchObject({ productType: 'wedding-dress' })

    await page.getByText(/The train of the gown could not be shown on this photo/).waitFor()
    const body = tryOnSuccessSchema.parse(JSON.parse((await page.locator('#json').textContent())!))
    expect(body).toMatchObject({
      shortId: null,
      creditsCharged: 0,
      creditsRemaining: 2,
      bridal: { applied: false, reason: 'train_score_low' },
    })
    // The playground sets `debug`: the shop's developer sees the figures under the result.
    const details = await page.locator('tryon-button .debug').textContent()
    // The key is at the default level, measured: the check's score is shown beside the train's.
    expect(details).toBe(
      `credits charged: 0 · credits remaining: 2 · train score: ${body.bridal!.trainScore!.toFixed(2)} · quality score: ${body.quality!.score!.toFixed(2)}`,
    )
    expect(await page.locator('tryon-button figcaption').textContent()).toBe(
      'Your try-on is ready. The train of the gown could not be shown on this photo. For the gown and its train, use a ' +
        'full-length photo: standing, facing the camera, feet visible with some floor around them.',
    )
    // No shortId, so nothing to share.
    expect(await page.locator('tryon-button').getByRole('button', { name: 'Copy link' }).isVisible()).toBe(false)
    expect(await balanceOf(key)).toBe(2)
    await screenshot(page, 'tryon-wedding-dress')
    expect(errors).toEqual([])
  })

  it('offers to try again after a server error, and charges nothing', async () => {
    const key = await createKey(stack.sql, { credits: 1 })
    const { page, errors } = await openShop({ apiKey: key.apiKey, scenario: 'generation_failed', locale: 'en' })
    await tryOnWith(page, { open: 'Try it on', go: 'Create my try-on' })

    await page
      .locator('tryon-button')
      .getByRole('alert')
      .getByText('Something went wrong while creating your try-on. Please try again.')
      .waitFor()
    expect(await page.locator('#status').textContent()).toBe('500')
    expect(await dialogState(page)).toMatchObject({ focused: 'BUTTON' })
    const sentAgain = page.waitForRequest((request) => request.url() === stack.functionUrl && request.method() === 'POST')
    await page.getByRole('button', { name: 'Try again' }).click()
    expect((await (await sentAgain).response())?.status()).toBe(500)
    expect(await balanceOf(key)).toBe(1)
    expect(errors).toEqual([])
  })

  it('tells the shopper when a file is not a photo it can read, without calling the API', async () => {
    const { page, errors } = await openShop({ apiKey: demoKey, locale: 'en' })
    let calls = 0
    page.on('request', (request) => request.url() === stack.functionUrl && calls++)
    await page.getByRole('button', { name: 'Try it on' }).click()
    await page
      .locator('tryon-button input[type=file]:not([capture])')
      .setInputFiles({ name: 'notes.jpg', mimeType: 'image/jpeg', buffer: Buffer.from('not a photo') })
    await page.locator('tryon-button').getByRole('alert').getByText('This photo could not be read. Choose a JPEG or PNG photo.').waitFor()
    expect(await page.getByRole('button', { name: 'Create my try-on' }).isVisible()).toBe(false)
    expect(calls).toBe(0)
    expect(errors).toEqual([])
  })

  it('serves a widget small enough for a product page: under 10 KB gzipped, as served', async () => {
    const response = await fetch(`${stack.url}/tryon-widget.js`)
    expect(response.headers.get('content-type')).toMatch(/^text\/javascript/)
    expect(response.headers.get('access-control-allow-origin')).toBe('*')
    // 7.2 KB before the shopper's outcome words in two languages, the timed wait with Cancel and the camera input.
    expect(gzipSync(Buffer.from(await response.arrayBuffer())).length).toBeLessThan(10 * 1024)
  })

  it('serves the playground with the demo key at / of the dev stack, and the API reference at /docs', async () => {
    const { page, errors } = await browser.newPage()
    await page.goto(`${stack.url}/`)
    await page.locator('body[data-ready="true"]').waitFor()
    expect(await page.inputValue('#api-key')).toBe(demoKey)
    expect(await page.locator('#endpoint').textContent()).toBe(stack.functionUrl)
    await screenshot(page, 'playground')

    await page.getByRole('link', { name: 'API reference' }).click()
    await page.locator('main#reference:not([aria-busy])').waitFor()
    expect(await page.locator('h2 code').first().textContent()).toBe('/functions/v1/tryon-api')
    for (const code of ['insufficient_credits', 'origin_not_allowed', 'bridal_preprocessing_failed', 'idempotency_key_reused']) {
      expect(await page.locator('td:first-child code', { hasText: new RegExp(`^${code}$`) }).count(), code).toBe(1)
    }
    expect(await page.getByRole('heading', { name: 'Bridal' }).count()).toBe(1)
    await screenshot(page, 'api-reference')
    expect(errors).toEqual([])

    const post = await fetch(`${stack.url}/`, { method: 'POST' })
    expect(post.status).toBe(404)
    expect(await post.json()).toEqual({ error: 'requested path is invalid' })
  })
})
