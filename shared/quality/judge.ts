import type { ScoreOutcome, TrainScorer } from '../bridal/ports.ts'
import type { GeneratedImage, InputImage } from '../engine/types.ts'
import type { DecodeBudget } from '../images/codecs/index.ts'
import { defaultBreaker, type BreakerPolicy } from '../engine/providers/breaker.ts'
import type { ConfiguredModel } from '../engine/providers/lifecycle.ts'
import { createModelWatch } from '../engine/providers/model-watch.ts'
import type { Logger } from '../log.ts'

/**
 * What a seeing judge can find wrong with a try-on result, each from its answers (never a label it made up):
 * the garment not worn; the person, pose or background changed; the garment's colour changed; its print, pattern,
 * logo or text lost; gross artifacts (extra or missing limbs or fingers, melted hands, a distorted face).
 */
export const JUDGE_ISSUES = ['garment_not_applied', 'person_changed', 'colour_changed', 'details_lost', 'artifacts'] as const
export type JudgeIssue = (typeof JUDGE_ISSUES)[number]

export interface JudgeRequest {
  /** The shopper photo the result was generated from (after intake; padded with floor room when the engine got it so). */
  shopper: InputImage
  /** The product photo. */
  product: InputImage
  /** The engine's result, whole (a download under way is read first: shared/engine/outcome.ts wholeImage). */
  result: GeneratedImage
  /** A wedding dress: the train questions are asked in the same call, and the verdict carries the train score. */
  weddingDress: boolean
  signal?: AbortSignal
  /** The request's budget: the images' re-encodes are charged to it and start from its decoded copies (prepareInput). */
  decodeBudget?: DecodeBudget
}

export type JudgeVerdict =
  | {
      checked: true
      /** No issue found. */
      passed: boolean
      /** In [0, 1], computed from the answers: 1 when nothing is wrong, capped by the worst issue found. */
      score: number
      issues: JudgeIssue[]
      /** For a wedding dress: the train scorer's outcome from the same answers (the bridal pipeline's ScoreOutcome). */
      train?: ScoreOutcome
    }
  | {
      checked: false
      /** Why it could not judge, for logs (never shown to the caller). */
      reason: string
      /** The judge's model is retired or its provider answered 404 NOT_FOUND for it: a configuration error. */
      modelNotServed?: boolean
      /** The provider could not be reached, timed out, or answered 429/5xx: what the judge's breaker counts. */
      outage?: boolean
      /** For a wedding dress: unavailable too (trainScore null), for the same reason. */
      train?: ScoreOutcome
    }

/**
 * The seeing judge: one call per result answers questions about the shopper photo, the product and the result, and
 * the verdict is computed from the answers. It never throws for a judge that cannot judge: that is `checked: false`,
 * and the try-on is billed as usual (docs/engines.md "Quality check: the judge").
 */
export interface QualityJudge {
  readonly name: string
  judge(request: JudgeRequest): Promise<JudgeVerdict>
}

/** How low each issue holds the score; the verdict fails on any issue. */
const ISSUE_CEILING: Record<JudgeIssue, number> = {
  garment_not_applied: 0,
  person_changed: 0.2,
  artifacts: 0.3,
  colour_changed: 0.4,
  details_lost: 0.5,
}

/** The verdict of a judge that answered: the issues in JUDGE_ISSUES order, the score the lowest ceiling among them. */
export function verdictOf(issues: Iterable<JudgeIssue>, train?: ScoreOutcome): Extract<JudgeVerdict, { checked: true }> {
  const found = new Set(issues)
  const ordered = JUDGE_ISSUES.filter((issue) => found.has(issue))
  const score = Math.min(1, ...ordered.map((issue) => ISSUE_CEILING[issue]))
  return { checked: true, passed: ordered.length === 0, score, issues: ordered, ...(train && { train }) }
}

/** The verdict of a judge that could not judge; a wedding dress's train score is unavailable with it. */
export function unchecked(
  reason: string,
  options: { weddingDress: boolean; modelNotServed?: boolean; outage?: boolean },
): Extract<JudgeVerdict, { checked: false }> {
  const flags = { ...(options.modelNotServed && { modelNotServed: true }), ...(options.outage && { outage: true }) }
  return {
    checked: false,
    reason,
    ...flags,
    ...(options.weddingDress && {
      train: { kind: 'unavailable' as const, reason, ...(options.modelNotServed && { modelNotServed: true }) },
    }),
  }
}

/**
 * One judgement per result: a wedding dress's train is scored inside the bridal pipeline, and the quality check that
 * follows asks for the same result. Both get the verdict of one call when they go through this judge: the promise
 * is kept per result (its bytes, by identity, held weakly: it goes when the result does). Build it once per isolate,
 * beside the judge.
 */
export function oneJudgementPerResult(judge: QualityJudge): QualityJudge {
  const verdicts = new WeakMap<Uint8Array, { weddingDress: boolean; verdict: Promise<JudgeVerdict> }>()
  return {
    name: judge.name,
    judge(request) {
      const kept = verdicts.get(request.result.bytes)
      // A wedding-dress judgement answers a standard question too; a standard one has no train answers.
      if (kept && (kept.weddingDress || !request.weddingDress)) return kept.verdict
      const verdict = judge.judge(request)
      verdicts.set(request.result.bytes, { weddingDress: request.weddingDress, verdict })
      return verdict
    },
  }
}

/**
 * The bridal pipeline's train scorer, served from the quality judge's answers: pass it `oneJudgementPerResult(judge)`
 * and the train score and the quality verdict come from one call. A verdict without train answers (it cannot happen
 * for a wedding dress, but the port allows it) is `unavailable`.
 */
export function trainScorerOf(judge: QualityJudge): TrainScorer {
  return {
    name: judge.name,
    async score({ result, person, garment, signal, decodeBudget }) {
      const verdict = await judge.judge({ shopper: person, product: garment, result, weddingDress: true, signal, decodeBudget })
      if (verdict.train) return verdict.train
      return { kind: 'unavailable', reason: verdict.checked ? `${judge.name} judge: no train answers` : verdict.reason }
    },
  }
}

/** After a 404 NOT_FOUND the judge is not asked again for this long: the model will not come back by waiting. */
const NOT_SERVED_PAUSE_MS = 600_000

/**
 * A quality judge whose model is watched against the lifecycle table (model-watch.ts), behind a breaker. The billing
 * rule stays "could not judge: billed as usual", so it must never hold quietly: a judge whose model is past its
 * shutdown day is never called, one answered 404 NOT_FOUND is left alone for ten minutes, and each result billed
 * unchecked for that reason logs an error naming the setting and what to set instead (the train score of a wedding
 * dress, served from the same call, is unavailable with it). After `failures` consecutive outages the judge is
 * skipped for `openMs` (then one request probes it): a judge that is down costs each try-on nothing, instead of its
 * timeouts and retries.
 */
export function watchedJudge(
  judge: QualityJudge,
  configured: ConfiguredModel,
  options: { now: () => number; log: Logger; breaker?: BreakerPolicy },
): QualityJudge {
  const policy = options.breaker ?? defaultBreaker
  const watch = createModelWatch(configured, options)
  let pausedUntil: number | undefined
  let lastNotice = ''
  let outages = 0
  let openUntil: number | undefined
  let probing = false

  const unserved = (notice: string, weddingDress: boolean) => {
    options.log({
      level: 'error',
      msg: weddingDress
        ? 'quality judge not called: its model is not served; this wedding dress is billed without a quality check or a train score'
        : 'quality judge not called: its model is not served; this try-on is billed without a quality check',
      setting: configured.setting,
      model: configured.model,
      notice,
    })
    return unchecked(`${judge.name} judge: ${notice}`, { weddingDress, modelNotServed: true })
  }

  return {
    name: judge.name,
    async judge(request) {
      const refusal = watch.refusal()
      if (refusal) return unserved(refusal, request.weddingDress)
      if (pausedUntil !== undefined && options.now() < pausedUntil) return unserved(lastNotice, request.weddingDress)
      const probe = openUntil !== undefined
      if (probe && (options.now() < openUntil! || probing))
        return unchecked(`${judge.name} judge: skipped, circuit open after ${outages} consecutive outages`, {
          weddingDress: request.weddingDress,
          outage: true,
        })
      if (probe) probing = true
      try {
        const verdict = await judge.judge(request)
        if (!verdict.checked && verdict.modelNotServed) {
          lastNotice = watch.notServed()
          pausedUntil = options.now() + NOT_SERVED_PAUSE_MS
          return unserved(lastNotice, request.weddingDress)
        }
        pausedUntil = undefined
        if (!verdict.checked && verdict.outage) {
          outages++
          if (probe || outages >= policy.failures) {
            openUntil = options.now() + policy.openMs
            options.log({ level: 'warn', msg: 'quality judge circuit open: skipping it', judge: judge.name, outages, forMs: policy.openMs })
          }
        } else {
          if (openUntil !== undefined) options.log({ level: 'info', msg: 'quality judge circuit closed: the probe got an answer' })
          outages = 0
          openUntil = undefined
        }
        return verdict
      } finally {
        if (probe) probing = false
      }
    },
  }
}
