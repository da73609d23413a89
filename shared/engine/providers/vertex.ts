import { isText } from '../../encoding/json-bytes.ts'
import type { EngineOutcome, GeneratedImage, NoImageOutcome, TryOnEngine, TryOnRequest } from '../types.ts'
import { tryOnBody, tryOnOutcome } from './gemini-tryon.ts'
import type { AccessTokenSource } from './google-auth.ts'
import { googleRetryDelayMs, modelNotFound } from './google-rpc.ts'
import { excerpt, requestJson, type JsonAnswer, type RetryPolicy } from './http.ts'
import { preparePair, type InputPolicy, type PreparedImage } from './images.ts'
import { Base64Bytes } from './json-body.ts'
import { asArray, asRecord } from './json.ts'
import { failed, failedAnswer, modelNotServed, providerEngine, rejected } from './outcomes.ts'
import { defaultOutputLimits, imageFromBase64, type OutputLimits } from './output.ts'
import type { ProviderRuntime } from './runtime.ts'
import { vertexModelKind } from './settings.ts'

export interface VertexConfig {
  project: string
  /** Where a Virtual Try-On model is called. */
  location: string
  /** Where a Gemini image model is called: `global` unless configured (Gemini 3 is served there only). */
  geminiLocation?: string
  /** https://{location}-aiplatform.googleapis.com unless a proxy or a test fake stands in. */
  baseUrl?: string
  /** virtual-try-on-001 (`:predict`) or a Gemini image model (`:generateContent`). */
  model?: string
  tokens: AccessTokenSource
}

export interface VertexOptions {
  retry?: RetryPolicy
  output?: OutputLimits
}

/**
 * Vertex documents JPEG and PNG only; the model page gives 10 MB per image and the newer one 7 MB for inline
 * data, so the smaller limit is used. WebP and larger images are re-encoded as JPEG.
 */
const VERTEX_INPUT: InputPolicy = { formats: ['jpeg', 'png'], maxBytes: 7 * 1024 * 1024, maxLongSide: 4096 }
/** Gemini on Vertex AI takes PNG, JPEG and WebP, 7 MB per inline file (the Gemini 3.1 Flash Image model page). */
const VERTEX_GEMINI_INPUT: InputPolicy = { formats: ['jpeg', 'png', 'webp'], maxBytes: 7 * 1024 * 1024, maxLongSide: 4096 }
/**
 * An input refused by the safety filters. Google's "Responsible AI and usage guidelines for Imagen"
 * (cloud.google.com/vertex-ai/generative-ai/docs/image/responsible-ai-imagen, "Safety filters") says: if the
 * model responds with an error message such as "The prompt couldn't be submitted" or "it might violate our
 * policies", the input is triggering a safety filter; filter messages end with "Support codes: <n>", the
 * codes tabled on the same pages. Such an answer is a 400 with status INVALID_ARGUMENT, so both are required:
 * a 400 that says none of this (a malformed request, a wrong field) is our failure, not the shopper's.
 */
const RAI_MESSAGE = new RegExp(
  [
    "couldn['’]?t be submitted",
    'could not be submitted',
    'might violate',
    "violates? (?:our|google['’]s)? ?(?:policies|responsible ai)",
    'responsible ai practices',
    'support codes?:\\s*\\d+',
  ].join('|'),
  'i',
)
const NAME = 'vertex'

/**
 * `POST {base}/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:{method}`, where the base
 * is `https://{location}-aiplatform.googleapis.com` (no region prefix for location `global`) unless configured.
 */
export function vertexModelUrl(config: { project: string; location: string; baseUrl?: string }, model: string, method: string): string {
  const host = config.location === 'global' ? 'https://aiplatform.googleapis.com' : `https://${config.location}-aiplatform.googleapis.com`
  const base = (config.baseUrl ?? host).replace(/\/+$/, '')
  const location = `projects/${encodeURIComponent(config.project)}/locations/${encodeURIComponent(config.location)}`
  return `${base}/v1/${location}/publishers/google/models/${encodeURIComponent(model)}:${method}`
}

export function vertexEndpoint(config: Pick<VertexConfig, 'project' | 'location' | 'baseUrl' | 'model'>): string {
  return vertexModelUrl(config, config.model ?? 'virtual-try-on-001', 'predict')
}

/** The part of a Gemini request on Vertex AI, camelCase as its reference writes it (model-reference/inference). */
const vertexImagePart = (image: PreparedImage) => ({ inlineData: { mimeType: image.contentType, data: new Base64Bytes(image.bytes) } })

/**
 * Vertex AI: a Virtual Try-On model (`virtual-try-on-001`, `:predict` at VERTEX_LOCATION, both images inline as
 * base64, one result back inline) or a Gemini image model (`:generateContent` at VERTEX_GEMINI_LOCATION, the Gemini
 * engine's request and answer handling), with the service account's token either way.
 */
export function createVertexEngine(
  config: VertexConfig,
  runtime: ProviderRuntime,
  options: VertexOptions = {},
): TryOnEngine<GeneratedImage> {
  const model = config.model ?? 'virtual-try-on-001'
  const gemini = vertexModelKind(model) === 'gemini'
  const url = gemini
    ? vertexModelUrl({ ...config, location: config.geminiLocation ?? 'global' }, model, 'generateContent')
    : vertexEndpoint(config)
  const output = options.output ?? defaultOutputLimits

  async function post(request: TryOnRequest, body: unknown): Promise<JsonAnswer> {
    const call = async () =>
      requestJson(runtime, {
        provider: NAME,
        url,
        method: 'POST',
        headers: { authorization: `Bearer ${await config.tokens.token(request.signal)}` },
        body,
        signal: request.signal,
        remainingMs: request.remainingMs,
        minAttemptMs: 5_000,
        // Vertex answers 429 RESOURCE_EXHAUSTED against a per-minute quota, sometimes with a RetryInfo wait.
        serverDelayMs: googleRetryDelayMs,
        attemptTimeoutMs: 90_000,
        maxResponseBytes: Math.ceil(output.maxBytes * 1.4) + 64 * 1024,
        largeStrings: true,
        retry: options.retry,
      })
    const answer = await call()
    if (answer.status !== 401) return answer
    // A cached token revoked or expired early: one fresh exchange, then the answer stands.
    config.tokens.invalidate()
    return call()
  }

  /** The instance to predict on. The inputs are prepared here, so nothing holds them once predict has answered. */
  async function predictBody(request: TryOnRequest): Promise<unknown> {
    const [person, garment] = await preparePair(runtime.prepareImage, request, VERTEX_INPUT)
    return {
      instances: [
        {
          personImage: { image: { bytesBase64Encoded: new Base64Bytes(person.bytes) } },
          productImages: [{ image: { bytesBase64Encoded: new Base64Bytes(garment.bytes) } }],
        },
      ],
      parameters: { sampleCount: 1, outputOptions: { mimeType: 'image/jpeg', compressionQuality: 90 } },
    }
  }

  /** The Gemini request. The inputs are prepared here, so nothing holds them once it has answered. */
  async function geminiBody(request: TryOnRequest): Promise<unknown> {
    const [person, garment] = await preparePair(runtime.prepareImage, request, VERTEX_GEMINI_INPUT)
    return tryOnBody(request, person, garment, vertexImagePart)
  }

  // Its frame ends once the body is made and handed over, so only post's holds the body while it runs.
  const send = async (request: TryOnRequest): Promise<JsonAnswer> =>
    post(request, await (gemini ? geminiBody(request) : predictBody(request)))

  async function generate(request: TryOnRequest): Promise<EngineOutcome<GeneratedImage>> {
    const answer = await send(request)
    if (gemini) return tryOnOutcome(NAME, runtime, answer, output)
    if (answer.status !== 200) return errorAnswer(answer)

    const predictions = asArray(asRecord(answer.body).predictions).map(asRecord)
    const produced = predictions.find((p) => isText(p.bytesBase64Encoded) && p.bytesBase64Encoded !== '')
    if (produced) return { kind: 'generated', image: imageFromBase64(produced.bytesBase64Encoded, NAME, output) }
    // A filtered output carries `raiFilteredReason` (VirtualTryOnModelResultProto in the Vertex REST reference).
    const filtered = predictions.find((p) => typeof p.raiFilteredReason === 'string')
    if (filtered) return rejected(NAME, runtime, { raiFilteredReason: excerpt(filtered.raiFilteredReason) })
    // "If fewer images than requested are returned, then some generated output are blocked" (the page above).
    if (predictions.length === 0) return rejected(NAME, runtime, { raiFilteredReason: 'no prediction returned (filtered)' })
    return failed(NAME, runtime, 'predictions carried no image', { provider: excerpt(answer.body) })
  }

  function errorAnswer(answer: JsonAnswer): NoImageOutcome {
    const error = asRecord(asRecord(answer.body).error)
    const detail = { status: answer.status, providerStatus: error.status, providerMessage: excerpt(error.message ?? answer.body) }
    if (modelNotFound(answer)) return modelNotServed(NAME, runtime, detail)
    if (
      answer.status === 400 &&
      error.status === 'INVALID_ARGUMENT' &&
      typeof error.message === 'string' &&
      RAI_MESSAGE.test(error.message)
    ) {
      return rejected(NAME, runtime, detail)
    }
    return failedAnswer(NAME, runtime, answer.status, `predict answered HTTP ${answer.status}`, detail)
  }

  return providerEngine(NAME, runtime, generate)
}
