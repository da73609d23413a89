import type { Logger } from '../../log.ts'
import type { TryOnEngine } from '../types.ts'
import { lifecycleNotice, lifecycleVerdict, notServedNotice, type ConfiguredModel } from './lifecycle.ts'

const DAY_MS = 86_400_000

export interface ModelWatch {
  /** The notice when the model must not be called (past its shutdown day), logged; undefined when it may be. */
  refusal(): string | undefined
  /** The provider answered 404 NOT_FOUND for the model: logs the operator's notice, which names what to set. */
  notServed(): string
}

/**
 * Watches one configured model against the lifecycle table (lifecycle.ts). Built at start-up, it says there what
 * needs the operator: a model past its shutdown day (error: it will not be called), or one within 30 days of a date
 * (warning), and repeats the warning at most once a day, as calls come. Every line names the setting, the model, the
 * day and what to set instead.
 */
export function createModelWatch(configured: ConfiguredModel, options: { now: () => number; log: Logger }): ModelWatch {
  const fields = { setting: configured.setting, model: configured.model, platform: configured.platform }
  let warnedAt: number | undefined

  function review(now: number): string | undefined {
    const verdict = lifecycleVerdict(configured.platform, configured.model, now)
    const notice = lifecycleNotice(configured, verdict)
    if (verdict.state === 'retired') {
      options.log({
        level: 'error',
        msg: 'configured model is not served',
        ...fields,
        since: verdict.since,
        successor: verdict.entry.successor,
        notice,
      })
      return notice
    }
    if (verdict.state === 'retiring' && (warnedAt === undefined || now - warnedAt >= DAY_MS)) {
      warnedAt = now
      options.log({
        level: 'warn',
        msg: 'configured model retires soon',
        ...fields,
        on: verdict.on,
        daysLeft: verdict.daysLeft,
        successor: verdict.entry.successor,
        notice,
      })
    }
    return undefined
  }

  const atStart = options.now()
  review(atStart)
  if (lifecycleVerdict(configured.platform, configured.model, atStart).state === 'unknown') {
    options.log({ level: 'info', msg: 'configured model is not in the lifecycle table: no shutdown date is watched', ...fields })
  }

  return {
    refusal: () => review(options.now()),
    notServed() {
      const notice = notServedNotice(configured, options.now())
      options.log({ level: 'error', msg: 'configured model is not served', ...fields, answered: '404 NOT_FOUND', notice })
      return notice
    },
  }
}

/**
 * An engine whose model is watched: past its shutdown day it is never called and answers `failed` at once (a chain
 * moves on, a single engine answers 500, refunded); a 404 NOT_FOUND for the model logs the same notice. Both carry
 * `modelNotServed`, which opens the breaker around it at once.
 */
export function watchedEngine(engine: TryOnEngine, configured: ConfiguredModel, options: { now: () => number; log: Logger }): TryOnEngine {
  const watch = createModelWatch(configured, options)
  return {
    name: engine.name,
    async generate(request) {
      const refusal = watch.refusal()
      if (refusal) return { kind: 'failed', reason: `${engine.name}: ${refusal}`, modelNotServed: true }
      const outcome = await engine.generate(request)
      if (outcome.kind === 'failed' && outcome.modelNotServed) watch.notServed()
      return outcome
    },
  }
}
