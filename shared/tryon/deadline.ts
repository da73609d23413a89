/** Thrown when a step outlives its time limit. */
export class DeadlineExceeded extends Error {
  constructor(what: string) {
    super(`${what} did not finish in time`)
    this.name = 'DeadlineExceeded'
  }
}

/**
 * Settles with `work`, or rejects with DeadlineExceeded as soon as `signal` aborts, whether or not the work
 * listens to the signal: a step that hangs (an engine, a storage call) cannot hold the request past its limit.
 */
export function raceDeadline<T>(work: Promise<T>, signal: AbortSignal, what: string): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {})
    return Promise.reject(new DeadlineExceeded(what))
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new DeadlineExceeded(what))
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}
