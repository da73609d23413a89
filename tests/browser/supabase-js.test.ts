import type { IncomingHttpHeaders } from 'node:http'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errorBodySchema } from '../../shared/http/responses.ts'
import { tryOnSuccessSchema } from '../../shared/http/tryon.ts'
import type { CreatedKey } from '../support/database.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../support/images.ts'
import { startTestStack, type TestStack } from '../support/stack.ts'
import { launchChromium, type Chromium } from './chromium.ts'
import type { tryOn } from './supabase-shop.ts'
import { SHOP_HOST_RULES, startHttpsShop, type HttpsShop } from './https-shop.ts'

const dataUri = (type: string, bytes: Uint8Array) => `data:${type};base64,${Buffer.from(bytes).toString('base64')}`

/**
 * A shop's page on https://shop.example.com:<port> calls the dev stack on http://127.0.0.1:<port> with
 * supabase-js's functions.invoke(), bundled by esbuild from tests/browser/supabase-shop.ts. supabase-js
 * adds Authorization, apikey and X-Client-Info (and x-region for a region), so Chromium preflights the call.
 */
describe('supabase-js functions.invoke from a storefront in Chromium', () => {
  let t: TestStack
  let shop: HttpsShop
  let browser: Chromium
  const publishableKey = 'sb_publishable_storefront-test-key'
  const body = {
    userPhoto: dataUri('image/jpeg', makeShopperPhoto({ width: 600, height: 1000 }).bytes),
    productImage: dataUri('image/png', makeGarmentPhoto({ kind: 'tshirt', color: [200, 40, 60], format: 'png' }).bytes),
    clothingType: 'T-shirt',
  }

  beforeAll(async () => {
    const [stack, bundle, chromium] = await Promise.all([
      startTestStack(),
      build({
        entryPoints: [fileURLToPath(new URL('./supabase-shop.ts', import.meta.url))],
        bundle: true,
        format: 'iife',
        globalName: 'shop',
        platform: 'browser',
        target: 'chrome120',
        write: false,
        logLevel: 'silent',
      }),
      launchChromium({ hostRules: SHOP_HOST_RULES }),
    ])
    ;[t, browser] = [stack, chromium]
    const script = bundle.outputFiles[0].text
    shop = await startHttpsShop((request, response) => {
      if (request.url === '/')
        return response
          .writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' })
          .end('<!doctype html><title>Shop</title><script src="/shop.js"></script>')
      if (request.url === '/shop.js') return response.writeHead(200, { 'Content-Type': 'text/javascript' }).end(script)
      response.writeHead(404).end()
    })
  })

  afterAll(async () => {
    await browser?.close()
    await shop?.close()
    await t?.close()
  })

  /** Runs the shop's tryOn() in its page; resolves with what it returned and the headers Chromium sent. */
  async function invokeFromShop(apiKey: string, region?: string) {
    const { page, errors } = await browser.newPage()
    await page.goto(`${shop.origin}/`)
    const sent = page.waitForRequest((request) => request.url().startsWith(t.stack.functionUrl) && request.method() === 'POST')
    const options = { supabaseUrl: t.stack.url, publishableKey, apiKey, body, region } as Parameters<typeof tryOn>[0]
    // The bundle exposes the shop's module as `window.shop` (esbuild's globalName).
    const result = await page.evaluate((options) => (window as unknown as { shop: { tryOn: typeof tryOn } }).shop.tryOn(options), options)
    const request = await sent
    const headers: IncomingHttpHeaders = await request.allHeaders()
    await page.close()
    return { result, url: request.url(), headers, errors }
  }

  /** The dev stack's request log since `from`: what reached the function, preflights included. */
  const functionRequests = (from: number) =>
    t.logs
      .slice(from)
      .filter((entry) => entry.msg === 'request')
      .map((entry) => `${entry.method} ${entry.status}`)

  const shopKey = (credits: number): Promise<CreatedKey> => t.createKey({ credits, origins: [shop.origin] })

  it('tries on with a key restricted to the shop origin: preflight passes, 200, one credit charged', async () => {
    const key = await shopKey(2)
    const before = t.logs.length
    const { result, headers, errors } = await invokeFromShop(key.apiKey)

    expect(result.status, JSON.stringify(result)).toBe(200)
    const success = tryOnSuccessSchema.parse('body' in result ? result.body : null)
    expect(success).toMatchObject({ creditsCharged: 1, creditsRemaining: 1 })
    // supabase-js's own headers went out with ours, and the function answered by X-API-Key alone.
    expect(headers).toMatchObject({
      origin: shop.origin,
      'x-api-key': key.apiKey,
      apikey: publishableKey,
      authorization: `Bearer ${publishableKey}`,
      'content-type': 'application/json',
    })
    expect(headers['x-client-info']).toBe('supabase-js/2.109.0; runtime=web')
    expect(functionRequests(before)).toEqual(['OPTIONS 204', 'POST 200'])
    expect(await t.balanceOf(key)).toBe(1)
    expect(await t.ledger(key)).toMatchObject({ balance: 1, ledgerBalance: 1, reserved: 0 })
    expect(errors).toEqual([])
  })

  it('tries on when a region is chosen, which adds x-region and ?forceFunctionRegion', async () => {
    const key = await shopKey(1)
    const { result, url, headers } = await invokeFromShop(key.apiKey, 'eu-west-1')
    expect(result.status, JSON.stringify(result)).toBe(200)
    expect(headers['x-region']).toBe('eu-west-1')
    expect(new URL(url).searchParams.get('forceFunctionRegion')).toBe('eu-west-1')
    expect(await t.balanceOf(key)).toBe(0)
  })

  it('reads 403 origin_not_allowed from FunctionsHttpError.context for a key restricted to another site, charging nothing', async () => {
    const key = await t.createKey({ credits: 2, origins: ['https://other-shop.example.com'] })
    const { result } = await invokeFromShop(key.apiKey)
    expect(result.status).toBe(403)
    expect(errorBodySchema.parse('body' in result ? result.body : null)).toMatchObject({ success: false, errorCode: 'origin_not_allowed' })
    expect(await t.balanceOf(key)).toBe(2)
  })

  it('reads 402 insufficient_credits from FunctionsHttpError.context for a shop with no credits left', async () => {
    const key = await shopKey(0)
    const { result } = await invokeFromShop(key.apiKey)
    expect(result).toEqual({ status: 402, body: { success: false, error: 'Insufficient credits', errorCode: 'insufficient_credits' } })
    expect(await t.ledger(key)).toMatchObject({ balance: 0, ledgerBalance: 0, reserved: 0 })
  })

  it('gets 401 when the key is left out, though supabase-js still sends Authorization and apikey', async () => {
    const { result, headers } = await invokeFromShop('')
    expect(headers.authorization).toBe(`Bearer ${publishableKey}`)
    expect(result).toMatchObject({ status: 401, body: { errorCode: 'authentication_required', error: 'Authentication required' } })
  })
})
