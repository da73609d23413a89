import type { EngineOutcome, GeneratedImage, TryOnEngine, TryOnRequest } from '../types.ts'
import { generateContent, inlineImagePart, type GeminiConfig } from './gemini-wire.ts'
import { tryOnBody, tryOnOutcome } from './gemini-tryon.ts'
import type { JsonAnswer, RetryPolicy } from './http.ts'
import { preparePair, type InputPolicy } from './images.ts'
import { providerEngine } from './outcomes.ts'
import { defaultOutputLimits, type OutputLimits } from './output.ts'
import type { ProviderRuntime } from './runtime.ts'

export interface GeminiEngineConfig extends GeminiConfig {
  /** An image-output model, e.g. gemini-3.1-flash-image. */
  model: string
}

export interface GeminiOptions {
  retry?: RetryPolicy
  output?: OutputLimits
}

/**
 * A whole inline request must stay under 20 MB; base64 adds a third, so two images of 6.5 MB each fit with
 * the prompt. JPEG, PNG and WebP are all accepted as they are.
 */
export const GEMINI_INPUT: InputPolicy = { formats: ['jpeg', 'png', 'webp'], maxBytes: 6.5 * 1024 * 1024, maxLongSide: 4096 }
const NAME = 'gemini'

/** Gemini image generation (generateContent): the two images inline with a try-on instruction, the image back inline. */
export function createGeminiEngine(
  config: GeminiEngineConfig,
  runtime: ProviderRuntime,
  options: GeminiOptions = {},
): TryOnEngine<GeneratedImage> {
  const output = options.output ?? defaultOutputLimits

  /** The generateContent call. The inputs are prepared here, so nothing holds them once it has answered. */
  async function send(request: TryOnRequest): Promise<JsonAnswer> {
    const [person, garment] = await preparePair(runtime.prepareImage, request, GEMINI_INPUT)
    return generateContent(runtime, config, {
      provider: NAME,
      model: config.model,
      signal: request.signal,
      remainingMs: request.remainingMs,
      // An image takes seconds to generate: a retry that leaves less is wasted, the next engine gets the time.
      minAttemptMs: 5_000,
      attemptTimeoutMs: 90_000,
      maxResponseBytes: Math.ceil(output.maxBytes * 1.4) + 256 * 1024,
      largeStrings: true,
      retry: options.retry,
      body: tryOnBody(request, person, garment, inlineImagePart),
    })
  }

  async function generate(request: TryOnRequest): Promise<EngineOutcome<GeneratedImage>> {
    return tryOnOutcome(NAME, runtime, await send(request), output)
  }

  return providerEngine(NAME, runtime, generate)
}
