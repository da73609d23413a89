import { jsonLogger, type Logger } from '../../log.ts'
import { createImageFetcher, type GuardedImageFetcher } from '../../images/fetch.ts'
import { prepareInThread, type ImagePreparer } from './images.ts'

/**
 * What a provider adapter takes from the outside world. Tests pass an instant `sleep` and a fixed `random`
 * so retries and polling run without waiting; production uses the defaults.
 */
export interface ProviderRuntime {
  fetch: typeof fetch
  /**
   * Downloads a result a provider points to: the guarded, size-capped fetcher of image intake (public addresses only,
   * redirects re-checked), since the URL is the provider's answer, not our configuration; `open` streams it.
   */
  fetchImage: GuardedImageFetcher
  /** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>
  /** In [0, 1): the jitter of retry delays. */
  random: () => number
  /** Milliseconds since the epoch: token expiry and JWT timestamps. */
  now: () => number
  log: Logger
  /** Prepares an input image for a provider (prepareInput): in this thread unless the platform runs it elsewhere. */
  prepareImage: ImagePreparer
}

export function providerRuntime(overrides: Partial<ProviderRuntime> = {}): ProviderRuntime {
  const fetch = overrides.fetch ?? ((input, init) => globalThis.fetch(input, init))
  return {
    fetch,
    fetchImage: createImageFetcher({ fetch }),
    sleep: abortableSleep,
    random: Math.random,
    now: Date.now,
    log: jsonLogger,
    prepareImage: prepareInThread,
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
