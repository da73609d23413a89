import { Base64Bytes } from '../engine/providers/json-body.ts'
import { asDisplayed } from '../images/display.ts'
import { readImageHeader } from '../images/sniff.ts'
import type { GeneratedImage, InputImage } from '../engine/types.ts'
import { generateContent, inlineImagePart, readReply, replyText, type GeminiConfig } from '../engine/providers/gemini-wire.ts'
import type { AccessTokenSource } from '../engine/providers/google-auth.ts'
import { modelNotFound } from '../engine/providers/google-rpc.ts'
import { excerpt, ProviderError, requestJson, type JsonAnswer, type RetryPolicy } from '../engine/providers/http.ts'
import { prepareInput, type InputPolicy, type PreparedImage } from '../engine/providers/images.ts'
import type { ProviderRuntime } from '../engine/providers/runtime.ts'
import { vertexModelUrl } from '../engine/providers/vertex.ts'
import type { ScoreOutcome, TrainScorer } from './ports.ts'

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
 * The train questions, one line each, keyed by the answer they ask for: the train judge asks them all, and the
 * quality judge (shared/quality/gemini-judge.ts) asks them beside its own in one call for a wedding dress.
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
  samePerson: 'samePerson: is image 3 the same person, pose and background as image 1?',
} as const

const RUBRIC = [
  'You check wedding-dress virtual try-on results. Answer each question about the images literally; do not grade overall.',
  "Image 1 is the shopper's original photo. Image 2 is the product photo of the gown. Image 3 is the generated try-on.",
  ...Object.values(TRAIN_QUESTIONS),
].join('\n')

/** The train answers' schema properties (an OpenAPI subset: types in upper case), `samePerson` aside. */
export const TRAIN_ANSWER_PROPERTIES = {
  gownOnBody: { type: 'BOOLEAN' },
  croppedAboveFeet: { type: 'BOOLEAN' },
  trainOnFloor: { type: 'BOOLEAN' },
  trainContinuous: { type: 'BOOLEAN' },
  trainLength: { type: 'STRING', enum: [...TRAIN_LENGTHS] },
} as const

/** The answers the judge must give, as a responseSchema (an OpenAPI subset: types in upper case). */
const ANSWER_SCHEMA = {
  type: 'OBJECT',
  properties: {
    ...TRAIN_ANSWER_PROPERTIES,
    samePerson: { type: 'BOOLEAN' },
    reason: { type: 'STRING' },
  },
  required: ['gownOnBody', 'croppedAboveFeet', 'trainOnFloor', 'trainContinuous', 'trainLength', 'samePerson'],
  propertyOrdering: ['gownOnBody', 'croppedAboveFeet', 'trainOnFloor', 'trainContinuous', 'trainLength', 'samePerson', 'reason'],
}

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

/** The answers in a reply (possibly in a ```json fence); undefined unless every required answer has its type. */
export function answersOf(text: string): JudgeAnswers | undefined {
  const record = jsonObjectOf(text)
  return record && trainAnswersOf(record)
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

/**
 * The three images and the questions, with the answers' schema: one request body for either endpoint. Gemini 3
 * models think at `high` unless told; `low` "minimizes latency and cost" (ai.google.dev/gemini-api/docs/gemini-3,
 * thinking_level), enough for literal questions. Older models take a thinking budget instead and refuse the level.
 */
function judgeRequest(model: string, images: PreparedImage[], part: (image: PreparedImage) => Record<string, unknown>) {
  return {
    contents: [{ role: 'user', parts: [{ text: RUBRIC }, ...images.map(part)] }],
    generationConfig: {
      temperature: 0,
      responseMimeType: 'application/json',
      responseSchema: ANSWER_SCHEMA,
      ...(/^gemini-3/.test(model) && { thinkingConfig: { thinkingLevel: 'low' } }),
    },
  }
}

type Transport = (body: (part: (image: PreparedImage) => Record<string, unknown>) => unknown, signal?: AbortSignal) => Promise<JsonAnswer>

function createJudge(name: string, model: string, runtime: ProviderRuntime, send: Transport): TrainScorer {
  const unavailable = (reason: string, detail: Record<string, unknown> = {}): Extract<ScoreOutcome, { kind: 'unavailable' }> => {
    runtime.log({ level: 'warn', msg: `${name} train judge unavailable`, reason, ...detail })
    return { kind: 'unavailable', reason: `${name} judge: ${reason}` }
  }
  return {
    name,
    async score({ result, person, garment, signal }): Promise<ScoreOutcome> {
      try {
        const generated = asInput(result)
        if (!generated) return unavailable('the generated image could not be read')
        const images = [
          prepareInput(person, 'userPhoto', SCORER_INPUT),
          prepareInput(garment, 'productImage', SCORER_INPUT),
          prepareInput(generated, 'userPhoto', SCORER_INPUT),
        ]
        const answer = await send((p) => judgeRequest(model, images, p), signal)
        if (modelNotFound(answer))
          return { ...unavailable('the model is not served (404 NOT_FOUND)', { provider: excerpt(answer.body) }), modelNotServed: true }
        if (answer.status !== 200) return unavailable(`HTTP ${answer.status}`, { provider: excerpt(answer.body) })
        const reply = readReply(answer.body)
        if (reply.kind === 'blocked') return unavailable(`blocked (${reply.reason})`)
        const text = replyText(answer.body)
        if (text === undefined) return unavailable('no text in the answer')
        const answers = answersOf(text)
        if (!answers) return unavailable('the answer does not follow the schema', { answer: excerpt(text) })
        runtime.log({ level: 'info', msg: `${name} train judge answered`, ...answers })
        return { kind: 'scored', score: scoreFromAnswers(answers) }
      } catch (error) {
        return unavailable(error instanceof ProviderError ? error.kind : 'unexpected error', {
          error: error instanceof Error ? error.message : String(error),
        })
      }
    },
  }
}

/**
 * The judge on the Gemini API (generateContent with an API key): a vision model answers the questions in
 * JSON, constrained by responseMimeType application/json and a responseSchema
 * (ai.google.dev/gemini-api/docs/structured-output). Any failure, block or answer off the schema is
 * `unavailable`: trainScore null, charged in full as the spec requires.
 */
export function createGeminiTrainScorer(config: GeminiScorerConfig, runtime: ProviderRuntime): TrainScorer {
  const send = geminiJudgeTransport(config, runtime)
  return createJudge('gemini', config.model, runtime, (body, signal) => send(body(inlineImagePart), signal))
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

/**
 * The same judge on Gemini in Vertex AI, for deployments that have a Vertex service account (the one the
 * Virtual Try-On model uses) and no Gemini API key. Vertex AI serves Gemini at
 * `{model}:generateContent` on Vertex's model URL (vertexModelUrl in shared/engine/providers/vertex.ts), with an OAuth bearer token of
 * the cloud-platform scope; the request and answer bodies are the Gemini API's, parts written in camelCase
 * (inlineData.mimeType) as its reference shows
 * (cloud.google.com/vertex-ai/generative-ai/docs/model-reference/inference).
 */
export function createVertexTrainScorer(config: VertexScorerConfig, runtime: ProviderRuntime): TrainScorer {
  const send = vertexJudgeTransport(config, runtime)
  return createJudge('vertex', config.model, runtime, (body, signal) => send(body(vertexImagePart), signal))
}

/** An image part as Vertex AI's reference writes it (camelCase). */
export const vertexImagePart = (image: PreparedImage) => ({
  inlineData: { mimeType: image.contentType, data: new Base64Bytes(image.bytes) },
})

/** POSTs a judge's body to Vertex AI's generateContent with a bearer token; a 401 gets one fresh token. */
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
