import {
  asInput,
  geminiJudgeTransport,
  jsonObjectOf,
  SCORER_INPUT,
  scoreFromAnswers,
  TRAIN_ANSWER_PROPERTIES,
  TRAIN_QUESTIONS,
  trainAnswersOf,
  vertexImagePart,
  vertexJudgeTransport,
  type GeminiScorerConfig,
  type JudgeAnswers as TrainAnswers,
  type VertexScorerConfig,
} from '../bridal/gemini-scorer.ts'
import { inlineImagePart, readReply, replyText } from '../engine/providers/gemini-wire.ts'
import { modelNotFound } from '../engine/providers/google-rpc.ts'
import { excerpt, ProviderError, transientStatus, type JsonAnswer } from '../engine/providers/http.ts'
import type { PreparedImage } from '../engine/providers/images.ts'
import type { ProviderRuntime } from '../engine/providers/runtime.ts'
import { unchecked, verdictOf, type JudgeIssue, type JudgeRequest, type JudgeVerdict, type QualityJudge } from './judge.ts'

/** The general questions, one line each, keyed by the answer they ask for. */
const QUESTIONS = {
  garmentOnBody:
    'garmentOnBody: in image 3, is the garment of image 2 worn on the body of the person, where that garment is worn ' +
    '(not floating, not pasted beside or over the person, not left off with the original clothes still showing)?',
  samePerson: 'samePerson: is the person in image 3 the person of image 1: the same face, hair, skin tone and build?',
  samePose: 'samePose: does the person in image 3 stand in the pose of image 1 (head, arms and legs where they were)?',
  sameBackground: 'sameBackground: is the background of image 3 the background of image 1 (same place, framing and light)?',
  colourKept:
    'colourKept: does the garment in image 3 have the colours of image 2 (not shifted in hue, e.g. red become pink or ' +
    'navy become black, allowing for the light of the scene)?',
  detailsKept:
    'detailsKept: are the prints, patterns, logos and lettering of the garment of image 2 kept in image 3, in place and legible? ' +
    'Answer true when the garment has none.',
  grossArtifacts:
    'grossArtifacts: does image 3 show gross artifacts: extra or missing limbs or fingers, melted or fused hands, a distorted face, ' +
    'body parts merging into the garment or the background?',
} as const

type GeneralAnswers = Record<keyof typeof QUESTIONS, boolean>
const GENERAL = Object.keys(QUESTIONS) as (keyof typeof QUESTIONS)[]
/** The train questions asked beside the general ones: its `samePerson` is answered by samePerson, samePose and sameBackground. */
const TRAIN = Object.keys(TRAIN_ANSWER_PROPERTIES) as (keyof typeof TRAIN_ANSWER_PROPERTIES)[]

function rubric(weddingDress: boolean): string {
  return [
    'You check virtual try-on results. Answer each question about the images literally; do not grade overall.',
    `Image 1 is the shopper's original photo. Image 2 is the product photo of the ${weddingDress ? 'gown' : 'garment'}. ` +
      'Image 3 is the generated try-on.',
    ...GENERAL.map((key) => QUESTIONS[key]),
    ...(weddingDress ? TRAIN.map((key) => TRAIN_QUESTIONS[key]) : []),
  ].join('\n')
}

/**
 * The answers' responseSchema (an OpenAPI subset: types in upper case, as the train judge sends it), with the train
 * answers for a wedding dress: JSON mode constrained by a schema (ai.google.dev/gemini-api/docs/structured-output).
 */
export function answerSchema(weddingDress: boolean): Record<string, unknown> {
  const keys = [...GENERAL, ...(weddingDress ? TRAIN : [])]
  return {
    type: 'OBJECT',
    properties: {
      ...Object.fromEntries(GENERAL.map((key) => [key, { type: 'BOOLEAN' }])),
      ...(weddingDress && TRAIN_ANSWER_PROPERTIES),
      reason: { type: 'STRING' },
    },
    required: keys,
    propertyOrdering: [...keys, 'reason'],
  }
}

/**
 * The request body for either endpoint: the questions, then the three images. Gemini 3 models think at `high` unless
 * told; `low` "minimizes latency and cost" (ai.google.dev/gemini-api/docs/gemini-3, thinking_level), enough for
 * literal questions; older models take a thinking budget instead and refuse the level.
 */
export function judgeRequestBody(
  model: string,
  weddingDress: boolean,
  images: PreparedImage[],
  part: (image: PreparedImage) => Record<string, unknown>,
): Record<string, unknown> {
  return {
    contents: [{ role: 'user', parts: [{ text: rubric(weddingDress) }, ...images.map(part)] }],
    generationConfig: {
      temperature: 0,
      responseMimeType: 'application/json',
      responseSchema: answerSchema(weddingDress),
      ...(/^gemini-3/.test(model) && { thinkingConfig: { thinkingLevel: 'low' } }),
    },
  }
}

export interface JudgeAnswers {
  general: GeneralAnswers
  /** Present for a wedding dress. */
  train?: TrainAnswers
  /** The model's own words, for logs only. */
  reason?: string
}

/** The answers in a reply; undefined unless every answer asked for has its type. */
export function judgeAnswersOf(text: string, weddingDress: boolean): JudgeAnswers | undefined {
  const record = jsonObjectOf(text)
  if (!record || GENERAL.some((key) => typeof record[key] !== 'boolean')) return undefined
  const general = Object.fromEntries(GENERAL.map((key) => [key, record[key]])) as GeneralAnswers
  const reason = typeof record.reason === 'string' ? { reason: record.reason.slice(0, 300) } : {}
  if (!weddingDress) return { general, ...reason }
  const samePerson = general.samePerson && general.samePose && general.sameBackground
  const train = trainAnswersOf({ ...record, samePerson })
  return train && { general, train, ...reason }
}

/** The issues the general answers show. */
export function issuesOf(a: GeneralAnswers): JudgeIssue[] {
  const issues: JudgeIssue[] = []
  if (!a.garmentOnBody) issues.push('garment_not_applied')
  if (!a.samePerson || !a.samePose || !a.sameBackground) issues.push('person_changed')
  if (!a.colourKept) issues.push('colour_changed')
  if (!a.detailsKept) issues.push('details_lost')
  if (a.grossArtifacts) issues.push('artifacts')
  return issues
}

/** The verdict from the answers: the issues and score of the general ones, the train score of the train ones. */
export function verdictFromAnswers(answers: JudgeAnswers): JudgeVerdict {
  return verdictOf(issuesOf(answers.general), answers.train && { kind: 'scored', score: scoreFromAnswers(answers.train) })
}

type Transport = (body: unknown, signal?: AbortSignal) => Promise<JsonAnswer>

function createJudge(
  name: string,
  model: string,
  runtime: ProviderRuntime,
  send: Transport,
  part: (image: PreparedImage) => Record<string, unknown>,
): QualityJudge {
  return {
    name,
    async judge({ shopper, product, result, weddingDress, signal, decodeBudget }: JudgeRequest): Promise<JudgeVerdict> {
      const cannot = (reason: string, detail: Record<string, unknown> = {}, flags: { modelNotServed?: boolean; outage?: boolean } = {}) => {
        runtime.log({ level: 'warn', msg: `${name} quality judge could not judge; the try-on is billed unchecked`, reason, ...detail })
        return unchecked(`${name} judge: ${reason}`, { weddingDress, ...flags })
      }
      try {
        const generated = asInput(result)
        if (!generated) return cannot('the generated image could not be read')
        const images = [
          await runtime.prepareImage(shopper, 'userPhoto', SCORER_INPUT, decodeBudget, signal),
          await runtime.prepareImage(product, 'productImage', SCORER_INPUT, decodeBudget, signal),
          await runtime.prepareImage(generated, 'userPhoto', SCORER_INPUT, decodeBudget, signal),
        ]
        const answer = await send(judgeRequestBody(model, weddingDress, images, part), signal)
        if (modelNotFound(answer))
          return cannot('the model is not served (404 NOT_FOUND)', { provider: excerpt(answer.body) }, { modelNotServed: true })
        if (answer.status !== 200)
          return cannot(`HTTP ${answer.status}`, { provider: excerpt(answer.body) }, { outage: transientStatus(answer.status) })
        const reply = readReply(answer.body)
        if (reply.kind === 'blocked') return cannot(`blocked (${reply.reason})`, { where: reply.where })
        if (reply.kind !== 'text') return cannot(`no answer (finishReason ${reply.kind === 'empty' ? reply.finishReason : 'image'})`)
        const text = replyText(answer.body)
        const answers = text === undefined ? undefined : judgeAnswersOf(text, weddingDress)
        if (!answers) return cannot('the answer does not follow the schema', { answer: excerpt(text) })
        const verdict = verdictFromAnswers(answers)
        runtime.log({ level: 'info', msg: `${name} quality judge answered`, ...answers, verdict })
        return verdict
      } catch (error) {
        const kind = error instanceof ProviderError ? error.kind : 'unexpected error'
        return cannot(
          kind,
          { error: error instanceof Error ? error.message : String(error) },
          { outage: kind === 'timeout' || kind === 'network' },
        )
      }
    },
  }
}

/**
 * The quality judge on the Gemini API (generateContent with an API key, the model of GEMINI_SCORER_MODEL), with the
 * train judge's transport: one quick retry, 30 s a try.
 */
export function createGeminiQualityJudge(config: GeminiScorerConfig, runtime: ProviderRuntime): QualityJudge {
  return createJudge('gemini', config.model, runtime, geminiJudgeTransport(config, runtime), inlineImagePart)
}

/**
 * The same judge on Gemini in Vertex AI (VERTEX_SCORER_MODEL at VERTEX_GEMINI_LOCATION, the service account's
 * token), as the train judge is called there (shared/bridal/gemini-scorer.ts createVertexTrainScorer).
 */
export function createVertexQualityJudge(config: VertexScorerConfig, runtime: ProviderRuntime): QualityJudge {
  return createJudge('vertex', config.model, runtime, vertexJudgeTransport(config, runtime), vertexImagePart)
}
