/**
 * One server under test, in a child process of `npm run bench` so its memory is its own:
 *   baseline  a bare Hono handler on @hono/node-server doing one `select 1` through the service's pool settings;
 *   billing   the same bare handler making the endpoint's two database calls (begin_tryon, settle_tryon) and
 *             nothing else: the floor that durable credit accounting sets under the endpoint;
 *   instant   the dev stack with an engine that answers a fixed small JPEG at once (only our own work is left);
 *   instant-memory  the same with results kept in memory instead of the dev stack's disk store;
 *   local     the dev stack as `npm start` runs it, test keys on the real local engine;
 *   fashn, vertex, gemini  the dev stack with TRYON_ENGINE set to that provider, live keys, its fake's URL
 *             (BENCH_PROVIDER_ENV, from the parent, which runs the fakes with a fixed latency).
 * Every query the pool sends is counted through postgres.js's debug hook; the parent asks for the counts over IPC.
 */
import { serve } from '@hono/node-server'
import { Hono, type Context } from 'hono'
import { mkdtemp, rm } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Sql } from 'postgres'
import { startDevStack } from '../../devstack/stack.ts'
import { hashApiKey } from '../../shared/auth/api-key.ts'
import { connectDatabase, createPostgresBilling } from '../../shared/billing/store.ts'
import type { Deps } from '../../shared/deps.ts'
import { encodeJpeg } from '../../shared/images/codecs/index.ts'
import type { TryOnEngine } from '../../shared/engine/types.ts'
import type { ResultStore } from '../../shared/storage/result-store.ts'
import type { ProviderName } from './providers.ts'

export type ServerMode = 'baseline' | 'billing' | 'instant' | 'instant-memory' | 'local' | ProviderName
const modes: ServerMode[] = ['baseline', 'billing', 'instant', 'instant-memory', 'local', 'fashn', 'vertex', 'gemini']

/** What the parent reads before and after each run. */
export interface ServerCounters {
  /** Queries the server's pool sent to Postgres, one round trip each. */
  queries: number
  /** Baseline requests that reached the handler, or try-ons that reserved credits (billing.begin). */
  started: number
  /** Baseline requests answered, or try-ons settled (charged or refunded): started − finished are in flight. */
  finished: number
}

export type ParentMessage = { type: 'counters' } | { type: 'gc' } | { type: 'stop' }
export type ChildMessage = { type: 'ready'; url: string } | { type: 'counters'; counters: ServerCounters } | { type: 'gc' }

const counters: ServerCounters = { queries: 0, started: 0, finished: 0 }

function countQueries(sql: Sql): void {
  // postgres.js calls options.debug for every query it sends, read at query time.
  ;(sql.options as { debug?: unknown }).debug = () => {
    counters.queries++
  }
}

/** A 64×64 JPEG made once: the instant engine's answer to every request. */
function instantEngine(): TryOnEngine {
  const data = new Uint8Array(64 * 64 * 4)
  for (let i = 0; i < data.length; i += 4) data.set([200, 120 + ((i >> 8) & 63), 80, 255], i)
  const bytes = encodeJpeg({ width: 64, height: 64, data }, 85)
  return { name: 'instant', generate: async () => ({ kind: 'generated', image: { bytes, contentType: 'image/jpeg' } }) }
}

function countingBilling(deps: Deps): Deps['billing'] {
  const billing = deps.billing
  return {
    ...billing,
    async begin(request) {
      const result = await billing.begin(request)
      if (result.verdict === 'ok') counters.started++
      return result
    },
    async settle(request) {
      try {
        return await billing.settle(request)
      } finally {
        counters.finished++
      }
    },
  }
}

async function startBare(databaseUrl: string, mode: 'baseline' | 'billing'): Promise<{ url: string; stop(): Promise<void> }> {
  const sql = connectDatabase(databaseUrl)
  countQueries(sql)
  const billing = createPostgresBilling(sql)
  const keyHashes = new Map<string, Uint8Array>()
  const app = new Hono()
  const selectOne = async (c: Context) => {
    counters.started++
    const [row] = await sql<{ one: number }[]>`select 1 as one`
    counters.finished++
    return c.json({ ok: row.one === 1 })
  }
  const beginAndSettle = async (c: Context) => {
    const key = c.req.header('x-api-key') ?? ''
    let keyHash = keyHashes.get(key)
    if (!keyHash) {
      keyHash = await hashApiKey(key)
      keyHashes.set(key, keyHash)
    }
    const tryOnId = crypto.randomUUID()
    const begun = await billing.begin({ keyHash, origin: null, tryOnId, productKind: 'standard' })
    if (begun.verdict !== 'ok') return c.json({ success: false, verdict: begun.verdict }, 402)
    counters.started++
    const resultPath = `bench/${tryOnId}.jpg`
    const settled = await billing.settle({
      tryOnId,
      outcome: 'generated',
      shortId: tryOnId.slice(0, 10),
      resultPath,
      engine: 'none',
      response: { success: true },
    })
    counters.finished++
    return c.json({ success: true, tryOnId, creditsRemaining: settled.balance, creditsCharged: settled.creditsCharged })
  }
  if (mode === 'baseline') app.get('/', selectOne)
  else app.post('/', beginAndSettle)
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s))
  })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await sql.end({ timeout: 5 })
    },
  }
}

/** A result store that keeps nothing: the production store is a network upload, the dev stack's a file write. */
const memoryUrl = (path: string) => `http://127.0.0.1/storage/v1/object/public/tryon-results/${path}`
const memoryStore: ResultStore = { put: async (path) => memoryUrl(path), urlOf: memoryUrl, remove: async () => false }

async function startService(
  databaseUrl: string,
  mode: Exclude<ServerMode, 'baseline' | 'billing'>,
): Promise<{ url: string; stop(): Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tryon-bench-'))
  const instant = mode === 'instant' || mode === 'instant-memory' ? instantEngine() : null
  const providerEnv: Record<string, string> =
    mode === 'fashn' || mode === 'vertex' || mode === 'gemini' ? JSON.parse(process.env.BENCH_PROVIDER_ENV ?? '{}') : {}
  const stack = await startDevStack({
    // The sweeper stays out of the measurement: nothing is abandoned during a run.
    // The local engine's queue holds every connection of the largest run: the bench measures work, not refusals.
    env: { TRYON_SWEEP_INTERVAL_MS: String(3_600_000), TRYON_LOCAL_QUEUE: '1000', ...providerEnv },
    dataDir,
    port: 0,
    databaseUrl,
    override: (deps) => ({
      ...deps,
      store: mode === 'instant-memory' ? memoryStore : deps.store,
      billing: countingBilling(deps),
      engines: instant ? { live: instant, test: instant } : deps.engines,
    }),
  })
  countQueries(stack.sql)
  return {
    url: stack.functionUrl,
    async stop() {
      await stack.stop()
      await rm(dataDir, { recursive: true, force: true })
    },
  }
}

const mode = process.argv[2] as ServerMode
const databaseUrl = process.env.BENCH_DATABASE_URL
if (!databaseUrl || !modes.includes(mode)) {
  throw new Error(`usage: BENCH_DATABASE_URL=… server.ts ${modes.join('|')} (started by scripts/bench.ts)`)
}
const server = mode === 'baseline' || mode === 'billing' ? await startBare(databaseUrl, mode) : await startService(databaseUrl, mode)
const send = (message: ChildMessage) => process.send!(message)
process.on('message', async (message: ParentMessage) => {
  if (message.type === 'counters') send({ type: 'counters', counters: { ...counters } })
  else if (message.type === 'gc') {
    globalThis.gc?.()
    send({ type: 'gc' })
  } else if (message.type === 'stop') {
    await server.stop()
    process.exit(0)
  }
})
send({ type: 'ready', url: server.url })
