import { ApiError } from '../http/errors.ts'
import type { Scenario } from '../http/request.ts'
import type { EngineOutcome, GeneratedImage, TryOnEngine } from './types.ts'

/**
 * A test key's X-Tryon-Scenario forces the engine's answer, so integrators can
 * exercise their error handling (and our refunds) without a real failure.
 */
export function withScenario(engine: TryOnEngine, scenario: Scenario | undefined): TryOnEngine {
  const forced: EngineOutcome | undefined =
    scenario === 'content_rejected'
      ? { kind: 'rejected', reason: 'forced by X-Tryon-Scenario: content_rejected' }
      : scenario === 'generation_failed'
        ? { kind: 'failed', reason: 'forced by X-Tryon-Scenario: generation_failed' }
        : undefined
  if (!forced) return engine
  return { name: engine.name, generate: async () => forced }
}

/** The image of a generated outcome; any other outcome becomes the error the caller sees. */
export function generatedImageOf(outcome: EngineOutcome): GeneratedImage {
  switch (outcome.kind) {
    case 'generated':
      return outcome.image
    case 'rejected':
      return throwError(new ApiError('ai_content_rejected', 'The generation engine rejected the content of these images. No credits were charged.'))
    case 'invalid_input':
      return throwError(new ApiError('unsupported_image', `${outcome.reason}. No credits were charged.`))
    case 'failed':
      return throwError(new ApiError('generation_failed', 'Image generation failed. No credits were charged; you may retry.'))
  }
}

function throwError(error: ApiError): never {
  throw error
}
