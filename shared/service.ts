import type { Sql } from 'postgres'
import { createPostgresBilling } from './billing/store.ts'
import { createGeminiTrainScorer } from './bridal/gemini-scorer.ts'
import { createLocalPretreatment } from './bridal/local-pretreatment.ts'
import { createLocalTrainScorer } from './bridal/local-scorer.ts'
import type { BridalSteps } from './bridal/ports.ts'
import type { Settings } from './config.ts'
import { jsonLogger, type Deps, type Logger } from './deps.ts'
import { createLocalEngine } from './engine/local/index.ts'
import { createLiveEngine, providerRuntime } from './engine/providers/index.ts'
import { createImageFetcher } from './images/fetch.ts'
import type { ResultStore } from './storage/result-store.ts'
import { randomIds } from './tryon/ids.ts'

export interface Platform {
  sql: Sql
  store: ResultStore
  /** The runtime's fetch; on Node one whose DNS lookup refuses private addresses. */
  fetch: typeof fetch
  /** Resolves a host before fetching, where the runtime cannot check inside its lookup (Deno). */
  resolveHost?: (hostname: string) => Promise<string[]>
  log?: Logger
}

/** Builds the handler's dependencies from settings and a platform's adapters; each entry point calls this once. */
export function createDeps(settings: Settings, platform: Platform): Deps {
  const log = platform.log ?? jsonLogger
  const local = createLocalEngine()
  const localBridal: BridalSteps = { pretreatment: createLocalPretreatment(), scorer: createLocalTrainScorer() }
  // Provider hosts are the operator's configuration, so they are reached with the plain fetch, not the guarded one.
  const runtime = providerRuntime({ log })
  const { providers } = settings
  const liveBridal: BridalSteps = providers.trainScorer === 'gemini' && providers.gemini
    ? { ...localBridal, scorer: createGeminiTrainScorer({ ...providers.gemini, model: providers.gemini.scorerModel }, runtime) }
    : localBridal
  return {
    billing: createPostgresBilling(platform.sql, { timeoutMs: settings.service.databaseTimeoutMs }),
    store: platform.store,
    // Test keys never reach a provider (DESIGN.md §4): their engine and train scorer are always the local ones.
    engines: { live: createLiveEngine(providers, { local, runtime, budgetMs: settings.service.generationTimeoutMs }), test: local },
    bridal: { live: liveBridal, test: localBridal },
    fetchImage: createImageFetcher({
      fetch: platform.fetch,
      resolveHost: platform.resolveHost,
      allowPrivateHosts: settings.allowPrivateImageHosts,
    }),
    ids: randomIds,
    clock: () => new Date(),
    config: settings.service,
    log,
  }
}
