import type { BillingStore } from './billing/store.ts'
import type { BridalSteps } from './bridal/ports.ts'
import type { TryOnEngine } from './engine/types.ts'
import type { GuardedImageFetcher } from './images/fetch.ts'
import type { ImageLimits } from './images/types.ts'
import type { ClientIdentity } from './limits/client-address.ts'
import type { Logger } from './log.ts'
import type { ResultStore } from './storage/result-store.ts'
import type { IdSource } from './tryon/ids.ts'
import { defaultSettlementRetry, type SettlementRetry } from './tryon/settle.ts'
import type { WorkGate } from './tryon/work-gate.ts'

/** Deps.log's type, where the handlers find it beside Deps. */
export type { Logger }

export interface ServiceConfig {
  imageLimits: ImageLimits
  /** Largest request body read, in bytes (two 10 MB images as base64 fit). */
  maxBodyBytes: number
  /** Deadline for intake + generation, in milliseconds (Supabase stops a request at 150 s). */
  generationTimeoutMs: number
  /** A wedding-dress train counts as rendered at or above this score. */
  trainThreshold: number
  /** Deadline for writing a result to storage, in milliseconds. */
  storeTimeoutMs: number
  /** Deadline for one database call, in milliseconds; past it the request fails and nothing is lost. */
  databaseTimeoutMs: number
  /** How a settlement whose reply was lost is retried before its outcome is declared unknown. */
  settlementRetry: SettlementRetry
  /** CPU-heavy local work (embedded engine, local bridal steps) running at once, and waiting, before 503 service_busy. */
  localWork: { concurrency: number; queue: number }
  /** Decoded pixels one request may allocate across all its steps (see DecodeBudget). */
  maxDecodedPixelsPerRequest: number
  /**
   * Share links answer with a small HTML page carrying og:image instead of a redirect to the image. Only where
   * HTML reaches the browser: Supabase rewrites text/html to text/plain on its default function domains.
   */
  sharePages: boolean
}

export const defaultServiceConfig: ServiceConfig = {
  imageLimits: { minBytes: 1024, maxBytes: 10 * 1024 * 1024, maxPixels: 40_000_000 },
  maxBodyBytes: 30 * 1024 * 1024,
  generationTimeoutMs: 120_000,
  trainThreshold: 0.5,
  storeTimeoutMs: 30_000,
  databaseTimeoutMs: 10_000,
  settlementRetry: defaultSettlementRetry,
  localWork: { concurrency: 2, queue: 8 },
  maxDecodedPixelsPerRequest: 240_000_000,
  sharePages: false,
}

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
  fetchImage: GuardedImageFetcher
  /** The caller's address and its HMAC, for the per-client abuse limits. */
  clients: ClientIdentity
  /** The slots CPU-heavy local work runs in (shared by the engines and bridal steps built with it). */
  localWork: WorkGate
  ids: IdSource
  /** The time the abuse limits' minutes and days are counted by (tests move it). */
  clock: () => Date
  config: ServiceConfig
  log: Logger
}
