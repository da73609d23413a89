import { untilAborted } from '../abort.ts'

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
  return untilAborted(work, signal, () => new DeadlineExceeded(what))
}
