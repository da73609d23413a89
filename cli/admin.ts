import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import type { Sql } from 'postgres'
import { parse as parseDomain } from 'tldts'
import { connectDatabase } from '../shared/billing/store.ts'
import type { ResultStore } from '../shared/storage/result-store.ts'
import { passwordFile } from '../devstack/embedded-postgres.ts'
import { duration, integer, UsageError, uuid } from './args.ts'
import { resultStoreFromEnv } from './store.ts'
import { runEnginesCheck } from './engines.ts'
import { runTryOns } from './tryons.ts'
import { GROUPINGS, usageCsv, usageReport } from './usage.ts'

const USAGE = `Usage: npm run --silent admin -- <command>

  keys create [--credits N] [--mode live|test] [--origin URL]... [--inactive] [--label TEXT] [--account ACCOUNT_ID]
  keys deactivate KEY_ID
  keys show KEY_ID
  keys list --account ACCOUNT_ID
  keys rotate KEY_ID [--grace 24h]
      A new key with the same account, mode, origins, label and limits, printed once; the old key keeps
      working for the grace period (30m, 24h, 7d, 0), then answers 403.
  keys limits KEY_ID [--per-minute N] [--per-client-per-minute N] [--daily-credits N]
                     [--daily-refunded N] [--per-client-daily-refunded N] [--clear]
      N is a whole number, or none to remove that limit; --clear removes every limit first.
  keys quality KEY_ID [--off|--measured|--judge|--default]
      How the key's results are checked before they are billed: not at all, the measured checks, or those and a
      seeing judge; --default: judge for live keys where a judge is configured, measured otherwise. Without a
      flag, prints the key's setting (null: the default).
  credits add KEY_ID AMOUNT
  credits show KEY_ID
  sweep [--older-than SECONDS]
  tryons delete TRYON_ID
  tryons delete --account ACCOUNT_ID --before DATE
      Deletes shopper images (an erasure request): the stored image, its share link and the try-on's personal
      fields; the ledger stays. DATE is 2026-12-01 (midnight UTC) or 2026-12-01T10:00:00Z.
  tryons purge
      Removes images of try-ons deleted with SQL alone (tryon.delete_tryon) from the store.
  usage --account ACCOUNT_ID [--from DAY] [--to DAY] --by ${GROUPINGS.join('|')} [--csv]
      Try-ons, credits charged and refunded, and wedding-dress verdicts per group; days in UTC, both included.
  engines check [--json]
      Every configured engine and judge: free calls proving the credentials and the model, and the model's shutdown
      date; a table (JSON with --json), exit 1 when one cannot serve. Reads the engine settings from the environment;
      needs no database.

Connects to DATABASE_URL (default: the dev stack's embedded database on 127.0.0.1:DB_PORT (54322), with the
password the dev stack keeps in TRYON_DATA_DIR (.tryon)/db-password). Prints JSON (usage --csv: CSV).
tryons removes images from TRYON_STORAGE: supabase (SUPABASE_URL and a secret key; the default when SUPABASE_URL
is set) or local (the dev stack's TRYON_DATA_DIR).`

/** The CLI's flags for the limits and the names tryon.set_key_limits takes. */
const LIMIT_FLAGS = {
  'per-minute': { field: 'perMinute', min: 1 },
  'per-client-per-minute': { field: 'perClientPerMinute', min: 1 },
  'daily-credits': { field: 'dailyCredits', min: 0 },
  'daily-refunded': { field: 'dailyRefunded', min: 0 },
  'per-client-daily-refunded': { field: 'perClientDailyRefunded', min: 0 },
} as const

/** jsonb keeps its keys in its own order; print them in the order people read them. */
const KEY_FIELDS = [
  'keyId',
  'accountId',
  'displayPrefix',
  'mode',
  'active',
  'state',
  'label',
  'qualityCheck',
  'allowedOrigins',
  'credits',
  'limits',
  'createdAt',
  'lastUsedAt',
  'expiresAt',
  'replacedBy',
  'deactivatedAt',
]
const LISTED_KEY_FIELDS = [
  'keyId',
  'displayPrefix',
  'label',
  'mode',
  'allowedOrigins',
  'state',
  'qualityCheck',
  'lastUsedAt',
  'createdAt',
  'expiresAt',
  'replacedBy',
  'deactivatedAt',
]
/** `keys quality`'s flags and the level each sets (null: the service's default). */
const QUALITY_FLAGS = { off: 'off', measured: 'measured', judge: 'judge', default: null } as const

const LIMIT_FIELDS = Object.values(LIMIT_FLAGS).map((l) => l.field)
const ordered = (object: Record<string, unknown>, fields: string[]) => Object.fromEntries(fields.map((f) => [f, object[f]]))

const limitValue = (value: string, flag: string, min: number): number | null =>
  value === 'none' ? null : integer(value, `--${flag} (or none)`, min)

/**
 * An allowed origin in the form browsers send it, then checked. It is normalised first (scheme and host
 * lowercased, the default port dropped, a trailing dot removed, an internationalised name in punycode, as the URL
 * standard does), so no spelling slips past the check: `https://*.CO.uk.:443` is `https://*.co.uk`. A wildcard must
 * then sit below a registrable domain (public suffix list, private section included): `https://*.shop.co.uk` is one
 * shop's subdomains, `https://*.co.uk` or `https://*.github.io` would be everyone's. The SQL function checks the
 * shape; only here is the list at hand.
 */
export const allowedOrigin = (value: string): string => {
  let url: URL
  try {
    url = new URL(value.trim())
  } catch {
    throw new UsageError(`--origin ${value}: not an origin; give https://shop.example, https://shop.example:8443 or https://*.shop.example`)
  }
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash)
    throw new UsageError(`--origin ${value}: an origin is https://host[:port] alone, without credentials, path, query or fragment`)
  const host = url.hostname.replace(/\.$/, '')
  const origin = `${url.protocol}//${host}${url.port ? `:${url.port}` : ''}`
  if (host.startsWith('*.')) {
    const below = host.slice(2)
    const domain = parseDomain(below, { allowPrivateDomains: true })
    if (domain.isIp || !domain.domain) {
      throw new UsageError(
        `--origin ${value}: ${below} is a public suffix, so the wildcard would match every site under it; name the shop's own domain (https://*.shop.${below})`,
      )
    }
  }
  return origin
}

/** A key's label: a name people read in `keys list`, not a place to store data (tryon.api_keys checks the length too). */
export const MAX_LABEL_LENGTH = 200

const keyLabel = (value: string | undefined): string | null => {
  if (value === undefined) return null
  if ([...value].length > MAX_LABEL_LENGTH) throw new UsageError(`--label must be at most ${MAX_LABEL_LENGTH} characters`)
  // A control character (NUL included, which Postgres cannot store) has no place in a name printed on a line.
  if (/\p{Cc}/u.test(value) || /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(value))
    throw new UsageError('--label must be printable text, without control characters')
  return value
}

/** Runs one command and returns what it prints: an object as JSON, a string as it is. */
export async function runAdmin(sql: Sql, argv: string[], options: { store?: () => ResultStore } = {}): Promise<unknown> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      credits: { type: 'string' },
      mode: { type: 'string' },
      origin: { type: 'string', multiple: true },
      inactive: { type: 'boolean' },
      label: { type: 'string' },
      account: { type: 'string' },
      'older-than': { type: 'string' },
      clear: { type: 'boolean' },
      grace: { type: 'string' },
      before: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      by: { type: 'string' },
      csv: { type: 'boolean' },
      ...Object.fromEntries(Object.keys(QUALITY_FLAGS).map((flag) => [flag, { type: 'boolean' as const }])),
      ...Object.fromEntries(Object.keys(LIMIT_FLAGS).map((flag) => [flag, { type: 'string' as const }])),
    },
  })
  const [group, action, ...rest] = positionals

  switch (`${group} ${action ?? ''}`.trim()) {
    case 'keys create': {
      const mode = values.mode ?? 'test'
      if (mode !== 'live' && mode !== 'test') throw new UsageError('--mode must be live or test')
      const [row] = await sql`
        select api_key, key_id, account_id, credits::float8 as credits
          from tryon.create_api_key(${integer(values.credits ?? '0', '--credits', 0)}, ${mode},
                                    ${(values.origin ?? []).map(allowedOrigin)}::text[], ${!values.inactive}, ${keyLabel(values.label)},
                                    ${values.account ? uuid(values.account, '--account') : null})`
      return { apiKey: row.api_key, keyId: row.key_id, accountId: row.account_id, credits: row.credits }
    }
    case 'keys deactivate': {
      const keyId = uuid(rest[0], 'KEY_ID')
      await sql`select tryon.deactivate_api_key(${keyId})`
      return { keyId, active: false }
    }
    case 'keys show': {
      const [row] = await sql`select tryon.show_api_key(${uuid(rest[0], 'KEY_ID')}) as key`
      return ordered({ ...row.key, limits: ordered(row.key.limits, LIMIT_FIELDS) }, KEY_FIELDS)
    }
    case 'keys limits': {
      const keyId = uuid(rest[0], 'KEY_ID')
      const limits: Record<string, number | null> = {}
      for (const [flag, { field, min }] of Object.entries(LIMIT_FLAGS)) {
        const value = (values as Record<string, unknown>)[flag]
        if (typeof value === 'string') limits[field] = limitValue(value, flag, min)
      }
      if (Object.keys(limits).length === 0 && !values.clear) throw new UsageError('give at least one limit, or --clear')
      const [row] = await sql`select tryon.set_key_limits(${keyId}, ${sql.json(limits)}, ${values.clear ?? false}) as limits`
      return { keyId, limits: ordered(row.limits, LIMIT_FIELDS) }
    }
    case 'keys quality': {
      const keyId = uuid(rest[0], 'KEY_ID')
      const given = Object.entries(QUALITY_FLAGS).filter(([flag]) => (values as Record<string, unknown>)[flag] === true)
      if (given.length > 1) throw new UsageError('give one of --off, --measured, --judge or --default')
      if (given.length === 0) {
        const [row] = await sql`select tryon.show_api_key(${keyId}) as key`
        return { keyId, qualityCheck: row.key.qualityCheck }
      }
      const [row] = await sql`select tryon.set_key_quality(${keyId}, ${given[0][1]}) as level`
      return { keyId, qualityCheck: row.level }
    }
    case 'keys list': {
      const accountId = uuid(values.account, '--account')
      const rows = await sql`select tryon.list_api_keys(${accountId}) as key`
      return { accountId, keys: rows.map((row) => ordered(row.key, LISTED_KEY_FIELDS)) }
    }
    case 'keys rotate': {
      const keyId = uuid(rest[0], 'KEY_ID')
      const graceSeconds = duration(values.grace ?? '24h', '--grace')
      const [row] = await sql`
        select api_key, key_id, account_id, replaces, old_key_expires_at
          from tryon.rotate_api_key(${keyId}, make_interval(secs => ${graceSeconds}))`
      return {
        apiKey: row.api_key,
        keyId: row.key_id,
        accountId: row.account_id,
        replaces: row.replaces,
        oldKeyExpiresAt: row.old_key_expires_at,
      }
    }
    case 'credits add': {
      const [row] = await sql`
        select tryon.add_credits(${uuid(rest[0], 'KEY_ID')}, ${integer(rest[1], 'AMOUNT', 1)})::float8 as credits`
      return { credits: row.credits }
    }
    case 'credits show': {
      const [row] = await sql`select tryon.credit_balance(${uuid(rest[0], 'KEY_ID')})::float8 as credits`
      return { credits: row.credits }
    }
    case 'sweep': {
      const olderThan = integer(values['older-than'] ?? '600', '--older-than', 0)
      const [row] = await sql`select tryon.sweep_reservations(make_interval(secs => ${olderThan})) as refunded`
      return { refunded: row.refunded }
    }
    case 'tryons delete':
    case 'tryons purge':
      if (action === 'purge' && rest.length > 0) throw new UsageError('tryons purge takes no arguments')
      if (rest.length > 1) throw new UsageError('give one TRYON_ID at a time')
      return runTryOns(sql, options.store ?? (() => resultStoreFromEnv(process.env)), action, {
        id: rest[0],
        account: values.account,
        before: values.before,
      })
    case 'usage': {
      const report = await usageReport(sql, values)
      return values.csv ? usageCsv(report) : report
    }
    default:
      throw new UsageError(group ? `unknown command: ${positionals.join(' ')}` : 'a command is required')
  }
}

/** Commands that need no database: their exit code, or undefined for every other command. */
async function runWithoutDatabase(argv: string[]): Promise<number | undefined> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, strict: false, options: { json: { type: 'boolean' } } })
  switch (positionals.slice(0, 2).join(' ')) {
    case 'engines check':
      if (positionals.length > 2) throw new UsageError('engines check takes no arguments')
      return runEnginesCheck({ json: values.json === true }, process.env, { write: (text) => process.stdout.write(text) })
    default:
      if (positionals[0] === 'engines') throw new UsageError(`unknown command: ${positionals.join(' ')}`)
      return undefined
  }
}

/** The dev stack's embedded database, with the password `npm start` keeps in its data folder. */
async function devStackDatabaseUrl(): Promise<string> {
  const file = passwordFile(resolve(process.env.TRYON_DATA_DIR || '.tryon'))
  const password = await readFile(file, 'utf8').then(
    (text) => text.trim(),
    () => {
      throw new UsageError(`DATABASE_URL is not set and ${file} does not exist: start the dev stack (npm start) or set DATABASE_URL`)
    },
  )
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${process.env.DB_PORT || 54322}/postgres`
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2)
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE)
    return 0
  }
  try {
    const exitCode = await runWithoutDatabase(argv)
    if (exitCode !== undefined) return exitCode
  } catch (error) {
    console.error(JSON.stringify({ error: (error as Error).message }))
    if (error instanceof UsageError) console.error(USAGE)
    return error instanceof UsageError ? 2 : 1
  }
  let url: string
  try {
    url = process.env.DATABASE_URL || (await devStackDatabaseUrl())
  } catch (error) {
    console.error(JSON.stringify({ error: (error as Error).message }))
    return 2
  }
  const sql = connectDatabase(url, { max: 1, fetchTypes: true })
  try {
    const printed = await runAdmin(sql, argv)
    if (typeof printed === 'string') process.stdout.write(printed)
    else console.log(JSON.stringify(printed))
    return 0
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    console.error(JSON.stringify({ error: message }))
    if (error instanceof UsageError || (error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      console.error(USAGE)
      return 2
    }
    return 1
  } finally {
    await sql.end({ timeout: 2 })
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) process.exit(await main())
