// Supabase Edge Function entry: read env, build the adapters, serve. Everything else is in shared/.
import { connectDatabase } from '../../../shared/billing/store.ts'
import { readSettings } from '../../../shared/config.ts'
import { createService } from '../../../shared/service.ts'
import { resolveWithDeno } from './resolve-dns.ts'
import { createResultStore } from './store.ts'

const env = Deno.env.toObject()
// On Supabase results belong in Storage; TRYON_STORAGE=local keeps them on disk (self-hosting, tests).
// The client's address is X-Real-IP, set by the gateway in front of the function from the connection it received,
// overwriting whatever a client sent: Kong, the gateway of `supabase start` and self-hosted Supabase, routes
// /functions/v1/ to the edge runtime (supabase/cli internal/start/templates/kong.yml) and sets X-Real-IP from
// $realip_remote_addr and appends to X-Forwarded-For (Kong/kong#2202); the edge runtime's main worker hands the
// request to the function unchanged (supabase/cli internal/functions/serve/templates/main.ts, `worker.fetch(req)`).
// On the hosted platform the caller's address is in X-Real-IP too (supabase/auth-helpers#714). Supabase does not
// document which header hosted functions may trust (supabase discussion #52040 asks), so it is a setting:
// TRYON_CLIENT_ADDRESS_HEADER (README, "Abuse limits"). Never the first X-Forwarded-For entry: a client writes it.
const settings = readSettings({ TRYON_STORAGE: 'supabase', TRYON_CLIENT_ADDRESS_HEADER: 'x-real-ip', ...env })
const databaseUrl = env.DATABASE_URL ?? env.SUPABASE_DB_URL
if (!databaseUrl) throw new Error('Set DATABASE_URL (or SUPABASE_DB_URL) to reach Postgres')

// Module scope: one small pool per isolate, reused by every request it serves. Prepared statements are
// off for the transaction pooler (port 6543) or `?prepare=false`, which cannot keep them between transactions.
const sql = connectDatabase(databaseUrl)
const store = await createResultStore(settings, env)
// TRYON_CLIENT_ADDRESS_HEADER=socket (Deno serving the internet directly): Deno.serve passes the connection's info as the env.
const socketAddress = (_request: Request, info: unknown) =>
  (info as { remoteAddr?: { hostname?: string } } | undefined)?.remoteAddr?.hostname ?? null
const app = createService(settings, { sql, store, fetch, resolveHost: resolveWithDeno, socketAddress })

if (env.PORT) Deno.serve({ port: Number(env.PORT), hostname: env.HOST ?? '127.0.0.1' }, app.fetch)
else Deno.serve(app.fetch)
