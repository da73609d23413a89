import { serve } from '@hono/node-server'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { Sql } from 'postgres'
import { createApp } from '../shared/app.ts'
import { connectDatabase } from '../shared/billing/store.ts'
import { readSettings, type Env } from '../shared/config.ts'
import type { Deps, Logger } from '../shared/deps.ts'
import { createDeps } from '../shared/service.ts'
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres.ts'
import { createGateway } from './gateway.ts'
import { createGuardedFetch } from './guarded-fetch.ts'
import { createLocalStore, storageRoot } from './local-store.ts'
import { applyMigrations } from './migrations.ts'

export interface DevStackOptions {
  env: Env
  dataDir: string
  host?: string
  /** 0 picks a free port (tests). */
  port?: number
  /** A real Postgres; without it an embedded PGlite keeps its data under dataDir. */
  databaseUrl?: string
  dbPort?: number
  log?: Logger
  /** Replace parts of the wiring (tests, benchmarks). */
  override?: (deps: Deps) => Deps
}

export interface DevStack {
  url: string
  functionUrl: string
  databaseUrl: string
  sql: Sql
  deps: Deps
  stop(): Promise<void>
}

/** How often the dev stack refunds reservations abandoned for longer than the TTL. */
const SWEEP_EVERY_MS = 60_000
const RESERVATION_TTL_SECONDS = 600

/** The whole service in one Node process (DESIGN.md §5). */
export async function startDevStack(options: DevStackOptions): Promise<DevStack> {
  const settings = readSettings(options.env)
  const host = options.host ?? '127.0.0.1'

  let embedded: EmbeddedPostgres | undefined
  if (!options.databaseUrl) {
    embedded = await startEmbeddedPostgres({ dataDir: join(options.dataDir, 'pgdata'), host, port: options.dbPort ?? 54322 })
  }
  const databaseUrl = options.databaseUrl ?? embedded!.url
  const sql = connectDatabase(databaseUrl)
  await applyMigrations(sql)

  let baseUrl = settings.publicBaseUrl ?? ''
  const root = storageRoot(options.dataDir)
  const store = createLocalStore({ root, bucket: settings.bucket, baseUrl: () => baseUrl })
  const built = createDeps(settings, {
    sql,
    store,
    fetch: createGuardedFetch({ allowPrivateHosts: settings.allowPrivateImageHosts }),
    log: options.log,
  })
  const deps = options.override ? options.override(built) : built

  const gateway = createGateway({ functionApp: createApp(deps), storageRoot: root, bucket: settings.bucket })
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: gateway.fetch, port: options.port ?? 54321, hostname: host }, () => resolve(s))
    s.once('error', reject)
  })
  const port = (server.address() as AddressInfo).port
  const url = `http://${host}:${port}`
  baseUrl ||= url

  const sweeper = setInterval(() => {
    deps.billing.sweep(RESERVATION_TTL_SECONDS).catch((error) => deps.log({ level: 'error', msg: 'sweep failed', error: String(error) }))
  }, SWEEP_EVERY_MS)
  sweeper.unref()

  return {
    url,
    functionUrl: `${url}/functions/v1/tryon-api`,
    databaseUrl,
    sql,
    deps,
    async stop() {
      clearInterval(sweeper)
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await sql.end({ timeout: 5 })
      await embedded?.stop()
    },
  }
}
