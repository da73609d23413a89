import { z } from 'zod'
import { providerEnvShape, providerSettingsOf, type ProviderSettings } from './engine/providers/settings.ts'
import type { ImageLimits } from './images/types.ts'
import { MIN_SECRET_LENGTH } from './limits/client-address.ts'
import { defaultSettlementRetry, type SettlementRetry } from './tryon/settle.ts'

export type Env = Record<string, string | undefined>

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

const flag = z.enum(['0', '1', 'true', 'false']).transform((v) => v === '1' || v === 'true')

const envSchema = z.object({
  TRYON_TRAIN_THRESHOLD: z.coerce.number().min(0).max(1).default(defaultServiceConfig.trainThreshold),
  TRYON_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]{1,62}$/)
    .default('tryon-results'),
  TRYON_ENGINE: z.string().default('local'),
  TRYON_STORAGE: z.enum(['local', 'supabase']).default('local'),
  TRYON_ALLOW_PRIVATE_IMAGE_HOSTS: flag.default(false),
  TRYON_SHARE_PAGES: flag.default(defaultServiceConfig.sharePages),
  TRYON_GENERATION_TIMEOUT_MS: z.coerce.number().int().positive().default(defaultServiceConfig.generationTimeoutMs),
  TRYON_STORE_TIMEOUT_MS: z.coerce.number().int().positive().default(defaultServiceConfig.storeTimeoutMs),
  TRYON_DATABASE_TIMEOUT_MS: z.coerce.number().int().positive().default(defaultServiceConfig.databaseTimeoutMs),
  TRYON_LOCAL_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(defaultServiceConfig.localWork.concurrency),
  TRYON_LOCAL_QUEUE: z.coerce.number().int().min(0).max(1000).default(defaultServiceConfig.localWork.queue),
  PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  TRYON_CLIENT_ADDRESS_HEADER: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z0-9-]+$/, 'must be socket or a header name')
    .default('socket'),
  TRYON_CLIENT_ADDRESS_SECRET: z
    .string()
    .min(MIN_SECRET_LENGTH, `must be at least ${MIN_SECRET_LENGTH} characters (e.g. openssl rand -hex 32)`)
    .optional(),
  ...providerEnvShape,
})

/** The settings every entry point reads the same way (docs/deployment.md, "Configuration"). */
export interface Settings {
  service: ServiceConfig
  bucket: string
  engine: string
  /** TRYON_ENGINE as a chain, each provider's credentials and base URL, and the live train scorer. */
  providers: ProviderSettings
  storage: 'local' | 'supabase'
  allowPrivateImageHosts: boolean
  publicBaseUrl?: string
  /**
   * Per-client limits: where the client's address comes from (`socket`, or the header the proxy in front sets)
   * and the secret its HMAC is keyed with. Each entry point gives its platform's default header.
   */
  clientAddress: { header: string; secret?: string }
}

/** `now` picks the models left to their defaults: one past its shutdown day gives way to its successor. */
export function readSettings(env: Env, now: number = Date.now()): Settings {
  const parsed = envSchema.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== '')))
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new Error(`Invalid environment: ${issue.path.join('.')}: ${issue.message}`)
  }
  const e = parsed.data
  return {
    service: {
      ...defaultServiceConfig,
      trainThreshold: e.TRYON_TRAIN_THRESHOLD,
      generationTimeoutMs: e.TRYON_GENERATION_TIMEOUT_MS,
      storeTimeoutMs: e.TRYON_STORE_TIMEOUT_MS,
      databaseTimeoutMs: e.TRYON_DATABASE_TIMEOUT_MS,
      localWork: { concurrency: e.TRYON_LOCAL_CONCURRENCY, queue: e.TRYON_LOCAL_QUEUE },
      sharePages: e.TRYON_SHARE_PAGES,
    },
    bucket: e.TRYON_BUCKET,
    engine: e.TRYON_ENGINE,
    providers: providerSettingsOf(e.TRYON_ENGINE, e, now),
    storage: e.TRYON_STORAGE,
    allowPrivateImageHosts: e.TRYON_ALLOW_PRIVATE_IMAGE_HOSTS,
    publicBaseUrl: e.PUBLIC_BASE_URL,
    clientAddress: { header: e.TRYON_CLIENT_ADDRESS_HEADER, secret: e.TRYON_CLIENT_ADDRESS_SECRET },
  }
}
