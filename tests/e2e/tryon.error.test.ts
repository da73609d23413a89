import fc from 'fast-check'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createApp } from '../../shared/app.ts'
import { encodeBase64 } from '../../shared/images/base64.ts'
import { createImageFetcher } from '../../shared/images/fetch.ts'
import { createGuardedFetch } from '../../adapters/guarded-fetch.ts'
import { wellFormedUnknownKey, type CreatedKey } from '../support/database.ts'
import { eventually } from '../support/eventually.ts'
import { makeEmptyScene } from '../support/empty-scenes.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../support/images.ts'
import { startImageServer, type ImageServer } from '../support/image-server.ts'
import {
  abortMidBody,
  countingBilling,
  expectErrorBody,
  postEarlyAnswer,
  postTryOn,
  startTestStack,
  type ApiResponse,
  type TestStack,
} from '../support/stack.ts'

const dataUri = (bytes: Uint8Array, type = 'png') => `data:image/${type};base64,${encodeBase64(bytes)}`
const person = makeShopperPhoto({ width: 200, height: 360, format: 'jpeg' }).bytes
const garment = makeGarmentPhoto({ kind: 'tshirt', color: [20, 140, 60], width: 200, height: 200, format: 'png' }).bytes
const goodBody = { userPhoto: dataUri(person, 'jpeg'), productImage: dataUri(garment) }

describe('errors of the try-on endpoint', () => {
  let t: TestStack
  let images: ImageServer
  const calls: string[] = []

  beforeAll(async () => {
    t = await startTestStack({ override: (deps) => ({ ...deps, billing: countingBilling(deps.billing, calls) }) })
    images = await startImageServer({ '/tiny.png': { bytes: garment.slice(0, 600) } })
  })
  afterAll(async () => {
    await images?.close()
    await t?.close()
  })
  beforeEach(() => {
    calls.length = 0
  })

  const post = (options: Parameters<typeof postTryOn>[1]) => postTryOn(t.stack.functionUrl, options)

  /** Nothing was reserved or moved: the key's account still holds only its top-up. */
  async function expectUntouched(key: CreatedKey, credits: number) {
    expect(await t.balanceOf(key)).toBe(credits)
    const [row] = await t.stack.sql`select count(*)::int as n from tryon.tryons where account_id = ${key.accountId}`
    expect(row.n).toBe(0)
  }

  /** A reservation was made and refunded in full, with its reason in the ledger. */
  async function expectRefunded(key: CreatedKey, credits: number, res: ApiResponse, outcome: string) {
    expect(await t.balanceOf(key)).toBe(credits)
    const rows = await t.stack.sql`
      select t.status, t.outcome, l.kind, l.delta::int, l.reason
        from tryon.tryons t join tryon.ledger l on l.tryon_id = t.id
       where t.account_id = ${key.accountId} order by l.id`
    expect(rows, JSON.stringify(res.body)).toEqual([
      { status: 'failed', outcome, kind: 'reservation', delta: -1, reason: 'standard' },
      { status: 'failed', outcome, kind: 'refund', delta: 1, reason: outcome },
    ])
    const check = await t.ledger(key)
    expect(check.balance).toBe(check.ledgerBalance)
    expect(check.reserved).toBe(0)
  }

  describe('401 Authentication required', () => {
    it('refuses a request without X-API-Key', async () => {
      expectErrorBody(await post({ body: goodBody }), 401, 'authentication_required', 'Authentication required')
      expect(calls).toEqual([])
    })

    it.each([
      ['an empty key', ''],
      ['a key of another service', `sk_live_${'a'.repeat(40)}`],
      ['a key with a wrong checksum', `${wellFormedUnknownKey().slice(0, -1)}0`],
      ['a key with an unknown mode', wellFormedUnknownKey().replace('vto_test_', 'vto_prod_')],
      ['a truncated key', wellFormedUnknownKey().slice(0, 30)],
    ])('refuses %s without asking the database', async (_, apiKey) => {
      expectErrorBody(await post({ apiKey, body: goodBody }), 401, 'authentication_required', 'Authentication required')
      expect(calls).toEqual([])
    })

    it('refuses a well-formed key that does not exist', async () => {
      expectErrorBody(
        await post({ apiKey: wellFormedUnknownKey(), body: goodBody }),
        401,
        'authentication_required',
        'Authentication required',
      )
      expect(calls).toEqual(['begin'])
    })

    it.each(['apiKey', 'api_key', 'KEY', 'x-api-key', 'ApiKey', 'token'])(
      'refuses a key sent in the query string as %s, even with the header',
      async (name) => {
        const key = await t.createKey({ credits: 1 })
        const res = await postTryOn(`${t.stack.functionUrl}?${name}=${key.apiKey}`, { apiKey: key.apiKey, body: goodBody })
        expectErrorBody(res, 401, 'authentication_required', 'Authentication required')
        await expectUntouched(key, 1)
      },
    )

    it.each([
      ['twice', (key: string) => `v%2574o_test_${key.slice(9)}`],
      ['three times, as a value', (key: string) => `ref=vto%25255Ftest%25255F${key.slice(9)}`],
      ['twice, as a parameter named like a key', (key: string) => `api%255Fkey=${key.slice(9)}`],
    ])('refuses a key in the query string percent-encoded %s', async (_, query) => {
      const key = await t.createKey({ credits: 1 })
      const res = await postTryOn(`${t.stack.functionUrl}?${query(key.apiKey)}`, { apiKey: key.apiKey, body: goodBody })
      expectErrorBody(res, 401, 'authentication_required', 'Authentication required')
      await expectUntouched(key, 1)
    })

    it('answers 401 rather than 400 when both the key and the body are bad', async () => {
      const res = await post({ apiKey: wellFormedUnknownKey(), rawBody: '{not json' })
      expectErrorBody(res, 401, 'authentication_required', 'Authentication required')
    })
  })

  describe('403 Forbidden', () => {
    it('refuses an inactive key, before looking at the body', async () => {
      const key = await t.createKey({ credits: 5, active: false })
      expectErrorBody(await post({ apiKey: key.apiKey, body: goodBody }), 403, 'key_inactive')
      expectErrorBody(await post({ apiKey: key.apiKey, body: { userPhoto: 'x' } }), 403, 'key_inactive')
      await expectUntouched(key, 5)
    })

    it('refuses a restricted key from another origin or without an Origin header', async () => {
      const key = await t.createKey({ credits: 5, origins: ['https://shop.example'] })
      const other = await post({ apiKey: key.apiKey, body: goodBody, headers: { Origin: 'https://evil.example' } })
      expectErrorBody(other, 403, 'origin_not_allowed')
      expect(other.headers.get('access-control-allow-origin')).toBe('https://evil.example')
      expectErrorBody(await post({ apiKey: key.apiKey, body: goodBody }), 403, 'origin_not_allowed')
      expectErrorBody(await post({ apiKey: key.apiKey, body: {}, headers: { Origin: 'https://evil.example' } }), 403, 'origin_not_allowed')
      await expectUntouched(key, 5)

      const allowed = await post({ apiKey: key.apiKey, body: goodBody, headers: { Origin: 'https://shop.example' } })
      expect(allowed.status).toBe(200)
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://shop.example')
      expect(allowed.headers.get('vary')).toMatch(/Origin/)
    })
  })

  describe('402 Insufficient credits', () => {
    it('refuses a well-formed request when the balance is empty', async () => {
      const key = await t.createKey({ credits: 0 })
      expectErrorBody(await post({ apiKey: key.apiKey, body: goodBody }), 402, 'insufficient_credits', 'Insufficient credits')
      await expectUntouched(key, 0)
    })

    it('reports a bad body as 400, not 402', async () => {
      const key = await t.createKey({ credits: 0 })
      expectErrorBody(await post({ apiKey: key.apiKey, body: { productImage: 'x' } }), 400, 'invalid_request', /userPhoto/)
    })
  })

  describe('400 for a malformed request, never charged', () => {
    const cases: [string, Parameters<typeof postTryOn>[1], RegExp][] = [
      ['a non-JSON Content-Type', { rawBody: JSON.stringify(goodBody), headers: { 'Content-Type': 'text/plain' } }, /Content-Type/],
      ['a body that is not JSON', { rawBody: '{"userPhoto": ' }, /not valid JSON/],
      ['a JSON array', { body: [goodBody] }, /JSON object/],
      ['a missing userPhoto', { body: { productImage: goodBody.productImage } }, /^userPhoto is required/],
      ['an empty productImage', { body: { ...goodBody, productImage: '' } }, /^productImage must not be empty/],
      ['a number as productImage', { body: { ...goodBody, productImage: 42 } }, /^productImage/],
      ['a parentUrl that is not a URL', { body: { ...goodBody, parentUrl: 'javascript:alert(1)' } }, /^parentUrl/],
      ['a malformed locale', { body: { ...goodBody, locale: 'english please' } }, /^locale/],
      ['an unknown scenario', { body: goodBody, headers: { 'X-Tryon-Scenario': 'free_credits' } }, /X-Tryon-Scenario must be one of/],
      ['a bridal scenario on a standard try-on', { body: goodBody, headers: { 'X-Tryon-Scenario': 'train_score_low' } }, /wedding-dress/],
    ]
    it.each(cases)('refuses %s', async (_, options, message) => {
      const key = await t.createKey({ credits: 2 })
      expectErrorBody(await post({ apiKey: key.apiKey, ...options }), 400, 'invalid_request', message)
      await expectUntouched(key, 2)
    })

    it('names the text field holding a character Postgres cannot store (NUL, half a surrogate pair), never a 500 (fast-check)', async () => {
      const valid = { clothingType: 'T-shirt', productType: 'wedding-dress', parentUrl: 'https://shop.example/p/tee', locale: 'fr-CA' }
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...(Object.keys(valid) as (keyof typeof valid)[])),
          fc.constantFrom('\u0000', '\ud800', '\udfff', 'a\udc00'),
          fc.nat(),
          async (field, bad, at) => {
            const value = valid[field]
            const cut = field === 'parentUrl' ? 20 + (at % (value.length - 19)) : at % (value.length + 1)
            const key = await t.createKey({ credits: 2 })
            const before = t.logs.length
            const body = { ...goodBody, [field]: value.slice(0, cut) + bad + value.slice(cut) }
            const res = await post({ apiKey: key.apiKey, body })
            expectErrorBody(res, 400, 'invalid_request', new RegExp(`^${field} `))
            await expectUntouched(key, 2)
            expect(t.logs.slice(before).filter((line) => line.level === 'error')).toEqual([])
          },
        ),
        { numRuns: 24, seed: 61 },
      )
    })

    it('refuses X-Tryon-Scenario from a live key', async () => {
      const key = await t.createKey({ credits: 2, mode: 'live' })
      const res = await post({ apiKey: key.apiKey, body: goodBody, headers: { 'X-Tryon-Scenario': 'generation_failed' } })
      expectErrorBody(res, 400, 'invalid_request', /test keys/)
      await expectUntouched(key, 2)
    })
  })

  describe('400 for an unusable image, refunded', () => {
    it('refuses an image under 1 KB', async () => {
      const key = await t.createKey({ credits: 1 })
      const res = await post({ apiKey: key.apiKey, body: { ...goodBody, productImage: dataUri(garment.slice(0, 700)) } })
      expectErrorBody(res, 400, 'image_too_small', /^productImage: image is smaller than 1 KB/)
      await expectRefunded(key, 1, res, 'image_too_small')
    })

    it.each([
      ['an empty room', 'room', 20_003],
      ['a product photo', 'product', 20_020],
      ['a texture', 'texture', 20_006],
    ] as const)('answers person_not_found for a shopper photo with nobody in it (%s), and charges nothing', async (_, kind, seed) => {
      const scene = makeEmptyScene(seed, kind)
      const key = await t.createKey({ credits: 1 })
      const res = await post({ apiKey: key.apiKey, body: { ...goodBody, userPhoto: encodeBase64(scene.photo.bytes) } })
      expectErrorBody(
        res,
        400,
        'person_not_found',
        'No person found in userPhoto: send a photo of a person, head to feet for a wedding dress',
      )
      await expectRefunded(key, 1, res, 'person_not_found')
      // A refusal of the caller's photo, logged as such: not an error of ours.
      expect(t.logs.filter((line) => line.msg === 'tryon' && line.outcome === 'person_not_found').at(-1)).toMatchObject({ level: 'warn' })
    })

    it('answers person_not_found for a wedding dress with nobody in the photo, refunding both credits', async () => {
      const key = await t.createKey({ credits: 2 })
      const gown = makeGarmentPhoto({
        kind: 'gown-with-train',
        color: [242, 236, 224],
        width: 240,
        height: 240,
        transparentBackground: true,
      })
      const room = makeEmptyScene(20_003, 'room')
      const res = await post({
        apiKey: key.apiKey,
        body: { userPhoto: encodeBase64(room.photo.bytes), productImage: dataUri(gown.bytes), productType: 'wedding-dress' },
      })
      expectErrorBody(res, 400, 'person_not_found')
      expect(await t.balanceOf(key)).toBe(2)
      const [row] = await t.stack.sql`select status, outcome, credits_charged from tryon.tryons where account_id = ${key.accountId}`
      expect(row).toEqual({ status: 'failed', outcome: 'person_not_found', credits_charged: 0 })
    })

    it('refuses an image URL that cannot be fetched', async () => {
      const key = await t.createKey({ credits: 1 })
      const res = await post({ apiKey: key.apiKey, body: { ...goodBody, userPhoto: images.url('/missing.jpg') } })
      expectErrorBody(res, 400, 'image_unreachable', /^userPhoto/)
      expect(res.body.error).toMatch(/404/)
      await expectRefunded(key, 1, res, 'image_unreachable')
    })

    it('refuses a fetched image under 1 KB', async () => {
      const key = await t.createKey({ credits: 1 })
      const res = await post({ apiKey: key.apiKey, body: { ...goodBody, productImage: images.url('/tiny.png') } })
      expectErrorBody(res, 400, 'image_too_small', /^productImage/)
      await expectRefunded(key, 1, res, 'image_too_small')
    })

    it('refuses a format other than JPEG, PNG or WebP, whatever the data URI claims', async () => {
      const key = await t.createKey({ credits: 1 })
      const gif = new Uint8Array(4096)
      gif.set(new TextEncoder().encode('GIF89a'))
      const res = await post({ apiKey: key.apiKey, body: { ...goodBody, productImage: dataUri(gif, 'png') } })
      expectErrorBody(res, 400, 'unsupported_image', /^productImage/)
      await expectRefunded(key, 1, res, 'unsupported_image')
    })

    it('refuses an image over 10 MB', async () => {
      const key = await t.createKey({ credits: 1 })
      const huge = new Uint8Array(10 * 1024 * 1024 + 1)
      huge.set(person.subarray(0, 1024))
      const res = await post({ apiKey: key.apiKey, body: { ...goodBody, userPhoto: encodeBase64(huge) } })
      expectErrorBody(res, 400, 'image_too_large', /^userPhoto/)
      await expectRefunded(key, 1, res, 'image_too_large')
    })

    it('refuses an image whose pixels cannot be decoded', async () => {
      const key = await t.createKey({ credits: 1 })
      const corrupt = garment.slice()
      corrupt.fill(0x5a, 60)
      const res = await post({ apiKey: key.apiKey, body: { ...goodBody, productImage: dataUri(corrupt) } })
      expectErrorBody(res, 400, 'unsupported_image', /productImage/)
      await expectRefunded(key, 1, res, 'unsupported_image')
    })

    it('refuses an image URL on a private address when private hosts are not allowed', async () => {
      const key = await t.createKey({ credits: 1 })
      const app = createApp({
        ...t.stack.deps,
        fetchImage: createImageFetcher({ fetch: createGuardedFetch({ allowPrivateHosts: false }), allowPrivateHosts: false }),
      })
      const response = await app.request('/tryon-api', {
        method: 'POST',
        headers: { 'X-API-Key': key.apiKey, 'Content-Type': 'application/json' },
        body: JSON.stringify({ ...goodBody, userPhoto: 'http://169.254.169.254/latest/meta-data/' }),
      })
      const res = { status: response.status, headers: response.headers, body: await response.json() }
      expectErrorBody(res, 400, 'image_unreachable', /private, local or reserved/)
      await expectRefunded(key, 1, res, 'image_unreachable')
    })
  })

  describe('413 Payload too large', () => {
    const oversized = () => JSON.stringify({ ...goodBody, userPhoto: 'A'.repeat(31 * 1024 * 1024) })

    it('refuses a body over 30 MB from its Content-Length', async () => {
      const key = await t.createKey({ credits: 1 })
      expectErrorBody(await postEarlyAnswer(t.stack.functionUrl, { apiKey: key.apiKey, rawBody: oversized() }), 413, 'payload_too_large')
      await expectUntouched(key, 1)
    })

    it('refuses a chunked body over 30 MB while reading it', async () => {
      const key = await t.createKey({ credits: 1 })
      const bytes = new TextEncoder().encode(oversized())
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < bytes.length; i += 1 << 20) controller.enqueue(bytes.subarray(i, i + (1 << 20)))
          controller.close()
        },
      })
      const response = await fetch(t.stack.functionUrl, {
        method: 'POST',
        headers: { 'X-API-Key': key.apiKey, 'Content-Type': 'application/json' },
        body: stream,
        duplex: 'half',
      } as RequestInit)
      expectErrorBody({ status: response.status, headers: response.headers, body: await response.json() }, 413, 'payload_too_large')
      await expectUntouched(key, 1)
    })

    it('answers 401 for an unknown key even when the body is too large', async () => {
      const res = await postEarlyAnswer(t.stack.functionUrl, { apiKey: wellFormedUnknownKey(), rawBody: oversized() })
      expectErrorBody(res, 401, 'authentication_required')
    })
  })

  describe('a client that goes away in the middle of its body', () => {
    it('is logged once, at info level, as 499 (the nginx convention): no error, no stack, no 5xx, nothing charged', async () => {
      const key = await t.createKey({ credits: 1 })
      const requestId = `gone-${Date.now()}`
      await abortMidBody(t.stack.functionUrl, { apiKey: key.apiKey, requestId })
      const lines = () => t.logs.filter((line) => line.requestId === requestId)
      await eventually(async () => lines().some((line) => line.msg === 'request'))
      expect(lines()).toEqual([
        expect.objectContaining({ level: 'info', msg: 'request', method: 'POST', status: 499, errorCode: undefined }),
      ])
      expect(JSON.stringify(lines())).not.toMatch(/stack|unhandled|at \S+ \(/)
      await expectUntouched(key, 1)
      // The service still answers the next request.
      expect((await post({ apiKey: key.apiKey, body: goodBody })).status).toBe(200)
    })
  })

  describe('the generation engine', () => {
    it('returns 422 ai_content_rejected and refunds when the engine rejects the content', async () => {
      const key = await t.createKey({ credits: 1 })
      const res = await post({ apiKey: key.apiKey, body: goodBody, headers: { 'X-Tryon-Scenario': 'content_rejected' } })
      expectErrorBody(res, 422, 'ai_content_rejected', /No credits were charged/)
      await expectRefunded(key, 1, res, 'ai_content_rejected')
    })

    it('returns 500 generation_failed and refunds when generation fails', async () => {
      const key = await t.createKey({ credits: 1 })
      const res = await post({ apiKey: key.apiKey, body: goodBody, headers: { 'X-Tryon-Scenario': 'generation_failed' } })
      expectErrorBody(res, 500, 'generation_failed', /retry/)
      await expectRefunded(key, 1, res, 'generation_failed')
    })

    it('returns 500 storage_failed and refunds when the result cannot be stored', async () => {
      const key = await t.createKey({ credits: 1 })
      const app = createApp({
        ...t.stack.deps,
        store: { ...t.stack.deps.store, put: async () => Promise.reject(new Error('bucket unavailable')) },
      })
      const response = await app.request('/tryon-api', {
        method: 'POST',
        headers: { 'X-API-Key': key.apiKey, 'Content-Type': 'application/json' },
        body: JSON.stringify(goodBody),
      })
      const res = { status: response.status, headers: response.headers, body: await response.json() }
      expectErrorBody(res, 500, 'storage_failed')
      await expectRefunded(key, 1, res, 'storage_failed')
    })
  })

  describe('wrong method or path', () => {
    it('answers 405 with Allow for methods other than POST', async () => {
      const response = await fetch(t.stack.functionUrl, { method: 'GET' })
      expectErrorBody({ status: response.status, headers: response.headers, body: await response.json() }, 405, 'method_not_allowed')
      expect(response.headers.get('allow')).toBe('POST, OPTIONS')
    })

    it.each(['/functions/v1/tryon', '/functions/v1/tryon-api/extra', '/tryon-api', '/'])(
      'answers %s like the edge proxy: 404 with sb-request-id',
      async (path) => {
        const response = await fetch(t.stack.url + path, { method: 'POST' })
        expect(response.status).toBe(404)
        expect(await response.json()).toEqual({ error: 'requested path is invalid' })
        expect(response.headers.get('sb-request-id')).toMatch(/^[0-9a-f-]{36}$/)
      },
    )
  })
})
