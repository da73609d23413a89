import { readdir, readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import type { Sql } from 'postgres'

export const migrationsDir = fileURLToPath(new URL('../supabase/migrations/', import.meta.url))

export interface Migration {
  version: string
  name: string
  sql: string
}

export async function readMigrations(dir = migrationsDir): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d+_.+\.sql$/.test(f)).sort()
  return Promise.all(
    files.map(async (file) => {
      const [, version, name] = /^(\d+)_(.+)\.sql$/.exec(file)!
      return { version, name, sql: await readFile(dir + file, 'utf8') }
    }),
  )
}

/** The roles Supabase provides and the migrations grant to or revoke from. */
export const SUPABASE_ROLES = ['anon', 'authenticated', 'service_role']

/**
 * Creates Supabase's roles where they are missing: plain Postgres and PGlite lack them, and the migrations name them.
 * The dev stack and the tests run this before the migrations; on Supabase they exist already. A role belongs to the
 * whole server, so two databases being set up at once may race to create it.
 */
export async function ensureSupabaseRoles(sql: Sql): Promise<void> {
  await sql
    .unsafe(`
    do $$
    declare
      r text;
    begin
      foreach r in array array['${SUPABASE_ROLES.join("', '")}'] loop
        if not exists (select 1 from pg_roles where rolname = r) then
          begin
            execute format('create role %I nologin noinherit', r);
          exception when duplicate_object or unique_violation then
            null; -- another session created it concurrently
          end;
        end if;
      end loop;
    end
    $$`)
    .simple()
}

/**
 * The database records migrations that are not among the files: it was made by the migrations as they were before
 * they were squashed into one definition per function (or by a newer checkout), and cannot be brought up to date.
 */
export class MigrationHistoryError extends Error {
  constructor(
    readonly unknown: string[],
    where = 'The database',
    advice = 'Drop it and create it again.',
  ) {
    super(
      `${where} was made by migration files this checkout does not have (${unknown.join(', ')}), most likely those ` +
        `from before supabase/migrations was squashed; it cannot be brought up to date.\n${advice}`,
    )
    this.name = 'MigrationHistoryError'
  }
}

/**
 * Applies pending migrations in order, each in its own transaction, recording them in the
 * same table the Supabase CLI uses, so `supabase db push` and this runner agree.
 * Refuses (MigrationHistoryError, before applying anything) a database that records a migration not in `migrations`.
 */
export async function applyMigrations(sql: Sql, migrations?: Migration[]): Promise<string[]> {
  const all = migrations ?? (await readMigrations())
  await sql`create schema if not exists supabase_migrations`.catch(ignoreConcurrentDdl)
  await sql`
    create table if not exists supabase_migrations.schema_migrations (
      version text primary key, statements text[], name text
    )`.catch(ignoreConcurrentDdl)

  const files = new Map(all.map((m) => [m.version, m.name]))
  const recorded = await sql<{ version: string; name: string | null }[]>`
    select version, name from supabase_migrations.schema_migrations order by version`
  // An older Supabase CLI records no name; its version alone must then be ours.
  const unknown = recorded.filter((r) => !files.has(r.version) || (r.name !== null && r.name !== files.get(r.version)))
  if (unknown.length > 0) throw new MigrationHistoryError(unknown.map((r) => (r.name ? `${r.version}_${r.name}` : r.version)))

  const applied: string[] = []
  for (const migration of all) {
    await sql.begin(async (tx) => {
      // Two processes starting at once must not both apply the same migration.
      await tx`select pg_advisory_xact_lock(hashtext('tryon-migrations'))`
      const done = await tx`
        select 1 from supabase_migrations.schema_migrations where version = ${migration.version}`
      if (done.length > 0) return
      await tx.unsafe(migration.sql).simple()
      await tx`
        insert into supabase_migrations.schema_migrations (version, name, statements)
        values (${migration.version}, ${migration.name}, array[${migration.sql}::text])`
      applied.push(migration.version)
    })
  }
  return applied
}

// `create ... if not exists` can still collide when two sessions run it at the same instant.
function ignoreConcurrentDdl(error: { code?: string }): void {
  if (error.code !== '23505' && error.code !== '42P07') throw error
}
