import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import type { Sql } from 'postgres'
import { connectDatabase } from '../shared/billing/store.ts'

const USAGE = `Usage: npm run --silent admin -- <command>

  keys create [--credits N] [--mode live|test] [--origin URL]... [--inactive] [--label TEXT] [--account ACCOUNT_ID]
  keys deactivate KEY_ID
  credits add KEY_ID AMOUNT
  credits show KEY_ID
  sweep [--older-than SECONDS]

Connects to DATABASE_URL (default: the dev stack's postgres://postgres@127.0.0.1:54322/postgres).
Prints JSON.`

class UsageError extends Error {}

const integer = (value: string | undefined, name: string, min: number): number => {
  if (value === undefined || !/^-?\d+$/.test(value) || Number(value) < min) {
    throw new UsageError(`${name} must be an integer of at least ${min}`)
  }
  return Number(value)
}

const uuid = (value: string | undefined, name: string): string => {
  if (!value || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) {
    throw new UsageError(`${name} must be a UUID`)
  }
  return value
}

export async function runAdmin(sql: Sql, argv: string[]): Promise<unknown> {
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
                                    ${values.origin ?? []}::text[], ${!values.inactive}, ${values.label ?? null},
                                    ${values.account ? uuid(values.account, '--account') : null})`
      return { apiKey: row.api_key, keyId: row.key_id, accountId: row.account_id, credits: row.credits }
    }
    case 'keys deactivate': {
      const keyId = uuid(rest[0], 'KEY_ID')
      await sql`select tryon.deactivate_api_key(${keyId})`
      return { keyId, active: false }
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
    default:
      throw new UsageError(group ? `unknown command: ${positionals.join(' ')}` : 'a command is required')
  }
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2)
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE)
    return 0
  }
  const sql = connectDatabase(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:54322/postgres', { max: 1, fetchTypes: true })
  try {
    console.log(JSON.stringify(await runAdmin(sql, argv)))
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
