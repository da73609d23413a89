import type { TryOnEngine } from '../types.ts'
import { createEngineChain } from './chain.ts'
import { createFashnEngine } from './fashn.ts'
import { createGeminiEngine } from './gemini.ts'
import { serviceAccountTokens, staticAccessToken } from './google-auth.ts'
import type { ProviderRuntime } from './runtime.ts'
import type { EngineName, ProviderSettings } from './settings.ts'
import { createVertexEngine } from './vertex.ts'

export { providerRuntime, type ProviderRuntime } from './runtime.ts'

/** The engine live keys use: TRYON_ENGINE's engines, as a fallback chain when there are several. */
export function createLiveEngine(
  settings: ProviderSettings,
  options: { local: TryOnEngine; runtime: ProviderRuntime; budgetMs: number },
): TryOnEngine {
  const build = (name: EngineName): TryOnEngine => {
    switch (name) {
      case 'local':
        return options.local
      case 'fashn':
        return createFashnEngine(required(settings.fashn, name), options.runtime)
      case 'vertex': {
        const vertex = required(settings.vertex, name)
        const tokens = vertex.serviceAccount ? serviceAccountTokens(vertex.serviceAccount, options.runtime) : staticAccessToken(required(vertex.accessToken, name))
        return createVertexEngine({ ...vertex, tokens }, options.runtime)
      }
      case 'gemini':
        return createGeminiEngine(required(settings.gemini, name), options.runtime)
    }
  }
  return createEngineChain(settings.engines.map(build), { budgetMs: options.budgetMs, log: options.runtime.log })
}

function required<T>(value: T | undefined, engine: string): T {
  if (value === undefined) throw new Error(`the ${engine} engine is not configured`)
  return value
}
