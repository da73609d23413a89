import { z } from 'zod'
import { parseServiceAccount, type ServiceAccount } from './google-auth.ts'
import { servedDefault } from './lifecycle.ts'

export const engineNames = ['local', 'fashn', 'vertex', 'gemini'] as const
export type EngineName = (typeof engineNames)[number]

/**
 * The models used when a setting is left out: served today (docs/engines.md#model-lifecycle). A default past its
 * shutdown day gives way to its successor when the settings are read (virtual-try-on-001 after 2027-01-20).
 */
export const DEFAULT_MODELS = {
  GEMINI_MODEL: 'gemini-3.1-flash-image',
  GEMINI_SCORER_MODEL: 'gemini-3.5-flash',
  VERTEX_MODEL: 'virtual-try-on-001',
  VERTEX_SCORER_MODEL: 'gemini-3.5-flash',
  FASHN_MODEL: 'tryon-v1.6',
} as const

/** FASHN's try-on models; each takes its own inputs (fashn.ts). */
export const fashnModels = ['tryon-v1.6', 'tryon-max'] as const
export type FashnModel = (typeof fashnModels)[number]

/**
 * How Vertex AI serves a model: Virtual Try-On through `:predict`, a Gemini image model through `:generateContent`
 * (`:predict` refuses Gemini: "Gemini cannot be accessed through Vertex Predict/RawPredict API").
 */
export function vertexModelKind(model: string): 'try-on' | 'gemini' | undefined {
  if (/^virtual-try-on-/.test(model)) return 'try-on'
  if (/^gemini-/.test(model)) return 'gemini'
  return undefined
}

const baseUrl = (fallback: string) => z.url({ protocol: /^https?$/ }).default(fallback)

/** The environment variables of the generation engines (README "Generation engines"); merged into readSettings' schema. */
export const providerEnvShape = {
  TRYON_TRAIN_SCORER: z.enum(['auto', 'local', 'gemini', 'vertex']).default('auto'),
  FASHN_API_KEY: z.string().optional(),
  FASHN_BASE_URL: baseUrl('https://api.fashn.ai'),
  FASHN_MODEL: z.enum(fashnModels).default(DEFAULT_MODELS.FASHN_MODEL),
  VERTEX_PROJECT: z
    .string()
    .regex(/^[a-z][a-z0-9-]{4,61}[a-z0-9]$/, 'must be a Google Cloud project id')
    .optional(),
  VERTEX_LOCATION: z
    .string()
    .regex(/^[a-z0-9-]+$/, 'must be a region such as us-central1')
    .default('us-central1'),
  // Gemini 3 models are served on Vertex AI at `global` only (its model pages, "Supported regions").
  VERTEX_GEMINI_LOCATION: z
    .string()
    .regex(/^[a-z0-9-]+$/, 'must be global or a region such as us-central1')
    .default('global'),
  VERTEX_MODEL: z.string().optional(),
  VERTEX_ACCESS_TOKEN: z.string().optional(),
  VERTEX_SERVICE_ACCOUNT_JSON: z.string().optional(),
  VERTEX_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  GEMINI_API_KEY: z.string().optional(),
  GEMINI_MODEL: z.string().optional(),
  GEMINI_SCORER_MODEL: z.string().optional(),
  VERTEX_SCORER_MODEL: z.string().optional(),
  GEMINI_BASE_URL: baseUrl('https://generativelanguage.googleapis.com'),
}

export type ProviderEnv = z.infer<z.ZodObject<typeof providerEnvShape>>

export interface ProviderSettings {
  /** TRYON_ENGINE as a fallback chain, in order. */
  engines: EngineName[]
  /** The wedding-dress train scorer for live keys, `auto` resolved (test keys always score locally). */
  trainScorer: 'local' | 'gemini' | 'vertex'
  fashn?: { apiKey: string; baseUrl: string; model: FashnModel }
  vertex?: {
    project: string
    /** Where a Virtual Try-On model is called (VERTEX_LOCATION). */
    location: string
    /** Where a Gemini model is called, the image model or the judge (VERTEX_GEMINI_LOCATION). */
    geminiLocation: string
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
export function providerSettingsOf(engine: string, env: ProviderEnv, now: number = Date.now()): ProviderSettings {
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
  const model = (setting: keyof typeof DEFAULT_MODELS, platform: 'gemini-api' | 'vertex-ai') =>
    env[setting] ?? servedDefault(platform, DEFAULT_MODELS[setting], now)
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
    settings.fashn = { apiKey: env.FASHN_API_KEY, baseUrl: env.FASHN_BASE_URL, model: env.FASHN_MODEL }
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
    const vertexModel = model('VERTEX_MODEL', 'vertex-ai')
    if (uses('vertex') && !vertexModelKind(vertexModel)) {
      throw invalid(
        `VERTEX_MODEL: "${vertexModel}" is neither a Virtual Try-On model (virtual-try-on-…, called with :predict) ` +
          'nor a Gemini image model (gemini-…-image, called with :generateContent)',
      )
    }
    settings.vertex = {
      project: env.VERTEX_PROJECT,
      location: env.VERTEX_LOCATION,
      geminiLocation: env.VERTEX_GEMINI_LOCATION,
      model: vertexModel,
      scorerModel: model('VERTEX_SCORER_MODEL', 'vertex-ai'),
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
      model: model('GEMINI_MODEL', 'gemini-api'),
      scorerModel: model('GEMINI_SCORER_MODEL', 'gemini-api'),
    }
  }
  return settings
}

function invalid(message: string): Error {
  return new Error(`Invalid environment: ${message}`)
}
