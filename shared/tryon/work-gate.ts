import { TryOnFailure } from '../failure.ts'

/**
 * Caps the CPU-heavy local work (decoding, the local engine, the local bridal steps) running at once: it all shares
 * one thread, so without a cap every request in flight slows every other, and memory grows with each. Past the
 * running slots a few wait their turn; past the queue a request is refused at once with a `service_busy` failure
 * (503 with Retry-After, refunded).
 */
export interface WorkGate {
  /**
   * Runs `work` in a slot. `admitted` work belongs to a request already let in (its later steps): it waits
   * whatever the queue's length, so a request is never refused halfway through.
   */
  run<T>(work: () => Promise<T>, options?: { signal?: AbortSignal; admitted?: boolean }): Promise<T>
  readonly running: number
  readonly queued: number
}

export interface WorkGateOptions {
  /** Work running at once. */
  concurrency: number
  /** Work waiting for a slot before new requests are refused. */
  queue: number
  /** Sent as Retry-After with the refusal. */
  retryAfterSeconds: number
}

export function createWorkGate(options: WorkGateOptions): WorkGate {
  let running = 0
  const waiting: (() => void)[] = []

  const release = () => {
    const next = waiting.shift()
    if (next) next()
    else running--
  }

  const slot = (signal: AbortSignal | undefined, admitted: boolean): Promise<void> => {
    if (running < options.concurrency) {
      running++
      return Promise.resolve()
    }
    if (!admitted && waiting.length >= options.queue) {
      return Promise.reject(
        new TryOnFailure('service_busy', 'every slot for local work is taken', { retryAfterSeconds: options.retryAfterSeconds }),
      )
    }
    if (signal?.aborted) return Promise.reject(signal.reason)
    return new Promise<void>((resolve, reject) => {
      // A slot handed over by release() keeps `running` as it is: the finished work's slot becomes this one.
      const start = () => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      }
      const onAbort = () => {
        const at = waiting.indexOf(start)
        if (at >= 0) waiting.splice(at, 1)
        reject(signal?.reason)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      waiting.push(start)
    })
  }

  return {
    async run(work, runOptions = {}) {
      await slot(runOptions.signal, runOptions.admitted ?? false)
      try {
        // The work holds the thread for a long stretch: let waiting I/O (database answers of other requests) in first.
        await new Promise((resolve) => setTimeout(resolve, 0))
        return await work()
      } finally {
        release()
      }
    },
    get running() {
      return running
    },
    get queued() {
      return waiting.length
    },
  }
}
