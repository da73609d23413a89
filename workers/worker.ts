// Cloudflare Workers entry (workerd): the same Hono app as the Supabase function, with its adapters.
import { connectDatabase } from '../shared/billing/store.ts'
import { readSettings, type Settings } from '../shared/config.ts'
import { createService } from '../shared/service.ts'
import type { ResultStore } from '../shared/storage/result-store.ts'
import { resultStoreFrom } from '../shared/storage/from-settings.ts'

/** Worker vars and secrets (wrangler.toml [vars] / `wrangler secret put`), and an optional Hyperdrive binding. */
export interface WorkerEnv {
  /** Cloudflare's Postgres pooler in front of the database; preferred over DATABASE_URL when bound. */
  HYPERDRIVE?: { connectionString: string }
  [name: string]: string | undefined | { connectionString: string }
}

/** The plain-string vars, which is what readSettings and the store read. */
function varsOf(env: WorkerEnv): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => typeof entry[1] === 'string'))
}

interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void
}

let configured: { settings: Settings; store: ResultStore } | undefined

/** Settings and the store are plain data and fetch calls: built once per isolate, on its first request. */
function configure(env: Record<string, string | undefined>): { settings: Settings; store: ResultStore } {
  if (configured) return configured
  // Cloudflare sets CF-Connecting-IP to the address that connected to it, overwriting any a client sent
  // (developers.cloudflare.com/fundamentals/reference/http-headers, "CF-Connecting-IP").
  const settings = readSettings({ TRYON_STORAGE: 'supabase', TRYON_CLIENT_ADDRESS_HEADER: 'cf-connecting-ip', ...env })
  // No local store: a Worker has no disk, so TRYON_STORAGE=local stops here with resultStoreFrom's message.
  const store = resultStoreFrom(settings, env)
  configured = { settings, store }
  return configured
}

export default {
  async fetch(request: Request, env: WorkerEnv, ctx: ExecutionContext): Promise<Response> {
    const vars = varsOf(env)
    const { settings, store } = configure(vars)
    const databaseUrl = env.HYPERDRIVE?.connectionString ?? vars.DATABASE_URL
    if (!databaseUrl) throw new Error('Bind HYPERDRIVE or set DATABASE_URL (the transaction pooler, port 6543)')
    // workerd ties a socket to the request that opened it, so the database connection is per request
    // (one at most: a request makes two sequential calls) and is closed once the response is out.
    const sql = connectDatabase(databaseUrl, { max: 1 })
    try {
      // No resolveHost: workerd has no DNS API, so image hosts are checked by name and literal address only.
      return await createService(settings, { sql, store, fetch: (input, init) => fetch(input, init) }).fetch(request)
    } finally {
      ctx.waitUntil(sql.end({ timeout: 5 }))
    }
  },
}
