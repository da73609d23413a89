import type { Sql } from 'postgres'
import { createPostgresBilling } from './billing/store.ts'
import { TRAIN_GUIDANCE } from './bridal/local-pretreatment.ts'
import type { BridalSteps, TrainGuidance } from './bridal/ports.ts'
import type { Settings } from './config.ts'
import type { Deps } from './deps.ts'
import { jsonLogger, type Logger } from './log.ts'
import { inThreadLocalSteps, type LocalSteps } from './engine/local/steps.ts'
import { createLiveEngine, providerRuntime } from './engine/providers/index.ts'
import { preparedElsewhere } from './engine/providers/images.ts'
import { vertexModelKind } from './engine/providers/settings.ts'
import { createImageFetcher } from './images/fetch.ts'
import { createClientIdentity, headerAddress, type ClientAddressSource } from './limits/client-address.ts'
import type { ResultStore } from './storage/result-store.ts'
import { randomIds } from './tryon/ids.ts'
import { gatedBridalSteps, gatedEngine } from './tryon/engines.ts'
import { createWorkGate, type WorkGate } from './tryon/work-gate.ts'
import { createApp } from './app.ts'
import { trainScorerOf } from './quality/judge.ts'
import { createLiveQualityJudge } from './quality/live-judge.ts'

/** A refused try-on is worth retrying once the try-ons ahead of it are done: about a second or two each. */
const LOCAL_WORK_RETRY_AFTER_SECONDS = 2

export interface Platform {
  /** The slots CPU-heavy local work runs in; made from the settings when not given (see localWorkGate). */
  localWork?: WorkGate
  sql: Sql
  store: ResultStore
  /** The runtime's fetch; on Node one whose DNS lookup refuses private addresses. */
  fetch: typeof fetch
  /** Resolves a host before fetching, where the runtime cannot check inside its lookup (Deno). */
  resolveHost?: (hostname: string) => Promise<string[]>
  /** The connection's remote address, for TRYON_CLIENT_ADDRESS_HEADER=socket; from the env the server passes. */
  socketAddress?: ClientAddressSource
  log?: Logger
  /** Where the local engine and bridal steps run; in the request's thread when not given. */
  localSteps?: LocalSteps
}

/** What the first engine does with a train: Vertex AI running a Gemini image model takes it in words, as Gemini does. */
function trainGuidanceOf(providers: Settings['providers']): TrainGuidance {
  const first = providers.engines[0]
  if (first === 'vertex' && providers.vertex && vertexModelKind(providers.vertex.model) === 'gemini') return TRAIN_GUIDANCE.gemini
  return TRAIN_GUIDANCE[first] ?? 'none'
}

/** The slots the settings give CPU-heavy local work (TRYON_LOCAL_CONCURRENCY, TRYON_LOCAL_QUEUE). */
export function localWorkGate(settings: Settings): WorkGate {
  return createWorkGate({ ...settings.service.localWork, retryAfterSeconds: LOCAL_WORK_RETRY_AFTER_SECONDS })
}

/**
 * The composition root: the service's app from settings and a platform's adapters. The function, the Worker and the
 * dev stack each call this (or createDeps then createApp, to change a dependency first) once.
 */
export function createService(settings: Settings, platform: Platform): ReturnType<typeof createApp> {
  return createApp(createDeps(settings, platform))
}

/** Builds the handler's dependencies from settings and a platform's adapters. */
export function createDeps(settings: Settings, platform: Platform): Deps {
  const log = platform.log ?? jsonLogger
  const localWork = platform.localWork ?? localWorkGate(settings)
  const localSteps = platform.localSteps ?? inThreadLocalSteps()
  const local = gatedEngine(localSteps.engine, localWork)
  const localBridal = gatedBridalSteps(localSteps.bridal('draws'), localWork)
  const fetchImage = createImageFetcher({
    fetch: platform.fetch,
    resolveHost: platform.resolveHost,
    allowPrivateHosts: settings.allowPrivateImageHosts,
  })
  // Provider hosts are the operator's configuration, so API calls use the plain fetch; the result URLs a provider
  // answers with are not, so they are downloaded through the guarded image fetcher.
  const runtime = providerRuntime({ log, fetchImage, prepareImage: preparedElsewhere(localSteps.prepareImage) })
  const { providers } = settings
  const { header, secret } = settings.clientAddress
  if (!secret) {
    throw new Error(
      'Set TRYON_CLIENT_ADDRESS_SECRET (32 or more random characters, e.g. `openssl rand -hex 32`): ' +
        'client addresses are kept only as an HMAC keyed with it',
    )
  }
  // What the pre-treatment supplies depends on the engine that will run first (README "Wedding-dress mode, per engine").
  const liveLocal = gatedBridalSteps(localSteps.bridal(trainGuidanceOf(providers)), localWork)
  // The judge TRYON_TRAIN_SCORER names scores the train from the answers of the one call that also checks the result
  // (issue 26): a judged wedding dress costs one call, not two. Without one the local scorer scores the train.
  const judge = createLiveQualityJudge(providers, runtime)
  const liveBridal: BridalSteps = { pretreatment: liveLocal.pretreatment, scorer: judge ? trainScorerOf(judge) : liveLocal.scorer }
  return {
    billing: createPostgresBilling(platform.sql, { timeoutMs: settings.service.databaseTimeoutMs }),
    store: platform.store,
    // Test keys never reach a provider (docs/api.md, "Test keys and scenarios"): their engine and train scorer are
    // always the local ones.
    engines: { live: createLiveEngine(providers, { local, runtime, budgetMs: settings.service.generationTimeoutMs }), test: local },
    bridal: { live: liveBridal, test: localBridal },
    judge,
    // Not through the work gate: it runs after the generation gave its slot back, a request already let in must not be
    // refused or queued behind new generations for it, and worker threads are taken in turn (docs/decisions.md).
    measure: (job) => localSteps.measure(job),
    fetchImage,
    clients: createClientIdentity({
      source: header === 'socket' ? (platform.socketAddress ?? (() => null)) : headerAddress(header),
      describeSource: header === 'socket' ? 'the connection' : `the ${header} header`,
      secret,
      log,
    }),
    ids: randomIds,
    clock: () => new Date(),
    config: settings.service,
    log,
  }
}
