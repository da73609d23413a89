import type { Sql } from 'postgres'
import { createPostgresBilling } from './billing/store.ts'
import { createLocalPretreatment } from './bridal/local-pretreatment.ts'
import { createLocalTrainScorer } from './bridal/local-scorer.ts'
import type { BridalSteps } from './bridal/ports.ts'
import type { Settings } from './config.ts'
import { jsonLogger, type Deps, type Logger } from './deps.ts'
import { createLocalEngine } from './engine/local/index.ts'
import type { TryOnEngine } from './engine/types.ts'
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
  const local = createLocalEngine()
  const localBridal: BridalSteps = { pretreatment: createLocalPretreatment(), scorer: createLocalTrainScorer() }
  return {
    billing: createPostgresBilling(platform.sql),
    store: platform.store,
    engines: { live: liveEngine(settings.engine, local), test: local },
    bridal: { live: localBridal, test: localBridal },
    fetchImage: createImageFetcher({
      fetch: platform.fetch,
      resolveHost: platform.resolveHost,
      allowPrivateHosts: settings.allowPrivateImageHosts,
    }),
    ids: randomIds,
    clock: () => new Date(),
    config: settings.service,
    log: platform.log ?? jsonLogger,
  }
}

function liveEngine(name: string, local: TryOnEngine): TryOnEngine {
  if (name === 'local') return local
  throw new Error(`TRYON_ENGINE=${name} is not available; supported: local`)
}
