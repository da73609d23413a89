import type { BillingStore } from './billing/store.ts'
import type { BridalSteps } from './bridal/ports.ts'
import type { QualityJudge } from './quality/judge.ts'
import type { QualityMeasurement } from './quality/measure.ts'
import type { MeasureJob } from './quality/measured-check.ts'
import type { TryOnEngine } from './engine/types.ts'
import type { GuardedImageFetcher } from './images/fetch.ts'
import type { ClientIdentity } from './limits/client-address.ts'
import type { Logger } from './log.ts'
import type { ResultStore } from './storage/result-store.ts'
import type { IdSource } from './tryon/ids.ts'
import type { ServiceConfig } from './config.ts'

/** Deps.log's type, where the handlers find it beside Deps. */
export type { Logger }
export type { ServiceConfig }

/** Everything the handler needs from the outside world, built once by each entry point. */
export interface Deps {
  billing: BillingStore
  store: ResultStore
  engines: {
    /** Used for vto_live_ keys: the configured provider. */
    live: TryOnEngine
    /** Used for vto_test_ keys: always the local engine, never a paid provider. */
    test: TryOnEngine
  }
  /** Wedding-dress pre-treatment and train scorer, per key mode like the engines. */
  bridal: {
    live: BridalSteps
    test: BridalSteps
  }
  /** The seeing judge live keys' results are checked by at level `judge`, when one is configured (TRYON_TRAIN_SCORER). */
  judge?: QualityJudge
  /** The measured check's decoding and measuring (LocalSteps.measure): on a worker thread where the platform has them. */
  measure: (job: MeasureJob) => Promise<QualityMeasurement>
  fetchImage: GuardedImageFetcher
  /** The caller's address and its HMAC, for the per-client abuse limits. */
  clients: ClientIdentity
  ids: IdSource
  /** The time the abuse limits' minutes and days are counted by (tests move it). */
  clock: () => Date
  config: ServiceConfig
  log: Logger
}
