import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../shared/app.ts'
import { readSettings } from '../../shared/config.ts'
import { encodeBase64 } from '../../shared/images/base64.ts'
import { RESULT_CACHE_CONTROL } from '../../shared/storage/result-store.ts'
import type { DatabaseKind } from '../support/database.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../support/images.ts'
import { countingBilling, postTryOn, startTestStack, type TestStack } from '../support/stack.ts'

const person = encodeBase64(makeShopperPhoto({ width: 200, height: 320, background: [120, 128, 140], format: 'jpeg' }).bytes)
// A red T-shirt: the drawn shopper already wears a blue one, and a blue T-shirt put on it changes so little of the
// photo that the result check reads it as not put on (reported as a blind spot of shared/quality/measure.ts).
const tshirt = encodeBase64(makeGarmentPhoto({ kind: 'tshirt', color: [200, 40, 40], width: 160, height: 160, format: 'png' }).bytes)
const gown = encodeBase64(
  makeGarmentPhoto({ kind: 'gown-with-train', color: [242, 236, 224], width: 200, height: 200, transparentBackground: true }).bytes,
)
const SHOP = 'https://shop.example'

describe.each<DatabaseKind>(['postgres', 'pglite'])('share links on %s', (database) => {
  let t: TestStack
  const calls: string[] = []

  beforeAll(async () => {
    t = await startTestStack({ database, override: (deps) => ({ ...deps, billing: countingBilling(deps.billing, calls) }) })
  })
  afterAll(() => t?.close())

  /** A delivered try-on by a browser key, with everything a share link must not reveal. */
  async function sharedTryOn() {
    const key = await t.createKey({ credits: 3, origins: [SHOP] })
    const res = await postTryOn(t.stack.functionUrl, {
      apiKey: key.apiKey,
      headers: { Origin: SHOP },
      body: { userPhoto: person, productImage: tshirt, clothingType: 'Secret-Tee', parentUrl: `${SHOP}/p/secret-product`, locale: 'fr' },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return { key, result: res.body as { tryOnId: string; shortId: string; resultUrl: string } }
  }

  const notRevealed = (key: { apiKey: string; keyId: string; accountId: string }) => [
    key.apiKey,
    key.apiKey.slice(0, 13),
    key.keyId,
    key.accountId,
    'shop.example',
    'secret-product',
    'Secret-Tee',
  ]

  it('redirects to the result image by default, with no key, cached like the result, revealing nothing else', async () => {
    const { key, result } = await sharedTryOn()
    const link = `${t.stack.functionUrl}/s/${result.shortId}`

    const res = await fetch(link, { redirect: 'manual' })
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe(result.resultUrl)
    expect(res.headers.get('cache-control')).toBe(RESULT_CACHE_CONTROL)
    expect(res.headers.get('x-robots-tag')).toBe('noindex')
    const body = await res.text()
    expect(body).toBe('')
    const everything = `${[...res.headers].map(([name, value]) => `${name}: ${value}`).join('\n')}\n${body}`
    for (const secret of notRevealed(key)) expect(everything).not.toContain(secret)

    const followed = await fetch(link)
    expect(followed.status).toBe(200)
    expect(followed.headers.get('content-type')).toBe('image/jpeg')
    const direct = await fetch(result.resultUrl)
    expect(Buffer.compare(Buffer.from(await followed.arrayBuffer()), Buffer.from(await direct.arrayBuffer()))).toBe(0)

    const head = await fetch(link, { method: 'HEAD', redirect: 'manual' })
    expect(head.status).toBe(302)
    expect(head.headers.get('location')).toBe(result.resultUrl)
  })

  it('serves a page with og:image and twitter:card instead where the function is on a custom domain (TRYON_SHARE_PAGES=1)', async () => {
    const { key, result } = await sharedTryOn()
    expect(readSettings({ TRYON_SHARE_PAGES: '1' }).service.sharePages).toBe(true)
    expect(readSettings({}).service.sharePages).toBe(false)
    const app = createApp({ ...t.stack.deps, config: { ...t.stack.deps.config, sharePages: true } })

    for (const path of [`/functions/v1/tryon-api/s/${result.shortId}`, `/tryon-api/s/${result.shortId}`]) {
      const res = await app.request(path)
      expect(res.status, path).toBe(200)
      expect(res.headers.get('content-type')).toBe('text/html; charset=UTF-8')
      expect(res.headers.get('cache-control')).toBe(RESULT_CACHE_CONTROL)
      expect(res.headers.get('content-security-policy')).toContain(`img-src ${new URL(result.resultUrl).origin}`)
      const html = await res.text()
      expect(html).toContain(`<meta property="og:image" content="${result.resultUrl}">`)
      expect(html).toContain('<meta name="twitter:card" content="summary_large_image">')
      expect(html).toContain(`<meta name="twitter:image" content="${result.resultUrl}">`)
      expect(html).toContain(`<img src="${result.resultUrl}"`)
      const everything = `${[...res.headers].map(([name, value]) => `${name}: ${value}`).join('\n')}\n${html}`
      for (const secret of notRevealed(key)) expect(everything).not.toContain(secret)
    }
  })

  it('answers the edge 404 for an unknown or malformed id, asking the database only for a well-formed one', async () => {
    for (const id of ['AAAAAAAAAA', 'zzzzzzzzzz']) {
      calls.length = 0
      const res = await fetch(`${t.stack.functionUrl}/s/${id}`, { redirect: 'manual' })
      expect(res.status, id).toBe(404)
      expect(res.headers.get('sb-request-id')).toBeTruthy()
      expect(await res.json()).toEqual({ error: 'requested path is invalid' })
      expect(calls).toEqual(['sharedResult'])
    }
    for (const id of ['short', 'ABCDEFGHIJK', 'ABCDE-GHIJ', '%00AAAAAAAAA', 'AAAAAAAAAA/extra']) {
      calls.length = 0
      const res = await fetch(`${t.stack.functionUrl}/s/${id}`, { redirect: 'manual' })
      expect(res.status, id).toBe(404)
      expect(await res.json()).toEqual({ error: 'requested path is invalid' })
      expect(calls, id).toEqual([])
    }
  })

  it('gives a wedding-dress result whose train did not come out no share link, and a deleted result none any more', async () => {
    const key = await t.createKey({ credits: 4 })
    const low = await postTryOn(t.stack.functionUrl, {
      apiKey: key.apiKey,
      headers: { 'X-Tryon-Scenario': 'train_score_low' },
      body: { userPhoto: person, productImage: gown, productType: 'wedding-dress' },
    })
    expect(low.status).toBe(200)
    expect(low.body).toMatchObject({ shortId: null, bridal: { reason: 'train_score_low' } })
    const [row] = await t.stack.sql`select short_id, result_path from tryon.tryons where id = ${low.body.tryOnId}`
    expect(row).toMatchObject({ short_id: null, result_path: expect.stringMatching(/\.jpg$/) })

    const { result } = await sharedTryOn()
    await t.stack.sql`select tryon.delete_tryon(${result.tryOnId})`
    const res = await fetch(`${t.stack.functionUrl}/s/${result.shortId}`, { redirect: 'manual' })
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ error: 'requested path is invalid' })
  })

  it('needs no key and ignores one, and refuses other methods with the edge 404', async () => {
    const { result } = await sharedTryOn()
    const link = `${t.stack.functionUrl}/s/${result.shortId}`
    const withWrongKey = await fetch(link, { redirect: 'manual', headers: { 'X-API-Key': 'vto_test_not-a-key' } })
    expect(withWrongKey.status).toBe(302)
    const post = await fetch(link, { method: 'POST', redirect: 'manual' })
    expect(post.status).toBe(404)
    expect(await post.json()).toEqual({ error: 'requested path is invalid' })
  })
})
