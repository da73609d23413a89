import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashApiKey, keyModeOf } from '../../shared/auth/api-key.ts'
import { createPostgresBilling, type BillingStore } from '../../shared/billing/store.ts'
import { applyMigrations } from '../../devstack/migrations.ts'
import { createKey, createTestDatabase, ledgerCheck, type DatabaseKind, type TestDatabase } from '../support/database.ts'

const kinds: DatabaseKind[] = ['postgres', 'pglite']

describe.each(kinds)('credit functions on %s', (kind) => {
  let db: TestDatabase
  let billing: BillingStore

  beforeAll(async () => {
    db = await createTestDatabase(kind)
    billing = createPostgresBilling(db.sql)
  })
  afterAll(() => db?.close())

  const newId = () => crypto.randomUUID()

  async function expectLedgerConsistent(accountId: string) {
    const check = await ledgerCheck(db.sql, accountId)
    expect(check.balance).toBe(check.ledgerBalance)
    expect(check.reserved).toBe(check.ledgerReserved)
    expect(check.reserved).toBe(check.heldByTryOns)
    return check
  }

  async function begin(apiKey: string, productKind: 'standard' | 'wedding-dress' = 'standard', origin: string | null = null) {
    const tryOnId = newId()
    const result = await billing.begin({ keyHash: await hashApiKey(apiKey), origin, tryOnId, productKind })
    return { tryOnId, result }
  }

  describe('migrations', () => {
    it('are recorded and applying them again changes nothing', async () => {
      const versions = await db.sql`select version from supabase_migrations.schema_migrations order by version`
      expect(versions.length).toBeGreaterThanOrEqual(3)
      expect(await applyMigrations(db.sql)).toEqual([])
    })
  })

  describe('keys', () => {
    it('creates a key whose checksum the API accepts, storing only its hash', async () => {
      const key = await createKey(db.sql, { credits: 10, mode: 'live' })
      expect(key.apiKey).toMatch(/^vto_live_[0-9A-Za-z]{36}$/)
      expect(keyModeOf(key.apiKey)).toBe('live')
      expect(key.credits).toBe(10)
      const [row] = await db.sql`select encode(key_hash, 'hex') as hash, display_prefix from tryon.api_keys where id = ${key.keyId}`
      const expected = Buffer.from(await hashApiKey(key.apiKey)).toString('hex')
      expect(row.hash).toBe(expected)
      expect(row.display_prefix).toBe(key.apiKey.slice(0, 13))
      const stored = await db.sql`select * from tryon.api_keys where id = ${key.keyId}`
      expect(JSON.stringify(stored)).not.toContain(key.apiKey.slice(13))
    })

    it('makes distinct keys every time', async () => {
      const keys = await Promise.all([1, 2, 3, 4, 5].map(() => createKey(db.sql)))
      expect(new Set(keys.map((k) => k.apiKey)).size).toBe(5)
      for (const k of keys) expect(keyModeOf(k.apiKey)).toBe('test')
    })

    it('records the initial credits as a top-up', async () => {
      const key = await createKey(db.sql, { credits: 7 })
      const ledger = await db.sql`select kind, delta::int, reason from tryon.ledger where account_id = ${key.accountId}`
      expect(ledger).toEqual([{ kind: 'topup', delta: 7, reason: 'key_created' }])
      await expectLedgerConsistent(key.accountId)
    })

    it('shares one balance between the keys of an account', async () => {
      const first = await createKey(db.sql, { credits: 3 })
      const second = await createKey(db.sql, { accountId: first.accountId })
      expect(second.accountId).toBe(first.accountId)
      expect(second.credits).toBe(3)
      expect((await begin(second.apiKey)).result.verdict).toBe('ok')
      const [balance] = await db.sql`select tryon.credit_balance(${first.keyId})::int as credits`
      expect(balance.credits).toBe(2)
    })

    it('normalises allowed origins and refuses malformed ones', async () => {
      const key = await createKey(db.sql, { origins: ['HTTPS://Shop.Example/', 'https://shop.example:443', 'https://*.brand.example'] })
      const [row] = await db.sql`select allowed_origins from tryon.api_keys where id = ${key.keyId}`
      expect(row.allowed_origins).toEqual(['https://shop.example', 'https://shop.example', 'https://*.brand.example'])
      for (const bad of ['http://shop.example', 'https://shop.example/path', 'https://*.example', '*', 'null', 'https://*']) {
        await expect(createKey(db.sql, { origins: [bad] }), bad).rejects.toThrow(/allowed origin/)
      }
    })

    it('refuses an unknown mode and negative credits', async () => {
      await expect(createKey(db.sql, { mode: 'prod' as 'live' })).rejects.toThrow(/mode must be live or test/)
      await expect(createKey(db.sql, { credits: -1 })).rejects.toThrow(/cannot be negative/)
    })

    it('tops up, deactivates and reports, refusing unknown key ids', async () => {
      const key = await createKey(db.sql, { credits: 1 })
      const [topUp] = await db.sql`select tryon.add_credits(${key.keyId}, 4)::int as credits`
      expect(topUp.credits).toBe(5)
      await expect(db.sql`select tryon.add_credits(${key.keyId}, 0)`).rejects.toThrow(/positive/)
      await db.sql`select tryon.deactivate_api_key(${key.keyId})`
      expect(await billing.authorize(await hashApiKey(key.apiKey), null)).toBe('key_inactive')
      const unknown = newId()
      for (const call of [
        db.sql`select tryon.add_credits(${unknown}, 1)`,
        db.sql`select tryon.deactivate_api_key(${unknown})`,
        db.sql`select tryon.credit_balance(${unknown})`,
      ]) {
        await expect(call).rejects.toMatchObject({ code: 'P0002' })
      }
      await expectLedgerConsistent(key.accountId)
    })
  })

  describe('authorization', () => {
    it('tells unknown, inactive and origin-refused keys apart', async () => {
      const open = await createKey(db.sql, { credits: 1 })
      const inactive = await createKey(db.sql, { credits: 1, active: false })
      const restricted = await createKey(db.sql, { credits: 1, origins: ['https://shop.example', 'https://*.brand.example'] })
      const verdict = async (key: string, origin: string | null) => billing.authorize(await hashApiKey(key), origin)

      expect(await verdict(open.apiKey, null)).toBe('ok')
      expect(await verdict(open.apiKey, 'https://anywhere.example')).toBe('ok')
      // Another last character (a fixed 'x' was the same key whenever the key ended in 'x': 1 run in 62).
      expect(await verdict(open.apiKey.slice(0, -1) + (open.apiKey.endsWith('x') ? 'y' : 'x'), null)).toBe('invalid_key')
      expect(await verdict(inactive.apiKey, null)).toBe('key_inactive')
      expect(await verdict(restricted.apiKey, 'https://shop.example')).toBe('ok')
      expect(await verdict(restricted.apiKey, 'https://eu.brand.example')).toBe('ok')
      expect(await verdict(restricted.apiKey, 'https://a.b.brand.example')).toBe('ok')
      for (const refused of [
        null,
        'https://brand.example',
        'https://shop.example:8443',
        'http://shop.example',
        'https://evilshop.example',
        'https://eu.brand.example:444',
        'https://brand.example.evil',
      ]) {
        expect(await verdict(restricted.apiKey, refused), String(refused)).toBe('origin_not_allowed')
      }
    })
  })

  describe('standard try-on billing', () => {
    it('reserves one credit and charges it when the result is delivered', async () => {
      const key = await createKey(db.sql, { credits: 3 })
      const { tryOnId, result } = await begin(key.apiKey)
      expect(result).toEqual({ verdict: 'ok', keyMode: 'test', balance: 2, creditsReserved: 1, qualityCheck: null })
      expect(await expectLedgerConsistent(key.accountId)).toMatchObject({ balance: 2, reserved: 1 })

      const settlement = await billing.settle({
        tryOnId,
        outcome: 'generated',
        shortId: 'AbCdEfGhIj',
        resultPath: '2026/11/x.jpg',
        engine: 'local',
      })
      expect(settlement).toEqual({ settled: true, status: 'succeeded', creditsCharged: 1, balance: 2, shortId: 'AbCdEfGhIj' })
      expect(await expectLedgerConsistent(key.accountId)).toMatchObject({ balance: 2, reserved: 0 })
      const movements = await db.sql`select kind, delta::int, reserved_delta::int from tryon.ledger where tryon_id = ${tryOnId} order by id`
      expect(movements).toEqual([
        { kind: 'reservation', delta: -1, reserved_delta: 1 },
        { kind: 'charge', delta: 0, reserved_delta: -1 },
      ])
    })

    it('refunds the reservation when the request fails', async () => {
      const key = await createKey(db.sql, { credits: 1 })
      const { tryOnId } = await begin(key.apiKey)
      const settlement = await billing.settle({ tryOnId, outcome: 'image_unreachable' })
      expect(settlement).toMatchObject({ settled: true, status: 'failed', creditsCharged: 0, balance: 1, shortId: null })
      const [row] = await db.sql`select kind, delta::int, reason from tryon.ledger where tryon_id = ${tryOnId} and kind = 'refund'`
      expect(row).toEqual({ kind: 'refund', delta: 1, reason: 'image_unreachable' })
      await expectLedgerConsistent(key.accountId)
    })

    it('settles only once: a second settlement moves nothing', async () => {
      const key = await createKey(db.sql, { credits: 2 })
      const { tryOnId } = await begin(key.apiKey)
      await billing.settle({ tryOnId, outcome: 'generation_failed' })
      const again = await billing.settle({ tryOnId, outcome: 'generated', shortId: 'x', resultPath: 'p' })
      expect(again).toEqual({ settled: false, status: 'failed', creditsCharged: 0, balance: 2, shortId: null })
      const [count] = await db.sql`select count(*)::int as n from tryon.ledger where tryon_id = ${tryOnId}`
      expect(count.n).toBe(2)
      await expectLedgerConsistent(key.accountId)
    })

    it('refuses to reserve without enough credits, leaving the balance alone', async () => {
      const key = await createKey(db.sql, { credits: 0 })
      expect((await begin(key.apiKey)).result).toEqual({ verdict: 'insufficient_credits', keyMode: 'test', balance: 0 })
      const [count] = await db.sql`select count(*)::int as n from tryon.tryons where account_id = ${key.accountId}`
      expect(count.n).toBe(0)
    })

    it('reports key refusals before looking at the balance', async () => {
      const inactive = await createKey(db.sql, { credits: 0, active: false })
      expect((await begin(inactive.apiKey)).result).toEqual({ verdict: 'key_inactive' })
      const restricted = await createKey(db.sql, { credits: 5, origins: ['https://shop.example'] })
      expect((await begin(restricted.apiKey, 'standard', 'https://other.example')).result).toEqual({ verdict: 'origin_not_allowed' })
      expect(await expectLedgerConsistent(restricted.accountId)).toMatchObject({ balance: 5, reserved: 0 })
    })

    it('refuses settling outcomes that cannot happen and keeps the reservation', async () => {
      const key = await createKey(db.sql, { credits: 1 })
      const { tryOnId } = await begin(key.apiKey)
      await expect(billing.settle({ tryOnId, outcome: 'train_rendered', shortId: 'x', resultPath: 'p' })).rejects.toThrow(/cannot settle/)
      await expect(billing.settle({ tryOnId, outcome: 'generated', shortId: 'x' })).rejects.toThrow(/result path/)
      await expect(billing.settle({ tryOnId, outcome: 'generated', resultPath: 'p' })).rejects.toThrow(/short id/)
      expect(await expectLedgerConsistent(key.accountId)).toMatchObject({ balance: 0, reserved: 1 })
    })
  })

  describe('wedding-dress billing', () => {
    const cases = [
      { outcome: 'train_rendered', charged: 2, shortId: true },
      { outcome: 'score_unavailable', charged: 2, shortId: true },
      { outcome: 'train_score_low', charged: 0, shortId: false },
      { outcome: 'train_pretreatment_unavailable', charged: 1, shortId: true },
      { outcome: 'bridal_preprocessing_failed', charged: 0, shortId: false },
      { outcome: 'generation_failed', charged: 0, shortId: false },
    ]
    it.each(cases)('charges $charged for $outcome', async ({ outcome, charged, shortId }) => {
      const key = await createKey(db.sql, { credits: 5 })
      const { tryOnId, result } = await begin(key.apiKey, 'wedding-dress')
      expect(result).toMatchObject({ verdict: 'ok', balance: 3, creditsReserved: 2 })
      const candidate = `Br${outcome.length}${tryOnId.slice(0, 6)}`
      const settlement = await billing.settle({ tryOnId, outcome, shortId: candidate, resultPath: '2026/11/b.jpg' })
      expect(settlement.creditsCharged).toBe(charged)
      expect(settlement.balance).toBe(5 - charged)
      expect(settlement.shortId).toBe(shortId ? candidate : null)
      await expectLedgerConsistent(key.accountId)
    })

    it('needs two credits to start', async () => {
      const key = await createKey(db.sql, { credits: 1 })
      expect((await begin(key.apiKey, 'wedding-dress')).result).toMatchObject({ verdict: 'insufficient_credits', balance: 1 })
      expect((await begin(key.apiKey, 'standard')).result).toMatchObject({ verdict: 'ok', balance: 0 })
    })
  })

  describe('checked results', () => {
    const failedCheck = { checked: true, passed: false, score: 0.23, issues: ['colour_changed', 'garment_off_body'] }

    it("returns the key's check level with each reservation, null for the default", async () => {
      const key = await createKey(db.sql, { credits: 5 })
      expect((await begin(key.apiKey)).result).toMatchObject({ verdict: 'ok', qualityCheck: null })
      for (const level of ['off', 'measured', 'judge'] as const) {
        const [row] = await db.sql`select tryon.set_key_quality(${key.keyId}, ${level}) as level`
        expect(row.level).toBe(level)
        expect((await begin(key.apiKey)).result, level).toMatchObject({ verdict: 'ok', qualityCheck: level })
      }
      await db.sql`select tryon.set_key_quality(${key.keyId}, null)`
      expect((await begin(key.apiKey)).result).toMatchObject({ verdict: 'ok', qualityCheck: null })
      await expect(db.sql`select tryon.set_key_quality(${key.keyId}, 'strict')`).rejects.toMatchObject({ code: '22023' })
      await expect(db.sql`select tryon.set_key_quality(${newId()}, 'off')`).rejects.toMatchObject({ code: 'P0002' })
    })

    it.each([
      ['standard', 1],
      ['wedding-dress', 2],
    ] as const)('delivers a %s result that failed its check for nothing, with a refund row and no short id', async (kind, price) => {
      const key = await createKey(db.sql, { credits: 5 })
      const { tryOnId } = await begin(key.apiKey, kind)
      const settlement = await billing.settle({
        tryOnId,
        outcome: 'quality_failed',
        shortId: 'QfShort001',
        resultPath: '2026/12/q.jpg',
        engine: 'local',
        quality: failedCheck,
      })
      expect(settlement).toEqual({ settled: true, status: 'succeeded', creditsCharged: 0, balance: 5, shortId: null })
      const movements = await db.sql`
        select kind, delta::int, reserved_delta::int, reason from tryon.ledger where tryon_id = ${tryOnId} order by id`
      expect(movements).toEqual([
        { kind: 'reservation', delta: -price, reserved_delta: price, reason: kind },
        { kind: 'refund', delta: price, reserved_delta: -price, reason: 'quality_failed' },
      ])
      const [row] = await db.sql`
        select status, outcome, result_path, short_id, quality_checked, quality_passed, quality_score, quality_issues
          from tryon.tryons where id = ${tryOnId}`
      expect(row).toEqual({
        status: 'succeeded',
        outcome: 'quality_failed',
        result_path: '2026/12/q.jpg',
        short_id: null,
        quality_checked: true,
        quality_passed: false,
        quality_score: 0.23,
        quality_issues: ['colour_changed', 'garment_off_body'],
      })
      expect(await expectLedgerConsistent(key.accountId)).toMatchObject({ balance: 5, reserved: 0 })
      const again = await billing.settle({ tryOnId, outcome: 'generated', shortId: 'x', resultPath: 'p' })
      expect(again).toEqual({ settled: false, status: 'succeeded', creditsCharged: 0, balance: 5, shortId: null })
    })

    it('records a failed check without a record given, and keeps the record of a check that passed or could not run', async () => {
      const key = await createKey(db.sql, { credits: 5 })
      const bare = await begin(key.apiKey)
      await billing.settle({ tryOnId: bare.tryOnId, outcome: 'quality_failed', resultPath: 'p.jpg' })
      const passed = await begin(key.apiKey)
      const charged = await billing.settle({
        tryOnId: passed.tryOnId,
        outcome: 'generated',
        shortId: `P${passed.tryOnId.slice(0, 9)}`,
        resultPath: 'p.jpg',
        quality: { checked: true, passed: true, score: 0.91, issues: [] },
      })
      expect(charged.creditsCharged).toBe(1)
      const unchecked = await begin(key.apiKey, 'wedding-dress')
      const stands = await billing.settle({
        tryOnId: unchecked.tryOnId,
        outcome: 'train_rendered',
        shortId: `U${unchecked.tryOnId.slice(0, 9)}`,
        resultPath: 'p.jpg',
        quality: { checked: false, passed: null, score: null, issues: [] },
      })
      expect(stands.creditsCharged).toBe(2)
      const rows = await db.sql`
        select id, quality_checked, quality_passed, quality_score, quality_issues from tryon.tryons
         where id in ${db.sql([bare.tryOnId, passed.tryOnId, unchecked.tryOnId])}`
      const byId = Object.fromEntries(rows.map(({ id, ...rest }) => [id, rest]))
      expect(byId[bare.tryOnId]).toEqual({ quality_checked: true, quality_passed: false, quality_score: null, quality_issues: [] })
      expect(byId[passed.tryOnId]).toEqual({ quality_checked: true, quality_passed: true, quality_score: 0.91, quality_issues: [] })
      expect(byId[unchecked.tryOnId]).toEqual({ quality_checked: false, quality_passed: null, quality_score: null, quality_issues: [] })
      expect(await expectLedgerConsistent(key.accountId)).toMatchObject({ balance: 2, reserved: 0 })
    })

    it('refuses to charge a result that failed its check, and malformed quality records, keeping the reservation', async () => {
      const key = await createKey(db.sql, { credits: 1 })
      const { tryOnId } = await begin(key.apiKey)
      const settle = (outcome: string, quality: unknown) =>
        billing.settle({ tryOnId, outcome, shortId: 'x', resultPath: 'p', quality: quality as never })
      await expect(settle('generated', failedCheck)).rejects.toThrow(/settles as quality_failed/)
      await expect(settle('quality_failed', { checked: true, passed: true, score: 0.9, issues: [] })).rejects.toThrow(/passed false/)
      await expect(settle('quality_failed', { checked: false, passed: null, score: null, issues: [] })).rejects.toThrow(/passed false/)
      for (const bad of [
        { checked: 'yes', passed: false },
        { checked: true },
        { checked: false, passed: false },
        { checked: true, passed: false, score: 'high' },
        { checked: true, passed: false, score: 1.5 },
        { checked: true, passed: false, issues: 'colour_changed' },
        { checked: true, passed: false, issues: ['Colour Changed'] },
        { checked: true, passed: false, verdict: 'bad' },
        [true, false],
      ]) {
        await expect(settle('quality_failed', bad), JSON.stringify(bad)).rejects.toMatchObject({ code: '22023' })
      }
      expect(await expectLedgerConsistent(key.accountId)).toMatchObject({ balance: 0, reserved: 1 })
      // An error keeps what the check found: the result was not delivered, so nothing is charged either way.
      const failed = await billing.settle({ tryOnId, outcome: 'storage_failed', quality: failedCheck })
      expect(failed).toMatchObject({ settled: true, status: 'failed', creditsCharged: 0, balance: 1 })
    })

    it('counts each result that failed its check, in any order, exactly once under concurrent settlements', async () => {
      const key = await createKey(db.sql, { credits: 12 })
      const begun = await Promise.all(Array.from({ length: 12 }, (_, i) => begin(key.apiKey, i % 3 === 0 ? 'wedding-dress' : 'standard')))
      const admitted = begun.filter((b) => b.result.verdict === 'ok')
      const outcome = (i: number, kind: string) => (i % 2 === 0 ? 'quality_failed' : kind === 'standard' ? 'generated' : 'train_rendered')
      const kinds = await db.sql`select id, product_kind from tryon.tryons where id in ${db.sql(admitted.map((a) => a.tryOnId))}`
      const kindOf = new Map(kinds.map((k) => [k.id as string, k.product_kind as string]))
      const settlements = await Promise.all(
        admitted.flatMap(({ tryOnId }, i) =>
          [0, 1].map(() =>
            billing.settle({
              tryOnId,
              outcome: outcome(i, kindOf.get(tryOnId) as string),
              shortId: `C${tryOnId.slice(0, 9)}`,
              resultPath: 'p.jpg',
              quality: i % 2 === 0 ? failedCheck : { checked: true, passed: true, score: 0.8, issues: [] },
            }),
          ),
        ),
      )
      expect(settlements.filter((s) => s.settled)).toHaveLength(admitted.length)
      const [sums] = await db.sql`
        select count(*) filter (where kind = 'refund' and reason = 'quality_failed')::int as refunds,
               count(*) filter (where kind = 'charge')::int as charges
          from tryon.ledger where account_id = ${key.accountId}`
      const failedCount = admitted.filter((_, i) => i % 2 === 0).length
      expect(sums).toEqual({ refunds: failedCount, charges: admitted.length - failedCount })
      await expectLedgerConsistent(key.accountId)
    })
  })

  describe('sweeping abandoned reservations', () => {
    it('refunds reservations older than the TTL and a late settlement changes nothing', async () => {
      const key = await createKey(db.sql, { credits: 3 })
      const { tryOnId: old } = await begin(key.apiKey, 'wedding-dress')
      const { tryOnId: fresh } = await begin(key.apiKey)
      await db.sql`update tryon.tryons set created_at = now() - interval '1 hour' where id = ${old}`

      expect(await billing.sweep(600)).toBeGreaterThanOrEqual(1)
      const [row] = await db.sql`select status, outcome from tryon.tryons where id = ${old}`
      expect(row).toEqual({ status: 'expired', outcome: 'expired' })
      expect(await expectLedgerConsistent(key.accountId)).toMatchObject({ balance: 2, reserved: 1 })

      const late = await billing.settle({ tryOnId: old, outcome: 'train_rendered', shortId: 'x', resultPath: 'p' })
      expect(late).toMatchObject({ settled: false, status: 'expired', creditsCharged: 0, balance: 2 })
      const [fresh_] = await db.sql`select status from tryon.tryons where id = ${fresh}`
      expect(fresh_.status).toBe('reserved')
      expect(await billing.sweep(600)).toBe(0)
      await expectLedgerConsistent(key.accountId)
    })

    it('refuses a negative age', async () => {
      await expect(billing.sweep(-1)).rejects.toThrow(/negative/)
    })
  })

  describe('concurrency', () => {
    it('gives exactly five reservations to twenty concurrent requests on five credits', async () => {
      const key = await createKey(db.sql, { credits: 5 })
      const results = await Promise.all(Array.from({ length: 20 }, () => begin(key.apiKey)))
      const verdicts = results.map((r) => r.result.verdict)
      expect(verdicts.filter((v) => v === 'ok')).toHaveLength(5)
      expect(verdicts.filter((v) => v === 'insufficient_credits')).toHaveLength(15)
      expect(await expectLedgerConsistent(key.accountId)).toMatchObject({ balance: 0, reserved: 5 })

      const settled = await Promise.all(
        results
          .filter((r) => r.result.verdict === 'ok')
          .flatMap(({ tryOnId }) => [
            billing.settle({ tryOnId, outcome: 'generation_failed' }),
            billing.settle({ tryOnId, outcome: 'generation_failed' }),
          ]),
      )
      expect(settled.filter((s) => s.settled)).toHaveLength(5)
      expect(await expectLedgerConsistent(key.accountId)).toMatchObject({ balance: 5, reserved: 0 })
    })
  })

  describe('hardening', () => {
    it('enables row level security on every table', async () => {
      const tables = await db.sql`
        select c.relname, c.relrowsecurity from pg_class c join pg_namespace n on n.oid = c.relnamespace
         where n.nspname = 'tryon' and c.relkind = 'r'`
      expect(tables.map((t) => t.relname).sort()).toEqual([
        'accounts',
        'api_keys',
        'idempotency_keys',
        'ledger',
        'result_deletions',
        'tryons',
        'usage_counters',
      ])
      for (const t of tables) expect(t.relrowsecurity, t.relname).toBe(true)
    })

    it('grants nothing to PUBLIC, anon or authenticated, now or by default', async () => {
      // A function whose ACL is null still has PostgreSQL's default EXECUTE for PUBLIC.
      const publicFunctions = await db.sql`
        select p.proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace
         where n.nspname = 'tryon'
           and (p.proacl is null or exists (select 1 from aclexplode(p.proacl) a where a.grantee = 0))`
      expect(publicFunctions.map((f) => f.proname)).toEqual([])
      const publicRelations = await db.sql`
        select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
         where n.nspname = 'tryon' and c.relkind in ('r', 'S', 'v', 'm')
           and exists (select 1 from aclexplode(c.relacl) a
                        where a.grantee = 0 or a.grantee in (select oid from pg_roles where rolname in ('anon', 'authenticated')))`
      expect(publicRelations.map((r) => r.relname)).toEqual([])
      const [schema] = await db.sql`
        select has_schema_privilege('anon', 'tryon', 'usage') as anon,
               has_schema_privilege('authenticated', 'tryon', 'usage') as authenticated`
      expect(schema).toEqual({ anon: false, authenticated: false })
      const defaults = await db.sql`
        select d.defaclobjtype as type, a.grantee, a.privilege_type
          from pg_default_acl d join pg_namespace n on n.oid = d.defaclnamespace,
               aclexplode(d.defaclacl) a
         where n.nspname = 'tryon' and (a.grantee = 0 or a.grantee in (select oid from pg_roles where rolname in ('anon', 'authenticated')))`
      expect(defaults).toEqual([])
    })

    it('keeps every SECURITY DEFINER function on an empty search_path', async () => {
      const definers = await db.sql`
        select p.proname, p.proconfig from pg_proc p join pg_namespace n on n.oid = p.pronamespace
         where n.nspname = 'tryon' and p.prosecdef`
      expect(definers.length).toBeGreaterThanOrEqual(8)
      for (const f of definers) expect(f.proconfig ?? [], f.proname).toContain('search_path=""')
    })

    it('refuses a negative balance even to a direct update', async () => {
      const key = await createKey(db.sql, { credits: 1 })
      await expect(db.sql`update tryon.accounts set balance = balance - 2 where id = ${key.accountId}`).rejects.toMatchObject({
        code: '23514',
      })
    })

    it('fixes the search_path of every function and lets only the service role execute the API', async () => {
      const functions = await db.sql`
        select p.proname, p.prosecdef, p.proconfig,
               has_function_privilege('service_role', p.oid, 'execute') as service,
               has_function_privilege('anon', p.oid, 'execute') as anon,
               has_function_privilege('authenticated', p.oid, 'execute') as authenticated
          from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'tryon'`
      const granted = functions
        .filter((f) => f.service)
        .map((f) => f.proname)
        .sort()
      expect(granted).toEqual([
        'add_credits',
        'authorize_api_key',
        'begin_tryon',
        'confirm_result_deletion',
        'create_api_key',
        'credit_balance',
        'deactivate_api_key',
        'delete_account_tryons',
        'delete_tryon',
        'free_delivery_held',
        'list_api_keys',
        'pending_result_deletions',
        'rotate_api_key',
        'set_key_limits',
        'set_key_quality',
        'settle_tryon',
        'shared_result',
        'show_api_key',
        'sweep_reservations',
      ])
      for (const f of functions) {
        expect(f.proconfig, f.proname).toContain('search_path=""')
        expect(f.anon || f.authenticated, f.proname).toBe(false)
      }
      const tablePrivileges = await db.sql`
        select count(*)::int as n from information_schema.role_table_grants
         where table_schema = 'tryon' and grantee in ('anon', 'authenticated', 'service_role', 'PUBLIC')`
      expect(tablePrivileges[0].n).toBe(0)
    })

    it('lets the service role bill but not read the tables', async () => {
      const key = await createKey(db.sql, { credits: 1 })
      const hash = Buffer.from(await hashApiKey(key.apiKey)).toString('hex')
      await db.sql.begin(async (tx) => {
        await tx`set local role service_role`
        const [row] = await tx`select verdict from tryon.authorize_api_key(decode(${hash}, 'hex'), null)`
        expect(row.verdict).toBe('ok')
      })
      const [privileges] = await db.sql`
        select has_table_privilege('service_role', 'tryon.accounts', 'select') as reads,
               has_table_privilege('service_role', 'tryon.ledger', 'insert') as writes`
      expect(privileges).toEqual({ reads: false, writes: false })
    })
  })
})
