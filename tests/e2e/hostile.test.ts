import fc from 'fast-check'
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encodeBase64 } from '../../shared/images/base64.ts'
import { encodePng } from '../../devstack/samples/png-encoder.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../support/images.ts'
import { countingBilling, expectErrorBody, postTryOn, startTestStack, type TestStack } from '../support/stack.ts'
import type { CreatedKey } from '../support/database.ts'

const person = encodeBase64(makeShopperPhoto({ width: 160, height: 280, format: 'jpeg' }).bytes)
const garment = encodeBase64(makeGarmentPhoto({ kind: 'tshirt', color: [10, 120, 200], width: 160, height: 160, format: 'png' }).bytes)

/** Statuses a fuzzed request may get: client errors only. */
const CLIENT_ERRORS = [400, 401, 403, 405, 409, 413, 415, 422]

describe('hostile input', () => {
  let t: TestStack
  const calls: string[] = []
  let key: CreatedKey

  beforeAll(async () => {
    t = await startTestStack({ override: (deps) => ({ ...deps, billing: countingBilling(deps.billing, calls) }) })
    key = await t.createKey({ credits: 50 })
  })
  afterAll(() => t?.close())

  it('answers any fuzzed body with a documented 4xx error and never charges', async () => {
    const imageLike = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.constantFrom('data:image/png;base64,', 'data:,', 'data:image/jpeg;base64,////', 'http://', 'file:///etc/passwd', 'http://169.254.169.254/latest/meta-data/', 'gopher://x', 'ftp://x/a.png'),
      fc.base64String({ maxLength: 2000 }),
      fc.webUrl().map((u) => u.replace(/^https?:\/\/[^/]+/, 'http://127.0.0.1:1')),
      fc.integer(),
      fc.constant(null),
      fc.array(fc.string(), { maxLength: 3 }),
      fc.object({ maxDepth: 1 }),
    )
    const body = fc.oneof(
      fc.record(
        {
          userPhoto: imageLike,
          productImage: imageLike,
          clothingType: fc.oneof(fc.string({ maxLength: 300 }), fc.integer(), fc.constant(null)),
          productType: fc.oneof(fc.constantFrom('wedding-dress', 'standard', ''), fc.string(), fc.integer()),
          parentUrl: fc.oneof(fc.webUrl(), fc.string()),
          locale: fc.oneof(fc.constantFrom('en', 'fr-CA', 'pt_BR'), fc.string({ maxLength: 40 })),
        },
        { requiredKeys: [] },
      ).map((b) => JSON.stringify(b)),
      fc.json(),
      fc.string({ unit: 'binary', maxLength: 400 }),
    )
    const headers = fc.record(
      {
        'Content-Type': fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', ''),
        'X-Tryon-Scenario': fc.oneof(fc.constantFrom('content_rejected', 'train_score_low', 'bridal_preprocessing_crash', 'nope'), fc.string({ maxLength: 20 })),
        'Idempotency-Key': fc.string({ minLength: 0, maxLength: 300 }),
      },
      { requiredKeys: [] },
    )

    await fc.assert(
      fc.asyncProperty(body, headers, async (rawBody, extra) => {
        const clean = Object.fromEntries(Object.entries(extra).filter(([, v]) => /^[\t\x20-\x7e]*$/.test(v)))
        const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, rawBody, headers: clean })
        expect(CLIENT_ERRORS, `${res.status} ${JSON.stringify(res.body)}`).toContain(res.status)
        expect(Object.keys(res.body).sort()).toEqual(['error', 'errorCode', 'success'])
        expect(res.body.success).toBe(false)
      }),
      { numRuns: 150, seed: 20261123 },
    )
    expect(await t.ledger(key)).toMatchObject({ balance: 50, reserved: 0, ledgerBalance: 50 })
  }, 120_000)

  it('answers fuzzed API keys with 401 and never reaches the database for a malformed one', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 80 }).filter((s) => /^[\x21-\x7e]*$/.test(s)), async (apiKey) => {
        calls.length = 0
        const res = await postTryOn(t.stack.functionUrl, { apiKey, body: { userPhoto: person, productImage: garment } })
        expectErrorBody(res, 401, 'authentication_required', 'Authentication required')
        expect(calls).toEqual([])
      }),
      { numRuns: 100, seed: 7 },
    )
  })

  it('answers a body longer than its Content-Length claims with JSON 400s, reading only what was declared', async () => {
    const { port } = new URL(t.stack.functionUrl)
    const declared = '{"userPhoto":"'
    const socket = connect(Number(port), '127.0.0.1')
    const received: Buffer[] = []
    socket.on('data', (chunk) => received.push(chunk))
    socket.on('error', () => {})
    const closed = new Promise((resolve) => socket.on('close', resolve))
    socket.write(
      `POST /functions/v1/tryon-api HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-API-Key: ${key.apiKey}\r\n` +
        `Content-Length: ${declared.length}\r\n\r\n${declared}${'A'.repeat(2 * 1024 * 1024)}`,
    )
    await closed
    // The declared bytes are a truncated JSON body (400); the rest is not HTTP (400). Whichever answers, it is JSON.
    const text = Buffer.concat(received).toString('latin1')
    const responses = [...text.matchAll(/HTTP\/1\.1 (\d+)[^]*?\r\n\r\n(\{.*?\})(?=HTTP|$)/g)]
    expect(responses.length, text.slice(0, 300)).toBeGreaterThanOrEqual(1)
    for (const [, status, json] of responses) {
      expect(status).toBe('400')
      expect(JSON.parse(json)).toMatchObject({ success: false, errorCode: 'invalid_request' })
    }
    expect(await t.ledger(key)).toMatchObject({ reserved: 0 })
  })

  it('refuses an image whose header claims a huge size from the header alone (decompression bomb)', async () => {
    // A valid PNG header claiming 100 000 x 100 000 pixels, followed by a few bytes of data.
    const real = encodePng({ width: 1, height: 1, data: new Uint8Array([255, 0, 0, 255]) })
    const bomb = new Uint8Array(2048)
    bomb.set(real.subarray(0, 33))
    new DataView(bomb.buffer).setUint32(16, 100_000)
    new DataView(bomb.buffer).setUint32(20, 100_000)
    const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: { userPhoto: encodeBase64(bomb), productImage: garment } })
    expectErrorBody(res, 400, 'image_too_large', /megapixel/i)
  })

  it('never writes an API key or image data to the logs', async () => {
    t.logs.length = 0
    const secretPart = key.apiKey.slice('vto_test_'.length, -6)
    await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: { userPhoto: person, productImage: garment } })
    await postTryOn(`${t.stack.functionUrl}?apiKey=${key.apiKey}`, { apiKey: key.apiKey, body: { userPhoto: person, productImage: garment } })
    await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: { userPhoto: person.slice(0, 900), productImage: garment } })
    await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey.slice(0, -1) + 'x', body: { userPhoto: person, productImage: garment } })
    const text = JSON.stringify(t.logs)
    expect(t.logs.length).toBeGreaterThanOrEqual(4)
    expect(text).not.toContain(secretPart)
    expect(text).not.toContain(person.slice(0, 64))
    expect(text).not.toContain(garment.slice(100, 164))
  })

  it('logs one structured line per try-on with its id, outcome, credits and step durations', async () => {
    t.logs.length = 0
    const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: { userPhoto: person, productImage: garment } })
    expect(res.status).toBe(200)
    const requestId = res.headers.get('x-request-id')
    expect(requestId).toBeTruthy()
    const tryon = t.logs.find((l) => l.msg === 'tryon')
    expect(tryon).toMatchObject({
      level: 'info', tryOnId: res.body.tryOnId, requestId, outcome: 'generated', creditsCharged: 1, engine: 'local',
      durationsMs: { intake: expect.any(Number), generate: expect.any(Number), store: expect.any(Number), settle: expect.any(Number) },
    })
    expect(t.logs.find((l) => l.msg === 'request')).toMatchObject({ requestId, status: 200, durationMs: expect.any(Number) })

    t.logs.length = 0
    const failed = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: { userPhoto: person, productImage: garment }, headers: { 'X-Tryon-Scenario': 'generation_failed' } })
    expect(t.logs.find((l) => l.msg === 'tryon')).toMatchObject({ level: 'error', tryOnId: expect.any(String), outcome: 'generation_failed', creditsCharged: 0 })
    expect(t.logs.find((l) => l.msg === 'request')).toMatchObject({ requestId: failed.headers.get('x-request-id'), status: 500, errorCode: 'generation_failed' })
  })
})
