import type { Logger } from '../../log.ts'
import type { EngineOutcome, TryOnEngine } from '../types.ts'

export interface BreakerPolicy {
  /** Consecutive outages (unreachable, too slow, 429 or 5xx after the retries) that open the circuit. */
  failures: number
  /** How long an open circuit skips the provider before one request may probe it. */
  openMs: number
  /**
   * How long a provider that does not serve the configured model (a 404 NOT_FOUND, or a model past its shutdown day)
   * is skipped: it opens the circuit at once, and waiting will not bring the model back; a deploy with the setting
   * changed starts fresh isolates.
   */
  modelNotServedOpenMs: number
}

export const defaultBreaker: BreakerPolicy = { failures: 5, openMs: 30_000, modelNotServedOpenMs: 600_000 }

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
  /** Why the circuit is open: outages, or a model the provider does not serve. */
  let openFor = ''

  function record(outcome: EngineOutcome, probe: boolean): void {
    if (outcome.kind === 'failed' && outcome.modelNotServed) {
      const forMs = policy.modelNotServedOpenMs
      openUntil = options.now() + forMs
      openFor = 'because the configured model is not served'
      options.log({ level: 'error', msg: 'provider circuit open: the configured model is not served', engine: engine.name, forMs })
      return
    }
    if (outcome.kind === 'failed' && outcome.outage) {
      consecutive++
      if (probe || consecutive >= policy.failures) {
        openUntil = options.now() + policy.openMs
        openFor = `after ${consecutive} consecutive outages`
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
        return { kind: 'failed', reason: `${engine.name}: skipped, circuit open ${openFor}` }
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
