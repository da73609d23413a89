import type { KeyMode } from '../auth/api-key.ts'
import type { QualityCheckLevel, QualityRecord } from '../billing/store.ts'
import { garmentCategoryOf } from '../engine/category.ts'
import type { GarmentCategory, GeneratedImage, TryOnRequest } from '../engine/types.ts'
import type { Logger } from '../log.ts'
import type { QualityJudge } from '../quality/judge.ts'
import type { QualityCategory, QualityMeasurement, QualityProductKind } from '../quality/measure.ts'
import type { MeasureJob } from '../quality/measured-check.ts'
import type { Scenario } from './scenarios.ts'

/**
 * The check of a result before it is billed (docs/billing.md, "Checked results"): the measured checks
 * (shared/quality/measure.ts) on every result of a checked key, then, at level `judge`, the seeing judge
 * (shared/quality/judge.ts) on a result the measurements passed. The answer's `quality` object.
 */
export type QualityAnswer = QualityRecord

/**
 * The level a key's results are checked at (docs/billing.md, "Checked results"). A key with no level of its own
 * (`admin keys quality --default`, stored as null) takes the default: `judge` for a live key where a judge is
 * configured, `measured` otherwise (a test key's local results are measured too, so a broken composite is never
 * charged). `judge` without a judge, or on a test key, which never reaches a provider, is `measured`.
 */
export function qualityLevelOf(
  configured: QualityCheckLevel | null | undefined,
  keyMode: KeyMode,
  judge?: QualityJudge,
  scenario?: Scenario,
): QualityCheckLevel {
  if (configured === 'judge' || configured == null) return keyMode === 'live' && judge ? 'judge' : 'measured'
  // The scenario forces the failed-check row whatever the key's level, so an integrator can see it at level off too.
  if (scenario === 'quality_failed' && configured === 'off') return 'measured'
  return configured
}

export interface QualityCheckJob {
  level: QualityCheckLevel
  request: TryOnRequest
  image: GeneratedImage
  weddingDress: boolean
  scenario?: Scenario
  judge?: QualityJudge
  /** Decodes and measures (Deps.measure): off the request's thread where the platform has worker threads. */
  measure: (job: MeasureJob) => Promise<QualityMeasurement>
  signal?: AbortSignal
  log: Logger
  context: Record<string, unknown>
}

/** Checks one result; undefined at level `off`. Never throws: a check that cannot run answers `checked: false`. */
export async function checkQuality(job: QualityCheckJob): Promise<QualityAnswer | undefined> {
  if (job.level === 'off') return undefined
  // A test key's X-Tryon-Scenario: quality_failed forces the failed-check row whatever the result shows.
  if (job.scenario === 'quality_failed') return { checked: true, passed: false, score: 0, issues: ['scenario_forced'] }
  let measured: QualityMeasurement
  try {
    const { request, image } = job
    measured = await job.measure({
      shopper: request.person,
      product: request.garment,
      result: image,
      // A wedding dress generated without a train was tried on as what the caller named it (shared/bridal/pipeline.ts).
      category: qualityCategoryOf(
        job.weddingDress ? request.category : (garmentCategoryOf(request.clothingType, 'standard') ?? request.category),
        request.clothingType,
      ),
      productKind: job.weddingDress ? 'gown' : productKindOf(request.clothingType),
      weddingDress: job.weddingDress,
      decodeBudget: request.decodeBudget,
      signal: job.signal,
    })
  } catch (error) {
    job.log({ level: 'warn', msg: 'quality check could not run', ...job.context, error: String(error) })
    return { checked: false, passed: null, score: null, issues: [] }
  }
  const rounded = Math.round(measured.score * 100) / 100
  job.log({ level: 'info', msg: 'quality measured', ...job.context, passed: measured.passed, issues: measured.issues })
  if (!measured.passed || job.level !== 'judge' || !job.judge) {
    return { checked: true, passed: measured.passed, score: rounded, issues: [...measured.issues] }
  }
  const verdict = await job.judge.judge({
    shopper: job.request.person,
    product: job.request.garment,
    result: job.image,
    weddingDress: job.weddingDress,
    signal: job.signal,
    decodeBudget: job.request.decodeBudget,
  })
  // The judge could not judge: billed as usual, as a wedding dress with no train score is (docs/billing.md).
  if (!verdict.checked) return { checked: false, passed: null, score: null, issues: [] }
  return {
    checked: true,
    passed: verdict.passed,
    score: Math.round(Math.min(measured.score, verdict.score) * 100) / 100,
    issues: [...verdict.issues],
  }
}

const SHOES = /\b(shoes?|sneakers?|trainers?|boots?|heels?|sandals?|loafers?|pumps?|chaussures?|schuhe|zapatos?)\b/
const BAG = /\b(bags?|handbags?|purses?|totes?|backpacks?|clutch|sac|tasche|bolso)\b/

/** Which body regions the measurements require: the engine's category, or shoes and bags named by the caller. */
export function qualityCategoryOf(category: GarmentCategory | undefined, clothingType: string | undefined): QualityCategory | undefined {
  const text = clothingType?.toLowerCase() ?? ''
  if (SHOES.test(text)) return 'shoes'
  if (BAG.test(text)) return 'bag'
  return category
}

/**
 * What the caller's words say about how far the product reaches. A wedding dress, a bridal, a maxi or an evening dress
 * (an evening gown: long, for a formal occasion) is taken as reaching the ankles, as a gown does: tried on without a
 * train (shared/bridal/pipeline.ts), it is still measured to cover the shins, and a gown put on to the knees fails.
 * Read as a dress, gowns named evening dresses that ended at the knees or the thighs passed and were charged (photo
 * 16062, dim 17194, 2026-12-01; of 125 evening dresses' results saved that day, only those two move).
 */
export function productKindOf(clothingType: string | undefined): QualityProductKind | undefined {
  const text = clothingType?.toLowerCase() ?? ''
  if (/\b(trousers?|pants?|jeans?|leggings?|joggers?|chinos?)\b/.test(text)) return 'trousers'
  if (/\bshorts?\b/.test(text)) return 'shorts'
  if (/\bskirts?\b/.test(text)) return 'skirt'
  if (/\b(gowns?|(wedding|evening) dress(es)?|bridal|maxi)\b/.test(text)) return 'gown'
  return undefined
}
