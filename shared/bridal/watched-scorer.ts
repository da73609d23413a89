import type { ConfiguredModel } from '../engine/providers/lifecycle.ts'
import { createModelWatch } from '../engine/providers/model-watch.ts'
import type { Logger } from '../log.ts'
import type { ScoreOutcome, TrainScorer } from './ports.ts'

/** After a 404 NOT_FOUND the judge is not asked again for this long: the model will not come back by waiting. */
const NOT_SERVED_PAUSE_MS = 600_000

/**
 * A train judge whose model is watched against the lifecycle table (model-watch.ts). The rule stays the billing
 * one: a score that cannot be had is `unavailable`, and the wedding dress is delivered and charged in full. So
 * that this never happens quietly, a judge whose model is past its shutdown day is never called, one the provider
 * answered 404 NOT_FOUND for is left alone for ten minutes, and every try-on billed without its judge because of
 * that logs an error naming the setting and what to set instead (`npm run admin -- engines check` shows it too).
 */
export function watchedScorer(scorer: TrainScorer, configured: ConfiguredModel, options: { now: () => number; log: Logger }): TrainScorer {
  const watch = createModelWatch(configured, options)
  let pausedUntil: number | undefined
  let lastNotice = ''

  const unserved = (notice: string): ScoreOutcome => {
    options.log({
      level: 'error',
      msg: 'train judge not called: its model is not served; this wedding dress is billed without a train score',
      setting: configured.setting,
      model: configured.model,
      notice,
    })
    return { kind: 'unavailable', reason: `${scorer.name} judge: ${notice}`, modelNotServed: true }
  }

  return {
    name: scorer.name,
    async score(request) {
      const refusal = watch.refusal()
      if (refusal) return unserved(refusal)
      if (pausedUntil !== undefined && options.now() < pausedUntil) return unserved(lastNotice)
      const outcome = await scorer.score(request)
      if (outcome.kind === 'unavailable' && outcome.modelNotServed) {
        lastNotice = watch.notServed()
        pausedUntil = options.now() + NOT_SERVED_PAUSE_MS
        return unserved(lastNotice)
      }
      pausedUntil = undefined
      return outcome
    },
  }
}
