import { Base64Bytes } from '../engine/providers/json-body.ts'
import { asDisplayed } from '../images/display.ts'
import { readImageHeader } from '../images/sniff.ts'
import type { GeneratedImage, InputImage } from '../engine/types.ts'
import { generateContent, type GeminiConfig } from '../engine/providers/gemini-wire.ts'
import type { AccessTokenSource } from '../engine/providers/google-auth.ts'
import { requestJson, type JsonAnswer, type RetryPolicy } from '../engine/providers/http.ts'
import type { InputPolicy, PreparedImage } from '../engine/providers/images.ts'
import type { ProviderRuntime } from '../engine/providers/runtime.ts'
import { vertexModelUrl } from '../engine/providers/vertex.ts'

export interface GeminiScorerConfig extends GeminiConfig {
  /** A vision model with structured output, e.g. gemini-3.5-flash. */
  model: string
}

export interface VertexScorerConfig {
  project: string
  location: string
  /** A Gemini model on Vertex AI, e.g. gemini-3.5-flash. */
  model: string
  /** https://{location}-aiplatform.googleapis.com (no prefix for `global`) unless a proxy or a test fake stands in. */
  baseUrl?: string
  tokens: AccessTokenSource
}

/** Three images in one request under Gemini's 20 MB inline limit, base64 included. */
export const SCORER_INPUT: InputPolicy = { formats: ['jpeg', 'png', 'webp'], maxBytes: 4.5 * 1024 * 1024, maxLongSide: 2048 }
/** A judge is optional: one quick retry, then the verdict stays open (trainScore null). */
export const SCORER_RETRY: RetryPolicy = { attempts: 2, baseDelayMs: 500, maxDelayMs: 2_000 }
const TRAIN_LENGTHS = ['none', 'short', 'medium', 'long'] as const

/**
 * The train questions, one line each, keyed by the answer they ask for: the quality judge
 * (shared/quality/gemini-judge.ts) asks them beside its own in one call for a wedding dress, and the bridal pipeline's
 * train scorer is served from that call's answers (trainScorerOf in shared/quality/judge.ts). The train's "same
 * person" is the judge's samePerson, samePose and sameBackground together.
 */
export const TRAIN_QUESTIONS = {
  gownOnBody:
    'gownOnBody: in image 3, is the gown of image 2 worn on the person: bodice on the torso, skirt hanging from the waist over the legs ' +
    '(not floating, not beside the person, not on the head, not a slab of fabric on the floor)?',
  croppedAboveFeet: 'croppedAboveFeet: is image 3 cut off above the feet or the hem, so that the floor around the feet cannot be seen?',
  trainOnFloor: 'trainOnFloor: does fabric of the gown lie on the floor beyond the feet (a train), behind or around them?',
  trainContinuous: 'trainContinuous: is that fabric one piece with the skirt, flowing out of the hem with no gap, seam or separate patch?',
  trainLength:
    "trainLength: how far that fabric reaches beyond the feet: none, short (under a tenth of the person's height), medium, " +
    'or long (a quarter of the height or more).',
} as const

/** The train answers' schema properties (an OpenAPI subset: types in upper case), `samePerson` aside. */
export const TRAIN_ANSWER_PROPERTIES = {
  gownOnBody: { type: 'BOOLEAN' },
  croppedAboveFeet: { type: 'BOOLEAN' },
  trainOnFloor: { type: 'BOOLEAN' },
  trainContinuous: { type: 'BOOLEAN' },
  trainLength: { type: 'STRING', enum: [...TRAIN_LENGTHS] },
} as const

export interface JudgeAnswers {
  gownOnBody: boolean
  croppedAboveFeet: boolean
  trainOnFloor: boolean
  trainContinuous: boolean
  trainLength: (typeof TRAIN_LENGTHS)[number]
  samePerson: boolean
}

/**
 * The train score, computed from the judge's answers (never a number the judge made up): a gown not on the
 * body or a picture cropped above the feet has no train to speak of (0, refunded); no fabric on the floor is
 * a train not rendered; a train scores by its length, held down when it is not one piece with the skirt or
 * the person was not kept.
 */
export function scoreFromAnswers(a: JudgeAnswers): number {
  if (!a.gownOnBody || a.croppedAboveFeet) return 0
  if (!a.trainOnFloor || a.trainLength === 'none') return 0.1
  let score = a.trainLength === 'long' ? 0.95 : a.trainLength === 'medium' ? 0.8 : 0.6
  if (!a.trainContinuous) score = Math.min(score, 0.3)
  if (!a.samePerson) score = Math.min(score, 0.4)
  return score
}

/** A reply's JSON object (possibly in a ```json fence); undefined for anything else. */
export function jsonObjectOf(text: string): Record<string, unknown> | undefined {
  const json = text
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/\s*```$/, '')
  let parsed: unknown
  try {
    parsed = JSON.parse(json)
  } catch {
    return undefined
  }
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined
}

/** The train answers in a parsed reply; undefined unless every one has its type. */
export function trainAnswersOf(r: Record<string, unknown>): JudgeAnswers | undefined {
  const flags = ['gownOnBody', 'croppedAboveFeet', 'trainOnFloor', 'trainContinuous', 'samePerson'] as const
  if (flags.some((flag) => typeof r[flag] !== 'boolean')) return undefined
  if (!TRAIN_LENGTHS.includes(r.trainLength as JudgeAnswers['trainLength'])) return undefined
  const { gownOnBody, croppedAboveFeet, trainOnFloor, trainContinuous, trainLength, samePerson } = r as unknown as JudgeAnswers
  return { gownOnBody, croppedAboveFeet, trainOnFloor, trainContinuous, trainLength, samePerson }
}

/** POSTs a judge's body to the Gemini API's generateContent with the API key; one quick retry. */
export function geminiJudgeTransport(
  config: GeminiScorerConfig,
  runtime: ProviderRuntime,
): (body: unknown, signal?: AbortSignal) => Promise<JsonAnswer> {
  return (body, signal) =>
    generateContent(runtime, config, {
      provider: 'gemini-judge',
      model: config.model,
      signal,
      attemptTimeoutMs: 30_000,
      maxResponseBytes: 256 * 1024,
      retry: SCORER_RETRY,
      body,
    })
}

/** An image part as Vertex AI's reference writes it (camelCase). */
export const vertexImagePart = (image: PreparedImage) => ({
  inlineData: { mimeType: image.contentType, data: new Base64Bytes(image.bytes) },
})

/**
 * POSTs a judge's body to Gemini in Vertex AI, for deployments that have a Vertex service account (the one the Virtual
 * Try-On model uses) and no Gemini API key: `{model}:generateContent` on Vertex's model URL (vertexModelUrl in
 * shared/engine/providers/vertex.ts) with an OAuth bearer token of the cloud-platform scope; the bodies are the
 * Gemini API's, parts in camelCase (cloud.google.com/vertex-ai/generative-ai/docs/model-reference/inference). A 401
 * gets one fresh token.
 */
export function vertexJudgeTransport(
  config: VertexScorerConfig,
  runtime: ProviderRuntime,
): (body: unknown, signal?: AbortSignal) => Promise<JsonAnswer> {
  const url = vertexGenerateContentUrl(config)
  return async (body, signal) => {
    const call = async () =>
      requestJson(runtime, {
        provider: 'vertex-judge',
        url,
        method: 'POST',
        headers: { authorization: `Bearer ${await config.tokens.token(signal)}` },
        body,
        signal,
        attemptTimeoutMs: 30_000,
        maxResponseBytes: 256 * 1024,
        retry: SCORER_RETRY,
      })
    const answer = await call()
    if (answer.status !== 401) return answer
    // A cached token revoked or expired early: one fresh exchange, then the answer stands.
    config.tokens.invalidate()
    return call()
  }
}

export function vertexGenerateContentUrl(config: Pick<VertexScorerConfig, 'project' | 'location' | 'model' | 'baseUrl'>): string {
  return vertexModelUrl(config, config.model, 'generateContent')
}

/** A generated image as an input image (its header read), for prepareInput. */
export function asInput(image: GeneratedImage): InputImage | undefined {
  const header = readImageHeader(image.bytes)
  return header ? { ...asDisplayed(header, image.bytes), bytes: image.bytes } : undefined
}
