import { jsonLogger, type Logger } from '../../deps.ts'

/**
 * What a provider adapter takes from the outside world. Tests pass an instant `sleep` and a fixed `random`
 * so retries and polling run without waiting; production uses the defaults.
 */
export interface ProviderRuntime {
  fetch: typeof fetch
  /** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>
  /** In [0, 1): the jitter of retry delays. */
  random: () => number
  /** Milliseconds since the epoch: token expiry and JWT timestamps. */
  now: () => number
  log: Logger
}

export function providerRuntime(overrides: Partial<ProviderRuntime> = {}): ProviderRuntime {
  return {
    fetch: (input, init) => globalThis.fetch(input, init),
    sleep: abortableSleep,
    random: Math.random,
    now: Date.now,
    log: jsonLogger,
    ...overrides,
  }
}

export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason)
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
