import { z } from 'zod'
import { defaultServiceConfig, type ServiceConfig } from './deps.ts'
import { providerEnvShape, providerSettingsOf, type ProviderSettings } from './engine/providers/settings.ts'

export type Env = Record<string, string | undefined>

const flag = z.enum(['0', '1', 'true', 'false']).transform((v) => v === '1' || v === 'true')

const envSchema = z.object({
  TRYON_TRAIN_THRESHOLD: z.coerce.number().min(0).max(1).default(defaultServiceConfig.trainThreshold),
  TRYON_BUCKET: z.string().regex(/^[a-z0-9][a-z0-9._-]{1,62}$/).default('tryon-results'),
  TRYON_ENGINE: z.string().default('local'),
  TRYON_STORAGE: z.enum(['local', 'supabase']).default('local'),
  TRYON_ALLOW_PRIVATE_IMAGE_HOSTS: flag.default(false),
  TRYON_GENERATION_TIMEOUT_MS: z.coerce.number().int().positive().default(defaultServiceConfig.generationTimeoutMs),
  TRYON_STORE_TIMEOUT_MS: z.coerce.number().int().positive().default(defaultServiceConfig.storeTimeoutMs),
  TRYON_DATABASE_TIMEOUT_MS: z.coerce.number().int().positive().default(defaultServiceConfig.databaseTimeoutMs),
  PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  ...providerEnvShape,
})

/** The settings every entry point reads the same way (DESIGN.md §7). */
export interface Settings {
  service: ServiceConfig
  bucket: string
  engine: string
  /** TRYON_ENGINE as a chain, each provider's credentials and base URL, and the live train scorer. */
  providers: ProviderSettings
  storage: 'local' | 'supabase'
  allowPrivateImageHosts: boolean
  publicBaseUrl?: string
}

export function readSettings(env: Env): Settings {
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
    },
    bucket: e.TRYON_BUCKET,
    engine: e.TRYON_ENGINE,
    providers: providerSettingsOf(e.TRYON_ENGINE, e),
    storage: e.TRYON_STORAGE,
    allowPrivateImageHosts: e.TRYON_ALLOW_PRIVATE_IMAGE_HOSTS,
    publicBaseUrl: e.PUBLIC_BASE_URL,
  }
}
