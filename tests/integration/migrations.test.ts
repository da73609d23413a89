import { afterAll, describe, expect, it } from 'vitest'
import { startEmbeddedPostgres } from '../../devstack/embedded-postgres.ts'
import { applyMigrations, ensureSupabaseRoles, MigrationHistoryError, readMigrations, SUPABASE_ROLES } from '../../devstack/migrations.ts'
import { connectDatabase } from '../../shared/billing/store.ts'
import { MIGRATIONS_BEFORE_THE_SQUASH as BEFORE_THE_SQUASH, serverUrl } from '../support/database.ts'

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

  it('refuse a database made by the migrations before the squash, before applying anything', async () => {
    const admin = connectDatabase(serverUrl, { max: 1 })
    const name = `tryon_history_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
    await admin.unsafe(`create database ${name}`)
    const url = new URL(serverUrl)
    url.pathname = `/${name}`
    const sql = connectDatabase(url.href, { max: 1 })
    cleanups.push(async () => {
      await sql.end()
      await admin.unsafe(`drop database if exists ${name} with (force)`)
      await admin.end()
    })
    await sql
      .unsafe(`
      create schema supabase_migrations;
      create table supabase_migrations.schema_migrations (version text primary key, statements text[], name text);`)
      .simple()
    for (const [version, migration] of BEFORE_THE_SQUASH) {
      await sql`insert into supabase_migrations.schema_migrations (version, name) values (${version}, ${migration})`
    }
    await ensureSupabaseRoles(sql)

    const refusal = await applyMigrations(sql).catch((error: unknown) => error)
    expect(refusal).toBeInstanceOf(MigrationHistoryError)
    const current = new Set((await readMigrations()).map((m) => `${m.version}_${m.name}`))
    expect((refusal as MigrationHistoryError).unknown).toEqual(
      BEFORE_THE_SQUASH.map(([v, n]) => `${v}_${n}`).filter((m) => !current.has(m)),
    )
    expect((refusal as MigrationHistoryError).unknown).toContain('20261123000100_tryon_billing')
    const [state] = await sql`
      select to_regnamespace('tryon') is null as no_schema,
             (select count(*)::int from supabase_migrations.schema_migrations) as recorded`
    expect(state).toEqual({ no_schema: true, recorded: BEFORE_THE_SQUASH.length })
  })
})
