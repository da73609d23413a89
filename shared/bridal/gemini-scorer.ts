import { readImageHeader } from '../images/sniff.ts'
import type { GeneratedImage, InputImage } from '../engine/types.ts'
import { generateContent, inlineImagePart, readReply, replyText, type GeminiConfig } from '../engine/providers/gemini-wire.ts'
import { excerpt, ProviderError, type RetryPolicy } from '../engine/providers/http.ts'
import { prepareInput, type InputPolicy } from '../engine/providers/images.ts'
import type { ProviderRuntime } from '../engine/providers/runtime.ts'
import type { ScoreOutcome, TrainScorer } from './ports.ts'

export interface GeminiScorerConfig extends GeminiConfig {
  /** A vision model with JSON output, e.g. gemini-2.5-flash. */
  model: string
}

/** Three images in one request under Gemini's 20 MB inline limit, base64 included. */
const SCORER_INPUT: InputPolicy = { formats: ['jpeg', 'png', 'webp'], maxBytes: 4.5 * 1024 * 1024, maxLongSide: 2048 }
/** A judge is optional: one quick retry, then the verdict stays open (trainScore null). */
const SCORER_RETRY: RetryPolicy = { attempts: 2, baseDelayMs: 500, maxDelayMs: 2_000 }

const RUBRIC = [
  'You grade wedding-dress virtual try-on results.',
  "Image 1 is the shopper's original photo. Image 2 is the product photo of the gown. Image 3 is the generated try-on.",
  "Rate only how well image 3 renders the gown's train: fabric continuing from the skirt past the feet and spread on the floor, fully visible, unbroken and realistic.",
  'trainScore 0: no train (the gown stops at or above the feet, or the picture is cropped above them). 0.5: a short, partial or implausible train. 1: a full train spread on the floor.',
  'Answer with JSON only: {"trainScore": number between 0 and 1, "reason": short string}.',
].join('\n')

/**
 * The remote train scorer: a Gemini vision model judges the generated image and answers JSON. Any failure,
 * block or answer that is not a score in [0, 1] is `unavailable`, which the bridal pipeline delivers with
 * `trainScore: null` (charged, verdict open), as the spec requires.
 */
export function createGeminiTrainScorer(config: GeminiScorerConfig, runtime: ProviderRuntime): TrainScorer {
  const unavailable = (reason: string, detail: Record<string, unknown> = {}): ScoreOutcome => {
    runtime.log({ level: 'warn', msg: 'gemini train judge unavailable', reason, ...detail })
    return { kind: 'unavailable', reason: `gemini judge: ${reason}` }
  }

  return {
    name: 'gemini',
    async score({ result, person, garment, signal }): Promise<ScoreOutcome> {
      try {
        const generated = asInput(result)
        if (!generated) return unavailable('the generated image could not be read')
        const images = [prepareInput(person, 'userPhoto', SCORER_INPUT), prepareInput(garment, 'productImage', SCORER_INPUT), prepareInput(generated, 'userPhoto', SCORER_INPUT)]
        const answer = await generateContent(runtime, config, {
          provider: 'gemini-judge',
          model: config.model,
          signal,
          attemptTimeoutMs: 30_000,
          maxResponseBytes: 256 * 1024,
          retry: SCORER_RETRY,
          body: {
            contents: [{ role: 'user', parts: [{ text: RUBRIC }, ...images.map(inlineImagePart)] }],
            generationConfig: {
              temperature: 0,
              responseMimeType: 'application/json',
              responseSchema: {
                type: 'OBJECT',
                properties: { trainScore: { type: 'NUMBER' }, reason: { type: 'STRING' } },
                required: ['trainScore'],
              },
            },
          },
        })
        if (answer.status !== 200) return unavailable(`HTTP ${answer.status}`, { provider: excerpt(answer.body) })
        const reply = readReply(answer.body)
        if (reply.kind === 'blocked') return unavailable(`blocked (${reply.reason})`)
        const text = replyText(answer.body)
        if (text === undefined) return unavailable('no text in the answer')
        const score = scoreOf(text)
        if (score === undefined) return unavailable('the answer is not a score in [0, 1]', { answer: excerpt(text) })
        return { kind: 'scored', score }
      } catch (error) {
        return unavailable(error instanceof ProviderError ? error.kind : 'unexpected error', { error: error instanceof Error ? error.message : String(error) })
      }
    },
  }
}

/** `{"trainScore": 0.8}`, possibly wrapped in a ```json fence; anything else is no score. */
export function scoreOf(text: string): number | undefined {
  const json = text.trim().replace(/^```(?:json)?\s*/i, '').replace(/\s*```$/, '')
  let parsed: unknown
  try {
    parsed = JSON.parse(json)
  } catch {
    return undefined
  }
  const score = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>).trainScore : undefined
  return typeof score === 'number' && Number.isFinite(score) && score >= 0 && score <= 1 ? score : undefined
}

function asInput(image: GeneratedImage): InputImage | undefined {
  const header = readImageHeader(image.bytes)
  return header ? { ...header, bytes: image.bytes } : undefined
}
