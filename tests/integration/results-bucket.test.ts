import type { Sql } from 'postgres'
import { afterAll, describe, expect, it } from 'vitest'
import { connectDatabase } from '../../shared/billing/store.ts'
import { applyMigrations, ensureSupabaseRoles, readMigrations } from '../../devstack/migrations.ts'
import { createTestDatabase, serverUrl } from '../support/database.ts'

const BUCKET_MIGRATION = 'storage_buckets'

// storage.buckets as Supabase Storage creates it (columns the migration touches, and the defaults around them).
const SUPABASE_STORAGE = `
  create schema storage;
  create table storage.buckets (
    id text primary key,
    name text not null unique,
    owner uuid,
    created_at timestamptz default now(),
    updated_at timestamptz default now(),
    public boolean default false,
    avif_autodetection boolean default false,
    file_size_limit bigint,
    allowed_mime_types text[],
    owner_id text
  );`

// Storage before per-bucket limits existed.
const OLD_STORAGE = `
  create schema storage;
  create table storage.buckets (id text primary key, name text not null unique, public boolean default false);`

describe('the results and widget bucket migrations', () => {
  const cleanups: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup()
  })

  /** A fresh database on the real server, with `setup` run before the migrations. */
  async function migratedDatabase(setup: string): Promise<Sql> {
    const admin = connectDatabase(serverUrl, { max: 1 })
    const name = `tryon_bucket_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
    await admin.unsafe(`create database ${name}`)
    const url = new URL(serverUrl)
    url.pathname = `/${name}`
    const sql = connectDatabase(url.toString(), { max: 2, fetchTypes: true })
    cleanups.push(async () => {
      await sql.end()
      await admin.unsafe(`drop database if exists ${name} with (force)`)
      await admin.end()
    })
    await sql.unsafe(setup).simple()
    await ensureSupabaseRoles(sql)
    await applyMigrations(sql)
    return sql
  }

  it('exists among the migrations', async () => {
    expect((await readMigrations()).map((m) => m.name)).toContain(BUCKET_MIGRATION)
  })

  it('creates the public tryon-results and tryon-assets buckets where Supabase Storage is installed', async () => {
    const sql = await migratedDatabase(SUPABASE_STORAGE)
    const buckets = await sql`select id, name, public, file_size_limit::int as limit, allowed_mime_types from storage.buckets order by id`
    expect(buckets).toEqual([
      { id: 'tryon-assets', name: 'tryon-assets', public: true, limit: 1024 * 1024, allowed_mime_types: ['application/javascript'] },
      {
        id: 'tryon-results',
        name: 'tryon-results',
        public: true,
        limit: 20 * 1024 * 1024,
        allowed_mime_types: ['image/jpeg', 'image/png', 'image/webp'],
      },
    ])
  })

  it('makes existing private buckets of those names public, once', async () => {
    const sql = await migratedDatabase(`${SUPABASE_STORAGE}
      insert into storage.buckets (id, name, public) values ('tryon-results', 'tryon-results', false), ('tryon-assets', 'tryon-assets', false);`)
    for (const migration of (await readMigrations()).filter((m) => m.name === BUCKET_MIGRATION)) {
      await sql.unsafe(migration.sql).simple()
    }
    const buckets = await sql`select id, public from storage.buckets order by id`
    expect(buckets).toEqual([
      { id: 'tryon-assets', public: true },
      { id: 'tryon-results', public: true },
    ])
  })

  it('works with a Storage version that has no per-bucket limits', async () => {
    const sql = await migratedDatabase(OLD_STORAGE)
    expect(await sql`select id, public from storage.buckets order by id`).toEqual([
      { id: 'tryon-assets', public: true },
      { id: 'tryon-results', public: true },
    ])
  })

  // PGlite applies the same migrations in every billing and dev stack test.
  it('does nothing on plain Postgres, which has no storage schema', async () => {
    const db = await createTestDatabase('postgres')
    cleanups.push(() => db.close())
    const [row] = await db.sql`
      select to_regnamespace('storage') is null as no_storage,
             (select count(*)::int from supabase_migrations.schema_migrations where name = ${BUCKET_MIGRATION}) as recorded`
    expect(row).toEqual({ no_storage: true, recorded: 1 })
  })
})
