import autocannon from 'autocannon'

export interface LoadTarget {
  url: string
  method: 'GET' | 'POST'
  headers?: Record<string, string>
  /** Per-connection headers (e.g. one API key per connection, as separate customers), merged over `headers`. */
  connectionHeaders?: (connection: number) => Record<string, string>
  body?: string
}

export interface LoadResult {
  concurrency: number
  /** Wall time of the run, in seconds. */
  seconds: number
  /** 2xx responses. */
  succeeded: number
  /** Non-2xx responses, connection errors and timeouts. */
  errors: number
  /** Status code → count, for the error column's explanation. */
  statuses: Record<number, number>
  requestsPerSecond: number
  /** Latency of the 2xx responses in milliseconds, at sub-millisecond resolution. */
  p50: number
  p99: number
}

/**
 * Keeps `concurrency` connections busy for `seconds` with autocannon. Latencies come from autocannon's
 * per-response event (microsecond resolution), not its histogram, which rounds to whole milliseconds.
 */
export async function runLoad(target: LoadTarget, concurrency: number, seconds: number, timeoutSeconds = 30): Promise<LoadResult> {
  const latencies: number[] = []
  const statuses: Record<number, number> = {}
  const started = performance.now()
  let connections = 0
  const instance = autocannon({
    url: target.url,
    method: target.method,
    headers: target.headers,
    body: target.body === undefined ? undefined : Buffer.from(target.body),
    connections: concurrency,
    duration: seconds,
    timeout: timeoutSeconds,
    setupClient: target.connectionHeaders
      ? (client) => client.setHeaders({ ...target.headers, ...target.connectionHeaders!(connections++) })
      : undefined,
  })
  instance.on('response', (_client: unknown, status: number, _bytes: number, milliseconds: number) => {
    statuses[status] = (statuses[status] ?? 0) + 1
    if (status >= 200 && status < 300) latencies.push(milliseconds)
  })
  const result = await instance
  const elapsed = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  const percentile = (p: number) =>
    latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] : NaN
  const answered = Object.values(statuses).reduce((a, b) => a + b, 0)
  return {
    concurrency,
    seconds: elapsed,
    succeeded: latencies.length,
    errors: answered - latencies.length + result.errors,
    statuses,
    requestsPerSecond: latencies.length / elapsed,
    p50: percentile(50),
    p99: percentile(99),
  }
}
