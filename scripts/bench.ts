/**
 * `npm run bench`: the service's own cost next to a floor, in one run on one machine. Needs only the
 * Postgres at TEST_DATABASE_URL (default 127.0.0.1:5432) and Linux (memory and CPU are read from /proc);
 * makes a fresh database and drops it afterwards.
 * Its keys are at quality level off: the instant engine answers a 64×64 stand-in, which is not a try-on and fails
 * the measured checks; what a check adds is measured by scripts/bench-quality-levels.ts (docs/performance.md).
 * Each server runs in a child process (its memory is its own); autocannon in this one drives it.
 *   BENCH_SECONDS (default 10): length of each run; BENCH_CONCURRENCY (default 1,16,64);
 *   BENCH_ONLY: a comma-separated subset of the scenarios (baseline, billing, instant, instant-one-key, instant-limits, instant-memory,
 *   large, local, fashn, vertex, gemini, deno-memory);
 *   BENCH_CPU_PROF: a directory where each server writes a V8 CPU profile (node --cpu-prof);
 *   BENCH_PROVIDER_SECONDS (default 30): length of each provider row (their requests take 3 s each);
 *   BENCH_DENO_RUNS (default 1): runs of each Deno memory measurement (scripts/measure-deno-request.ts --providers).
 */
import { execFile } from 'node:child_process'
import { cpus, loadavg, totalmem } from 'node:os'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createKey, createTestDatabase } from '../tests/support/database.ts'
import { startServer } from './bench/child.ts'
import { backendCpu, backendCpuBetween, processCpuSeconds } from './bench/cpu.ts'
import { runLoad, type LoadTarget } from './bench/load.ts'
import { largeImages, localEnginePhotos, smallPhotos, type TryOnBody } from './bench/payloads.ts'
import { startLatencyFakes, type LatencyFakes, type ProviderName } from './bench/providers.ts'
import { printReport, type Measurement, type Scenario } from './bench/report.ts'
import type { ServerMode } from './bench/server.ts'

const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const levels = (process.env.BENCH_CONCURRENCY ?? '1,16,64').split(',').map(Number)
const only = process.env.BENCH_ONLY?.split(',')
const providerSeconds = Number(process.env.BENCH_PROVIDER_SECONDS ?? 30)
const providerLevels = [1, 16]

interface Plan {
  scenario: Scenario
  mode: ServerMode
  /** A try-on request body; the baseline sends a GET, the billing floor an empty POST with the key. */
  body?: TryOnBody
  /** Every connection sends the same key, so all requests queue on one account's balance row. */
  oneKey?: boolean
  /** A remote engine behind its fake: live keys, concurrency 1 and 16, and runs long enough for ten requests each. */
  provider?: ProviderName
  /** Browser keys with every abuse limit set (too high to refuse anything): each try-on takes its counters too. */
  limited?: boolean
  warmUp: { concurrency: number; seconds: number }
}

const small = smallPhotos()
const plans: Plan[] = [
  { scenario: 'baseline', mode: 'baseline', warmUp: { concurrency: 16, seconds: 2 } },
  { scenario: 'billing', mode: 'billing', warmUp: { concurrency: 16, seconds: 2 } },
  { scenario: 'instant', mode: 'instant', body: small, warmUp: { concurrency: 16, seconds: 2 } },
  { scenario: 'instant-one-key', mode: 'instant', body: small, oneKey: true, warmUp: { concurrency: 16, seconds: 1 } },
  { scenario: 'instant-limits', mode: 'instant', body: small, limited: true, warmUp: { concurrency: 16, seconds: 1 } },
  { scenario: 'instant-memory', mode: 'instant-memory', body: small, warmUp: { concurrency: 16, seconds: 1 } },
  { scenario: 'large', mode: 'instant', body: largeImages(), warmUp: { concurrency: 4, seconds: 2 } },
  { scenario: 'local', mode: 'local', body: localEnginePhotos(), warmUp: { concurrency: 1, seconds: 3 } },
  ...(['gemini', 'vertex', 'fashn'] as const).map(
    (provider): Plan => ({ scenario: provider, mode: provider, body: small, provider, warmUp: { concurrency: 2, seconds: 8 } }),
  ),
]
const selected = plans.filter((p) => !only || only.includes(p.scenario))

const startedAt = new Date()
const load = loadavg()
const db = await createTestDatabase('postgres')
const [{ version }] = await db.sql<{ version: string }[]>`select current_setting('server_version') as version`
// One test key per connection, each on its own account: separate customers, as production traffic is.
const keys: string[] = []
for (let i = 0; i < Math.max(...levels); i++)
  keys.push((await createKey(db.sql, { credits: 1_000_000_000, mode: 'test', quality: 'off' })).apiKey)
// Live keys reach the configured provider (test keys never do).
const liveKeys: string[] = []
if (selected.some((p) => p.provider)) {
  for (let i = 0; i < Math.max(...providerLevels); i++)
    liveKeys.push((await createKey(db.sql, { credits: 1_000_000_000, mode: 'live', quality: 'off' })).apiKey)
}
// The same with browser keys whose limits are all set, high enough never to refuse: every connection comes from
// 127.0.0.1, so the per-client counters are one hot row per key, as the per-key ones are.
const BENCH_ORIGIN = 'https://shop.example'
const limitedKeys: string[] = []
for (let i = 0; selected.some((p) => p.limited) && i < Math.max(...levels); i++) {
  const key = await createKey(db.sql, { credits: 1_000_000_000, mode: 'test', origins: [BENCH_ORIGIN], quality: 'off' })
  const max = 2_147_483_647
  await db.sql`select tryon.set_key_limits(${key.keyId}, ${db.sql.json({ perMinute: max, perClientPerMinute: max, dailyCredits: max, dailyRefunded: max, perClientDailyRefunded: max })})`
  limitedKeys.push(key.apiKey)
}
const base64 = await base64DecodeRate()
const fakes: LatencyFakes | undefined = selected.some((p) => p.provider) ? await startLatencyFakes(3_000) : undefined

const measurements: Measurement[] = []
for (const plan of selected) {
  const server = await startServer(
    plan.mode,
    db.url,
    plan.provider ? { BENCH_PROVIDER_ENV: JSON.stringify(fakes!.env(plan.provider)) } : {},
  )
  const pool = plan.provider ? liveKeys : plan.limited ? limitedKeys : keys
  const keyHeaders = (connection: number) => ({ 'X-API-Key': pool[plan.oneKey ? 0 : connection % pool.length] })
  const target: LoadTarget =
    plan.mode === 'baseline'
      ? { url: server.url, method: 'GET' }
      : {
          url: server.url,
          method: 'POST',
          headers: { 'Content-Type': 'application/json', ...(plan.limited && { Origin: BENCH_ORIGIN }) },
          connectionHeaders: keyHeaders,
          body: plan.body?.json ?? '{}',
        }
  await runLoad(target, plan.warmUp.concurrency, plan.warmUp.seconds, 120)
  // Seconds of server work per request, from the first level (concurrency 1 comes first).
  let secondsPerRequest = 0
  for (const concurrency of plan.provider ? providerLevels : levels) {
    // A slow request (the local engine, 20 MB bodies) is worked on in turns with the others in flight, so each
    // takes about concurrency × its own time: run long enough for every connection to finish a few, and never
    // time one out. A provider's request waits on the provider instead: a fixed run fits about ten of them.
    const runSeconds = plan.provider
      ? Math.max(seconds, providerSeconds)
      : Math.max(seconds, Math.ceil(3 * concurrency * secondsPerRequest))
    const timeoutSeconds = plan.provider ? 30 : Math.max(30, Math.ceil(6 * concurrency * secondsPerRequest))
    await server.drain(600_000)
    await server.collectGarbage()
    const idleRss = await server.rss()
    await server.resetPeakRss()
    const before = {
      counters: await server.counters(),
      cpu: await processCpuSeconds(server.pid),
      backends: await backendCpu(db.sql),
      load: process.cpuUsage(),
    }
    const result = await runLoad(target, concurrency, runSeconds, timeoutSeconds)
    await server.drain(600_000)
    const after = await server.counters()
    const serverCpu = (await processCpuSeconds(server.pid)) - before.cpu
    const databaseCpu = backendCpuBetween(before.backends, await backendCpu(db.sql))
    const loadCpu = process.cpuUsage(before.load)
    const peakRss = await server.peakRss()
    if (!secondsPerRequest) secondsPerRequest = 1 / Math.max(result.requestsPerSecond, 0.1)
    measurements.push({
      scenario: plan.scenario,
      load: result,
      idleRss,
      peakRss,
      requestsFinished: after.finished - before.counters.finished,
      queries: after.queries - before.counters.queries,
      cpuSeconds: { server: serverCpu, database: databaseCpu, loadGenerator: (loadCpu.user + loadCpu.system) / 1e6 },
    })
    process.stderr.write(`${plan.scenario} c=${concurrency}: ${result.requestsPerSecond.toFixed(0)}/s p50 ${result.p50.toFixed(2)} ms\n`)
  }
  await server.stop()
}
await fakes?.close()
const denoMemory = !only || only.includes('deno-memory') ? await denoProviderMemory() : undefined

printReport({
  machine: `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GB RAM, Node ${process.version}, PostgreSQL ${version}`,
  when: startedAt.toISOString().slice(0, 16).replace('T', ' '),
  loadAverage: load.map((v) => v.toFixed(2)).join(' '),
  seconds,
  bodies: {
    instant: small,
    large: plans.find((p) => p.scenario === 'large')!.body!,
    local: plans.find((p) => p.scenario === 'local')!.body!,
  },
  base64,
  measurements,
  providers: fakes && {
    latencyMs: fakes.latencyMs,
    pollingOvershootMs: fakes.pollingOvershootMs,
    pollingIntervalMs: fakes.pollingIntervalMs,
  },
  denoMemory,
})
await db.close()

/** scripts/measure-deno-request.ts --providers: one live request per provider on Deno with two 10 MB photos. */
async function denoProviderMemory(): Promise<string> {
  const script = fileURLToPath(new URL('./measure-deno-request.ts', import.meta.url))
  process.stderr.write('deno-memory: one live request per provider on Deno (scripts/measure-deno-request.ts --providers)…\n')
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...process.execArgv, script, '--providers', '--runs', process.env.BENCH_DENO_RUNS ?? '1'],
    {
      maxBuffer: 16 * 1024 * 1024,
    },
  )
  return stdout.trim()
}

/** scripts/bench-base64.ts's figure for standard base64 (MB of decoded image per second). */
async function base64DecodeRate(): Promise<number> {
  const script = fileURLToPath(new URL('./bench-base64.ts', import.meta.url))
  const { stdout } = await promisify(execFile)(process.execPath, [...process.execArgv, script])
  const rate = /decode standard\s+(\d+) MB\/s/.exec(stdout)?.[1]
  if (!rate) throw new Error(`unexpected output from bench-base64.ts:\n${stdout}`)
  return Number(rate)
}
