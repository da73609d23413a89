import type { Logger } from '../../log.ts'
import type { EngineOutcome, TryOnEngine } from '../types.ts'

export interface BreakerPolicy {
  /** Consecutive outages (unreachable, too slow, 429 or 5xx after the retries) that open the circuit. */
  failures: number
  /** How long an open circuit skips the provider before one request may probe it. */
  openMs: number
}

export const defaultBreaker: BreakerPolicy = { failures: 5, openMs: 30_000 }

/**
 * A circuit breaker around one provider. After `failures` consecutive outages the provider is skipped for
 * `openMs`: the request gets a `failed` outcome at once, so a chain falls back without waiting out the dead
 * provider's deadline (and a single engine answers 500 at once instead of after its deadline). Then one
 * request probes it while the others are still skipped; its outcome closes or re-opens the circuit. Any answer
 * that shows the provider is up (an image, a rejection, a refused input, an ordinary error) closes it.
 *
 * The state is in memory: one per engine built, so one per isolate in production. Isolates do not share it;
 * each learns of an outage from its own requests.
 */
export function withCircuitBreaker(engine: TryOnEngine, options: { policy?: BreakerPolicy; now: () => number; log: Logger }): TryOnEngine {
  const policy = options.policy ?? defaultBreaker
  let consecutive = 0
  /** When the open circuit lets a probe through; undefined while closed. */
  let openUntil: number | undefined
  let probing = false

  function record(outcome: EngineOutcome, probe: boolean): void {
    if (outcome.kind === 'failed' && outcome.outage) {
      consecutive++
      if (probe || consecutive >= policy.failures) {
        openUntil = options.now() + policy.openMs
        options.log({
          level: 'warn',
          msg: 'provider circuit open: skipping it',
          engine: engine.name,
          consecutiveOutages: consecutive,
          forMs: policy.openMs,
        })
      }
      return
    }
    if (openUntil !== undefined)
      options.log({ level: 'info', msg: 'provider circuit closed: the probe got an answer', engine: engine.name })
    consecutive = 0
    openUntil = undefined
  }

  return {
    name: engine.name,
    async generate(request) {
      const probe = openUntil !== undefined
      if (probe && (options.now() < openUntil! || probing)) {
        return { kind: 'failed', reason: `${engine.name}: skipped, circuit open after ${consecutive} consecutive outages` }
      }
      if (probe) probing = true
      try {
        const outcome = await engine.generate(request)
        record(outcome, probe)
        return outcome
      } finally {
        if (probe) probing = false
      }
    },
  }
}
