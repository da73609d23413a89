// Supabase Edge Function entry: read env, build the adapters, serve. Everything else is in shared/.
import { createApp } from '../../../shared/app.ts'
import { connectDatabase } from '../../../shared/billing/store.ts'
import { readSettings } from '../../../shared/config.ts'
import { createDeps } from '../../../shared/service.ts'
import { resolveWithDeno } from '../../../shared/images/resolve-deno.ts'
import { createResultStore } from './store.ts'

const env = Deno.env.toObject()
// On Supabase results belong in Storage; TRYON_STORAGE=local keeps them on disk (self-hosting, tests).
const settings = readSettings({ TRYON_STORAGE: 'supabase', ...env })
const databaseUrl = env.DATABASE_URL ?? env.SUPABASE_DB_URL
if (!databaseUrl) throw new Error('Set DATABASE_URL (or SUPABASE_DB_URL) to reach Postgres')

// Module scope: one small pool per isolate, reused by every request it serves. Prepared statements are
// off for the transaction pooler (port 6543) or `?prepare=false`, which cannot keep them between transactions.
const sql = connectDatabase(databaseUrl)
const store = await createResultStore(settings, env)
const app = createApp(createDeps(settings, { sql, store, fetch, resolveHost: resolveWithDeno }))

if (env.PORT) Deno.serve({ port: Number(env.PORT), hostname: env.HOST ?? '127.0.0.1' }, app.fetch)
else Deno.serve(app.fetch)
