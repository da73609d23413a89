import fc from 'fast-check'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  jsonObjectOf,
  scoreFromAnswers,
  trainAnswersOf,
  vertexGenerateContentUrl,
  type JudgeAnswers,
} from '../../../shared/bridal/gemini-scorer.ts'
import type { ProviderRuntime } from '../../../shared/engine/providers/runtime.ts'
import { createGeminiQualityJudge, createVertexQualityJudge } from '../../../shared/quality/gemini-judge.ts'
import { trainScorerOf } from '../../../shared/quality/judge.ts'
import { parseServiceAccount, serviceAccountTokens, staticAccessToken } from '../../../shared/engine/providers/google-auth.ts'
import { encodeBase64 } from '../../../shared/images/base64.ts'
import {
  gemini,
  geminiPath,
  makeServiceAccount,
  startFakeServer,
  vertex,
  vertexGenerateContentPath,
  verifyJwt,
  type FakeServer,
} from '../../support/provider-fakes.ts'
import { garment, logText, person, providerResult, testRuntime } from './support.ts'

const JUDGE = 'gemini-3.5-flash'
const path = geminiPath(JUDGE)
const result = { bytes: providerResult, contentType: 'image/jpeg' as const }
/** The train questions; the train's "same person" is the quality judge's samePerson, samePose and sameBackground. */
const QUESTIONS = [
  'gownOnBody',
  'croppedAboveFeet',
  'trainOnFloor',
  'trainContinuous',
  'trainLength',
  'samePerson',
  'samePose',
  'sameBackground',
]
/** The judge's answers to one call for a wedding dress: the general questions and the train's. */
const judged = (answers: Partial<Record<string, unknown>> = {}) => gemini.qualityJudged(answers, { weddingDress: true })

/**
 * The train scorer of live keys: served from the quality judge's one call (shared/service.ts createDeps), on the Gemini
 * API or on Vertex AI.
 */
const geminiTrainScorer = (config: { apiKey: string; baseUrl: string; model: string }, runtime: ProviderRuntime) =>
  trainScorerOf(createGeminiQualityJudge(config, runtime))
const vertexTrainScorer = (config: Parameters<typeof createVertexQualityJudge>[0], runtime: ProviderRuntime) =>
  trainScorerOf(createVertexQualityJudge(config, runtime))
const good: JudgeAnswers = {
  gownOnBody: true,
  croppedAboveFeet: false,
  trainOnFloor: true,
  trainContinuous: true,
  trainLength: 'long',
  samePerson: true,
}

describe('train score from the judge’s answers', () => {
  it.each<[string, Partial<JudgeAnswers>, number]>([
    ['a long train, one piece with the skirt, on the body', {}, 0.95],
    ['a medium train', { trainLength: 'medium' }, 0.8],
    ['a short train', { trainLength: 'short' }, 0.6],
    ['a train that is a separate patch of fabric', { trainContinuous: false }, 0.3],
    ['a different person or pose', { samePerson: false }, 0.4],
    ['no fabric on the floor', { trainOnFloor: false }, 0.1],
    ['a picture cropped above the feet', { croppedAboveFeet: true }, 0],
    ['a gown that is not on the body (however long its "train")', { gownOnBody: false }, 0],
  ])('scores %s as %s', (_, answers, score) => {
    expect(scoreFromAnswers({ ...good, ...answers })).toBe(score)
  })

  it('never passes the threshold when the gown is off the body or the picture is cropped, whatever else was answered', () => {
    const answers = fc.record({
      gownOnBody: fc.boolean(),
      croppedAboveFeet: fc.boolean(),
      trainOnFloor: fc.boolean(),
      trainContinuous: fc.boolean(),
      trainLength: fc.constantFrom('none', 'short', 'medium', 'long' as const),
      samePerson: fc.boolean(),
    })
    fc.assert(
      fc.property(answers, (a) => {
        const score = scoreFromAnswers(a as JudgeAnswers)
        expect(score).toBeGreaterThanOrEqual(0)
        expect(score).toBeLessThanOrEqual(1)
        if (!a.gownOnBody || a.croppedAboveFeet || !a.trainOnFloor || !a.trainContinuous) expect(score).toBeLessThan(0.5)
      }),
    )
  })

  it('reads answers in a ```json fence, and refuses answers off the schema', () => {
    const answersOf = (text: string) => {
      const record = jsonObjectOf(text)
      return record && trainAnswersOf(record)
    }
    expect(answersOf(`\`\`\`json\n${JSON.stringify(good)}\n\`\`\``)).toEqual(good)
    expect(answersOf(JSON.stringify({ ...good, gownOnBody: 'yes' }))).toBeUndefined()
    expect(answersOf(JSON.stringify({ ...good, trainLength: 'very long' }))).toBeUndefined()
    expect(answersOf(JSON.stringify({ trainScore: 0.9 }))).toBeUndefined()
  })
})

describe('the train scorer of live keys, from the quality judge (Gemini API)', () => {
  let fake: FakeServer
  beforeAll(async () => {
    fake = await startFakeServer((f) => f.script('POST', path, judged({ trainLength: 'medium' })))
  })
  afterAll(() => fake?.close())
  beforeEach(() => fake.reset())

  const scorer = (baseUrl = fake.url, model = JUDGE) => {
    const t = testRuntime()
    return { ...t, scorer: geminiTrainScorer({ apiKey: 'AIza-judge', baseUrl, model }, t.runtime) }
  }

  it('asks its questions about the photo, the gown and the result with a JSON response schema, and scores the answers', async () => {
    const { scorer: judge } = scorer()
    expect(await judge.score({ result, person, garment })).toEqual({ kind: 'scored', score: 0.8 })
    const [request] = fake.requestsTo(path, 'POST')
    expect(request.headers['x-goog-api-key']).toBe('AIza-judge')
    const parts = request.json.contents[0].parts
    for (const question of QUESTIONS) expect(parts[0].text).toContain(`${question}:`)
    expect(parts.slice(1).map((p: any) => p.inline_data.data)).toEqual([
      encodeBase64(person.bytes),
      encodeBase64(garment.bytes),
      encodeBase64(providerResult),
    ])
    const config = request.json.generationConfig
    expect(config).toMatchObject({ temperature: 0, responseMimeType: 'application/json', responseSchema: { type: 'OBJECT' } })
    expect(config.responseSchema.required).toEqual(expect.arrayContaining(QUESTIONS))
    expect(config.responseSchema.properties.trainLength).toEqual({ type: 'STRING', enum: ['none', 'short', 'medium', 'long'] })
    expect(config.responseSchema.properties).not.toHaveProperty('trainScore')
    // Gemini 3 thinks at `high` unless told; the judge asks for `low` (ai.google.dev/gemini-api/docs/gemini-3).
    expect(config.thinkingConfig).toEqual({ thinkingLevel: 'low' })
  })

  it('sends no thinking level to a model older than Gemini 3, which would refuse it', async () => {
    fake.script('POST', geminiPath('gemini-2.0-flash-001'), judged())
    await scorer(fake.url, 'gemini-2.0-flash-001').scorer.score({ result, person, garment })
    expect(fake.requestsTo(geminiPath('gemini-2.0-flash-001'))[0].json.generationConfig).not.toHaveProperty('thinkingConfig')
  })

  it.each([
    ['is no longer available', gemini.modelGone(JUDGE)],
    ['is not found for API version v1beta', gemini.modelUnknown(JUDGE)],
  ])('marks a 404 NOT_FOUND "%s" as a model not served, without retrying', async (_, reply) => {
    fake.script('POST', path, reply)
    const { scorer: judge, sleeps } = scorer()
    expect(await judge.score({ result, person, garment })).toMatchObject({ kind: 'unavailable', modelNotServed: true })
    expect(fake.requestsTo(path)).toHaveLength(1)
    expect(sleeps).toEqual([])
  })

  it('scores a broken result 0 when the judge says the gown is not on the body', async () => {
    fake.script('POST', path, judged({ gownOnBody: false, trainLength: 'long' }))
    expect(await scorer().scorer.score({ result, person, garment })).toEqual({ kind: 'scored', score: 0 })
  })

  it.each([
    ['a free score instead of the answers', gemini.json({ trainScore: 0.9 })],
    [
      'an answer missing',
      gemini.json({ gownOnBody: true, croppedAboveFeet: false, trainOnFloor: true, trainContinuous: true, samePerson: true }),
    ],
    ['text that is not JSON', gemini.textOnly('The train looks great.')],
    ['a blocked prompt', gemini.promptBlocked('SAFETY')],
    ['an HTTP 400', gemini.error(400, 'INVALID_ARGUMENT', 'bad')],
    ['a body that is not JSON', { text: '<html>', contentType: 'text/html' }],
  ])('is unavailable (trainScore null) on %s', async (_, reply) => {
    fake.script('POST', path, reply)
    const { scorer: judge, logs } = scorer()
    const outcome = await judge.score({ result, person, garment })
    expect(outcome.kind).toBe('unavailable')
    expect(logText(logs)).toContain('gemini quality judge could not judge')
  })

  it('is unavailable when the judge cannot be reached, after one retry', async () => {
    const { scorer: judge, sleeps } = scorer('http://127.0.0.1:9')
    expect((await judge.score({ result, person, garment })).kind).toBe('unavailable')
    expect(sleeps).toHaveLength(1)
  })
})

describe('the train scorer of live keys, from the quality judge on Vertex AI', () => {
  let fake: FakeServer
  const judgePath = vertexGenerateContentPath('my-project', 'us-central1')
  beforeAll(async () => {
    fake = await startFakeServer((f) => {
      f.script('POST', '/token', vertex.token('ya29.judge'))
      f.script('POST', judgePath, judged({ trainLength: 'short' }))
    })
  })
  afterAll(() => fake?.close())
  beforeEach(() => fake.reset())

  it('signs in with the service account, posts generateContent on the project’s publisher model and scores the answers', async () => {
    const account = await makeServiceAccount(`${fake.url}/token`)
    const t = testRuntime()
    const tokens = serviceAccountTokens(parseServiceAccount(account.json), t.runtime)
    const judge = vertexTrainScorer({ project: 'my-project', location: 'us-central1', model: JUDGE, baseUrl: fake.url, tokens }, t.runtime)
    expect(await judge.score({ result, person, garment })).toEqual({ kind: 'scored', score: 0.6 })
    const [exchange] = fake.requestsTo('/token', 'POST')
    const assertion = new URLSearchParams(exchange.text).get('assertion')!
    expect((await verifyJwt(assertion, account.publicKey))?.claims).toMatchObject({
      iss: account.clientEmail,
      scope: 'https://www.googleapis.com/auth/cloud-platform',
    })
    const [request] = fake.requestsTo(judgePath, 'POST')
    expect(request.headers.authorization).toBe('Bearer ya29.judge')
    const parts = request.json.contents[0].parts
    expect(request.json.contents[0].role).toBe('user')
    expect(parts.slice(1).map((p: any) => p.inlineData.data)).toEqual([
      encodeBase64(person.bytes),
      encodeBase64(garment.bytes),
      encodeBase64(providerResult),
    ])
    expect(request.json.generationConfig.responseMimeType).toBe('application/json')
    expect(request.json.generationConfig.responseSchema.required).toEqual(expect.arrayContaining(QUESTIONS))
  })

  it('tries once more with a fresh token after a 401, and is unavailable on a refusal', async () => {
    fake.script(
      'POST',
      judgePath,
      gemini.error(401, 'UNAUTHENTICATED', 'token expired'),
      gemini.error(403, 'PERMISSION_DENIED', 'no access'),
    )
    const t = testRuntime()
    let invalidated = 0
    const tokens = { ...staticAccessToken('ya29.old'), invalidate: () => void invalidated++ }
    const judge = vertexTrainScorer({ project: 'my-project', location: 'us-central1', model: JUDGE, baseUrl: fake.url, tokens }, t.runtime)
    expect((await judge.score({ result, person, garment })).kind).toBe('unavailable')
    expect(fake.requestsTo(judgePath, 'POST')).toHaveLength(2)
    expect(invalidated).toBe(1)
  })

  it('marks Vertex’s 404 NOT_FOUND "Publisher Model … was not found" as a model not served', async () => {
    fake.script('POST', judgePath, vertex.modelNotFound('my-project', 'us-central1', JUDGE))
    const t = testRuntime()
    const judge = vertexTrainScorer(
      { project: 'my-project', location: 'us-central1', model: JUDGE, baseUrl: fake.url, tokens: staticAccessToken('ya29.x') },
      t.runtime,
    )
    expect(await judge.score({ result, person, garment })).toMatchObject({ kind: 'unavailable', modelNotServed: true })
    expect(fake.requestsTo(judgePath, 'POST')).toHaveLength(1)
  })

  it('builds the documented regional and global endpoints', () => {
    expect(vertexGenerateContentUrl({ project: 'p-1', location: 'europe-west4', model: JUDGE })).toBe(
      'https://europe-west4-aiplatform.googleapis.com/v1/projects/p-1/locations/europe-west4/publishers/google/models/gemini-3.5-flash:generateContent',
    )
    expect(vertexGenerateContentUrl({ project: 'p-1', location: 'global', model: JUDGE })).toBe(
      'https://aiplatform.googleapis.com/v1/projects/p-1/locations/global/publishers/google/models/gemini-3.5-flash:generateContent',
    )
  })
})
