import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashApiKey } from '../../shared/auth/api-key.ts'
import { createPostgresBilling, type BeginResult, type BillingStore } from '../../shared/billing/store.ts'
import type { ProductKind } from '../../shared/engine/types.ts'
import { createKey, createTestDatabase, ledgerCheck, type CreatedKey, type DatabaseKind, type TestDatabase } from '../support/database.ts'

const kinds: DatabaseKind[] = ['postgres', 'pglite']

/** A fixed clock: 10:20:30 UTC, so a minute window has 30 s left and the day 13 h 39 min 30 s. */
const T0 = new Date('2031-03-04T10:20:30Z')
const SECONDS_TO_MINUTE_END = 30
const SECONDS_TO_DAY_END = 13 * 3600 + 39 * 60 + 30
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000)

const clientA = new Uint8Array(32).fill(0xa1)
const clientB = new Uint8Array(32).fill(0xb2)

type Limits = Partial<
  Record<'perMinute' | 'perClientPerMinute' | 'dailyCredits' | 'dailyRefunded' | 'perClientDailyRefunded', number | null>
>

describe.each(kinds)('abuse limits in begin_tryon on %s', (kind) => {
  let db: TestDatabase
  let billing: BillingStore

  beforeAll(async () => {
    db = await createTestDatabase(kind)
    billing = createPostgresBilling(db.sql)
  })
  afterAll(() => db?.close())

  async function limitedKey(credits: number, limits: Limits, origins: string[] = []): Promise<CreatedKey> {
    const key = await createKey(db.sql, { credits, origins })
    await db.sql`select tryon.set_key_limits(${key.keyId}, ${db.sql.json(limits)}, true)`
    return key
  }

  async function begin(key: CreatedKey, options: { kind?: ProductKind; client?: Uint8Array; now?: Date } = {}) {
    const tryOnId = crypto.randomUUID()
    const result = await billing.begin({
      keyHash: await hashApiKey(key.apiKey),
      origin: null,
      tryOnId,
      productKind: options.kind ?? 'standard',
      clientHash: options.client ?? clientA,
      now: options.now ?? T0,
    })
    return { tryOnId, result }
  }

  const beginMany = (
    key: CreatedKey,
    n: number,
    options: Parameters<typeof begin>[1] | ((i: number) => Parameters<typeof begin>[1]) = {},
  ) => Promise.all(Array.from({ length: n }, (_, i) => begin(key, typeof options === 'function' ? options(i) : options)))

  const verdicts = (results: { result: BeginResult }[]) => {
    const count: Record<string, number> = {}
    for (const { result } of results) count[result.verdict] = (count[result.verdict] ?? 0) + 1
    return count
  }

  const retryAfters = (results: { result: BeginResult }[]) =>
    [...new Set(results.flatMap(({ result }) => ('retryAfterSeconds' in result ? [result.retryAfterSeconds] : [])))].sort((a, b) => a - b)

  /** Nothing but the admitted try-ons moved: one reservation each, the balance exactly what they hold. */
  async function expectOnlyAdmittedReserved(key: CreatedKey, initial: number, admitted: { tryOnId: string; result: BeginResult }[]) {
    const ok = admitted.filter((r) => r.result.verdict === 'ok')
    const held = ok.reduce((sum, r) => sum + (r.result as { creditsReserved: number }).creditsReserved, 0)
    const check = await ledgerCheck(db.sql, key.accountId)
    expect(check).toEqual({
      balance: initial - held,
      reserved: held,
      ledgerBalance: initial - held,
      ledgerReserved: held,
      heldByTryOns: held,
    })
    const [rows] = await db.sql`
      select (select count(*)::int from tryon.tryons where account_id = ${key.accountId}) as tryons,
             (select count(*)::int from tryon.ledger where account_id = ${key.accountId} and kind = 'reservation') as reservations`
    expect(rows).toEqual({ tryons: ok.length, reservations: ok.length })
  }

  async function counter(key: CreatedKey, metric: string, client: Uint8Array | null, windowStart: string) {
    const [row] = await db.sql`
      select used::int, pending::int from tryon.usage_counters
       where api_key_id = ${key.keyId} and metric = ${metric} and window_start = ${windowStart}::timestamptz
         and client_hash = ${client ? Buffer.from(client) : Buffer.alloc(0)}`
    return row ?? null
  }

  const minute = '2031-03-04T10:20:00Z'
  const day = '2031-03-04T00:00:00Z'

  describe('settings', () => {
    it('gives keys restricted to origins the browser defaults and server keys none', async () => {
      const browser = await createKey(db.sql, { credits: 1, origins: ['https://shop.example'] })
      const server = await createKey(db.sql, { credits: 1 })
      const [b] = await db.sql`select tryon.show_api_key(${browser.keyId}) as key`
      const [s] = await db.sql`select tryon.show_api_key(${server.keyId}) as key`
      expect(b.key.limits).toEqual({
        perMinute: null,
        perClientPerMinute: 10,
        dailyCredits: null,
        dailyRefunded: 20,
        perClientDailyRefunded: 5,
      })
      expect(s.key.limits).toEqual({
        perMinute: null,
        perClientPerMinute: null,
        dailyCredits: null,
        dailyRefunded: null,
        perClientDailyRefunded: null,
      })
      expect(b.key).toMatchObject({
        keyId: browser.keyId,
        accountId: browser.accountId,
        credits: 1,
        allowedOrigins: ['https://shop.example'],
        active: true,
      })
      expect(JSON.stringify(b.key)).not.toContain(browser.apiKey.slice(13))
    })

    it('changes some limits, removes one with null, clears all, and refuses nonsense', async () => {
      const key = await createKey(db.sql, { credits: 1, origins: ['https://shop.example'] })
      const set = async (limits: unknown, clear = false) =>
        (await db.sql`select tryon.set_key_limits(${key.keyId}, ${db.sql.json(limits as never)}, ${clear}) as limits`)[0].limits
      expect(await set({ perMinute: 30, dailyRefunded: null })).toEqual({
        perMinute: 30,
        perClientPerMinute: 10,
        dailyCredits: null,
        dailyRefunded: null,
        perClientDailyRefunded: 5,
      })
      expect(await set({ dailyCredits: 0 }, true)).toEqual({
        perMinute: null,
        perClientPerMinute: null,
        dailyCredits: 0,
        dailyRefunded: null,
        perClientDailyRefunded: null,
      })
      for (const bad of [
        { perMinute: 0 },
        { perClientPerMinute: -1 },
        { dailyCredits: 2.5 },
        { dailyRefunded: '3' },
        { perMinute: 2 ** 31 },
        { burst: 3 },
        [1],
      ]) {
        await expect(set(bad), JSON.stringify(bad)).rejects.toMatchObject({ code: '22023' })
      }
      await expect(db.sql`select tryon.set_key_limits(${crypto.randomUUID()}, '{}')`).rejects.toMatchObject({ code: 'P0002' })
    })
  })

  describe('each limit answers its 429 exactly at its threshold under concurrency, and takes nothing', () => {
    it('requests per minute per key: 10 of 50 concurrent requests, from any clients', async () => {
      const key = await limitedKey(100, { perMinute: 10 })
      const results = await beginMany(key, 50, (i) => ({ client: i % 2 ? clientA : clientB }))
      expect(verdicts(results)).toEqual({ ok: 10, rate_limited: 40 })
      expect(retryAfters(results)).toEqual([SECONDS_TO_MINUTE_END])
      await expectOnlyAdmittedReserved(key, 100, results)
      expect(await counter(key, 'tryons', null, minute)).toEqual({ used: 10, pending: 0 })
    })

    it('requests per minute per client address: 10 for each client of 25 concurrent requests each', async () => {
      const key = await limitedKey(100, { perClientPerMinute: 10 })
      const results = await beginMany(key, 50, (i) => ({ client: i % 2 ? clientA : clientB }))
      expect(verdicts(results)).toEqual({ ok: 20, rate_limited: 30 })
      const okByClient = [clientA, clientB].map(
        (client) => results.filter((r, i) => r.result.verdict === 'ok' && (i % 2 ? clientA : clientB) === client).length,
      )
      expect(okByClient).toEqual([10, 10])
      await expectOnlyAdmittedReserved(key, 100, results)
      expect(await counter(key, 'tryons', clientA, minute)).toEqual({ used: 10, pending: 0 })
      expect(await counter(key, 'tryons', clientB, minute)).toEqual({ used: 10, pending: 0 })
    })

    it('credits per day per key: 10 credits admit 10 standard or 5 wedding-dress try-ons of 50, and refunds go back to the day', async () => {
      const key = await limitedKey(100, { dailyCredits: 10 })
      const first = await beginMany(key, 50, (i) => ({ kind: i < 25 ? 'wedding-dress' : 'standard' }))
      const admittedCredits = first.reduce((sum, r) => sum + (r.result.verdict === 'ok' ? r.result.creditsReserved : 0), 0)
      expect(admittedCredits).toBeGreaterThanOrEqual(9) // a 2-credit gown is refused when 1 credit is left
      expect(admittedCredits).toBeLessThanOrEqual(10)
      expect(Object.keys(verdicts(first)).sort()).toEqual(['daily_cap_reached', 'ok'])
      // While the admitted ones are still running, a retry may pay off soon: at most 10 s.
      expect(retryAfters(first).every((s) => s >= 1 && s <= 10)).toBe(true)
      await expectOnlyAdmittedReserved(key, 100, first)
      expect(await counter(key, 'credits', null, day)).toEqual({ used: 0, pending: admittedCredits })

      // Settle all: the failed ones give their credits back to today's budget, the delivered ones keep them.
      const ok = first.filter((r) => r.result.verdict === 'ok')
      let charged = 0
      for (const [i, r] of ok.entries()) {
        const wedding = (r.result as { creditsReserved: number }).creditsReserved === 2
        const fail = i % 2 === 0
        const outcome = fail ? 'generation_failed' : wedding ? 'train_rendered' : 'generated'
        const settled = await billing.settle({
          tryOnId: r.tryOnId,
          outcome,
          shortId: fail ? null : `S${i}`.padEnd(10, 'x'),
          resultPath: fail ? null : 'p.jpg',
        })
        charged += settled.creditsCharged
      }
      expect(await counter(key, 'credits', null, day)).toEqual({ used: charged, pending: 0 })

      const second = await beginMany(key, 20, { kind: 'standard' })
      expect(verdicts(second)).toEqual({ ok: 10 - charged, daily_cap_reached: 10 + charged })
      for (const r of second.filter((x) => x.result.verdict === 'ok'))
        await billing.settle({ tryOnId: r.tryOnId, outcome: 'generated', shortId: r.tryOnId.slice(0, 10), resultPath: 'p.jpg' })
      // Spent for good: nothing changes before midnight UTC.
      const third = await begin(key)
      expect(third.result).toEqual({ verdict: 'daily_cap_reached', retryAfterSeconds: SECONDS_TO_DAY_END })
      const check = await ledgerCheck(db.sql, key.accountId)
      expect(check).toMatchObject({ balance: 100 - 10, reserved: 0, ledgerBalance: 100 - 10 })
    })

    it('refunded deliveries per day per key: 5 of 50 concurrent wedding-dress requests, standard ones unaffected', async () => {
      const key = await limitedKey(200, { dailyRefunded: 5 })
      const results = await beginMany(key, 50, { kind: 'wedding-dress' })
      expect(verdicts(results)).toEqual({ ok: 5, free_deliveries_exhausted: 45 })
      expect(retryAfters(results)).toEqual([10]) // the five still running may yet be charged
      await expectOnlyAdmittedReserved(key, 200, results)
      expect((await begin(key, { kind: 'standard' })).result.verdict).toBe('ok')

      // All five delivered for free (the bridal refund): the day's free deliveries are spent.
      for (const r of results.filter((x) => x.result.verdict === 'ok')) {
        const settled = await billing.settle({ tryOnId: r.tryOnId, outcome: 'train_score_low', resultPath: 'p.jpg' })
        expect(settled.creditsCharged).toBe(0)
      }
      expect(await counter(key, 'refunded', null, day)).toEqual({ used: 5, pending: 0 })
      expect((await begin(key, { kind: 'wedding-dress' })).result).toEqual({
        verdict: 'free_deliveries_exhausted',
        retryAfterSeconds: SECONDS_TO_DAY_END,
      })
      expect((await begin(key, { kind: 'standard', client: clientB })).result.verdict).toBe('ok')
    })

    it('a result that failed its check takes a free delivery when one is left; a standard try-on is never refused for one', async () => {
      const key = await limitedKey(200, { dailyRefunded: 3, perClientDailyRefunded: 2 })
      const slots = async (ids: string[]) => {
        const [row] = await db.sql`
          select count(*) filter (where 'refunded' = any (usage_held))::int as key,
                 count(*) filter (where 'refunded_client' = any (usage_held))::int as client
            from tryon.tryons where id in ${db.sql(ids)}`
        return row
      }
      // Six at once from one client: all run; two take the client's two slots, the others none.
      const first = await beginMany(key, 6, { kind: 'standard' })
      expect(verdicts(first)).toEqual({ ok: 6 })
      expect(await slots(first.map((r) => r.tryOnId))).toEqual({ key: 2, client: 2 })
      expect(await counter(key, 'refunded', clientA, day)).toEqual({ used: 0, pending: 2 })
      // What the service asks once a result fails its check: only the two with slots may be delivered for nothing.
      const free = await Promise.all(first.map((r) => billing.freeDelivery(r.tryOnId, T0)))
      expect(free.filter((f) => f.held)).toHaveLength(2)
      expect(new Set(free.map((f) => f.retryAfterSeconds))).toEqual(new Set([SECONDS_TO_DAY_END]))
      for (const r of first) {
        const free = await billing.settle({ tryOnId: r.tryOnId, outcome: 'quality_failed', resultPath: 'p.jpg' })
        expect(free).toMatchObject({ status: 'succeeded', creditsCharged: 0, shortId: null })
      }
      expect(await counter(key, 'refunded', null, day)).toEqual({ used: 2, pending: 0 })
      expect(await counter(key, 'refunded', clientA, day)).toEqual({ used: 2, pending: 0 })

      // The client's free deliveries are spent: its gowns wait for tomorrow, its standard try-ons go on, slotless.
      expect((await begin(key, { kind: 'wedding-dress' })).result).toEqual({
        verdict: 'free_deliveries_exhausted',
        retryAfterSeconds: SECONDS_TO_DAY_END,
      })
      const more = await begin(key, { kind: 'standard' })
      expect(more.result.verdict).toBe('ok')
      expect(await slots([more.tryOnId])).toEqual({ key: 0, client: 0 })
      await billing.settle({ tryOnId: more.tryOnId, outcome: 'generated', shortId: more.tryOnId.slice(0, 10), resultPath: 'p.jpg' })

      // Another client: a pass gives its slot back, a failed check keeps the key's last one.
      const passed = await begin(key, { kind: 'standard', client: clientB })
      expect(await slots([passed.tryOnId])).toEqual({ key: 1, client: 1 })
      await billing.settle({ tryOnId: passed.tryOnId, outcome: 'generated', shortId: passed.tryOnId.slice(0, 10), resultPath: 'p.jpg' })
      expect(await counter(key, 'refunded', null, day)).toEqual({ used: 2, pending: 0 })
      const failed = await begin(key, { kind: 'standard', client: clientB })
      await billing.settle({ tryOnId: failed.tryOnId, outcome: 'quality_failed', resultPath: 'p.jpg' })
      expect(await counter(key, 'refunded', null, day)).toEqual({ used: 3, pending: 0 })
      expect((await begin(key, { kind: 'wedding-dress', client: clientB })).result).toEqual({
        verdict: 'free_deliveries_exhausted',
        retryAfterSeconds: SECONDS_TO_DAY_END,
      })
      const ledger = await ledgerCheck(db.sql, key.accountId)
      expect(ledger).toMatchObject({ balance: 198, reserved: 0, ledgerBalance: 198, ledgerReserved: 0 })
    })

    it('a key without a limit on free deliveries may deliver every failed result for nothing; an unknown try-on has no answer', async () => {
      const key = await limitedKey(10, {})
      const started = await beginMany(key, 3, { kind: 'standard' })
      for (const r of started)
        expect(await billing.freeDelivery(r.tryOnId, T0)).toEqual({ held: true, retryAfterSeconds: SECONDS_TO_DAY_END })
      await expect(billing.freeDelivery(crypto.randomUUID(), T0)).rejects.toThrow()
    })

    it('a wedding-dress try-on that is charged or fails gives its free-delivery slot back', async () => {
      const key = await limitedKey(200, { dailyRefunded: 2 })
      for (const outcome of [
        'train_rendered',
        'score_unavailable',
        'train_pretreatment_unavailable',
        'generation_failed',
        'bridal_preprocessing_failed',
      ]) {
        const pair = await beginMany(key, 3, { kind: 'wedding-dress' })
        expect(verdicts(pair), outcome).toEqual({ ok: 2, free_deliveries_exhausted: 1 })
        for (const r of pair.filter((x) => x.result.verdict === 'ok')) {
          await billing.settle({ tryOnId: r.tryOnId, outcome, shortId: r.tryOnId.slice(0, 10), resultPath: 'p.jpg' })
        }
        expect(await counter(key, 'refunded', null, day), outcome).toEqual({ used: 0, pending: 0 })
      }
    })

    it('refunded deliveries per day per client address: 3 for each client', async () => {
      const key = await limitedKey(300, { perClientDailyRefunded: 3 })
      const results = await beginMany(key, 40, (i) => ({ kind: 'wedding-dress', client: i % 2 ? clientA : clientB }))
      expect(verdicts(results)).toEqual({ ok: 6, free_deliveries_exhausted: 34 })
      await expectOnlyAdmittedReserved(key, 300, results)
      for (const r of results.filter((x) => x.result.verdict === 'ok'))
        await billing.settle({ tryOnId: r.tryOnId, outcome: 'train_score_low', resultPath: 'p.jpg' })
      expect(await counter(key, 'refunded', clientA, day)).toEqual({ used: 3, pending: 0 })
      expect(await counter(key, 'refunded', clientB, day)).toEqual({ used: 3, pending: 0 })
      const third = new Uint8Array(32).fill(0xc3)
      expect((await begin(key, { kind: 'wedding-dress', client: third })).result.verdict).toBe('ok')
      // The client's HMAC is kept only while a try-on holds its counter.
      const [held] = await db.sql`select count(*)::int as n from tryon.tryons where api_key_id = ${key.keyId} and client_hash is not null`
      expect(held.n).toBe(1)
    })

    it('answers the longest wait when several limits refuse, and 402 only within the limits', async () => {
      const key = await limitedKey(0, { perMinute: 1, dailyCredits: 0 })
      expect((await begin(key)).result).toEqual({ verdict: 'daily_cap_reached', retryAfterSeconds: SECONDS_TO_DAY_END })
      await db.sql`select tryon.set_key_limits(${key.keyId}, '{"dailyCredits": null}')`
      // A request refused for its balance takes nothing from the limits.
      expect(verdicts(await beginMany(key, 5))).toEqual({ insufficient_credits: 5 })
      expect(await counter(key, 'tryons', null, minute)).toEqual({ used: 0, pending: 0 })
      await db.sql`select tryon.add_credits(${key.keyId}, 5)`
      expect(verdicts(await beginMany(key, 5))).toEqual({ ok: 1, rate_limited: 4 })
    })

    it('checks limits after the key: unknown, inactive and origin-refused keys get their 401/403 verdicts', async () => {
      const key = await limitedKey(5, { perMinute: 1 }, ['https://shop.example'])
      expect((await begin(key)).result).toEqual({ verdict: 'origin_not_allowed' })
      await db.sql`select tryon.deactivate_api_key(${key.keyId})`
      expect((await begin(key)).result).toEqual({ verdict: 'key_inactive' })
      expect(await counter(key, 'tryons', null, minute)).toBeNull()
    })
  })

  describe('time', () => {
    it('opens a new minute for the rates and a new UTC day for the caps, by the clock it is given', async () => {
      const key = await limitedKey(100, { perMinute: 2, perClientPerMinute: 1, dailyCredits: 4, dailyRefunded: 1 })
      const clientC = new Uint8Array(32).fill(0xc3)
      /** Begins and, when admitted, settles at once: a standard try-on delivered (1 credit), a gown refunded. */
      const outcome = async (now: Date, options: { kind?: ProductKind; client?: Uint8Array } = {}) => {
        const { tryOnId, result } = await begin(key, { ...options, now })
        if (result.verdict === 'ok') {
          const wedding = options.kind === 'wedding-dress'
          await billing.settle({
            tryOnId,
            outcome: wedding ? 'train_score_low' : 'generated',
            shortId: wedding ? null : tryOnId.slice(0, 10),
            resultPath: 'p.jpg',
          })
        }
        return result
      }
      expect((await outcome(T0)).verdict).toBe('ok')
      expect(await outcome(at(10))).toEqual({ verdict: 'rate_limited', retryAfterSeconds: SECONDS_TO_MINUTE_END - 10 })
      expect((await outcome(at(10), { client: clientB })).verdict).toBe('ok')
      expect(await outcome(at(29), { client: clientC })).toEqual({ verdict: 'rate_limited', retryAfterSeconds: 1 })
      // The next minute of the same day: 2 of the 4 credits spent, the one free delivery still there.
      expect((await outcome(at(30), { kind: 'wedding-dress' })).verdict).toBe('ok')
      expect(await outcome(at(35), { kind: 'wedding-dress', client: clientB })).toEqual({
        verdict: 'free_deliveries_exhausted',
        retryAfterSeconds: SECONDS_TO_DAY_END - 35,
      })
      expect((await outcome(at(90), { client: clientB })).verdict).toBe('ok')
      expect((await outcome(at(150), { client: clientB })).verdict).toBe('ok')
      expect(await outcome(at(210), { client: clientB })).toEqual({
        verdict: 'daily_cap_reached',
        retryAfterSeconds: SECONDS_TO_DAY_END - 210,
      })
      // Midnight UTC: every limit starts again.
      const tomorrow = at(SECONDS_TO_DAY_END)
      expect((await outcome(tomorrow, { kind: 'wedding-dress' })).verdict).toBe('ok')
      expect((await outcome(new Date(tomorrow.getTime() + 1000), { client: clientB })).verdict).toBe('ok')
      expect(await outcome(new Date(tomorrow.getTime() + 2000), { client: clientC })).toEqual({
        verdict: 'rate_limited',
        retryAfterSeconds: 58,
      })
      expect(await ledgerCheck(db.sql, key.accountId)).toMatchObject({ balance: 100 - 5, reserved: 0, ledgerBalance: 100 - 5 })
    })

    it('the sweeper gives back what expired reservations held and drops counters whose window ended', async () => {
      const key = await limitedKey(50, { perMinute: 50, dailyCredits: 3, dailyRefunded: 1, perClientDailyRefunded: 1 })
      const now = new Date()
      const wedding = await begin(key, { kind: 'wedding-dress', now })
      const standard = await begin(key, { now })
      expect([wedding.result.verdict, standard.result.verdict]).toEqual(['ok', 'ok'])
      expect((await begin(key, { now })).result.verdict).toBe('daily_cap_reached')
      await db.sql`update tryon.tryons set created_at = now() - interval '1 hour' where id in (${wedding.tryOnId}, ${standard.tryOnId})`
      expect(await billing.sweep(600)).toBeGreaterThanOrEqual(2)
      const dayStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())).toISOString()
      expect(await counter(key, 'credits', null, dayStart)).toEqual({ used: 0, pending: 0 })
      expect(await counter(key, 'refunded', null, dayStart)).toEqual({ used: 0, pending: 0 })
      expect(await counter(key, 'refunded', clientA, dayStart)).toEqual({ used: 0, pending: 0 })
      const [expired] =
        await db.sql`select count(*)::int as n from tryon.tryons where id in (${wedding.tryOnId}, ${standard.tryOnId}) and status = 'expired' and client_hash is null`
      expect(expired.n).toBe(2)
      expect((await begin(key, { kind: 'wedding-dress', now })).result.verdict).toBe('ok')

      const rows = async () =>
        (
          await db.sql`select metric, count(*)::int as n from tryon.usage_counters where api_key_id = ${key.keyId} group by metric order by metric`
        ).map((r) => `${r.metric}:${r.n}`)
      const sweepAt = (when: Date) =>
        db.sql`select tryon.sweep_reservations(interval '10 minutes', 500, ${when.toISOString()}::timestamptz)`
      expect(await rows()).toEqual(['credits:1', 'refunded:2', 'tryons:1'])
      await sweepAt(new Date(now.getTime() + 60_000))
      expect(await rows()).toEqual(['credits:1', 'refunded:2', 'tryons:1']) // the minute ended less than a minute ago
      await sweepAt(new Date(now.getTime() + 2 * 60_000 + 1000))
      expect(await rows()).toEqual(['credits:1', 'refunded:2'])
      await sweepAt(new Date(Date.parse(dayStart) + 86_400_000 + 61_000))
      expect(await rows()).toEqual([])
    })
  })
})
