/**
 * What an evaluation run counts, from each scene's answer and the oracle's judgement of the image delivered:
 * broken composites charged, good ones failed by the service's check, trains applied, non-train products not
 * applied, engine failures on valid full-length photos. Used by scripts/evaluate-quality.ts.
 */
import type { Issue, Judgement } from './oracle.ts'
import type { ProductKind, StyleName } from './types.ts'

/** The success body's `quality` object, when the service sends one. */
export interface QualityAnswer {
  checked: boolean
  passed: boolean
  score: number | null
  issues: string[]
}

export interface Outcome {
  style: StyleName
  seed: number
  kind: ProductKind
  hasTrain: boolean
  wedding: boolean
  fullLength: boolean
  status: number
  errorCode?: string
  creditsCharged?: number
  bridal?: { applied: boolean; trainScore: number | null; reason: string }
  quality?: QualityAnswer
  /** The oracle on the delivered image (200 only). */
  judgement?: Judgement
  ms: number
  description: string
}

/** The quality object of a success body, or undefined when it has none (or not of the documented shape). */
export function qualityOf(body: unknown): QualityAnswer | undefined {
  const q = (body as { quality?: unknown } | null)?.quality as Partial<QualityAnswer> | undefined
  if (!q || typeof q !== 'object' || typeof q.checked !== 'boolean' || typeof q.passed !== 'boolean') return undefined
  return {
    checked: q.checked,
    passed: q.passed,
    score: typeof q.score === 'number' ? q.score : null,
    issues: Array.isArray(q.issues) ? q.issues.filter((i): i is string => typeof i === 'string') : [],
  }
}

/** A check ran and failed the result: the service says so, and charges nothing for it. */
export const failedCheck = (o: Outcome) => o.quality?.checked === true && o.quality.passed === false

const delivered = (o: Outcome) => o.status === 200 && o.judgement !== undefined
const broken = (o: Outcome) => delivered(o) && o.judgement!.broken
const charged = (o: Outcome) => (o.creditsCharged ?? 0) > 0

export interface Count {
  count: number
  of: number
}

export interface Figures {
  scenes: number
  delivered: number
  /** Answers that carried a quality object. */
  withQuality: number
  brokenDelivered: number
  brokenCharged: Count
  /** Good results (by the oracle) that the service's check failed: only those answers that carry a check. */
  goodFailedCheck: Count
  trainApplied: Count
  nonTrainNotApplied: Count
  engineFailures: Count
  /** A check failed the result yet credits were charged: the service contradicting its own rule. */
  failedButCharged: number
  credits: Record<number, number>
  errors: Record<string, number>
  brokenBy: Partial<Record<Issue, number>>
  byStyle: Record<string, { scenes: number; brokenCharged: number; engineFailures: number; good: number }>
  medianMs: number
}

export function summarise(outcomes: Outcome[]): Figures {
  const count = (of: Outcome[], test: (o: Outcome) => boolean): Count => ({ count: of.filter(test).length, of: of.length })
  const good = outcomes.filter((o) => delivered(o) && !o.judgement!.broken)
  const validPhotos = outcomes.filter((o) => o.fullLength)
  const trains = validPhotos.filter((o) => o.wedding && o.hasTrain)
  const nonTrains = validPhotos.filter((o) => o.wedding && !o.hasTrain && o.status === 200)
  const engineFailure = (o: Outcome) => o.status >= 500 || o.errorCode === 'person_not_found'
  const credits: Record<number, number> = {}
  const errors: Record<string, number> = {}
  const brokenBy: Partial<Record<Issue, number>> = {}
  const byStyle: Figures['byStyle'] = {}
  for (const o of outcomes) {
    if (o.status === 200) credits[o.creditsCharged ?? 0] = (credits[o.creditsCharged ?? 0] ?? 0) + 1
    else errors[`${o.status} ${o.errorCode ?? ''}`.trim()] = (errors[`${o.status} ${o.errorCode ?? ''}`.trim()] ?? 0) + 1
    if (broken(o)) for (const issue of o.judgement!.issues) brokenBy[issue] = (brokenBy[issue] ?? 0) + 1
    byStyle[o.style] ??= { scenes: 0, brokenCharged: 0, engineFailures: 0, good: 0 }
    const row = byStyle[o.style]
    row.scenes++
    if (broken(o) && charged(o)) row.brokenCharged++
    if (o.fullLength && engineFailure(o)) row.engineFailures++
    if (delivered(o) && !o.judgement!.broken) row.good++
  }
  const times = outcomes.map((o) => o.ms).sort((a, b) => a - b)
  return {
    scenes: outcomes.length,
    delivered: outcomes.filter(delivered).length,
    withQuality: outcomes.filter((o) => o.quality).length,
    brokenDelivered: outcomes.filter(broken).length,
    brokenCharged: count(outcomes.filter(delivered), (o) => broken(o) && charged(o)),
    goodFailedCheck: count(
      good.filter((o) => o.quality?.checked),
      (o) => failedCheck(o),
    ),
    trainApplied: count(trains, (o) => o.bridal?.applied === true),
    nonTrainNotApplied: count(nonTrains, (o) => o.bridal?.applied === false),
    engineFailures: count(validPhotos, engineFailure),
    failedButCharged: outcomes.filter((o) => failedCheck(o) && charged(o)).length,
    credits,
    errors,
    brokenBy,
    byStyle,
    medianMs: times.length ? times[times.length >> 1] : 0,
  }
}

const share = (c: Count) => (c.of ? `${c.count}/${c.of} = ${((100 * c.count) / c.of).toFixed(1)}%` : 'none')

/** The goals the issue set, each with whether this run meets it. */
export function goals(f: Figures): { figure: string; value: string; goal: string; met: boolean | null }[] {
  const within = (c: Count, most: number) => (c.of ? c.count / c.of <= most : null)
  const atLeast = (c: Count, least: number) => (c.of ? c.count / c.of >= least : null)
  return [
    { figure: 'broken composites charged', value: share(f.brokenCharged), goal: '0', met: f.brokenCharged.count === 0 },
    {
      figure: 'good results that failed the check',
      value: f.withQuality ? share(f.goodFailedCheck) : 'no check in the answers',
      goal: '≤ 5%',
      met: f.withQuality ? within(f.goodFailedCheck, 0.05) : null,
    },
    { figure: 'train gowns applied (full-length photos)', value: share(f.trainApplied), goal: '≥ 90%', met: atLeast(f.trainApplied, 0.9) },
    {
      figure: 'non-train products not applied as train (full-length)',
      value: share(f.nonTrainNotApplied),
      goal: '≥ 95%',
      met: atLeast(f.nonTrainNotApplied, 0.95),
    },
    {
      figure: 'engine failures (5xx, person_not_found) on valid full-length photos',
      value: share(f.engineFailures),
      goal: '≤ 1%',
      met: within(f.engineFailures, 0.01),
    },
  ]
}

/** The figures as Markdown, for a terminal and for docs/performance.md. */
export function report(f: Figures): string {
  const lines = ['| figure | value | goal | met |', '|---|---|---|---|']
  for (const g of goals(f)) lines.push(`| ${g.figure} | ${g.value} | ${g.goal} | ${g.met === null ? 'n/a' : g.met ? 'yes' : 'no'} |`)
  const credits = [0, 1, 2].map((c) => f.credits[c] ?? 0).join(' / ')
  const issues = Object.entries(f.brokenBy)
    .map(([issue, n]) => `${issue} ${n}`)
    .join(', ')
  const errors = Object.entries(f.errors)
    .map(([code, n]) => `${code} ×${n}`)
    .join(', ')
  lines.push(
    '',
    `scenes ${f.scenes}; delivered ${f.delivered} (credits 0 / 1 / 2: ${credits}); errors: ${errors || 'none'}`,
    `broken delivered ${f.brokenDelivered} (${issues || 'none'}); answers with a quality object ${f.withQuality}; ` +
      `a failed check still charged ${f.failedButCharged}`,
    `by style (scenes, good, broken charged, engine failures): ${Object.entries(f.byStyle)
      .map(([style, s]) => `${style} ${s.scenes}/${s.good}/${s.brokenCharged}/${s.engineFailures}`)
      .join(', ')}; median ${f.medianMs.toFixed(0)} ms a request`,
  )
  return lines.join('\n')
}

/**
 * The goals' figures for standard garments and for wedding dresses apart (the scene's mode, `productType`), beside all
 * of them: issue 26 asks for each. A figure a kind has no scene for is `none`.
 */
export function reportByKind(outcomes: Outcome[]): string {
  const all = goals(summarise(outcomes))
  const standard = goals(summarise(outcomes.filter((o) => !o.wedding)))
  const wedding = goals(summarise(outcomes.filter((o) => o.wedding)))
  const rows = all.map((g, i) => `| ${g.figure} | ${standard[i].value} | ${wedding[i].value} | ${g.value} | ${g.goal} |`)
  return ['| figure | standard garments | wedding dresses | all | goal |', '|---|---|---|---|---|', ...rows].join('\n')
}
