import type { TryOnEngine } from '../types.ts'
import { defaultBreaker, withCircuitBreaker, type BreakerPolicy } from './breaker.ts'
import { createEngineChain } from './chain.ts'
import { createFashnEngine } from './fashn.ts'
import { createGeminiEngine } from './gemini.ts'
import { serviceAccountTokens, staticAccessToken } from './google-auth.ts'
import type { ConfiguredModel } from './lifecycle.ts'
import { watchedEngine } from './model-watch.ts'
import type { ProviderRuntime } from './runtime.ts'
import type { EngineName, ProviderSettings } from './settings.ts'
import { createVertexEngine } from './vertex.ts'

export { providerRuntime, type ProviderRuntime } from './runtime.ts'

/** The setting naming each remote engine's model, and where it is served: what the lifecycle table is read for. */
export function configuredModelOf(name: Exclude<EngineName, 'local'>, settings: ProviderSettings): ConfiguredModel {
  switch (name) {
    case 'fashn':
      return { setting: 'FASHN_MODEL', platform: 'fashn', model: required(settings.fashn, name).model }
    case 'vertex':
      return { setting: 'VERTEX_MODEL', platform: 'vertex-ai', model: required(settings.vertex, name).model }
    case 'gemini':
      return { setting: 'GEMINI_MODEL', platform: 'gemini-api', model: required(settings.gemini, name).model }
  }
}

/**
 * The engine live keys use: TRYON_ENGINE's engines, as a fallback chain when there are several, each remote
 * provider behind its own circuit breaker (built here, so its state lives as long as these deps: one isolate),
 * its model watched against the lifecycle table (model-watch.ts).
 */
export function createLiveEngine(
  settings: ProviderSettings,
  options: { local: TryOnEngine; runtime: ProviderRuntime; budgetMs: number; breaker?: BreakerPolicy },
): TryOnEngine {
  const { runtime } = options
  const guarded = (name: EngineName): TryOnEngine =>
    name === 'local'
      ? options.local
      : withCircuitBreaker(watchedEngine(build(name), configuredModelOf(name, settings), runtime), {
          policy: options.breaker ?? defaultBreaker,
          now: runtime.now,
          log: runtime.log,
        })
  const build = (name: Exclude<EngineName, 'local'>): TryOnEngine => {
    switch (name) {
      case 'fashn':
        return createFashnEngine(required(settings.fashn, name), options.runtime)
      case 'vertex': {
        const vertex = required(settings.vertex, name)
        const tokens = vertex.serviceAccount
          ? serviceAccountTokens(vertex.serviceAccount, options.runtime)
          : staticAccessToken(required(vertex.accessToken, name))
        return createVertexEngine({ ...vertex, tokens }, options.runtime)
      }
      case 'gemini':
        return createGeminiEngine(required(settings.gemini, name), options.runtime)
    }
  }
  return createEngineChain(settings.engines.map(guarded), { budgetMs: options.budgetMs, log: runtime.log, now: runtime.now })
}

function required<T>(value: T | undefined, engine: string): T {
  if (value === undefined) throw new Error(`the ${engine} engine is not configured`)
  return value
}
