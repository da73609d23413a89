import { isText, LargeString } from '../../encoding/json-bytes.ts'
import { googleRetryDelayMs } from './google-rpc.ts'
import { requestJson, type JsonAnswer, type RetryPolicy } from './http.ts'
import type { PreparedImage } from './images.ts'
import { Base64Bytes } from './json-body.ts'
import { asArray, asRecord, field } from './json.ts'
import type { ProviderRuntime } from './runtime.ts'

export interface GeminiConfig {
  apiKey: string
  /** https://generativelanguage.googleapis.com unless a proxy or a test fake stands in. */
  baseUrl: string
}

export function generateContentUrl(config: GeminiConfig, model: string): string {
  return `${config.baseUrl.replace(/\/+$/, '')}/v1beta/models/${encodeURIComponent(model)}:generateContent`
}

/** An image part as the REST reference writes it (snake_case), raw base64 without a data: prefix. */
export function inlineImagePart(image: PreparedImage): Record<string, unknown> {
  return { inline_data: { mime_type: image.contentType, data: new Base64Bytes(image.bytes) } }
}

export async function generateContent(
  runtime: ProviderRuntime,
  config: GeminiConfig,
  call: {
    provider: string
    model: string
    body: unknown
    signal?: AbortSignal
    remainingMs?: () => number
    minAttemptMs?: number
    attemptTimeoutMs: number
    maxResponseBytes: number
    /** The answer carries an image: leave its base64 in the answer's bytes (JsonCall.largeStrings). */
    largeStrings?: boolean
    retry?: RetryPolicy
  },
): Promise<JsonAnswer> {
  return requestJson(runtime, {
    provider: call.provider,
    url: generateContentUrl(config, call.model),
    method: 'POST',
    headers: { 'x-goog-api-key': config.apiKey },
    body: call.body,
    signal: call.signal,
    remainingMs: call.remainingMs,
    minAttemptMs: call.minAttemptMs,
    // A 429 names its wait in the body (RetryInfo), not in a Retry-After header.
    serverDelayMs: googleRetryDelayMs,
    attemptTimeoutMs: call.attemptTimeoutMs,
    maxResponseBytes: call.maxResponseBytes,
    largeStrings: call.largeStrings,
    retry: call.retry,
  })
}

/** What a generateContent answer amounts to, whichever spelling (camelCase or snake_case) it used. */
export type GeminiReply =
  | { kind: 'image'; data: string | LargeString; mimeType: string | undefined }
  | { kind: 'blocked'; where: 'prompt' | 'candidate'; reason: string; message?: string }
  | { kind: 'text'; text: string }
  | { kind: 'empty'; finishReason: string | undefined; finishMessage?: string }

/**
 * The finish reasons that are safety blocks, from the `FinishReason` enum of googleapis/python-genai
 * (google/genai/types.py): content "potentially contains safety violations", "forbidden terms", "prohibited
 * content", "Sensitive Personally Identifiable Information", and the image variants. The others are not a
 * judgement on the content: NO_IMAGE ("expected to generate an image, but none was generated"), OTHER,
 * IMAGE_OTHER, LANGUAGE, RECITATION, IMAGE_RECITATION, MAX_TOKENS… are failures, and the fallback chain moves on.
 * Any `promptFeedback.blockReason` (the `BlockedReason` enum) is a block of the input, hence a rejection.
 */
const SAFETY_FINISH = new Set(['SAFETY', 'IMAGE_SAFETY', 'PROHIBITED_CONTENT', 'IMAGE_PROHIBITED_CONTENT', 'BLOCKLIST', 'SPII'])

/**
 * Reads a generateContent answer in the order proxies use: no candidate → the prompt's block reason; an image
 * in any part (a model's final image, not a "thought" sketch, when there are both) → the image; a safety
 * finish → a block; text only → words without an image; anything else → empty, with its finish reason.
 */
export function readReply(body: unknown): GeminiReply {
  const root = asRecord(body)
  const candidates = asArray(root.candidates).map(asRecord)
  if (candidates.length === 0) {
    const feedback = asRecord(field(root, 'promptFeedback', 'prompt_feedback'))
    const blockReason = field(feedback, 'blockReason', 'block_reason')
    if (typeof blockReason === 'string')
      return {
        kind: 'blocked',
        where: 'prompt',
        reason: blockReason,
        message: stringOr(field(feedback, 'blockReasonMessage', 'block_reason_message')),
      }
    return { kind: 'empty', finishReason: undefined }
  }
  const candidate = candidates[0]
  const parts = asArray(asRecord(candidate.content).parts).map(asRecord)
  const images = parts.flatMap((part) => {
    const inline = asRecord(field(part, 'inlineData', 'inline_data'))
    const data = inline.data
    const mimeType = stringOr(field(inline, 'mimeType', 'mime_type'))
    if (!isText(data) || data === '' || (mimeType !== undefined && !mimeType.startsWith('image/'))) return []
    return [{ data, mimeType, thought: part.thought === true }]
  })
  const image = images.filter((i) => !i.thought).at(-1) ?? images.at(-1)
  if (image) return { kind: 'image', data: image.data, mimeType: image.mimeType }

  const finishReason = stringOr(field(candidate, 'finishReason', 'finish_reason'))
  if (finishReason && SAFETY_FINISH.has(finishReason)) {
    return {
      kind: 'blocked',
      where: 'candidate',
      reason: finishReason,
      message: stringOr(field(candidate, 'finishMessage', 'finish_message')),
    }
  }
  const text = textOf(parts)
  if (text !== '' && (finishReason === undefined || finishReason === 'STOP')) return { kind: 'text', text }
  return { kind: 'empty', finishReason, finishMessage: stringOr(field(candidate, 'finishMessage', 'finish_message')) }
}

/** The answer's words (thoughts left out): what a JSON-mode call returns. */
export function replyText(body: unknown): string | undefined {
  const candidate = asRecord(asArray(asRecord(body).candidates)[0])
  const text = textOf(asArray(asRecord(candidate.content).parts).map(asRecord))
  return text === '' ? undefined : text
}

function textOf(parts: Record<string, unknown>[]): string {
  return parts
    .filter((p) => p.thought !== true && isText(p.text))
    .map((p) => (p.text instanceof LargeString ? p.text.text() : (p.text as string)))
    .join('')
}

function stringOr(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

/** The Gemini API's error envelope: { error: { code, message, status } }. */
export function apiError(answer: JsonAnswer): { status: unknown; message: unknown } {
  const error = asRecord(asRecord(answer.body).error)
  return { status: error.status, message: error.message }
}
