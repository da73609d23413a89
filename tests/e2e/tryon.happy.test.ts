import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../shared/app.ts'
import { encodeBase64 } from '../../shared/images/base64.ts'
import { readImageHeader } from '../../shared/images/sniff.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../support/images.ts'
import { startImageServer, type ImageServer } from '../support/image-server.ts'
import { postTryOn, startTestStack, type TestStack } from '../support/stack.ts'

const dataUri = (bytes: Uint8Array, type: string) => `data:image/${type};base64,${encodeBase64(bytes)}`

describe('standard try-on over HTTP', () => {
  let t: TestStack
  let images: ImageServer
  const person = makeShopperPhoto({ width: 360, height: 640, format: 'jpeg' }).bytes
  const garment = makeGarmentPhoto({ kind: 'tshirt', color: [200, 30, 40], width: 300, height: 300, format: 'png' }).bytes

  beforeAll(async () => {
    t = await startTestStack()
    images = await startImageServer({
      '/person.jpg': { bytes: person, contentType: 'image/jpeg' },
      '/shirt.png': { bytes: garment, contentType: 'image/png' },
    })
  })
  afterAll(async () => {
    await images?.close()
    await t?.close()
  })

  it('generates, stores and bills one credit for a request with data URIs', async () => {
    const key = await t.createKey({ credits: 3 })
    const res = await postTryOn(t.stack.functionUrl, {
      apiKey: key.apiKey,
      body: { userPhoto: dataUri(person, 'jpeg'), productImage: dataUri(garment, 'png'), clothingType: 'T-shirt' },
    })

    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    expect(res.headers.get('x-request-id')).toBeTruthy()
    expect(res.body).toEqual({
      success: true,
      tryOnId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      shortId: expect.stringMatching(/^[0-9A-Za-z]{10}$/),
      resultUrl: expect.stringMatching(
        new RegExp(`^${t.stack.url}/storage/v1/object/public/tryon-results/\\d{4}/\\d{2}/${res.body.tryOnId}\\.jpg$`),
      ),
      creditsRemaining: 2,
      creditsCharged: 1,
      // A test key with no level of its own is measured (docs/billing.md, "Checked results"): the local result passed.
      quality: { checked: true, passed: true, score: expect.any(Number), issues: [] },
    })

    const [row] = await t.stack.sql`
      select status, outcome, credits_charged, short_id, result_path, engine, clothing_type
        from tryon.tryons where id = ${res.body.tryOnId}`
    expect(row).toMatchObject({
      status: 'succeeded',
      outcome: 'generated',
      credits_charged: 1,
      short_id: res.body.shortId,
      engine: 'local',
      clothing_type: 'T-shirt',
    })
    expect(await t.ledger(key)).toMatchObject({ balance: 2, ledgerBalance: 2, reserved: 0, ledgerReserved: 0 })
  })

  it('serves the result permanently: the image itself, its type and an immutable cache header', async () => {
    const key = await t.createKey({ credits: 1 })
    const res = await postTryOn(t.stack.functionUrl, {
      apiKey: key.apiKey,
      body: { userPhoto: dataUri(person, 'jpeg'), productImage: dataUri(garment, 'png') },
    })
    expect(res.status).toBe(200)

    const image = await fetch(res.body.resultUrl)
    expect(image.status).toBe(200)
    expect(image.headers.get('content-type')).toBe('image/jpeg')
    expect(image.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    const bytes = new Uint8Array(await image.arrayBuffer())
    expect(readImageHeader(bytes)).toEqual({ format: 'jpeg', width: 360, height: 640 })
    expect(Buffer.compare(bytes, person)).not.toBe(0)

    const path = new URL(res.body.resultUrl).pathname.replace('/storage/v1/object/public/', '')
    expect(Buffer.compare(await readFile(join(t.dataDir, 'storage', path)), bytes)).toBe(0)
  })

  it('fetches both images from public URLs', async () => {
    const key = await t.createKey({ credits: 1 })
    const res = await postTryOn(t.stack.functionUrl, {
      apiKey: key.apiKey,
      body: { userPhoto: images.url('/person.jpg'), productImage: images.url('/shirt.png') },
    })
    expect(res.status).toBe(200)
    expect(images.requests).toEqual(expect.arrayContaining(['/person.jpg', '/shirt.png']))
    expect(res.body.creditsRemaining).toBe(0)
  })

  it.each(['jpeg', 'png', 'webp'] as const)('accepts a %s shopper photo as raw base64 and sniffs its format', async (format) => {
    const key = await t.createKey({ credits: 1 })
    const photo = makeShopperPhoto({ width: 240, height: 400, format }).bytes
    const res = await postTryOn(t.stack.functionUrl, {
      apiKey: key.apiKey,
      // the data-URI subtype is deliberately wrong: bytes decide the format
      body: { userPhoto: encodeBase64(photo), productImage: dataUri(garment, 'gif') },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const result = new Uint8Array(await (await fetch(res.body.resultUrl)).arrayBuffer())
    expect(readImageHeader(result)).toEqual({ format: 'jpeg', width: 240, height: 400 })
  })

  it('records the attribution fields of the request on the try-on', async () => {
    const key = await t.createKey({ credits: 1 })
    const res = await postTryOn(t.stack.functionUrl, {
      apiKey: key.apiKey,
      body: {
        userPhoto: dataUri(person, 'jpeg'),
        productImage: dataUri(garment, 'png'),
        parentUrl: 'https://shop.example/products/red-tee',
        locale: 'fr',
        productType: 'shirt',
        unknownField: 'ignored',
      },
    })
    expect(res.status).toBe(200)
    const [row] = await t.stack
      .sql`select parent_url, locale, product_kind, credits_reserved from tryon.tryons where id = ${res.body.tryOnId}`
    expect(row).toEqual({
      parent_url: 'https://shop.example/products/red-tee',
      locale: 'fr',
      product_kind: 'standard',
      credits_reserved: 1,
    })
  })

  it('answers at /tryon-api, the path Supabase delivers after stripping /functions/v1', async () => {
    const key = await t.createKey({ credits: 1 })
    const app = createApp(t.stack.deps)
    const response = await app.request('/tryon-api', {
      method: 'POST',
      headers: { 'X-API-Key': key.apiKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ userPhoto: dataUri(person, 'jpeg'), productImage: dataUri(garment, 'png') }),
    })
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ success: true, creditsCharged: 1, creditsRemaining: 0 })
  })
})

describe('standard try-on on the embedded PGlite', () => {
  let t: TestStack
  beforeAll(async () => {
    t = await startTestStack({ database: 'pglite' })
  })
  afterAll(() => t?.close())

  it('bills and delivers exactly as on a real Postgres server', async () => {
    const key = await t.createKey({ credits: 2 })
    const person = makeShopperPhoto({ width: 200, height: 360, format: 'png' }).bytes
    const garment = makeGarmentPhoto({ kind: 'dress', color: [30, 60, 200], width: 200, height: 320, format: 'jpeg' }).bytes
    const res = await postTryOn(t.stack.functionUrl, {
      apiKey: key.apiKey,
      body: { userPhoto: dataUri(person, 'png'), productImage: dataUri(garment, 'jpeg'), clothingType: 'Dress' },
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ success: true, creditsCharged: 1, creditsRemaining: 1 })
    expect(await t.ledger(key)).toMatchObject({ balance: 1, ledgerBalance: 1, reserved: 0 })
  })
})
