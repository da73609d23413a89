import { serviceAccountTokens, staticAccessToken, type AccessTokenSource } from '../engine/providers/google-auth.ts'
import type { BreakerPolicy } from '../engine/providers/breaker.ts'
import type { ProviderRuntime } from '../engine/providers/runtime.ts'
import type { ProviderSettings } from '../engine/providers/settings.ts'
import { createGeminiQualityJudge, createVertexQualityJudge } from './gemini-judge.ts'
import { oneJudgementPerResult, watchedJudge, type QualityJudge } from './judge.ts'

/**
 * The seeing judge live keys get, where one is configured: the one TRYON_TRAIN_SCORER resolves to (auto: the Gemini
 * API when GEMINI_API_KEY is set, else Gemini on Vertex AI with the service account), on the judge's model
 * (GEMINI_SCORER_MODEL / VERTEX_SCORER_MODEL), watched against the lifecycle table and behind its breaker, one
 * judgement per result. Undefined when the train scorer is local: no judge is configured, the measured checks stand
 * alone. Build it once per isolate, and serve the bridal pipeline's scorer from it (trainScorerOf).
 */
export function createLiveQualityJudge(
  providers: ProviderSettings,
  runtime: ProviderRuntime,
  options: { tokens?: AccessTokenSource; breaker?: BreakerPolicy } = {},
): QualityJudge | undefined {
  const watch = { now: runtime.now, log: runtime.log, breaker: options.breaker }
  if (providers.trainScorer === 'gemini' && providers.gemini) {
    const model = providers.gemini.scorerModel
    const { apiKey, baseUrl } = providers.gemini
    return oneJudgementPerResult(
      watchedJudge(
        createGeminiQualityJudge({ apiKey, baseUrl, model }, runtime),
        { setting: 'GEMINI_SCORER_MODEL', platform: 'gemini-api', model },
        watch,
      ),
    )
  }
  if (providers.trainScorer === 'vertex' && providers.vertex) {
    const vertex = providers.vertex
    // The try-on engine's token source may be passed in, so that one service account makes one token exchange.
    const tokens =
      options.tokens ??
      (vertex.serviceAccount ? serviceAccountTokens(vertex.serviceAccount, runtime) : staticAccessToken(vertex.accessToken ?? ''))
    const model = vertex.scorerModel
    return oneJudgementPerResult(
      watchedJudge(
        createVertexQualityJudge(
          { project: vertex.project, location: vertex.geminiLocation, model, baseUrl: vertex.baseUrl, tokens },
          runtime,
        ),
        { setting: 'VERTEX_SCORER_MODEL', platform: 'vertex-ai', model },
        watch,
      ),
    )
  }
  return undefined
}
