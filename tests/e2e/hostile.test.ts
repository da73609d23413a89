import fc from 'fast-check'
import { get } from 'node:http'
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encodeBase64 } from '../../shared/images/base64.ts'
import { encodePng } from '../../devstack/samples/png-encoder.ts'
import postgres from 'postgres'
import { makeGarmentPhoto, makeShopperPhoto } from '../support/images.ts'
import {
  hostileImageArbitrary,
  jpegWithFrames,
  manyScanJpeg,
  manyScanJpegArbitrary,
  pngWithHeaders,
  webpCanvasAndFrame,
  webpFlat,
} from '../support/hostile-images.ts'
import { encodeWebpLossyFlat } from '../support/webp-encoder.ts'
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
      fc.constantFrom(
        'data:image/png;base64,',
        'data:,',
        'data:image/jpeg;base64,////',
        'http://',
        'file:///etc/passwd',
        'http://169.254.169.254/latest/meta-data/',
        'gopher://x',
        'ftp://x/a.png',
      ),
      fc.base64String({ maxLength: 2000 }),
      fc.webUrl().map((u) => u.replace(/^https?:\/\/[^/]+/, 'http://127.0.0.1:1')),
      fc.integer(),
      fc.constant(null),
      fc.array(fc.string(), { maxLength: 3 }),
      fc.object({ maxDepth: 1 }),
    )
    const body = fc.oneof(
      fc
        .record(
          {
            userPhoto: imageLike,
            productImage: imageLike,
            clothingType: fc.oneof(fc.string({ maxLength: 300 }), fc.integer(), fc.constant(null)),
            productType: fc.oneof(fc.constantFrom('wedding-dress', 'standard', ''), fc.string(), fc.integer()),
            parentUrl: fc.oneof(fc.webUrl(), fc.string()),
            locale: fc.oneof(fc.constantFrom('en', 'fr-CA', 'pt_BR'), fc.string({ maxLength: 40 })),
          },
          { requiredKeys: [] },
        )
        .map((b) => JSON.stringify(b)),
      fc.json(),
      fc.string({ unit: 'binary', maxLength: 400 }),
    )
    const headers = fc.record(
      {
        'Content-Type': fc.constantFrom(
          'application/json',
          'application/json; charset=utf-8',
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          '',
        ),
        'X-Tryon-Scenario': fc.oneof(
          fc.constantFrom('content_rejected', 'train_score_low', 'bridal_preprocessing_crash', 'nope'),
          fc.string({ maxLength: 20 }),
        ),
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
      fc.asyncProperty(
        fc.string({ maxLength: 80 }).filter((s) => /^[\x21-\x7e]*$/.test(s)),
        async (apiKey) => {
          calls.length = 0
          const res = await postTryOn(t.stack.functionUrl, { apiKey, body: { userPhoto: person, productImage: garment } })
          expectErrorBody(res, 401, 'authentication_required', 'Authentication required')
          expect(calls).toEqual([])
        },
      ),
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
    const responses = [...text.matchAll(/HTTP\/1\.1 (\d+)[\s\S]*?\r\n\r\n(\{.*?\})(?=HTTP|$)/g)]
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
    await postTryOn(`${t.stack.functionUrl}?apiKey=${key.apiKey}`, {
      apiKey: key.apiKey,
      body: { userPhoto: person, productImage: garment },
    })
    await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: { userPhoto: person.slice(0, 900), productImage: garment } })
    await postTryOn(t.stack.functionUrl, { apiKey: `${key.apiKey.slice(0, -1)}x`, body: { userPhoto: person, productImage: garment } })
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
      level: 'info',
      tryOnId: res.body.tryOnId,
      requestId,
      outcome: 'generated',
      creditsCharged: 1,
      engine: 'local',
      durationsMs: { intake: expect.any(Number), generate: expect.any(Number), store: expect.any(Number), settle: expect.any(Number) },
    })
    expect(t.logs.find((l) => l.msg === 'request')).toMatchObject({ requestId, status: 200, durationMs: expect.any(Number) })

    t.logs.length = 0
    const failed = await postTryOn(t.stack.functionUrl, {
      apiKey: key.apiKey,
      body: { userPhoto: person, productImage: garment },
      headers: { 'X-Tryon-Scenario': 'generation_failed' },
    })
    expect(t.logs.find((l) => l.msg === 'tryon')).toMatchObject({
      level: 'error',
      tryOnId: expect.any(String),
      outcome: 'generation_failed',
      creditsCharged: 0,
    })
    expect(t.logs.find((l) => l.msg === 'request')).toMatchObject({
      requestId: failed.headers.get('x-request-id'),
      status: 500,
      errorCode: 'generation_failed',
    })
  })

  describe('files whose headers disagree about their size', () => {
    const small = { width: 64, height: 64 }
    const huge = { width: 16000, height: 16000 }

    it.each([
      ['a PNG whose second IHDR says 16000×16000', () => pngWithHeaders([small, huge])],
      ['a WebP whose VP8X canvas says 64×64 and whose VP8L bitstream says 16000×16000', () => webpCanvasAndFrame(small, huge)],
      ['a JPEG with a second frame header of 16000×16000', () => jpegWithFrames([small, huge])],
    ])('refuses %s with 400 unsupported_image and charges nothing', async (_, build) => {
      const before = await t.balanceOf(key)
      const res = await postTryOn(t.stack.functionUrl, {
        apiKey: key.apiKey,
        body: { userPhoto: encodeBase64(build()), productImage: garment },
      })
      expectErrorBody(res, 400, 'unsupported_image', /userPhoto/)
      expect(await t.balanceOf(key)).toBe(before)
    })

    it('answers fuzzed multi-header PNG, VP8X/VP8L WebP and multi-SOF JPEG files with 200 or a 400 image error, never more', async () => {
      const before = await t.balanceOf(key)
      let delivered = 0
      await fc.assert(
        fc.asyncProperty(hostileImageArbitrary({ firstMax: 160, laterMax: 12_000 }), fc.boolean(), async (file, asGarment) => {
          const hostile = encodeBase64(file.bytes)
          const body = asGarment ? { userPhoto: person, productImage: hostile } : { userPhoto: hostile, productImage: garment }
          const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body })
          const consistent = file.sizes.every((s) => s.width === file.sizes[0].width && s.height === file.sizes[0].height)
          if (res.status === 200) {
            expect(consistent, JSON.stringify(file.sizes)).toBe(true)
            delivered++
            return
          }
          // A consistent photo of nobody (the fuzzed files are flat colour) is refused as such: the local engine never
          // dresses a guessed figure. Nothing is a 5xx.
          const refusals = [
            'unsupported_image',
            'image_too_large',
            'image_too_small',
            ...(consistent && !asGarment ? ['person_not_found'] : []),
          ]
          expect([400], JSON.stringify(res.body)).toContain(res.status)
          expect(refusals).toContain(res.body.errorCode)
        }),
        { numRuns: 40, seed: 20261212 },
      )
      expect(await t.ledger(key)).toMatchObject({ reserved: 0, balance: before - delivered, ledgerBalance: before - delivered })
    }, 180_000)
  })

  describe('images whose decoding work is out of proportion to their size', () => {
    it.each([
      [
        'a 40 MP progressive JPEG of 1,000 end-of-band scans (156 KB)',
        () => manyScanJpeg({ width: 7296, height: 5472, scans: 1000 }),
        /more than the 100 progressive scans/,
      ],
      ['a 40 MP progressive JPEG of 10 full-band scans', () => manyScanJpeg({ width: 7296, height: 5472, scans: 10 }), /decoding work/],
      ['a 40 MP lossy WebP (72 KB)', () => encodeWebpLossyFlat(7296, 5472), /lossy WebP of 7296×5472/],
      ['a 40 MP lossy WebP with alpha', () => encodeWebpLossyFlat(7296, 5472, { alpha: true }), /cannot be decoded at a reduced size/],
      ['a 40 MP PNG (decoded whole)', () => pngWithHeaders([{ width: 7296, height: 5472 }]), /a PNG of 7296×5472 .* decoded whole/],
      ['a 40 MP lossless WebP (1 KB)', () => webpFlat({ width: 7296, height: 5472 }), /a lossless WebP of 7296×5472 .* decoded whole/],
    ])('refuses %s with 400 image_too_complex, from its headers, and charges nothing', async (_, build, message) => {
      const before = await t.ledger(key)
      calls.length = 0
      const res = await postTryOn(t.stack.functionUrl, {
        apiKey: key.apiKey,
        body: { userPhoto: encodeBase64(build()), productImage: garment },
      })
      expectErrorBody(res, 400, 'image_too_complex', message)
      expect(res.body.error).toMatch(/^userPhoto: /)
      expect(await t.ledger(key)).toMatchObject({ balance: before.balance, reserved: 0, ledgerBalance: before.ledgerBalance })
    })

    it('answers fuzzed many-scan JPEGs and large lossy WebPs with 200 or 400 image_too_complex, and charges only the 200s', async () => {
      const before = await t.balanceOf(key)
      let delivered = 0
      const webp = fc
        .record({ width: fc.integer({ min: 64, max: 4000 }), height: fc.integer({ min: 64, max: 4000 }), alpha: fc.boolean() })
        .map(({ width, height, alpha }) => ({
          bytes: encodeWebpLossyFlat(width, height, { alpha }),
          refused: width * height > 2048 * 2048,
        }))
      const jpeg = manyScanJpegArbitrary({ maxSide: 1200, maxScans: 200 }).map((options) => ({
        bytes: manyScanJpeg(options),
        refused: null,
      }))
      await fc.assert(
        fc.asyncProperty(fc.oneof(webp, jpeg), async (file) => {
          const res = await postTryOn(t.stack.functionUrl, {
            apiKey: key.apiKey,
            body: { userPhoto: person, productImage: encodeBase64(file.bytes) },
          })
          if (res.status === 200) {
            expect(file.refused).not.toBe(true)
            delivered++
            return
          }
          expect(file.refused, JSON.stringify(res.body)).not.toBe(false)
          expectErrorBody(res, 400, 'image_too_complex', /^productImage: /)
        }),
        { numRuns: 24, seed: 20261224 },
      )
      expect(await t.ledger(key)).toMatchObject({ reserved: 0, balance: before - delivered, ledgerBalance: before - delivered })
    }, 180_000)
  })

  describe('keys in URLs and logs', () => {
    it.each([
      ['the name of a parameter', (k: string) => `?${k}`],
      ['the name of a parameter with a value', (k: string) => `?${k}=1`],
      ['a value', (k: string) => `?ref=${k}`],
      ['a percent-encoded name', (k: string) => `?${k.replaceAll('_', '%5F')}`],
      ['an upper-case name after other parameters', (k: string) => `?a=1&b&${k.toUpperCase()}`],
    ])('answers 401 for a key-shaped string as %s, without a database call', async (_, query) => {
      calls.length = 0
      const res = await postTryOn(`${t.stack.functionUrl}${query(key.apiKey)}`, {
        apiKey: key.apiKey,
        body: { userPhoto: person, productImage: garment },
      })
      expectErrorBody(res, 401, 'authentication_required', 'Authentication required')
      expect(calls).toEqual([])
    })

    it('redacts a key sent in the path from the 404 line of the log', async () => {
      t.logs.length = 0
      const secretPart = key.apiKey.slice('vto_test_'.length, -6)
      const res = await postTryOn(`${t.stack.functionUrl}/${key.apiKey}`, { apiKey: key.apiKey, body: {} })
      expect(res.status).toBe(404)
      const line = t.logs.find((l) => l.msg === 'request')
      expect(line).toMatchObject({ status: 404, path: '/tryon-api/vto_test_[redacted]' })
      expect(JSON.stringify(t.logs)).not.toContain(secretPart)
    })
  })

  describe('request ids', () => {
    it.each([
      ['a UUID', crypto.randomUUID()],
      ['a short id of the safe alphabet', 'order-42_retry.1'],
    ])('echoes and logs %s sent by the client', async (_, id) => {
      t.logs.length = 0
      const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: {}, headers: { 'X-Request-Id': id } })
      expect(res.headers.get('x-request-id')).toBe(id)
      expect(t.logs.find((l) => l.msg === 'request')).toMatchObject({ requestId: id })
    })

    it.each([
      ['the API key itself', () => key.apiKey],
      ['65 characters', () => 'a'.repeat(65)],
      ['characters outside the safe alphabet', () => 'abc def/<script>'],
      ['a key-shaped string inside an id', () => `trace-${key.apiKey}`.slice(0, 64)],
    ])('replaces a client id that is %s with one of its own and never logs the raw value', async (_, id) => {
      t.logs.length = 0
      const sent = id()
      const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: {}, headers: { 'X-Request-Id': sent } })
      const echoed = res.headers.get('x-request-id')
      expect(echoed).not.toBe(sent)
      expect(echoed).toMatch(/^[0-9a-f-]{36}$/)
      expect(t.logs.find((l) => l.msg === 'request')).toMatchObject({ requestId: echoed })
      expect(JSON.stringify(t.logs)).not.toContain(sent)
    })
  })

  describe('the storage route', () => {
    it.each([
      '%.jpg',
      '%E0%A4%A.jpg',
      '%00.jpg',
      '..%2F..%2F..%2Fetc%2Fpasswd',
      '2026',
      '2026/11',
      'a%2F..%2F..%2F..%2Fpgdata%2FPG_VERSION.jpg',
      `${'x'.repeat(300)}.jpg`,
    ])('answers a path it cannot serve (%s) with a JSON 404 and logs no error', async (path) => {
      t.logs.length = 0
      const res = await fetch(`${t.stack.url}/storage/v1/object/public/tryon-results/${path}`)
      expect(res.status).toBe(404)
      expect(await res.json()).toMatchObject({ error: 'not_found' })
      expect(t.logs.filter((l) => l.level === 'error')).toEqual([])
    })
  })
})

describe('the CPU-heavy local work gate', () => {
  let t: TestStack
  let key: CreatedKey
  beforeAll(async () => {
    t = await startTestStack({ env: { TRYON_LOCAL_CONCURRENCY: '1', TRYON_LOCAL_QUEUE: '1' } })
    key = await t.createKey({ credits: 10 })
  })
  afterAll(() => t?.close())

  it('queues past its running slot, refuses past its queue with 503 service_busy and Retry-After, and refunds', async () => {
    const gate = t.stack.localWork
    let release!: () => void
    const held = gate.run(() => new Promise<void>((resolve) => (release = resolve)))
    const queued = postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: { userPhoto: person, productImage: garment } })
    await expect.poll(() => gate.queued).toBe(1)

    const refused = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: { userPhoto: person, productImage: garment } })
    expectErrorBody(refused, 503, 'service_busy', /No credits were charged/)
    expect(refused.headers.get('retry-after')).toBe('2')
    const [row] = await t.db!.sql`select outcome, credits_charged from tryon.tryons where outcome = 'service_busy'`
    expect(row).toEqual({ outcome: 'service_busy', credits_charged: 0 })

    release()
    await held
    expect((await queued).status).toBe(200)
    expect(await t.ledger(key)).toMatchObject({ balance: 9, reserved: 0, ledgerBalance: 9 })
  })

  it('refuses a wedding-dress try-on at its pre-treatment with 503 service_busy, not as a crash', async () => {
    const gate = t.stack.localWork
    let release!: () => void
    const held = gate.run(() => new Promise<void>((resolve) => (release = resolve)))
    const queued = gate.run(async () => {})
    const refused = await postTryOn(t.stack.functionUrl, {
      apiKey: key.apiKey,
      body: { userPhoto: person, productImage: garment, productType: 'wedding-dress' },
    })
    expectErrorBody(refused, 503, 'service_busy')
    release()
    await Promise.all([held, queued])
    expect(await t.ledger(key)).toMatchObject({ balance: 9, reserved: 0 })
  })
})

/** A GET with the Host header as given: fetch() leaves a Host header out, as browsers do. */
function getWithHost(url: string, host: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { host }, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }))
    }).on('error', reject)
  })
}

describe('dev stack pages and embedded database', () => {
  let t: TestStack
  const demoKey = 'vto_test_000000000000000000000000000000abcdef'
  beforeAll(async () => {
    t = await startTestStack({ database: 'pglite', playgroundKey: () => demoKey })
  })
  afterAll(() => t?.close())

  it.each(['/', '/docs', '/tryon-widget.js', '/openapi.json'])(
    'answers %s only to the Host it listens on (421 to a rebinding name)',
    async (path) => {
      const { port } = new URL(t.stack.url)
      for (const host of ['evil.example', `evil.example:${port}`, `127.0.0.1.nip.io:${port}`, '127.0.0.1']) {
        const res = await getWithHost(`${t.stack.url}${path}`, host)
        expect(res.status, host).toBe(421)
        expect(res.text).not.toContain(demoKey)
      }
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`]) {
        const res = await getWithHost(`${t.stack.url}${path}`, host)
        expect(res.status, host).toBe(200)
        if (path === '/') expect(res.text).toContain(demoKey)
      }
    },
  )

  it.each(['/', '/docs'])('sends %s with a CSP that allows only its own scripts, and refuses to be framed', async (path) => {
    const res = await fetch(`${t.stack.url}${path}`)
    const html = await res.text()
    const csp = res.headers.get('content-security-policy') ?? ''
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/)
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/)
    const inline = [...html.matchAll(/<script(?![^>]*(?:src=|application\/json))[^>]*>([\s\S]*?)<\/script>/g)]
    expect(inline.length).toBeGreaterThan(0)
    for (const [, body] of inline) {
      const digest = Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(body))).toString('base64')
      expect(csp).toContain(`'sha256-${digest}'`)
    }
  })

  it('requires the password of its embedded database, which its connection URL carries', async () => {
    const url = new URL(t.stack.databaseUrl)
    expect(url.password.length).toBeGreaterThanOrEqual(24)
    const withPassword = postgres(t.stack.databaseUrl, { max: 1 })
    expect(await withPassword`select current_user as user`).toEqual([{ user: 'postgres' }])
    await withPassword.end()
    for (const wrong of ['', 'postgres', `${url.password}x`]) {
      const attempt = new URL(t.stack.databaseUrl)
      attempt.password = wrong
      const sql = postgres(attempt.href, { max: 1, connect_timeout: 10 })
      await expect(sql`select 1`, `password '${wrong}'`).rejects.toThrow(/password authentication failed/)
      await sql.end()
    }
  })
})
