import { serve } from '@hono/node-server'
import { mkdir } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import { join } from 'node:path'
import type { Sql } from 'postgres'
import { createApp } from '../shared/app.ts'
import { connectDatabase } from '../shared/billing/store.ts'
import { readSettings, type Env } from '../shared/config.ts'
import type { Deps } from '../shared/deps.ts'
import type { Logger } from '../shared/log.ts'
import { createDeps, localWorkGate } from '../shared/service.ts'
import type { WorkGate } from '../shared/tryon/work-gate.ts'
import { removeDeletedResults } from '../shared/storage/deletions.ts'
import { ensureClientAddressSecret, socketAddress } from './client-address.ts'
import { databasePassword, startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres.ts'
import { createGateway } from './gateway.ts'
import { createGuardedFetch } from '../adapters/guarded-fetch.ts'
import { createWorkerLocalSteps } from '../adapters/local-workers.ts'
import { createLocalStore, storageRoot } from '../adapters/local-store.ts'
import { applyMigrations, ensureSupabaseRoles, MigrationHistoryError } from './migrations.ts'

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
  /** Serves the playground at `/` with this key (`npm start`: the demo key, known once the database is up). */
  playgroundKey?: () => string | undefined
}

export interface DevStack {
  url: string
  functionUrl: string
  databaseUrl: string
  sql: Sql
  deps: Deps
  /** The slots local work runs in, shared by the local engine and bridal steps (tests hold them to fill the queue). */
  localWork: WorkGate
  stop(): Promise<void>
}

/** How often the dev stack refunds reservations abandoned for longer than the TTL (env overrides, for tests). */
const SWEEP_EVERY_MS = 60_000
const RESERVATION_TTL_SECONDS = 600

/** The Host values the pages answer to: the loopback names of the port, the address listened on, the public base URL's. */
function hostNames(host: string, port: number, publicBaseUrl: string | undefined): ReadonlySet<string> {
  const names = ['127.0.0.1', 'localhost', '[::1]']
  if (host !== '0.0.0.0' && host !== '::') names.push(host.includes(':') ? `[${host}]` : host)
  const hosts = new Set(names.flatMap((name) => (port === 80 ? [name, `${name}:80`] : [`${name}:${port}`])))
  if (publicBaseUrl) hosts.add(new URL(publicBaseUrl).host)
  return hosts
}

/** What to do with a database made by migration files this checkout does not have (those before the squash). */
function staleDatabase(error: MigrationHistoryError, options: DevStackOptions): MigrationHistoryError {
  if (options.databaseUrl) {
    const url = new URL(options.databaseUrl)
    url.password = ''
    return new MigrationHistoryError(
      error.unknown,
      `The database at ${url.href}`,
      'Drop it and create it empty, or set DATABASE_URL to another one.',
    )
  }
  return new MigrationHistoryError(
    error.unknown,
    `The database in ${options.dataDir}`,
    `That folder holds only local data (the demo key, try-ons and their images): delete it and start again.\n  rm -rf '${options.dataDir}'`,
  )
}

/** The whole service in one Node process (docs/deployment.md, "Dev stack"). */
export async function startDevStack(options: DevStackOptions): Promise<DevStack> {
  const settings = readSettings({
    ...options.env,
    TRYON_CLIENT_ADDRESS_SECRET: options.env.TRYON_CLIENT_ADDRESS_SECRET || (await ensureClientAddressSecret(options.dataDir)),
  })
  const host = options.host ?? '127.0.0.1'

  let embedded: EmbeddedPostgres | undefined
  if (!options.databaseUrl) {
    // PGlite creates its own folder but not the parents: a fresh clone has no .tryon/ yet.
    await mkdir(options.dataDir, { recursive: true })
    const password = await databasePassword(options.dataDir)
    embedded = await startEmbeddedPostgres({ dataDir: join(options.dataDir, 'pgdata'), host, port: options.dbPort ?? 54322, password })
  }
  const databaseUrl = options.databaseUrl ?? embedded!.url
  const sql = connectDatabase(databaseUrl)
  try {
    await ensureSupabaseRoles(sql)
    await applyMigrations(sql)
  } catch (error) {
    await sql.end({ timeout: 5 })
    await embedded?.stop()
    if (error instanceof MigrationHistoryError) throw staleDatabase(error, options)
    throw error
  }

  let baseUrl = settings.publicBaseUrl ?? ''
  const root = storageRoot(options.dataDir)
  // Made at start so the admin CLI can tell the dev stack's results folder from a wrong one.
  await mkdir(root, { recursive: true })
  const store = createLocalStore({ root, bucket: settings.bucket, baseUrl: () => baseUrl })
  const localSteps = createWorkerLocalSteps({ threads: settings.service.localWork.concurrency })
  const localWork = localWorkGate(settings)
  const built = createDeps(settings, {
    localWork,
    sql,
    store,
    localSteps,
    fetch: createGuardedFetch({ allowPrivateHosts: settings.allowPrivateImageHosts }),
    socketAddress,
    log: options.log,
  })
  const deps = options.override ? options.override(built) : built

  let pageHosts: ReadonlySet<string> = new Set()
  const gateway = createGateway({
    functionApp: createApp(deps),
    storageRoot: root,
    bucket: settings.bucket,
    playgroundKey: options.playgroundKey,
    pageHosts: () => pageHosts,
    log: deps.log,
  })
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: gateway.fetch, port: options.port ?? 54321, hostname: host }, () => resolve(s))
    s.once('error', reject)
  })
  // Bytes that are not HTTP (e.g. past a Content-Length that lied) get a JSON 400 too, not Node's bare one.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || error.code === 'ECONNRESET') return void socket.destroy()
    const body = JSON.stringify({ success: false, error: 'Malformed HTTP request', errorCode: 'invalid_request' })
    socket.end(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    )
  })
  const port = (server.address() as AddressInfo).port
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  baseUrl ||= url
  pageHosts = hostNames(host, port, settings.publicBaseUrl)

  const sweepEveryMs = Number(options.env.TRYON_SWEEP_INTERVAL_MS || SWEEP_EVERY_MS)
  const ttlSeconds = Number(options.env.TRYON_RESERVATION_TTL_SECONDS || RESERVATION_TTL_SECONDS)
  const { generationTimeoutMs, storeTimeoutMs, databaseTimeoutMs, settlementRetry } = deps.config
  const longestTryOnMs = generationTimeoutMs + storeTimeoutMs + databaseTimeoutMs + settlementRetry.budgetMs
  if (ttlSeconds * 1000 < longestTryOnMs) {
    // A reservation swept while its request still runs is refunded, and that request then fails.
    deps.log({
      level: 'warn',
      msg: 'the reservation TTL is shorter than a try-on may take; slow try-ons will be swept and fail',
      ttlSeconds,
      longestTryOnMs,
    })
  }
  const sweeper = setInterval(async () => {
    await deps.billing.sweep(ttlSeconds).catch((error) => deps.log({ level: 'error', msg: 'sweep failed', error: String(error) }))
    // Then what the database queued for removal: images of try-ons deleted with SQL alone (the admin CLI removes its
    // own at once), and what try-ons that ended without a delivery (the ones just swept among them) may have left.
    await removeDeletedResults(sql, deps.store).catch((error) =>
      deps.log({ level: 'error', msg: 'removing deleted results failed', error: String(error) }),
    )
  }, sweepEveryMs)
  sweeper.unref()

  return {
    url,
    functionUrl: `${url}/functions/v1/tryon-api`,
    databaseUrl,
    sql,
    deps,
    localWork,
    async stop() {
      clearInterval(sweeper)
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await localSteps.close()
      await sql.end({ timeout: 5 })
      await embedded?.stop()
    },
  }
}
