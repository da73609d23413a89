import fc from 'fast-check'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { googleRetryDelayMs } from '../../../shared/engine/providers/google-rpc.ts'
import { requestJson, type JsonAnswer, type JsonCall } from '../../../shared/engine/providers/http.ts'
import { startFakeServer, type FakeReply, type FakeServer } from '../../support/provider-fakes.ts'
import { testRuntime, within } from './support.ts'

const answer = (details: unknown[]): JsonAnswer => ({
  status: 429,
  headers: new Headers(),
  body: { error: { code: 429, status: 'RESOURCE_EXHAUSTED', details } },
})
const retryInfo = (retryDelay: unknown) => ({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay })

describe('RetryInfo (google.rpc.RetryInfo in error.details)', () => {
  it('reads a Duration in its JSON form, with up to nine decimals', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 86_400 }),
        fc.integer({ min: 0, max: 999_999_999 }),
        fc.integer({ min: 1, max: 9 }),
        (seconds, nanos, digits) => {
          const fraction = String(nanos).padStart(9, '0').slice(0, digits)
          const expected = seconds * 1000 + Math.round(Number(`0.${fraction}`) * 1000)
          return (
            googleRetryDelayMs(answer([retryInfo(`${seconds}.${fraction}s`)])) === expected &&
            googleRetryDelayMs(answer([retryInfo(`${seconds}s`)])) === seconds * 1000
          )
        },
      ),
    )
  })

  it('finds it among other details, and tolerates the { seconds, nanos } form', () => {
    const help = { '@type': 'type.googleapis.com/google.rpc.Help', links: [] }
    expect(googleRetryDelayMs(answer([help, { '@type': 'type.googleapis.com/google.rpc.QuotaFailure' }, retryInfo('17s')]))).toBe(17_000)
    expect(googleRetryDelayMs(answer([retryInfo({ seconds: '3', nanos: 500_000_000 })]))).toBe(3500)
  })

  it('answers undefined for anything else, never a wait it made up', () => {
    const junk = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.constant(null),
      fc.constant('-5s'),
      fc.constant('5m'),
      fc.constant('5'),
      fc.constant('1e3s'),
      fc.object(),
    )
    fc.assert(
      fc.property(junk, (delay) => {
        const parsed = googleRetryDelayMs(answer([retryInfo(delay)]))
        return parsed === undefined || (typeof delay === 'string' && /^\d+(\.\d+)?s$/.test(delay.trim())) || typeof delay === 'object'
      }),
    )
    expect(googleRetryDelayMs({ status: 429, headers: new Headers(), body: undefined })).toBeUndefined()
    expect(googleRetryDelayMs(answer([{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', retryDelay: '5s' }]))).toBeUndefined()
  })
})

describe('requestJson retries', () => {
  let fake: FakeServer
  beforeAll(async () => {
    fake = await startFakeServer()
  })
  afterAll(() => fake?.close())
  beforeEach(() => fake.reset())

  const call = (overrides: Partial<JsonCall> = {}): JsonCall => ({
    provider: 'test',
    url: `${fake.url}/x`,
    attemptTimeoutMs: 5_000,
    maxResponseBytes: 4096,
    ...overrides,
  })
  const limited = (headers: Record<string, string> = {}) => ({ status: 429, json: { error: 'RateLimitExceeded' }, headers })

  it('honours Retry-After as seconds or as an HTTP date, on the runtime’s clock', async () => {
    const t = testRuntime()
    const inNineSeconds = new Date(t.runtime.now() + 9_000).toUTCString()
    fake.script('GET', '/x', limited({ 'retry-after': '4' }), limited({ 'retry-after': inNineSeconds }), { json: { ok: true } })
    const result = await requestJson(t.runtime, call(within(t, 60_000)))
    expect(result.status).toBe(200)
    expect(t.sleeps).toEqual([4000, 9000 - 4000])
  })

  it('without a known deadline, caps a server’s wait at the policy’s longest (16 s for a 429)', async () => {
    const t = testRuntime()
    fake.script('GET', '/x', limited({ 'retry-after': '600' }), { json: { ok: true } })
    expect((await requestJson(t.runtime, call())).status).toBe(200)
    expect(t.sleeps).toEqual([16_000])
  })

  it('counts 429s and failures apart: a run of 5xx after some 429s still gets its own four tries', async () => {
    const t = testRuntime()
    const down = { status: 503, json: { error: 'Unavailable' } }
    fake.script('GET', '/x', limited(), limited(), down, down, down, down, { json: { ok: true } })
    const result = await requestJson(t.runtime, call(within(t, 120_000)))
    expect(result.status).toBe(503)
    expect(fake.requestsTo('/x')).toHaveLength(6)
    expect(t.sleeps).toEqual([1500, 3000, 250, 500, 1000])
  })

  it('never waits past the deadline, whatever the answers and the time left (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(429, 500, 503, 200), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 0, max: 120_000 }),
        fc.option(fc.integer({ min: 0, max: 200 }), { nil: undefined }),
        async (statuses, budget, retryAfter) => {
          fake.reset()
          const headers: Record<string, string> = retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }
          const replies: FakeReply[] = statuses.map((status) =>
            status === 200 ? { json: { ok: true } } : { status, json: { error: 'x' }, headers },
          )
          fake.script('GET', '/x', ...replies)
          const t = testRuntime()
          const started = t.runtime.now()
          await requestJson(t.runtime, call(within(t, budget)))
          const waited = t.sleeps.reduce((a, b) => a + b, 0)
          return waited + (t.sleeps.length > 0 ? 1_000 : 0) <= budget && t.runtime.now() - started === waited
        },
      ),
      { numRuns: 60 },
    )
  })
})
