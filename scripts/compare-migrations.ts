// Applies two sets of migrations to fresh databases and shows how the schemas they make differ (nothing, after a
// squash). A side is a folder of migrations or a git revision (its supabase/migrations).
//   npx tsx scripts/compare-migrations.ts main supabase/migrations
// On the real server (TEST_DATABASE_URL, default 127.0.0.1:5432) it compares `pg_dump --schema-only` and a catalog
// listing; on PGlite, which the server's pg_dump cannot read, the catalog listing. Both databases get a stand-in for
// Supabase Storage's storage.buckets first, so the buckets the migrations make are compared too. Exit 1 on a difference.
import { execFile } from 'node:child_process'
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { Sql } from 'postgres'
import { startEmbeddedPostgres } from '../devstack/embedded-postgres.ts'
import { applyMigrations, ensureSupabaseRoles, readMigrations, type Migration } from '../devstack/migrations.ts'
import { connectDatabase } from '../shared/billing/store.ts'

const run = promisify(execFile)
const serverUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

// storage.buckets as Supabase Storage creates it (the columns the bucket migration touches, and those around them).
const STORAGE_STAND_IN = `
  create schema storage;
  create table storage.buckets (
    id text primary key, name text not null unique, owner uuid, created_at timestamptz default now(),
    updated_at timestamptz default now(), public boolean default false, avif_autodetection boolean default false,
    file_size_limit bigint, allowed_mime_types text[], owner_id text
  );`

// Everything the migrations make in the tryon schema, one sorted line per object, in the server's own words.
const CATALOG = `
  select format('schema %s acl=%s', nspname, nspacl) from pg_namespace where nspname = 'tryon'
  union all
  select format('default acl %s %s %s', defaclnamespace::regnamespace, defaclobjtype, defaclacl) from pg_default_acl
  union all
  select format('relation %s kind=%s rls=%s acl=%s', c.oid::regclass, c.relkind, c.relrowsecurity, c.relacl)
    from pg_class c where c.relnamespace = 'tryon'::regnamespace
  union all
  select format('column %s #%s %s %s not null=%s default=%s identity=%s', a.attrelid::regclass, a.attnum, a.attname,
                format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid), a.attidentity)
    from pg_attribute a join pg_class c on c.oid = a.attrelid
    left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
   where c.relnamespace = 'tryon'::regnamespace and a.attnum > 0 and not a.attisdropped
  union all
  select format('constraint %s %s %s', conrelid::regclass, conname, pg_get_constraintdef(oid))
    from pg_constraint where connamespace = 'tryon'::regnamespace
  union all
  select format('index %s', pg_get_indexdef(i.indexrelid))
    from pg_index i join pg_class c on c.oid = i.indexrelid where c.relnamespace = 'tryon'::regnamespace
  union all
  select format('view %s %s', c.oid::regclass, pg_get_viewdef(c.oid))
    from pg_class c where c.relkind = 'v' and c.relnamespace = 'tryon'::regnamespace
  union all
  select format('function %s acl=%s %s', p.oid::regprocedure, p.proacl, pg_get_functiondef(p.oid))
    from pg_proc p where p.pronamespace = 'tryon'::regnamespace
  union all
  select format('trigger %s', pg_get_triggerdef(t.oid))
    from pg_trigger t join pg_class c on c.oid = t.tgrelid where c.relnamespace = 'tryon'::regnamespace and not t.tgisinternal
  union all
  select format('policy %s %s', p.polrelid::regclass, p.polname)
    from pg_policy p join pg_class c on c.oid = p.polrelid where c.relnamespace = 'tryon'::regnamespace
  union all
  select format('bucket %s %s public=%s limit=%s types=%s', id, name, public, file_size_limit, allowed_mime_types)
    from storage.buckets
  order by 1`

async function migrationsOf(side: string, scratch: string): Promise<Migration[]> {
  if (
    await stat(side).then(
      (s) => s.isDirectory(),
      () => false,
    )
  )
    return readMigrations(side.endsWith('/') ? side : `${side}/`)
  const dir = await mkdtemp(join(scratch, 'rev-'))
  const { stdout } = await run('git', ['ls-tree', '--name-only', side, 'supabase/migrations/'])
  for (const path of stdout.split('\n').filter((p) => p.endsWith('.sql'))) {
    const { stdout: text } = await run('git', ['show', `${side}:${path}`], { maxBuffer: 16 << 20 })
    await writeFile(join(dir, path.split('/').pop()!), text)
  }
  return readMigrations(`${dir}/`)
}

async function migrate(sql: Sql, migrations: Migration[]): Promise<string> {
  await ensureSupabaseRoles(sql)
  await sql.unsafe(STORAGE_STAND_IN).simple()
  await applyMigrations(sql, migrations)
  const rows = await sql.unsafe<{ format: string }[]>(CATALOG)
  return `${rows.map((r) => r.format).join('\n')}\n`
}

async function onServer(migrations: Migration[]): Promise<{ catalog: string; dump: string }> {
  const admin = connectDatabase(serverUrl, { max: 1 })
  const name = `tryon_compare_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  await admin.unsafe(`create database ${name}`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  const sql = connectDatabase(url.href, { max: 1 })
  try {
    const catalog = await migrate(sql, migrations)
    const { stdout } = await run('pg_dump', ['--schema-only', '--no-owner', url.href], { maxBuffer: 64 << 20 })
    // pg_dump 15.14+ fences the script with a random key.
    return { catalog, dump: stdout.replace(/^\\(un)?restrict \S+$/gm, '\\$1restrict <key>') }
  } finally {
    await sql.end()
    await admin.unsafe(`drop database if exists ${name} with (force)`)
    await admin.end()
  }
}

async function onPglite(migrations: Migration[]): Promise<string> {
  const embedded = await startEmbeddedPostgres({})
  const sql = connectDatabase(embedded.url, { max: 1 })
  try {
    return await migrate(sql, migrations)
  } finally {
    await sql.end()
    await embedded.stop()
  }
}

async function compare(what: string, a: string, b: string, scratch: string): Promise<boolean> {
  const [fileA, fileB] = [join(scratch, 'a.txt'), join(scratch, 'b.txt')]
  await writeFile(fileA, a)
  await writeFile(fileB, b)
  const diff = await run('diff', ['-u', fileA, fileB]).then(
    () => '',
    (error: { stdout?: string }) => error.stdout ?? String(error),
  )
  console.log(diff ? `${what}: DIFFERENT\n${diff}` : `${what}: identical (${a.split('\n').length - 1} lines)`)
  return !diff
}

const [sideA, sideB] = process.argv.slice(2)
if (!sideA || !sideB) {
  console.error('usage: npx tsx scripts/compare-migrations.ts <folder or git revision> <folder or git revision>')
  process.exit(2)
}
const scratch = await mkdtemp(join(tmpdir(), 'tryon-compare-'))
try {
  const [a, b] = [await migrationsOf(sideA, scratch), await migrationsOf(sideB, scratch)]
  console.log(`${sideA}: ${a.length} migrations; ${sideB}: ${b.length} migrations`)
  const [serverA, serverB] = [await onServer(a), await onServer(b)]
  const [pgliteA, pgliteB] = [await onPglite(a), await onPglite(b)]
  const same = [
    await compare('postgres pg_dump --schema-only', serverA.dump, serverB.dump, scratch),
    await compare('postgres catalog', serverA.catalog, serverB.catalog, scratch),
    await compare('pglite catalog', pgliteA, pgliteB, scratch),
  ]
  process.exitCode = same.every(Boolean) ? 0 : 1
} finally {
  await rm(scratch, { recursive: true, force: true })
}
