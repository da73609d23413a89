/**
 * Providers as they really behave: quotas, refusals, outages and double runs, through the endpoint, against
 * fakes speaking each provider's documented wire format. The live engine is built as production builds it
 * (createLiveEngine: adapters, circuit breakers, fallback chain), on a provider runtime whose waits are instant
 * and recorded and whose clock is virtual, so a 5 s quota wait or a 30 s open circuit costs the test nothing.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { readSettings, type Env } from '../../shared/config.ts'
import { defaultPolling } from '../../shared/engine/providers/fashn.ts'
import { createLiveEngine } from '../../shared/engine/providers/index.ts'
import { providerRuntime } from '../../shared/engine/providers/runtime.ts'
import type { TryOnEngine } from '../../shared/engine/types.ts'
import { encodeBase64 } from '../../shared/images/base64.ts'
import type { CreatedKey } from '../support/database.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../support/images.ts'
import {
  fashn,
  FASHN_PREDICTION,
  gemini,
  geminiPath,
  startFakeServer,
  startFashnFake,
  vertex,
  vertexPredictPath,
  type FakeReply,
  type FakeServer,
  type FashnFake,
} from '../support/provider-fakes.ts'
import { freePort } from '../support/process.ts'
import { expectErrorBody, postTryOn, startTestStack, type ApiResponse, type TestStack } from '../support/stack.ts'

/**
 * What the providers "generate": another shopper in a red shirt, not this request's garment put on its shopper, so the
 * result check would rightly fail it. This file is about the providers' errors and retries, so its live keys are not
 * checked (level off); the check of a provider's result is tested in tests/e2e/quality.test.ts.
 */
const providerResult = makeShopperPhoto({ width: 96, height: 160, format: 'jpeg', shirtColor: [200, 30, 30], seed: 11 }).bytes
const standard = {
  userPhoto: encodeBase64(makeShopperPhoto({ width: 160, height: 280, format: 'jpeg' }).bytes),
  productImage: encodeBase64(makeGarmentPhoto({ kind: 'tshirt', color: [240, 200, 20], width: 160, height: 160, format: 'png' }).bytes),
  clothingType: 'T-shirt',
}
const IMAGE_MODEL = 'gemini-3.1-flash-image'
const statusPath = `/v1/status/${FASHN_PREDICTION}`

interface ProviderStack {
  t: TestStack
  /** Every wait the provider adapters asked for since the last reset, in order. */
  sleeps: number[]
  /** Moves the providers' virtual clock. */
  advance(ms: number): void
  /** The next `count` requests to URLs starting with `prefix` are refused at connect, before anything is sent. */
  refuseNext(prefix: string, count: number): void
  /** A fresh live engine (closed circuits), no waits recorded. */
  reset(): void
  post(key: CreatedKey): Promise<ApiResponse>
  /** The engine the try-on row records and the key's balance, settled and matching its ledger. */
  expectSettled(key: CreatedKey, expected: { engine: string | null; balance: number }): Promise<void>
}

async function startProviderStack(env: Env): Promise<ProviderStack> {
  const sleeps: number[] = []
  let now = Date.parse('2026-11-23T10:00:00Z')
  const refusals: { prefix: string; count: number }[] = []
  let build: () => TryOnEngine = () => {
    throw new Error('not built yet')
  }
  let live: TryOnEngine
  // A port nothing listens on: connecting is refused, so nothing is ever sent.
  const refusing = `http://127.0.0.1:${await freePort()}`
  const t = await startTestStack({
    env,
    override: (deps) => {
      const settings = readSettings(env)
      const runtime = providerRuntime({
        fetch: (input, init) => {
          const url = String(input instanceof Request ? input.url : input)
          const refusal = refusals.find((r) => r.count > 0 && url.startsWith(r.prefix))
          if (!refusal) return globalThis.fetch(input, init)
          refusal.count--
          return globalThis.fetch(refusing + new URL(url).pathname, init)
        },
        sleep: async (ms, signal) => {
          sleeps.push(ms)
          now += ms
          await new Promise((resolve) => setImmediate(resolve))
          if (signal?.aborted) throw signal.reason
        },
        now: () => now,
        random: () => 0.5,
        log: deps.log,
        // Results are downloaded as the service does, through its guarded fetcher (loopback allowed in tests).
        fetchImage: deps.fetchImage,
      })
      build = () => createLiveEngine(settings.providers, { local: deps.engines.test, runtime, budgetMs: deps.config.generationTimeoutMs })
      live = build()
      return { ...deps, engines: { ...deps.engines, live: { name: settings.engine, generate: (request) => live.generate(request) } } }
    },
  })
  return {
    t,
    sleeps,
    advance: (ms) => (now += ms),
    refuseNext: (prefix, count) => refusals.push({ prefix, count }),
    reset() {
      live = build()
      sleeps.length = 0
      refusals.length = 0
    },
    post: (key) => postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: standard }),
    async expectSettled(key, expected) {
      const [row] = await t.stack.sql<{ engine: string | null }[]>`
        select engine from tryon.tryons where account_id = ${key.accountId} order by created_at desc limit 1`
      expect(row.engine).toBe(expected.engine)
      expect(await t.ledger(key)).toEqual({
        balance: expected.balance,
        reserved: 0,
        ledgerBalance: expected.balance,
        ledgerReserved: 0,
        heldByTryOns: 0,
      })
    },
  }
}

function expectDelivered(res: ApiResponse, creditsRemaining: number) {
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  expect(res.body).toMatchObject({ success: true, creditsCharged: 1, creditsRemaining })
}

describe('Gemini quota and finish reasons (TRYON_ENGINE=gemini,fashn)', () => {
  let s: ProviderStack
  let geminiFake: FakeServer
  let fashnFake: FashnFake
  const geminiCalls = () => geminiFake.requestsTo(geminiPath(IMAGE_MODEL), 'POST').length
  const fashnRuns = () => fashnFake.requestsTo('/v1/run', 'POST').length
  beforeAll(async () => {
    geminiFake = await startFakeServer((f) => f.script('POST', geminiPath(IMAGE_MODEL), gemini.image(providerResult)))
    fashnFake = await startFashnFake(providerResult)
    s = await startProviderStack({
      TRYON_ENGINE: 'gemini,fashn',
      GEMINI_API_KEY: 'AIza-live',
      GEMINI_BASE_URL: geminiFake.url,
      FASHN_API_KEY: 'fa-live-key',
      FASHN_BASE_URL: fashnFake.url,
    })
  })
  afterAll(async () => {
    await s?.t.close()
    await geminiFake?.close()
    await fashnFake?.close()
  })
  beforeEach(() => {
    s.reset()
    geminiFake.reset()
    fashnFake.reset()
    fashnFake.script('GET', statusPath, fashn.completed(fashnFake.outputUrl))
  })

  it('429 with RetryInfo "5s": waits the 5 s Google asked for, then Gemini delivers; 1 credit, FASHN never asked', async () => {
    geminiFake.script('POST', geminiPath(IMAGE_MODEL), gemini.quotaExceeded('5s'), gemini.image(providerResult))
    const key = await s.t.createKey({ credits: 2, mode: 'live', quality: 'off' })
    expectDelivered(await s.post(key), 1)
    expect(geminiCalls()).toBe(2)
    expect(s.sleeps).toEqual([5000])
    expect(fashnRuns()).toBe(0)
    await s.expectSettled(key, { engine: 'gemini', balance: 1 })
  })

  it('429 with RetryInfo "90s", past Gemini’s 60 s share of the deadline: no wait, FASHN delivers at once; 1 credit', async () => {
    geminiFake.script('POST', geminiPath(IMAGE_MODEL), gemini.quotaExceeded('90s'))
    const key = await s.t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    expectDelivered(await s.post(key), 0)
    expect(geminiCalls()).toBe(1)
    expect(s.sleeps).not.toContain(90_000)
    expect(fashnRuns()).toBe(1)
    await s.expectSettled(key, { engine: 'fashn', balance: 0 })
  })

  it.each<[string, FakeReply]>([
    ['"is no longer available"', gemini.modelGone(IMAGE_MODEL)],
    ['"is not found for API version v1beta"', gemini.modelUnknown(IMAGE_MODEL)],
  ])(
    'a 404 NOT_FOUND %s for the model: not retried, FASHN delivers, and Gemini is skipped from then on; the log says what to set',
    async (_, reply) => {
      geminiFake.script('POST', geminiPath(IMAGE_MODEL), reply)
      const first = await s.t.createKey({ credits: 1, mode: 'live', quality: 'off' })
      expectDelivered(await s.post(first), 0)
      expect([geminiCalls(), fashnRuns()]).toEqual([1, 1])
      expect(s.sleeps.filter((ms) => ms < 1000)).toEqual([])
      await s.expectSettled(first, { engine: 'fashn', balance: 0 })
      expect(s.t.logs).toContainEqual(
        expect.objectContaining({
          msg: 'configured model is not served',
          setting: 'GEMINI_MODEL',
          model: IMAGE_MODEL,
          answered: '404 NOT_FOUND',
        }),
      )
      // The breaker opened at once: the next try-on goes straight to FASHN.
      const second = await s.t.createKey({ credits: 1, mode: 'live', quality: 'off' })
      expectDelivered(await s.post(second), 0)
      expect([geminiCalls(), fashnRuns()]).toEqual([1, 2])
    },
  )

  it.each<[string, FakeReply]>([
    ['NO_IMAGE', gemini.finished('NO_IMAGE')],
    ['OTHER', gemini.finished('OTHER')],
    ['IMAGE_OTHER', gemini.finished('IMAGE_OTHER', 'Unable to show the generated image.')],
    ['LANGUAGE', gemini.finished('LANGUAGE')],
    ['RECITATION', gemini.finished('RECITATION')],
    ['IMAGE_RECITATION', gemini.finished('IMAGE_RECITATION')],
    ['MAX_TOKENS', gemini.finished('MAX_TOKENS')],
    ['a text-only STOP reply', gemini.textOnly('Here is a description of the outfit instead.')],
  ])('%s is a failure, not a rejection: the chain moves on and FASHN delivers; 1 credit', async (_, reply) => {
    geminiFake.script('POST', geminiPath(IMAGE_MODEL), reply)
    const key = await s.t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    expectDelivered(await s.post(key), 0)
    expect([geminiCalls(), fashnRuns()]).toEqual([1, 1])
    await s.expectSettled(key, { engine: 'fashn', balance: 0 })
  })

  it.each<[string, FakeReply]>([
    ['finishReason SAFETY', gemini.finished('SAFETY')],
    ['finishReason IMAGE_SAFETY', gemini.finished('IMAGE_SAFETY', 'Unable to show the generated image.')],
    ['finishReason PROHIBITED_CONTENT', gemini.finished('PROHIBITED_CONTENT')],
    ['finishReason IMAGE_PROHIBITED_CONTENT', gemini.finished('IMAGE_PROHIBITED_CONTENT')],
    ['finishReason BLOCKLIST', gemini.finished('BLOCKLIST')],
    ['finishReason SPII', gemini.finished('SPII')],
    ['promptFeedback.blockReason OTHER', gemini.promptBlocked('OTHER')],
  ])('%s is a safety block: 422 ai_content_rejected, refunded, FASHN not asked', async (_, reply) => {
    geminiFake.script('POST', geminiPath(IMAGE_MODEL), reply)
    const key = await s.t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    expectErrorBody(await s.post(key), 422, 'ai_content_rejected')
    expect([geminiCalls(), fashnRuns()]).toEqual([1, 0])
    await s.expectSettled(key, { engine: null, balance: 1 })
  })
})

describe('Vertex refusals and quota (TRYON_ENGINE=vertex)', () => {
  let s: ProviderStack
  let fake: FakeServer
  const predictPath = vertexPredictPath('test-project', 'europe-west4')
  const calls = () => fake.requestsTo(predictPath, 'POST').length
  beforeAll(async () => {
    fake = await startFakeServer((f) => f.script('POST', predictPath, vertex.image(providerResult)))
    s = await startProviderStack({
      TRYON_ENGINE: 'vertex',
      VERTEX_PROJECT: 'test-project',
      VERTEX_LOCATION: 'europe-west4',
      VERTEX_BASE_URL: fake.url,
      VERTEX_ACCESS_TOKEN: 'ya29.given',
    })
  })
  afterAll(async () => {
    await s?.t.close()
    await fake?.close()
  })
  beforeEach(() => {
    s.reset()
    fake.reset()
  })

  it.each([
    "The prompt couldn't be submitted. It might violate our policies. Support codes: 90789179",
    "Image generation failed with the following error: The prompt could not be submitted. This prompt contains sensitive words that violate Google's Responsible AI practices. Try rephrasing the prompt. Support codes: 42876398",
    'Your input image might violate our policies.',
  ])('INVALID_ARGUMENT "%s": 422 ai_content_rejected, refunded, not retried', async (message) => {
    fake.script('POST', predictPath, vertex.error(400, 'INVALID_ARGUMENT', message))
    const key = await s.t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    expectErrorBody(await s.post(key), 422, 'ai_content_rejected')
    expect(calls()).toBe(1)
    await s.expectSettled(key, { engine: null, balance: 1 })
  })

  it.each<[string, FakeReply]>([
    [
      'a 400 INVALID_ARGUMENT about the request itself',
      vertex.error(400, 'INVALID_ARGUMENT', "Invalid value at 'instances[0].person_image': image is empty."),
    ],
    [
      'the policy wording under another status (FAILED_PRECONDITION)',
      vertex.error(400, 'FAILED_PRECONDITION', 'It might violate our policies.'),
    ],
  ])('%s: 500 generation_failed, refunded, not retried', async (_, reply) => {
    fake.script('POST', predictPath, reply)
    const key = await s.t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    expectErrorBody(await s.post(key), 500, 'generation_failed')
    expect(calls()).toBe(1)
    await s.expectSettled(key, { engine: null, balance: 1 })
  })

  it('a filtered output (raiFilteredReason): 422 ai_content_rejected, refunded', async () => {
    fake.script('POST', predictPath, vertex.filtered('Support codes: 63429089'))
    const key = await s.t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    expectErrorBody(await s.post(key), 422, 'ai_content_rejected')
    await s.expectSettled(key, { engine: null, balance: 1 })
  })

  it('five 429s against the per-minute quota are waited out within the deadline (1.5, 3, 6, 12, 12 s), then 200 and 1 credit', async () => {
    const quota = vertex.error(
      429,
      'RESOURCE_EXHAUSTED',
      'Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model',
    )
    fake.script('POST', predictPath, quota, quota, quota, quota, quota, vertex.image(providerResult))
    const key = await s.t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    expectDelivered(await s.post(key), 0)
    expect(calls()).toBe(6)
    expect(s.sleeps).toEqual([1500, 3000, 6000, 12000, 12000])
    await s.expectSettled(key, { engine: 'vertex', balance: 0 })
  })

  it('virtual-try-on-001 from its shutdown day (2027-01-20): never called, 500 generation_failed at once, refunded; the log says what to set', async () => {
    const untilShutdown = Date.parse('2027-01-20T00:00:00Z') - Date.parse('2026-11-23T10:00:00Z')
    s.advance(untilShutdown)
    try {
      const key = await s.t.createKey({ credits: 1, mode: 'live', quality: 'off' })
      const res = await s.post(key)
      expectErrorBody(res, 500, 'generation_failed')
      expect(res.body.error).not.toContain('VERTEX_MODEL')
      expect(calls()).toBe(0)
      await s.expectSettled(key, { engine: null, balance: 1 })
      expect(s.t.logs).toContainEqual(
        expect.objectContaining({
          level: 'error',
          msg: 'configured model is not served',
          setting: 'VERTEX_MODEL',
          model: 'virtual-try-on-001',
          since: '2027-01-20',
          successor: 'gemini-3.1-flash-image',
        }),
      )
    } finally {
      s.advance(-untilShutdown)
    }
  })
})

describe('FASHN runs, polling and the circuit breaker (TRYON_ENGINE=fashn,gemini)', () => {
  let s: ProviderStack
  let fashnFake: FashnFake
  let geminiFake: FakeServer
  const fashnRuns = () => fashnFake.requestsTo('/v1/run', 'POST').length
  const geminiCalls = () => geminiFake.requestsTo(geminiPath(IMAGE_MODEL), 'POST').length
  beforeAll(async () => {
    fashnFake = await startFashnFake(providerResult)
    geminiFake = await startFakeServer((f) => f.script('POST', geminiPath(IMAGE_MODEL), gemini.image(providerResult)))
    s = await startProviderStack({
      TRYON_ENGINE: 'fashn,gemini',
      FASHN_API_KEY: 'fa-live-key',
      FASHN_BASE_URL: fashnFake.url,
      GEMINI_API_KEY: 'AIza-live',
      GEMINI_BASE_URL: geminiFake.url,
    })
  })
  afterAll(async () => {
    await s?.t.close()
    await fashnFake?.close()
    await geminiFake?.close()
  })
  beforeEach(() => {
    s.reset()
    fashnFake.reset()
    geminiFake.reset()
    fashnFake.script('GET', statusPath, fashn.completed(fashnFake.outputUrl))
  })

  it('a run whose connection dropped after it was sent is not sent again (it may have started): Gemini delivers, 1 credit', async () => {
    fashnFake.script('POST', '/v1/run', { drop: true }, fashn.submitted())
    const key = await s.t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    expectDelivered(await s.post(key), 0)
    expect([fashnRuns(), geminiCalls()]).toEqual([1, 1])
    await s.expectSettled(key, { engine: 'gemini', balance: 0 })
  })

  it('a gateway’s 502 page (not FASHN’s own error) on /v1/run is not retried: Gemini delivers, 1 credit', async () => {
    fashnFake.script(
      'POST',
      '/v1/run',
      { status: 502, text: '<html><body>502 Bad Gateway</body></html>', contentType: 'text/html' },
      fashn.submitted(),
    )
    const key = await s.t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    expectDelivered(await s.post(key), 0)
    expect([fashnRuns(), geminiCalls()]).toEqual([1, 1])
  })

  it('a run refused at connect (it never left) is sent again: FASHN delivers, 1 credit, one run received', async () => {
    s.refuseNext(`${fashnFake.url}/v1/run`, 1)
    const key = await s.t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    expectDelivered(await s.post(key), 0)
    expect([fashnRuns(), geminiCalls()]).toEqual([1, 0])
    await s.expectSettled(key, { engine: 'fashn', balance: 0 })
  })

  it('five 429 ConcurrencyLimitExceeded answers are waited out within the deadline, then FASHN delivers; 1 credit', async () => {
    const busy = fashn.submitError(429, 'ConcurrencyLimitExceeded', 'Too many concurrent predictions')
    fashnFake.script('POST', '/v1/run', busy, busy, busy, busy, busy, fashn.submitted())
    const key = await s.t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    expectDelivered(await s.post(key), 0)
    expect([fashnRuns(), geminiCalls()]).toEqual([6, 0])
    expect(s.sleeps.slice(0, 5)).toEqual([1500, 3000, 6000, 12000, 12000])
    await s.expectSettled(key, { engine: 'fashn', balance: 0 })
  })

  it('ThirdPartyError (a content restriction, by FASHN’s SDK): 422 ai_content_rejected, refunded, Gemini not asked', async () => {
    fashnFake.script('GET', statusPath, fashn.failed('ThirdPartyError', 'Image captioning refused the inputs'))
    const key = await s.t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    expectErrorBody(await s.post(key), 422, 'ai_content_rejected')
    expect([fashnRuns(), geminiCalls()]).toEqual([1, 0])
    await s.expectSettled(key, { engine: null, balance: 1 })
  })

  it('3rdPartyProviderError (an unclassified provider failure): Gemini delivers, 1 credit', async () => {
    fashnFake.script('GET', statusPath, fashn.failed('3rdPartyProviderError', 'upstream error'))
    const key = await s.t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    expectDelivered(await s.post(key), 0)
    expect([fashnRuns(), geminiCalls()]).toEqual([1, 1])
  })

  it('polls status from 1 s, growing to 2 s: never more than 8 polls in 10 s, so 6 concurrent jobs stay within 50 per 10 s', async () => {
    const processing = Array.from({ length: 14 }, () => fashn.status('processing'))
    fashnFake.script('GET', statusPath, ...processing, fashn.completed(fashnFake.outputUrl))
    const key = await s.t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    expectDelivered(await s.post(key), 0)
    expect(fashnFake.requestsTo(statusPath)).toHaveLength(15)
    expect(s.sleeps[0]).toBe(defaultPolling.firstMs)
    expect(Math.max(...s.sleeps)).toBe(defaultPolling.maxMs)
    const at = s.sleeps.map((_, i) => s.sleeps.slice(0, i + 1).reduce((a, b) => a + b, 0))
    const busiest = Math.max(...at.map((start) => at.filter((x) => x >= start && x < start + 10_000).length))
    expect(6 * busiest).toBeLessThanOrEqual(50)
  })

  it('after 5 consecutive FASHN outages its circuit opens: skipped for 30 s (Gemini at once), then one request probes it', async () => {
    fashnFake.script('POST', '/v1/run', fashn.submitError(503, 'InternalServerError', 'Service unavailable'))
    const key = await s.t.createKey({ credits: 8, mode: 'live', quality: 'off' })
    for (let i = 0; i < 5; i++) expectDelivered(await s.post(key), 7 - i)
    expect([fashnRuns(), geminiCalls()]).toEqual([20, 5])

    expectDelivered(await s.post(key), 2)
    expect([fashnRuns(), geminiCalls()]).toEqual([20, 6])
    await s.expectSettled(key, { engine: 'gemini', balance: 2 })

    fashnFake.script('POST', '/v1/run', fashn.submitted())
    s.advance(30_000)
    expectDelivered(await s.post(key), 1)
    expect([fashnRuns(), geminiCalls()]).toEqual([21, 6])
    await s.expectSettled(key, { engine: 'fashn', balance: 1 })
    expectDelivered(await s.post(key), 0)
    expect([fashnRuns(), geminiCalls()]).toEqual([22, 6])
  })
})
