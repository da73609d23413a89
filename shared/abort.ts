/**
 * Settles with `work`, or rejects as soon as `signal` aborts, even if `work` never settles (a hung read, an
 * engine that ignores the signal). The rejection is the signal's reason unless `reason` says otherwise.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal, reason: () => unknown = () => signal.reason): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {})
    return Promise.reject(reason())
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(reason())
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}
