import type { LoadResult } from './load.ts'
import type { TryOnBody } from './payloads.ts'

export type Scenario =
  | 'baseline'
  | 'billing'
  | 'instant'
  | 'instant-one-key'
  | 'instant-limits'
  | 'instant-memory'
  | 'large'
  | 'local'
  | 'fashn'
  | 'vertex'
  | 'gemini'

export interface Measurement {
  scenario: Scenario
  load: LoadResult
  /** RSS of the server before the run, after a full collection. */
  idleRss: number
  peakRss: number
  /** Requests the server finished during the run, those cut off by its end included. */
  requestsFinished: number
  /** Queries the server's pool sent during the run. */
  queries: number
  /** CPU used during the run by the server process, the Postgres backends serving it, and autocannon. */
  cpuSeconds: { server: number; database: number; loadGenerator: number }
}

export interface Report {
  machine: string
  when: string
  loadAverage: string
  seconds: number
  bodies: Record<'instant' | 'large' | 'local', TryOnBody>
  base64: number
  measurements: Measurement[]
  /** The provider fakes' fixed latency, and FASHN's polling schedule around it. */
  providers?: { latencyMs: number; pollingOvershootMs: number; pollingIntervalMs: number }
  /** scripts/measure-deno-request.ts --providers, as it printed it. */
  denoMemory?: string
}

const titles: Record<Scenario, string> = {
  baseline: 'baseline: Hono + `select 1`',
  billing: 'Hono + begin_tryon + settle_tryon',
  instant: 'try-on, instant engine',
  'instant-one-key': 'same, one key for all connections',
  'instant-limits': 'same, browser keys with every abuse limit set',
  'instant-memory': 'same, results kept in memory (no disk store)',
  large: 'try-on, 2 × 8 MB inputs',
  local: 'try-on, local engine 1024×1536',
  gemini: 'live key, Gemini (fake, 3 s)',
  vertex: 'live key, Vertex (fake, 3 s)',
  fashn: 'live key, FASHN (fake, 3 s processing, polled)',
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`
const ms = (value: number) =>
  Number.isNaN(value) ? '–' : value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0)
const cpuPerRequest = ({ cpuSeconds, requestsFinished }: Measurement) =>
  [cpuSeconds.server, cpuSeconds.database, cpuSeconds.loadGenerator].map((s) => ms((1000 * s) / Math.max(1, requestsFinished))).join(', ')
const pass = (ok: boolean) => (ok ? 'met' : '**missed**')

export function printReport(report: Report): void {
  const { measurements } = report
  const find = (scenario: Scenario, concurrency: number) =>
    measurements.find((m) => m.scenario === scenario && m.load.concurrency === concurrency)
  const lines: string[] = []
  lines.push(
    `Machine: ${report.machine}. Load average when the run started: ${report.loadAverage}. Run ${report.when} UTC, ${report.seconds} s per row, longer where requests are slow (each connection finishes about three).`,
    '',
  )
  lines.push(
    '| scenario | conc. | req/s | p50 ms | p99 ms | errors | peak RSS | DB round trips/req | CPU ms/req: server, Postgres, autocannon |',
  )
  lines.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|')
  for (const m of measurements) {
    const { load } = m
    const errors =
      load.errors === 0
        ? '0'
        : `${load.errors} (${
            Object.entries(load.statuses)
              .filter(([s]) => !s.startsWith('2'))
              .map(([s, n]) => `${n}×${s}`)
              .join(', ') || 'connection'
          })`
    lines.push(
      `| ${titles[m.scenario]} | ${load.concurrency} | ${load.requestsPerSecond.toFixed(load.requestsPerSecond < 100 ? 1 : 0)} | ${ms(load.p50)} | ${ms(load.p99)} | ${errors} | ${mib(m.peakRss)} | ${(m.queries / Math.max(1, m.requestsFinished)).toFixed(3)} | ${cpuPerRequest(m)} |`,
    )
  }

  lines.push('', '| ÷ baseline | conc. | p50 | p99 | throughput |', '|---|--:|--:|--:|--:|')
  for (const scenario of ['instant', 'billing'] as const) {
    for (const base of measurements.filter((m) => m.scenario === 'baseline')) {
      const other = find(scenario, base.load.concurrency)
      if (!other) continue
      lines.push(
        `| ${titles[scenario]} | ${base.load.concurrency} | ${(other.load.p50 / base.load.p50).toFixed(2)}× | ${(other.load.p99 / base.load.p99).toFixed(2)}× | ${((100 * other.load.requestsPerSecond) / base.load.requestsPerSecond).toFixed(0)}% |`,
      )
    }
  }

  const largeBody = report.bodies.large.json.length
  const large = measurements.filter((m) => m.scenario === 'large').sort((a, b) => a.load.concurrency - b.load.concurrency)
  lines.push('', `Memory per in-flight 2 × 8 MB request (the body is ${mib(largeBody)}):`, '')
  const perRequest = large.map((m) => ({ concurrency: m.load.concurrency, bytes: (m.peakRss - m.idleRss) / m.load.concurrency }))
  for (const { concurrency, bytes } of perRequest) {
    lines.push(
      `- (peak RSS − RSS before the run) ÷ concurrency, at ${concurrency}: ${mib(bytes)} = ${(bytes / largeBody).toFixed(2)}× the body`,
    )
  }
  // What one more request in flight costs, free of the garbage a collector leaves for later at any concurrency.
  const marginal = large.slice(1).map((m, i) => ({
    from: large[i].load.concurrency,
    to: m.load.concurrency,
    bytes: (m.peakRss - large[i].peakRss) / (m.load.concurrency - large[i].load.concurrency),
  }))
  for (const { from, to, bytes } of marginal)
    lines.push(
      `- marginal, peak RSS from concurrency ${from} to ${to}: ${mib(bytes)} = ${(bytes / largeBody).toFixed(2)}× the body per request`,
    )

  const base16 = find('baseline', 16)
  const instant16 = find('instant', 16)
  const local1 = find('local', 1)
  const tryOns = measurements.filter((m) => !['baseline', 'billing'].includes(m.scenario))
  const trips = tryOns.map((m) => m.queries / Math.max(1, m.requestsFinished))
  const worstMarginal = Math.max(...marginal.map((p) => p.bytes / largeBody))
  lines.push('', '| target | result | |', '|---|---|---|')
  if (base16 && instant16) {
    const p50Ratio = instant16.load.p50 / base16.load.p50
    const throughput = instant16.load.requestsPerSecond / base16.load.requestsPerSecond
    lines.push(`| try-on p50 ≤ 2.5 × baseline p50 at concurrency 16 | ${p50Ratio.toFixed(2)}× | ${pass(p50Ratio <= 2.5)} |`)
    lines.push(`| try-on throughput ≥ 40% of baseline at concurrency 16 | ${(100 * throughput).toFixed(0)}% | ${pass(throughput >= 0.4)} |`)
  }
  lines.push(
    `| exactly 2 database round trips per successful try-on | ${[...new Set(trips.map((t) => t.toFixed(3)))].join(', ')} | ${pass(trips.every((t) => t === 2) && tryOns.every((m) => m.load.errors === 0))} |`,
  )
  lines.push(`| base64 decoding of an 8 MB image ≥ 500 MB/s | ${report.base64} MB/s | ${pass(report.base64 >= 500)} |`)
  if (marginal.length) {
    lines.push(
      `| memory per in-flight 2 × 8 MB request ≤ 4 × its body (marginal) | ${worstMarginal.toFixed(2)}× at worst | ${pass(worstMarginal <= 4)} |`,
    )
  }
  if (local1)
    lines.push(`| local engine p50 ≤ 300 ms for 1024×1536 (concurrency 1) | ${ms(local1.load.p50)} ms | ${pass(local1.load.p50 <= 300)} |`)

  const providerRows = measurements.filter((m) => m.scenario === 'gemini' || m.scenario === 'vertex' || m.scenario === 'fashn')
  if (report.providers && providerRows.length) {
    const { latencyMs, pollingOvershootMs, pollingIntervalMs } = report.providers
    lines.push(
      '',
      `Time we add to a provider's answer: end-to-end latency minus the fake's own ${latencyMs} ms (Gemini and Vertex answer after it; FASHN reports \`processing\` until it has passed, and our polling then finds \`completed\` ${Math.round(pollingOvershootMs)} ms later by its schedule, in a ${Math.round(pollingIntervalMs)} ms polling interval).`,
      '',
    )
    lines.push(
      '| provider | conc. | req/s | p50 end-to-end | p50 added | p99 added | errors | peak RSS |',
      '|---|--:|--:|--:|--:|--:|--:|--:|',
    )
    for (const m of providerRows) {
      const { load } = m
      lines.push(
        `| ${titles[m.scenario]} | ${load.concurrency} | ${load.requestsPerSecond.toFixed(1)} | ${ms(load.p50)} | ${ms(load.p50 - latencyMs)} | ${ms(load.p99 - latencyMs)} | ${load.errors} | ${mib(m.peakRss)} |`,
      )
    }
    lines.push('', '| target | result | |', '|---|---|---|')
    for (const m of providerRows) {
      const added = m.load.p50 - latencyMs
      if (m.scenario === 'fashn') {
        const limit = pollingIntervalMs + 150
        lines.push(
          `| FASHN p50 added ≤ one polling interval + 150 ms (${Math.round(limit)} ms), concurrency ${m.load.concurrency} | ${ms(added)} ms: the schedule's ${Math.round(pollingOvershootMs)} ms wait + ${ms(added - pollingOvershootMs)} ms of ours | ${pass(added <= limit && m.load.errors === 0)} |`,
        )
      } else {
        lines.push(
          `| ${m.scenario === 'gemini' ? 'Gemini' : 'Vertex'} p50 added ≤ 150 ms, concurrency ${m.load.concurrency} | ${ms(added)} ms | ${pass(added <= 150 && m.load.errors === 0)} |`,
        )
      }
    }
  }
  if (report.denoMemory)
    lines.push(
      '',
      'Memory on the edge: one live request per provider on Deno, two 10 MB photos (scripts/measure-deno-request.ts --providers; target: peak RSS ≤ 200 MB).',
      '',
      report.denoMemory,
    )

  lines.push('', 'Request bodies (as data URIs):')
  for (const scenario of ['instant', 'large', 'local'] as const)
    lines.push(
      `- ${titles[scenario]}: ${report.bodies[scenario].description}, body ${(report.bodies[scenario].json.length / 1024).toFixed(0)} KB`,
    )
  console.log(lines.join('\n'))
}
