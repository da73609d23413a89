import type { EngineOutcome, GeneratedImage, TryOnRequest } from '../types.ts'
import { apiError, readReply } from './gemini-wire.ts'
import { nearestAspectRatio, tryOnPrompt } from './gemini-prompt.ts'
import { modelNotFound } from './google-rpc.ts'
import { excerpt, type JsonAnswer } from './http.ts'
import type { PreparedImage } from './images.ts'
import { failed, failedAnswer, modelNotServed, rejected } from './outcomes.ts'
import { imageFromBase64, type OutputLimits } from './output.ts'
import type { ProviderRuntime } from './runtime.ts'

/**
 * A try-on as a generateContent body, the same on the Gemini API and on Vertex AI: the instruction and both images
 * inline (`part` writes an image in the platform's documented spelling), the image asked back in the supported
 * aspect ratio nearest the shopper photo (ai.google.dev/gemini-api/docs/image-generation, "Aspect ratios").
 */
export function tryOnBody(
  request: TryOnRequest,
  person: PreparedImage,
  garment: PreparedImage,
  part: (image: PreparedImage) => Record<string, unknown>,
): unknown {
  return {
    contents: [{ role: 'user', parts: [{ text: tryOnPrompt(request) }, part(person), part(garment)] }],
    generationConfig: {
      responseModalities: ['TEXT', 'IMAGE'],
      imageConfig: { aspectRatio: nearestAspectRatio(request.person.width, request.person.height) },
    },
  }
}

/**
 * A generateContent answer as an outcome. Gemini 3 image models may send interim "thought" images before the final
 * one; readReply keeps the final image. A 404 NOT_FOUND for the model is a configuration error (modelNotServed).
 */
export function tryOnOutcome(
  engine: string,
  runtime: ProviderRuntime,
  answer: JsonAnswer,
  output: OutputLimits,
): EngineOutcome<GeneratedImage> {
  if (answer.status !== 200) {
    const error = apiError(answer)
    const detail = { providerStatus: error.status, providerMessage: excerpt(error.message ?? answer.body) }
    if (modelNotFound(answer)) return modelNotServed(engine, runtime, detail)
    return failedAnswer(engine, runtime, answer.status, `generateContent answered HTTP ${answer.status}`, detail)
  }
  const reply = readReply(answer.body)
  switch (reply.kind) {
    case 'image':
      return { kind: 'generated', image: imageFromBase64(reply.data, engine, output) }
    case 'blocked':
      return rejected(engine, runtime, { blockedAt: reply.where, blockReason: reply.reason, providerMessage: excerpt(reply.message ?? '') })
    // Words without an image (finishReason STOP) are not a safety block: the model did not do the job.
    case 'text':
      return failed(engine, runtime, 'answered in words, without an image', { providerMessage: excerpt(reply.text) })
    case 'empty':
      return failed(engine, runtime, `no image (finishReason ${reply.finishReason ?? 'absent'})`, {
        finishMessage: excerpt(reply.finishMessage ?? ''),
      })
  }
}
