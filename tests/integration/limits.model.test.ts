import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashApiKey } from '../../shared/auth/api-key.ts'
import { createPostgresBilling, type BeginResult, type BillingStore, type QualityCheckLevel } from '../../shared/billing/store.ts'
import type { ProductKind } from '../../shared/engine/types.ts'
import { createKey, createTestDatabase, ledgerCheck, type DatabaseKind, type TestDatabase } from '../support/database.ts'

/**
 * The limits against a plain model of what they promise, on random keys, clients, clocks and outcomes: every
 * verdict and Retry-After of begin_tryon, every charge of settle_tryon and, at the end, every counter row must
 * be what the model says. Sequential, so the model is simple; the concurrency tests are in limits.test.ts.
 */

interface KeyLimits {
  perMinute: number | null
  perClientPerMinute: number | null
  dailyCredits: number | null
  dailyRefunded: number | null
  perClientDailyRefunded: number | null
}

type Step =
  | { op: 'begin'; kind: ProductKind; client: number; advanceSeconds: number }
  | { op: 'settle'; pick: number; outcome: number }
  | { op: 'sweep' }

const maybe = (arb: fc.Arbitrary<number>) => fc.option(arb, { nil: null, freq: 2 })
const limitsArb: fc.Arbitrary<KeyLimits> = fc.record({
  perMinute: maybe(fc.integer({ min: 1, max: 4 })),
  perClientPerMinute: maybe(fc.integer({ min: 1, max: 3 })),
  dailyCredits: maybe(fc.integer({ min: 0, max: 8 })),
  dailyRefunded: maybe(fc.integer({ min: 0, max: 3 })),
  perClientDailyRefunded: maybe(fc.integer({ min: 0, max: 2 })),
})
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant('begin' as const),
      kind: fc.constantFrom<ProductKind>('standard', 'wedding-dress'),
      client: fc.integer({ min: 0, max: 2 }),
      // Mostly within the minute, sometimes the next minutes, now and then the next day.
      advanceSeconds: fc.oneof(
        { weight: 6, arbitrary: fc.integer({ min: 0, max: 20 }) },
        { weight: 3, arbitrary: fc.integer({ min: 21, max: 150 }) },
        { weight: 1, arbitrary: fc.integer({ min: 3600, max: 30 * 3600 }) },
      ),
    }),
  },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('settle' as const), pick: fc.nat(), outcome: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ op: 'sweep' as const }) },
)
const scenarioArb = fc.record({
  limits: limitsArb,
  quality: fc.constantFrom<QualityCheckLevel | null>(null, 'off', 'measured', 'judge'),
  credits: fc.integer({ min: 0, max: 16 }),
  start: fc.integer({ min: 0, max: 86_399 }),
  steps: fc.array(stepArb, { minLength: 5, maxLength: 28 }),
})

type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never

const OUTCOMES: Record<ProductKind, { outcome: string; charge: number; delivered: boolean }[]> = {
  standard: [
    { outcome: 'generated', charge: 1, delivered: true },
    { outcome: 'generation_failed', charge: 0, delivered: false },
    { outcome: 'quality_failed', charge: 0, delivered: true },
  ],
  'wedding-dress': [
    { outcome: 'train_rendered', charge: 2, delivered: true },
    { outcome: 'train_score_low', charge: 0, delivered: true },
    { outcome: 'train_pretreatment_unavailable', charge: 1, delivered: true },
    { outcome: 'bridal_preprocessing_failed', charge: 0, delivered: false },
    { outcome: 'quality_failed', charge: 0, delivered: true },
  ],
}

/** The model: counters by metric, client ('' for the key) and window start. */
class Model {
  counters = new Map<string, { used: number; pending: number }>()
  open: { tryOnId: string; kind: ProductKind; price: number; day: number; held: string[]; client: string }[] = []
  constructor(
    readonly limits: KeyLimits,
    public balance: number,
    readonly quality: QualityCheckLevel | null,
  ) {}

  private counter(metric: string, client: string, start: number) {
    const id = `${metric}|${client}|${start}`
    let c = this.counters.get(id)
    if (!c) {
      c = { used: 0, pending: 0 }
      this.counters.set(id, c)
    }
    return c
  }

  begin(tryOnId: string, kind: ProductKind, client: string, now: number): BeginResult {
    const price = kind === 'standard' ? 1 : 2
    const minute = Math.floor(now / 60_000) * 60_000
    const day = Math.floor(now / 86_400_000) * 86_400_000
    const l = this.limits
    // A result that may be delivered for nothing holds a free-delivery slot: a wedding dress, or a checked result.
    // A key without a level of its own (null) is checked at the default level (docs/billing.md, "Checked results").
    const mayBeFree = kind === 'wedding-dress' || this.quality !== 'off'
    const freeRefusal = kind === 'wedding-dress' ? 'free_deliveries_exhausted' : null
    const needs: {
      metric: string
      client: string
      start: number
      end: number
      limit: number
      amount: number
      /** null: a standard try-on's free-delivery slot, taken when left and never a refusal. */
      refusal: BeginResult['verdict'] | null
    }[] = []
    const dayEnd = day + 86_400_000
    if (l.dailyCredits !== null)
      needs.push({
        metric: 'credits',
        client: '',
        start: day,
        end: dayEnd,
        limit: l.dailyCredits,
        amount: price,
        refusal: 'daily_cap_reached',
      })
    if (mayBeFree && l.dailyRefunded !== null)
      needs.push({
        metric: 'refunded',
        client: '',
        start: day,
        end: dayEnd,
        limit: l.dailyRefunded,
        amount: 1,
        refusal: freeRefusal,
      })
    if (mayBeFree && l.perClientDailyRefunded !== null)
      needs.push({
        metric: 'refunded',
        client,
        start: day,
        end: dayEnd,
        limit: l.perClientDailyRefunded,
        amount: 1,
        refusal: freeRefusal,
      })
    if (l.perMinute !== null)
      needs.push({
        metric: 'tryons',
        client: '',
        start: minute,
        end: minute + 60_000,
        limit: l.perMinute,
        amount: 1,
        refusal: 'rate_limited',
      })
    if (l.perClientPerMinute !== null)
      needs.push({
        metric: 'tryons',
        client,
        start: minute,
        end: minute + 60_000,
        limit: l.perClientPerMinute,
        amount: 1,
        refusal: 'rate_limited',
      })
    // Every counter the request needs exists from here on, refused or not, as in the database.
    const counters = needs.map((n) => this.counter(n.metric, n.client, n.start))
    for (const [i, n] of needs.entries()) {
      const c = counters[i]
      if (n.refusal !== null && c.used + c.pending + n.amount > n.limit) {
        const left = Math.max(1, Math.ceil((n.end - now) / 1000))
        return { verdict: n.refusal, retryAfterSeconds: c.used + n.amount > n.limit ? left : Math.min(10, left) } as BeginResult
      }
    }
    if (this.balance < price) return { verdict: 'insufficient_credits', keyMode: 'test', balance: this.balance }
    this.balance -= price
    const slot = needs.every((n, i) => n.refusal !== null || counters[i].used + counters[i].pending + n.amount <= n.limit)
    const held: string[] = []
    for (const n of needs.filter((n) => n.refusal !== null || slot)) {
      const c = this.counter(n.metric, n.client, n.start)
      if (n.metric === 'tryons') c.used += n.amount
      else {
        c.pending += n.amount
        held.push(`${n.metric}|${n.client}`)
      }
    }
    this.open.push({ tryOnId, kind, price, day, held, client })
    return { verdict: 'ok', keyMode: 'test', balance: this.balance, creditsReserved: price, qualityCheck: this.quality }
  }

  settle(index: number, charge: number, freeDelivery: boolean) {
    const [t] = this.open.splice(index, 1)
    for (const h of t.held) {
      const [metric, client] = h.split('|')
      const c = this.counter(metric, client, t.day)
      c.pending -= metric === 'credits' ? t.price : 1
      c.used += metric === 'credits' ? charge : freeDelivery ? 1 : 0
    }
    this.balance += t.price - charge
  }
}

const kinds: DatabaseKind[] = ['postgres', 'pglite']

describe.each(kinds)('abuse limits against their model on %s', (kind) => {
  let db: TestDatabase
  let billing: BillingStore
  beforeAll(async () => {
    db = await createTestDatabase(kind)
    billing = createPostgresBilling(db.sql)
  })
  afterAll(() => db?.close())

  const clients = [0xa1, 0xb2, 0xc3].map((b) => new Uint8Array(32).fill(b))
  const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')

  async function check(scenario: Scenario) {
    const key = await createKey(db.sql, { credits: scenario.credits })
    await db.sql`select tryon.set_key_limits(${key.keyId}, ${db.sql.json({ ...scenario.limits })}, true)`
    await db.sql`select tryon.set_key_quality(${key.keyId}, ${scenario.quality})`
    const keyHash = await hashApiKey(key.apiKey)
    const model = new Model(scenario.limits, scenario.credits, scenario.quality)
    // Years ahead, so the database's own clock never makes the sweeper drop a counter the model still has.
    let now = Date.UTC(2032, 0, 1) + scenario.start * 1000
    for (const step of scenario.steps) {
      if (step.op === 'begin') {
        now += step.advanceSeconds * 1000
        const tryOnId = crypto.randomUUID()
        const actual = await billing.begin({
          keyHash,
          origin: null,
          tryOnId,
          productKind: step.kind,
          clientHash: clients[step.client],
          now: new Date(now),
        })
        expect(actual, JSON.stringify(step)).toEqual(model.begin(tryOnId, step.kind, hex(clients[step.client]), now))
      } else if (step.op === 'settle' && model.open.length > 0) {
        const index = step.pick % model.open.length
        const t = model.open[index]
        const result = OUTCOMES[t.kind][step.outcome % OUTCOMES[t.kind].length]
        const settled = await billing.settle({
          tryOnId: t.tryOnId,
          outcome: result.outcome,
          shortId: t.tryOnId.slice(0, 10),
          resultPath: 'p.jpg',
        })
        model.settle(index, result.charge, result.delivered && result.charge === 0)
        expect(settled).toMatchObject({ settled: true, creditsCharged: result.charge, balance: model.balance })
      } else if (step.op === 'sweep') {
        await db.sql`update tryon.tryons set created_at = now() - interval '1 hour' where api_key_id = ${key.keyId} and status = 'reserved'`
        await billing.sweep(600)
        while (model.open.length > 0) model.settle(0, 0, false)
      }
    }
    const rows = await db.sql`
      select metric, encode(client_hash, 'hex') as client, (extract(epoch from window_start) * 1000)::float8 as start, used::int, pending::int
        from tryon.usage_counters where api_key_id = ${key.keyId}`
    const actualCounters = Object.fromEntries(rows.map((r) => [`${r.metric}|${r.client}|${r.start}`, { used: r.used, pending: r.pending }]))
    expect(actualCounters).toEqual(Object.fromEntries(model.counters))
    const ledger = await ledgerCheck(db.sql, key.accountId)
    expect(ledger.balance).toBe(model.balance)
    expect(ledger.ledgerBalance).toBe(model.balance)
  }

  it('agrees with the model on the tuning seed', async () => {
    await fc.assert(fc.asyncProperty(scenarioArb, check), { seed: 1313, numRuns: kind === 'pglite' ? 8 : 15 })
  })

  it('agrees with the model on seeds it was not tuned on', async () => {
    await fc.assert(fc.asyncProperty(scenarioArb, check), { numRuns: kind === 'pglite' ? 8 : 15 })
  })
})
