import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashApiKey } from '../../shared/auth/api-key.ts'
import { connectDatabase, createPostgresBilling, type BillingStore } from '../../shared/billing/store.ts'
import { resultPath } from '../../shared/storage/result-store.ts'
import { applyMigrations, ensureSupabaseRoles, readMigrations } from '../../devstack/migrations.ts'
import { createKey, createTestDatabase, serverUrl, type CreatedKey, type DatabaseKind, type TestDatabase } from '../support/database.ts'

const queuedFor = (db: TestDatabase, tryOnId: string) =>
  db.sql<{ result_path: string }[]>`select result_path from tryon.result_deletions where tryon_id = ${tryOnId} order by result_path`.then(
    (rows) => rows.map((r) => r.result_path),
  )

describe.each<DatabaseKind>(['postgres', 'pglite'])('what a try-on that ended without a delivery may have stored, on %s', (kind) => {
  let db: TestDatabase
  let billing: BillingStore
  let key: CreatedKey

  beforeAll(async () => {
    db = await createTestDatabase(kind)
    billing = createPostgresBilling(db.sql)
    key = await createKey(db.sql, { credits: 100 })
  })
  afterAll(() => db?.close())

  /** A reserved try-on, dated `createdAt` (the database's clock at begin). */
  async function begun(createdAt?: string): Promise<string> {
    const tryOnId = crypto.randomUUID()
    const result = await billing.begin({ keyHash: await hashApiKey(key.apiKey), origin: null, tryOnId, productKind: 'standard' })
    expect(result.verdict).toBe('ok')
    if (createdAt) await db.sql`update tryon.tryons set created_at = ${createdAt}::timestamptz where id = ${tryOnId}`
    return tryOnId
  }

  /** Every path the service could have written the result to: each type, dated anywhere in the given UTC days. */
  const writtenAnywhere = (tryOnId: string, days: string[]) =>
    [
      ...new Set(
        days.flatMap((day) => (['image/jpeg', 'image/png', 'image/webp'] as const).map((t) => resultPath(tryOnId, t, new Date(day)))),
      ),
    ].sort()

  it('lists the paths the service writes to, in the month folders of a day either side of the start', async () => {
    const inside = crypto.randomUUID()
    const [mid] = await db.sql`select tryon.possible_result_paths(${inside}, '2026-11-15T12:00:00Z') as paths`
    expect([...mid.paths].sort()).toEqual(writtenAnywhere(inside, ['2026-11-14T12:00:00Z', '2026-11-16T12:00:00Z']))
    expect(mid.paths).toHaveLength(3)
    const edge = crypto.randomUUID()
    const [late] = await db.sql`select tryon.possible_result_paths(${edge}, '2026-11-30T23:30:00Z') as paths`
    expect([...late.paths].sort()).toEqual(writtenAnywhere(edge, ['2026-11-30T23:30:00Z', '2026-12-01T00:10:00Z']))
    expect(late.paths).toHaveLength(6)
  })

  it.each(['storage_failed', 'database_unavailable', 'internal_error'])(
    'queues them when a try-on fails with %s, which can follow the write',
    async (outcome) => {
      const tryOnId = await begun('2026-11-15T12:00:00Z')
      await billing.settle({ tryOnId, outcome })
      expect(await queuedFor(db, tryOnId)).toEqual(writtenAnywhere(tryOnId, ['2026-11-15T12:00:00Z']))
    },
  )

  it('queues them when the sweeper ends a try-on whose process never settled it', async () => {
    const tryOnId = await begun('2026-11-15T12:00:00Z')
    await db.sql`update tryon.tryons set created_at = created_at - interval '1 hour' where id = ${tryOnId}`
    expect(await billing.sweep(600)).toBeGreaterThanOrEqual(1)
    const [row] = await db.sql`select status from tryon.tryons where id = ${tryOnId}`
    expect(row.status).toBe('expired')
    expect(await queuedFor(db, tryOnId)).toEqual(writtenAnywhere(tryOnId, ['2026-11-15T11:00:00Z']))
  })

  it.each(['generation_failed', 'image_too_small', 'ai_content_rejected', 'bridal_preprocessing_failed'])(
    'queues nothing for a failure answered before anything was written: %s',
    async (outcome) => {
      const tryOnId = await begun()
      await billing.settle({ tryOnId, outcome })
      expect(await queuedFor(db, tryOnId)).toEqual([])
    },
  )

  it('queues nothing when the try-on delivers, and only its own path when it is deleted', async () => {
    const tryOnId = await begun()
    const path = `2026/11/${tryOnId}.jpg`
    await billing.settle({ tryOnId, outcome: 'generated', shortId: tryOnId.slice(0, 10), resultPath: path })
    expect(await queuedFor(db, tryOnId)).toEqual([])
    await db.sql`select tryon.delete_tryon(${tryOnId})`
    expect(await queuedFor(db, tryOnId)).toEqual([path])
  })

  it('queues them again when a try-on that may have left something is deleted, after the queue was emptied', async () => {
    const tryOnId = await begun('2026-11-15T12:00:00Z')
    await billing.settle({ tryOnId, outcome: 'database_unavailable' })
    for (const path of await queuedFor(db, tryOnId)) await db.sql`select tryon.confirm_result_deletion(${path})`
    expect(await queuedFor(db, tryOnId)).toEqual([])
    const [row] = await db.sql`select tryon.delete_tryon(${tryOnId}) as result`
    expect(row.result).toBe('deleted')
    expect(await queuedFor(db, tryOnId)).toEqual(writtenAnywhere(tryOnId, ['2026-11-15T12:00:00Z']))
    // A failure that wrote nothing has nothing to remove when deleted.
    const clean = await begun()
    await billing.settle({ tryOnId: clean, outcome: 'image_unreachable' })
    await db.sql`select tryon.delete_tryon(${clean})`
    expect(await queuedFor(db, clean)).toEqual([])
  })
})

describe('the migration that queues what undelivered try-ons may have left', () => {
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup()
  })

  it('queues it for the try-ons that ended so before it was applied, and nothing for the others', async () => {
    const admin = connectDatabase(serverUrl, { max: 1 })
    const name = `tryon_backfill_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
    await admin.unsafe(`create database ${name}`)
    const url = new URL(serverUrl)
    url.pathname = `/${name}`
    const sql = connectDatabase(url.href, { max: 2, fetchTypes: true })
    cleanups.push(async () => {
      await sql.end()
      await admin.unsafe(`drop database if exists ${name} with (force)`)
      await admin.end()
    })
    await ensureSupabaseRoles(sql)
    const migrations = await readMigrations()
    const at = migrations.findIndex((m) => m.name === 'unsettled_results')
    expect(at).toBeGreaterThan(0)
    await applyMigrations(sql, migrations.slice(0, at))

    const key = await createKey(sql, { credits: 10 })
    // The SQL of that time, called as it was: today's store expects columns later migrations add.
    const keyHash = Buffer.from(await hashApiKey(key.apiKey)).toString('hex')
    const start = async () => {
      const tryOnId = crypto.randomUUID()
      await sql`select verdict from tryon.begin_tryon(decode(${keyHash}, 'hex'), null, ${tryOnId}, 'standard')`
      await sql`update tryon.tryons set created_at = '2026-10-15T08:00:00Z' where id = ${tryOnId}`
      return tryOnId
    }
    const settle = (tryOnId: string, outcome: string) => sql`select settled from tryon.settle_tryon(${tryOnId}, ${outcome})`
    const expired = await start()
    await sql`update tryon.tryons set created_at = created_at - interval '1 hour' where id = ${expired}`
    await sql`select tryon.sweep_reservations(interval '10 minutes')`
    const lostAfterWrite = await start()
    await settle(lostAfterWrite, 'database_unavailable')
    const refused = await start()
    await settle(refused, 'image_too_small')
    const [before] = await sql`select count(*)::int as n from tryon.result_deletions`
    expect(before.n).toBe(0)

    await applyMigrations(sql, migrations)
    const queued = await sql<{ tryon_id: string; n: number }[]>`
      select tryon_id, count(*)::int as n from tryon.result_deletions group by tryon_id order by tryon_id`
    expect(queued).toEqual([expired, lostAfterWrite].sort().map((tryon_id) => ({ tryon_id, n: 3 })))
  })
})
