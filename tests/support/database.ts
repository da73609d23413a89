import type { Sql } from 'postgres'
import { connectDatabase } from '../../shared/billing/store.ts'
import { startEmbeddedPostgres } from '../../devstack/embedded-postgres.ts'
import { applyMigrations, ensureSupabaseRoles } from '../../devstack/migrations.ts'
import { startTransactionPooler } from './pooler.ts'
import { keyChecksum } from '../../shared/auth/api-key.ts'

export type DatabaseKind = 'postgres' | 'pglite'

export interface TestDatabase {
  kind: DatabaseKind
  url: string
  sql: Sql
  close(): Promise<void>
}

/** The real server CI starts; override with TEST_DATABASE_URL. */
export const serverUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

/**
 * TEST_POOLER=1 puts a real transaction pooler (PgBouncer) between the tests and the server, as Supabase's
 * on port 6543, with prepared statements off; TEST_PREPARE=0 only turns them off.
 */
const viaPooler = process.env.TEST_POOLER === '1'
const prepare = process.env.TEST_PREPARE !== '0'

/** What supabase/migrations held before it was squashed, as a database made then records it. */
export const MIGRATIONS_BEFORE_THE_SQUASH = [
  ['20261123000100', 'tryon_billing'],
  ['20261123000200', 'credit_functions'],
  ['20261123000300', 'admin_functions'],
  ['20261123000400', 'idempotency'],
  ['20261123000500', 'abuse_limits'],
  ['20261123000700', 'results_bucket'],
  ['20261123000800', 'widget_assets'],
  ['20261123000900', 'account_operations'],
]

/** A freshly migrated database of its own for one test file. */
export async function createTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  if (kind === 'pglite') {
    const embedded = await startEmbeddedPostgres({})
    const sql = connectDatabase(embedded.url, { prepare, max: 4, fetchTypes: true })
    await ensureSupabaseRoles(sql)
    await applyMigrations(sql)
    return {
      kind,
      url: embedded.url,
      sql,
      async close() {
        await sql.end()
        await embedded.stop()
      },
    }
  }

  const name = `tryon_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  const admin = connectDatabase(serverUrl, { max: 1, fetchTypes: true })
  await admin.unsafe(`create database ${name}`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  const serverPrepare = prepare && !viaPooler
  // In the URL too, so a dev stack or runtime given this URL connects the same way.
  if (!serverPrepare) url.searchParams.set('prepare', 'false')
  const pooler = viaPooler ? await startTransactionPooler(serverUrl) : null
  const clientUrl = pooler?.urlFor(name) ?? url.toString()
  const sql = connectDatabase(clientUrl, { prepare: serverPrepare, max: 8, fetchTypes: true })
  await ensureSupabaseRoles(sql)
  await applyMigrations(sql)
  return {
    kind,
    url: clientUrl,
    sql,
    async close() {
      await sql.end()
      await pooler?.stop()
      await admin.unsafe(`drop database if exists ${name} with (force)`)
      await admin.end()
    },
  }
}

export interface LedgerCheck {
  balance: number
  reserved: number
  ledgerBalance: number
  ledgerReserved: number
  heldByTryOns: number
}

/** The invariants every test can assert: balances equal their ledger sums. */
export async function ledgerCheck(sql: Sql, accountId: string): Promise<LedgerCheck> {
  const [row] = await sql`
    select a.balance::float8 as balance, a.reserved::float8 as reserved,
           coalesce((select sum(delta) from tryon.ledger l where l.account_id = a.id), 0)::float8 as ledger_balance,
           coalesce((select sum(reserved_delta) from tryon.ledger l where l.account_id = a.id), 0)::float8 as ledger_reserved,
           coalesce((select sum(credits_reserved) from tryon.tryons t
                      where t.account_id = a.id and t.status = 'reserved'), 0)::float8 as held
      from tryon.accounts a where a.id = ${accountId}`
  return {
    balance: row.balance,
    reserved: row.reserved,
    ledgerBalance: row.ledger_balance,
    ledgerReserved: row.ledger_reserved,
    heldByTryOns: row.held,
  }
}

export interface CreatedKey {
  apiKey: string
  keyId: string
  accountId: string
  credits: number
}

export interface KeyOptions {
  credits?: number
  mode?: 'live' | 'test'
  origins?: string[]
  active?: boolean
  accountId?: string
  /**
   * The key's quality check level (`tryon.set_key_quality`); left unset, the default (docs/billing.md, "Checked
   * results"). A test whose subject is not the try-on's picture (limits, idempotency, wire formats) and whose stand-in
   * result is not a try-on sets `'off'` and says why.
   */
  quality?: 'off' | 'measured' | 'judge'
}

export async function createKey(sql: Sql, options: KeyOptions = {}): Promise<CreatedKey> {
  const [row] = await sql`
    select api_key, key_id, account_id, credits::float8 as credits
      from tryon.create_api_key(${options.credits ?? 0}, ${options.mode ?? 'test'},
                                array(select jsonb_array_elements_text(${JSON.stringify(options.origins ?? [])}::text::jsonb)),
                                ${options.active ?? true}, null,
                                ${options.accountId ?? null})`
  if (options.quality) await sql`select tryon.set_key_quality(${row.key_id}::uuid, ${options.quality})`
  return { apiKey: row.api_key, keyId: row.key_id, accountId: row.account_id, credits: row.credits }
}

/** A key of the right shape and checksum that no account owns. */
export function wellFormedUnknownKey(mode: 'live' | 'test' = 'test'): string {
  const body = `vto_${mode}_${'Q'.repeat(30)}`
  return body + keyChecksum(body)
}
