import { ApiError } from '../http/errors.ts'
import type { Scenario } from '../http/request.ts'
import { readCapped } from '../http/read-capped.ts'
import type { EngineOutcome, GeneratedImage, ResultImage, TryOnEngine } from './types.ts'

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
export function generatedImageOf<Image extends ResultImage>(outcome: EngineOutcome<Image>): Image {
  switch (outcome.kind) {
    case 'generated':
      return outcome.image
    case 'rejected':
      return throwError(new ApiError('ai_content_rejected', 'The generation engine rejected the content of these images. No credits were charged.'))
    case 'invalid_input':
      return throwError(new ApiError('unsupported_image', `${outcome.reason}. No credits were charged.`))
    case 'failed':
      return throwError(generationFailed())
  }
}

/**
 * The image as bytes, for a step that reads them (the train scorer): a download under way is read to its end,
 * into one array of its declared size. A download that stops short (its cap, its timeout) is a failed
 * generation, refunded like any other.
 */
export async function wholeImage(image: ResultImage): Promise<GeneratedImage> {
  if ('bytes' in image) return image
  const headers = new Headers(image.length === null ? {} : { 'content-length': String(image.length) })
  try {
    const bytes = await readCapped({ headers, body: image.stream }, Number.MAX_SAFE_INTEGER, undefined, () => new Error('unreachable: the download has its own cap'))
    return { bytes, contentType: image.contentType, engine: image.engine }
  } catch {
    throw generationFailed()
  }
}

/** What the caller sees when the generation produced no usable image. */
export function generationFailed(): ApiError {
  return new ApiError('generation_failed', 'Image generation failed. No credits were charged; you may retry.')
}

function throwError(error: ApiError): never {
  throw error
}
