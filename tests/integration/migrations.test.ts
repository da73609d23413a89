import { afterAll, describe, expect, it } from 'vitest'
import { startEmbeddedPostgres } from '../../devstack/embedded-postgres.ts'
import { ensureSupabaseRoles, readMigrations, SUPABASE_ROLES } from '../../devstack/migrations.ts'
import { connectDatabase } from '../../shared/billing/store.ts'

describe('the migrations', () => {
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup()
  })

  it('create no role: Supabase has its own, and the dev stack and tests make them locally', async () => {
    const migrations = await readMigrations()
    expect(migrations.length).toBeGreaterThan(0)
    for (const migration of migrations) expect(migration.sql, migration.name).not.toMatch(/\bcreate\s+role\b/i)
  })

  it('say at the top of the first that they are append-only', async () => {
    const [first] = await readMigrations()
    expect(first.sql.split('\n')[0]).toMatch(/append-only/i)
  })

  it("makes Supabase's roles where they are missing, and running it again changes nothing", async () => {
    const embedded = await startEmbeddedPostgres({})
    const sql = connectDatabase(embedded.url, { max: 2 })
    cleanups.push(async () => {
      await sql.end()
      await embedded.stop()
    })
    const roles = () => sql`select rolname, rolcanlogin from pg_roles where rolname in ${sql(SUPABASE_ROLES)} order by rolname`
    expect(await roles()).toEqual([])
    await Promise.all([ensureSupabaseRoles(sql), ensureSupabaseRoles(sql)])
    await ensureSupabaseRoles(sql)
    expect(await roles()).toEqual(SUPABASE_ROLES.map((rolname) => ({ rolname, rolcanlogin: false })))
  })
})
