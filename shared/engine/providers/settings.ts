import { z } from 'zod'
import { parseServiceAccount, type ServiceAccount } from './google-auth.ts'

export const engineNames = ['local', 'fashn', 'vertex', 'gemini'] as const
export type EngineName = (typeof engineNames)[number]

const baseUrl = (fallback: string) => z.url({ protocol: /^https?$/ }).default(fallback)

/** The environment variables of the generation engines (README "Generation engines"); merged into readSettings' schema. */
export const providerEnvShape = {
  TRYON_TRAIN_SCORER: z.enum(['auto', 'local', 'gemini', 'vertex']).default('auto'),
  FASHN_API_KEY: z.string().optional(),
  FASHN_BASE_URL: baseUrl('https://api.fashn.ai'),
  VERTEX_PROJECT: z
    .string()
    .regex(/^[a-z][a-z0-9-]{4,61}[a-z0-9]$/, 'must be a Google Cloud project id')
    .optional(),
  VERTEX_LOCATION: z
    .string()
    .regex(/^[a-z0-9-]+$/, 'must be a region such as us-central1')
    .default('us-central1'),
  VERTEX_MODEL: z.string().default('virtual-try-on-001'),
  VERTEX_ACCESS_TOKEN: z.string().optional(),
  VERTEX_SERVICE_ACCOUNT_JSON: z.string().optional(),
  VERTEX_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  GEMINI_API_KEY: z.string().optional(),
  GEMINI_MODEL: z.string().default('gemini-2.5-flash-image'),
  GEMINI_SCORER_MODEL: z.string().default('gemini-2.5-flash'),
  VERTEX_SCORER_MODEL: z.string().default('gemini-2.5-flash'),
  GEMINI_BASE_URL: baseUrl('https://generativelanguage.googleapis.com'),
}

export type ProviderEnv = z.infer<z.ZodObject<typeof providerEnvShape>>

export interface ProviderSettings {
  /** TRYON_ENGINE as a fallback chain, in order. */
  engines: EngineName[]
  /** The wedding-dress train scorer for live keys, `auto` resolved (test keys always score locally). */
  trainScorer: 'local' | 'gemini' | 'vertex'
  fashn?: { apiKey: string; baseUrl: string }
  vertex?: {
    project: string
    location: string
    model: string
    scorerModel: string
    baseUrl?: string
    accessToken?: string
    serviceAccount?: ServiceAccount
  }
  gemini?: { apiKey: string; baseUrl: string; model: string; scorerModel: string }
}

/**
 * Parses TRYON_ENGINE and checks that every engine it names (and the train scorer) has its credentials, so a
 * misconfigured deployment fails at startup with a message saying what to set, not at the first live request.
 */
export function providerSettingsOf(engine: string, env: ProviderEnv): ProviderSettings {
  const engines = engine.split(',').map((name) => name.trim().toLowerCase())
  for (const [index, name] of engines.entries()) {
    if (!(engineNames as readonly string[]).includes(name)) {
      throw invalid(
        `TRYON_ENGINE: unknown engine "${name}"; use one of ${engineNames.join(', ')}, or several separated by commas for a fallback chain`,
      )
    }
    if (engines.indexOf(name) !== index) throw invalid(`TRYON_ENGINE: ${name} is listed twice`)
  }
  const uses = (name: EngineName) => engines.includes(name)
  const needs = (names: string, because: string) => invalid(`${because} needs ${names}`)
  // auto: a judge that can see when there are credentials for one (the Gemini API, else Gemini on Vertex AI
  // with the try-on model's service account), else the local scorer.
  const trainScorer =
    env.TRYON_TRAIN_SCORER !== 'auto'
      ? env.TRYON_TRAIN_SCORER
      : env.GEMINI_API_KEY
        ? 'gemini'
        : env.VERTEX_PROJECT && env.VERTEX_SERVICE_ACCOUNT_JSON
          ? 'vertex'
          : 'local'
  const settings: ProviderSettings = { engines: engines as EngineName[], trainScorer }

  if (uses('fashn')) {
    if (!env.FASHN_API_KEY) throw needs('FASHN_API_KEY', 'TRYON_ENGINE=fashn')
    settings.fashn = { apiKey: env.FASHN_API_KEY, baseUrl: env.FASHN_BASE_URL }
  }
  if (uses('vertex') || trainScorer === 'vertex') {
    const because = uses('vertex') ? 'TRYON_ENGINE=vertex' : 'TRYON_TRAIN_SCORER=vertex'
    if (!env.VERTEX_PROJECT) throw needs('VERTEX_PROJECT', because)
    if (!env.VERTEX_ACCESS_TOKEN && !env.VERTEX_SERVICE_ACCOUNT_JSON) {
      throw needs('VERTEX_SERVICE_ACCOUNT_JSON (a service-account key file) or VERTEX_ACCESS_TOKEN', because)
    }
    let serviceAccount: ServiceAccount | undefined
    try {
      serviceAccount = env.VERTEX_SERVICE_ACCOUNT_JSON ? parseServiceAccount(env.VERTEX_SERVICE_ACCOUNT_JSON) : undefined
    } catch (error) {
      throw invalid((error as Error).message)
    }
    settings.vertex = {
      project: env.VERTEX_PROJECT,
      location: env.VERTEX_LOCATION,
      model: env.VERTEX_MODEL,
      scorerModel: env.VERTEX_SCORER_MODEL,
      baseUrl: env.VERTEX_BASE_URL,
      accessToken: env.VERTEX_ACCESS_TOKEN,
      serviceAccount,
    }
  }
  if (uses('gemini') || trainScorer === 'gemini') {
    if (!env.GEMINI_API_KEY) throw needs('GEMINI_API_KEY', uses('gemini') ? 'TRYON_ENGINE=gemini' : 'TRYON_TRAIN_SCORER=gemini')
    settings.gemini = {
      apiKey: env.GEMINI_API_KEY,
      baseUrl: env.GEMINI_BASE_URL,
      model: env.GEMINI_MODEL,
      scorerModel: env.GEMINI_SCORER_MODEL,
    }
  }
  return settings
}

function invalid(message: string): Error {
  return new Error(`Invalid environment: ${message}`)
}
