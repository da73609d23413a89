import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runAdmin } from '../../cli/admin.ts'
import type { UsageReport } from '../../cli/usage.ts'
import { hashApiKey } from '../../shared/auth/api-key.ts'
import { createPostgresBilling, type BillingStore } from '../../shared/billing/store.ts'
import type { ProductKind } from '../../shared/engine/types.ts'
import { createKey, createTestDatabase, type CreatedKey, type DatabaseKind, type TestDatabase } from '../support/database.ts'

const SHOP = 'https://shop.example'
const DAYS = ['2031-01-10', '2031-01-11', '2031-01-12']
const client = new Uint8Array(32).fill(7)

/** What one try-on of the scenario is, as the test made it: the report is checked against this and the ledger. */
interface Made {
  id: string
  keyId: string
  page: string | null
  origin: string | null
  outcome: string
  status: 'succeeded' | 'failed' | 'expired' | 'reserved'
  day: string
  /** The check of its result could not run: billed as usual, counted as unchecked. */
  unchecked: boolean
}

const BRIDAL = {
  trainRendered: 'train_rendered',
  trainScoreLow: 'train_score_low',
  scoreUnavailable: 'score_unavailable',
  trainPretreatmentUnavailable: 'train_pretreatment_unavailable',
}
const DELIVERED = new Set(['generated', 'quality_failed', ...Object.values(BRIDAL)])

describe.each<DatabaseKind>(['postgres', 'pglite'])('usage by product page on %s', (kind) => {
  let db: TestDatabase
  let billing: BillingStore
  let browserKey: CreatedKey
  let serverKey: CreatedKey
  let otherAccount: CreatedKey
  const made: Made[] = []

  const admin = (...argv: string[]) => runAdmin(db.sql, argv)
  const report = async (...argv: string[]) => (await admin('usage', '--account', browserKey.accountId, ...argv)) as UsageReport

  async function tryOn(
    key: CreatedKey,
    productKind: ProductKind,
    outcome: string,
    options: { page?: string; origin?: string; day: string; unchecked?: boolean },
  ) {
    const id = crypto.randomUUID()
    const begun = await billing.begin({
      keyHash: await hashApiKey(key.apiKey),
      origin: options.origin ?? null,
      tryOnId: id,
      productKind,
      parentUrl: options.page,
      clientHash: client,
    })
    expect(begun.verdict).toBe('ok')
    let status: Made['status'] = 'reserved'
    if (outcome === 'expired') {
      await db.sql`update tryon.tryons set created_at = now() - interval '1 hour' where id = ${id}`
      expect(await billing.sweep(600)).toBe(1)
      status = 'expired'
    } else if (outcome !== 'running') {
      const delivered = DELIVERED.has(outcome)
      const settled = await billing.settle({
        tryOnId: id,
        outcome,
        resultPath: delivered ? `2031/01/${id}.jpg` : null,
        shortId: delivered && !['train_score_low', 'quality_failed'].includes(outcome) ? id.slice(0, 10).replace(/-/g, 'x') : null,
        quality:
          outcome === 'quality_failed'
            ? { checked: true, passed: false, score: 0.2, issues: ['person_changed'] }
            : options.unchecked
              ? { checked: false, passed: null, score: null, issues: [] }
              : null,
      })
      status = settled.status as Made['status']
    }
    await db.sql`update tryon.tryons set created_at = ${`${options.day}T12:00:00Z`}::timestamptz where id = ${id}`
    made.push({
      id,
      keyId: key.keyId,
      page: options.page ?? null,
      origin: options.origin ?? null,
      outcome,
      status,
      day: options.day,
      unchecked: options.unchecked ?? false,
    })
  }

  beforeAll(async () => {
    db = await createTestDatabase(kind)
    billing = createPostgresBilling(db.sql)
    browserKey = await createKey(db.sql, { credits: 100, origins: [SHOP] })
    serverKey = await createKey(db.sql, { credits: 0, accountId: browserKey.accountId, mode: 'live' })
    otherAccount = await createKey(db.sql, { credits: 5 })

    const [d1, d2, d3] = DAYS
    const browser = { origin: SHOP }
    await tryOn(browserKey, 'standard', 'generated', {
      ...browser,
      page: `${SHOP}/p/tee?utm_source=mail&email=jane%40example.com#reviews`,
      day: d1,
    })
    await tryOn(browserKey, 'standard', 'generated', { ...browser, page: `${SHOP}/p/tee?session=abc`, day: d1, unchecked: true })
    await tryOn(browserKey, 'standard', 'image_unreachable', { ...browser, page: `${SHOP}/p/tee`, day: d2 })
    await tryOn(browserKey, 'wedding-dress', 'train_rendered', { ...browser, page: `${SHOP}/p/gown?color=ivory`, day: d2 })
    await tryOn(browserKey, 'wedding-dress', 'train_score_low', { ...browser, page: `${SHOP}/p/gown`, day: d2 })
    await tryOn(serverKey, 'wedding-dress', 'score_unavailable', { day: d2 })
    await tryOn(serverKey, 'wedding-dress', 'train_pretreatment_unavailable', { page: `${SHOP}/p/gown#top`, day: d3 })
    await tryOn(serverKey, 'standard', 'expired', { page: `${SHOP}/p/tee`, day: d3 })
    await tryOn(serverKey, 'standard', 'running', { page: 'https://user:secret@shop.example/p/hat', day: d3 })
    await tryOn(serverKey, 'standard', 'quality_failed', { page: `${SHOP}/p/hat`, day: d3 })
    await tryOn(otherAccount, 'standard', 'generated', { page: `${SHOP}/p/tee`, day: d1 })
  })
  afterAll(() => db?.close())

  const pageOf = (page: string | null) => (page === null ? null : page.replace(/[?#].*$/, '').replace('user:secret@', ''))
  const groupOf: Record<string, (m: Made) => string | null> = {
    day: (m) => m.day,
    key: (m) => m.keyId,
    'parent-url': (m) => pageOf(m.page),
    origin: (m) => m.origin,
    outcome: (m) => m.outcome,
  }
  const nameOf: Record<string, (g: Record<string, unknown>) => unknown> = {
    day: (g) => g.day,
    key: (g) => g.keyId,
    'parent-url': (g) => g.parentUrl,
    origin: (g) => g.origin,
    outcome: (g) => g.outcome,
  }

  /** The expected groups: counts from what was made, credits from the ledger rows of each group's try-ons. */
  async function expected(by: string, days: string[] = DAYS) {
    const ledger = await db.sql<{ tryon_id: string; kind: string; delta: number; reserved_delta: number }[]>`
      select tryon_id, kind, delta::int, reserved_delta::int from tryon.ledger where account_id = ${browserKey.accountId} and tryon_id is not null`
    const groups = new Map<unknown, Record<string, number>>()
    for (const m of made.filter((m) => m.keyId !== otherAccount.keyId && days.includes(m.day))) {
      const name = groupOf[by](m)
      const group = groups.get(name) ?? {
        tryOns: 0,
        delivered: 0,
        failed: 0,
        running: 0,
        creditsCharged: 0,
        creditsRefunded: 0,
        trainRendered: 0,
        trainScoreLow: 0,
        scoreUnavailable: 0,
        trainPretreatmentUnavailable: 0,
        qualityFailed: 0,
        qualityUnchecked: 0,
      }
      group.tryOns++
      if (m.outcome === 'quality_failed') group.qualityFailed++
      if (m.unchecked) group.qualityUnchecked++
      if (m.status === 'succeeded') group.delivered++
      else if (m.status === 'reserved') group.running++
      else group.failed++
      for (const row of ledger.filter((row) => row.tryon_id === m.id)) {
        if (row.kind === 'charge') group.creditsCharged += -row.reserved_delta
        if (row.kind === 'refund') group.creditsRefunded += row.delta
      }
      for (const [field, outcome] of Object.entries(BRIDAL)) if (m.outcome === outcome) group[field]++
      groups.set(name, group)
    }
    return groups
  }

  const metricsOf = (group: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(group).filter(([, value]) => typeof value === 'number'))

  it.each(['day', 'key', 'parent-url', 'origin', 'outcome'])(
    'reports each %s group exactly as its try-ons and their ledger rows add up',
    async (by) => {
      const usage = await report('--by', by)
      const want = await expected(by)
      expect(usage.groups.length).toBe(want.size)
      for (const group of usage.groups) expect(metricsOf(group), JSON.stringify(group)).toEqual(want.get(nameOf[by](group)))
    },
  )

  it('totals what the ledger holds for the account, and nothing of other accounts', async () => {
    const [ledger] = await db.sql`
      select coalesce(sum(-reserved_delta) filter (where kind = 'charge'), 0)::int as charged,
             coalesce(sum(delta) filter (where kind = 'refund'), 0)::int as refunded,
             coalesce(sum(-delta) filter (where kind = 'reservation'), 0)::int as reserved
        from tryon.ledger where account_id = ${browserKey.accountId}`
    for (const by of ['day', 'key', 'parent-url', 'origin', 'outcome']) {
      const { total } = await report('--by', by)
      expect(total, by).toMatchObject({
        tryOns: 10,
        creditsCharged: ledger.charged,
        creditsRefunded: ledger.refunded,
        delivered: 7,
        failed: 2,
        running: 1,
        qualityFailed: 1,
        qualityUnchecked: 1,
      })
      expect(total.trainRendered + total.trainScoreLow + total.scoreUnavailable + total.trainPretreatmentUnavailable).toBe(4)
    }
    // Every reserved credit is charged, refunded, or held by the try-on still running (1 credit).
    expect(ledger.charged + ledger.refunded + 1).toBe(ledger.reserved)
    const [view] = await db.sql`
      select sum(credits_charged)::int as charged, sum(credits_refunded)::int as refunded from tryon.usage_daily where account_id = ${browserKey.accountId}`
    expect(view).toEqual({ charged: ledger.charged, refunded: ledger.refunded })
  })

  it('groups product pages without their query strings, fragments or credentials, which are not stored', async () => {
    const usage = await report('--by', 'parent-url')
    expect(usage.groups.map((group) => group.parentUrl)).toEqual([`${SHOP}/p/tee`, `${SHOP}/p/gown`, `${SHOP}/p/hat`, null])
    expect(usage.groups[0]).toMatchObject({ tryOns: 4, creditsCharged: 2, creditsRefunded: 2 })
    const [stored] = await db.sql`select count(*)::int as n from tryon.tryons where parent_url ~ '[?#@]'`
    expect(stored.n).toBe(0)
  })

  it('keeps to the days asked for, both included', async () => {
    const usage = await report('--by', 'day', '--from', DAYS[1], '--to', DAYS[2])
    expect(usage).toMatchObject({ from: DAYS[1], to: DAYS[2], by: 'day' })
    expect(usage.groups.map((group) => group.day)).toEqual([DAYS[1], DAYS[2]])
    const want = await expected('parent-url', [DAYS[1], DAYS[2]])
    const pages = await report('--by', 'parent-url', '--from', DAYS[1], '--to', DAYS[2])
    for (const group of pages.groups) expect(metricsOf(group)).toEqual(want.get(group.parentUrl))
    expect((await report('--by', 'day', '--from', DAYS[0], '--to', DAYS[0])).total).toMatchObject({
      tryOns: 2,
      creditsCharged: 2,
      creditsRefunded: 0,
    })
    expect((await report('--by', 'origin', '--from', '2031-02-01')).groups).toEqual([])
  })

  it('names keys by id, prefix and label', async () => {
    const usage = await report('--by', 'key')
    expect(usage.groups.map((group) => [group.keyId, group.displayPrefix])).toEqual([
      [browserKey.keyId, browserKey.apiKey.slice(0, 13)],
      [serverKey.keyId, serverKey.apiKey.slice(0, 13)],
    ])
  })

  it('prints CSV with the same figures', async () => {
    const csv = (await admin('usage', '--account', browserKey.accountId, '--by', 'parent-url', '--csv')) as string
    const json = await report('--by', 'parent-url')
    const [header, ...lines] = csv.trimEnd().split('\n')
    expect(header).toBe(
      'parentUrl,tryOns,delivered,failed,running,creditsCharged,creditsRefunded,trainRendered,trainScoreLow,scoreUnavailable,trainPretreatmentUnavailable,qualityFailed,qualityUnchecked',
    )
    expect(lines.map((line) => line.split(','))).toEqual(
      json.groups.map((group) => Object.values(group).map((value) => (value === null ? '' : String(value)))),
    )
    const empty = (await admin('usage', '--account', browserKey.accountId, '--by', 'key', '--from', '2031-02-01', '--csv')) as string
    expect(empty).toBe(
      'keyId,displayPrefix,label,tryOns,delivered,failed,running,creditsCharged,creditsRefunded,trainRendered,trainScoreLow,scoreUnavailable,trainPretreatmentUnavailable,qualityFailed,qualityUnchecked\n',
    )
  })

  it('stays the same after shopper images are deleted: the ledger is untouched', async () => {
    const before = await Promise.all(['day', 'key', 'parent-url', 'origin', 'outcome'].map((by) => report('--by', by)))
    for (const m of made.filter((m) => m.keyId === browserKey.keyId && m.status !== 'reserved'))
      await db.sql`select tryon.delete_tryon(${m.id})`
    const after = await Promise.all(['day', 'key', 'parent-url', 'origin', 'outcome'].map((by) => report('--by', by)))
    expect(after).toEqual(before)
  })

  it('refuses an unknown account and malformed options', async () => {
    await expect(admin('usage', '--account', '00000000-0000-4000-8000-000000000000', '--by', 'day')).rejects.toThrow(/does not exist/)
    await expect(admin('usage', '--account', browserKey.accountId, '--by', 'week')).rejects.toThrow(
      /--by must be one of day, key, parent-url, origin, outcome/,
    )
    await expect(admin('usage', '--account', browserKey.accountId)).rejects.toThrow(/--by/)
    await expect(admin('usage', '--by', 'day')).rejects.toThrow(/--account/)
    await expect(admin('usage', '--account', browserKey.accountId, '--by', 'day', '--from', '2031-13-01')).rejects.toThrow(
      /--from must be a date/,
    )
    await expect(
      admin('usage', '--account', browserKey.accountId, '--by', 'day', '--from', '2031-01-12', '--to', '2031-01-10'),
    ).rejects.toThrow(/--from must not be after --to/)
  })
})
