import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createGeminiQualityJudge, createVertexQualityJudge } from '../../../shared/quality/gemini-judge.ts'
import { oneJudgementPerResult, trainScorerOf, type JudgeVerdict } from '../../../shared/quality/judge.ts'
import { staticAccessToken } from '../../../shared/engine/providers/google-auth.ts'
import { encodeBase64 } from '../../../shared/images/base64.ts'
import { gemini, geminiPath, startFakeServer, vertex, vertexGenerateContentPath, type FakeServer } from '../../support/provider-fakes.ts'
import { garment, logText, person, providerResult, testRuntime } from '../engine-providers/support.ts'

const MODEL = 'gemini-3.5-flash'
const path = geminiPath(MODEL)
const GENERAL = ['garmentOnBody', 'samePerson', 'samePose', 'sameBackground', 'colourKept', 'detailsKept', 'grossArtifacts']
const TRAIN = ['gownOnBody', 'croppedAboveFeet', 'trainOnFloor', 'trainContinuous', 'trainLength']
/** A fresh result each time: the one-judgement memo keys on the bytes' identity. */
const result = () => ({ bytes: providerResult.slice(), contentType: 'image/jpeg' as const })
const request = (weddingDress = false) => ({ shopper: person, product: garment, result: result(), weddingDress })

describe('quality judge (Gemini API)', () => {
  let fake: FakeServer
  beforeAll(async () => {
    fake = await startFakeServer((f) => f.script('POST', path, gemini.qualityJudged()))
  })
  afterAll(() => fake?.close())
  beforeEach(() => fake.reset())

  const judgeOf = (baseUrl = fake.url) => {
    const t = testRuntime()
    return { ...t, judge: createGeminiQualityJudge({ apiKey: 'AIza-judge', baseUrl, model: MODEL }, t.runtime) }
  }

  it('asks the general questions about the photo, the product and the result in one call, under a JSON schema', async () => {
    const { judge } = judgeOf()
    expect(await judge.judge(request())).toEqual({ checked: true, passed: true, score: 1, issues: [] })
    const requests = fake.requestsTo(path, 'POST')
    expect(requests).toHaveLength(1)
    const [sent] = requests
    expect(sent.headers['x-goog-api-key']).toBe('AIza-judge')
    const parts = sent.json.contents[0].parts
    for (const question of GENERAL) expect(parts[0].text).toContain(`${question}:`)
    for (const question of TRAIN) expect(parts[0].text).not.toContain(`${question}:`)
    expect(parts.slice(1).map((p: any) => [p.inline_data.mime_type, p.inline_data.data])).toEqual([
      ['image/jpeg', encodeBase64(person.bytes)],
      ['image/png', encodeBase64(garment.bytes)],
      ['image/jpeg', encodeBase64(providerResult)],
    ])
    const config = sent.json.generationConfig
    expect(config).toMatchObject({ temperature: 0, responseMimeType: 'application/json', thinkingConfig: { thinkingLevel: 'low' } })
    expect(config.responseSchema).toMatchObject({ type: 'OBJECT', required: GENERAL })
    for (const question of GENERAL) expect(config.responseSchema.properties[question]).toEqual({ type: 'BOOLEAN' })
    expect(config.responseSchema.properties).not.toHaveProperty('score')
  })

  it.each<[string, Record<string, unknown>, string, number]>([
    ['the garment is not worn', { garmentOnBody: false }, 'garment_not_applied', 0],
    ['another person', { samePerson: false }, 'person_changed', 0.2],
    ['another pose', { samePose: false }, 'person_changed', 0.2],
    ['another background', { sameBackground: false }, 'person_changed', 0.2],
    ['a red dress come back pink', { colourKept: false }, 'colour_changed', 0.4],
    ['a logo lost', { detailsKept: false }, 'details_lost', 0.5],
    ['a melted hand', { grossArtifacts: true }, 'artifacts', 0.3],
  ])('fails a result when %s: %s', async (_, answers, issue, score) => {
    fake.script('POST', path, gemini.qualityJudged(answers))
    const { judge, logs } = judgeOf()
    expect(await judge.judge(request())).toEqual({ checked: true, passed: false, score, issues: [issue] })
    expect(logs).toContainEqual(
      expect.objectContaining({
        msg: 'gemini quality judge answered',
        general: expect.objectContaining(answers),
        reason: expect.stringContaining('the garment is worn'),
        verdict: expect.objectContaining({ issues: [issue] }),
      }),
    )
  })

  it('lists every issue found, once each, and scores the worst', async () => {
    fake.script('POST', path, gemini.qualityJudged({ samePerson: false, samePose: false, colourKept: false, grossArtifacts: true }))
    expect(await judgeOf().judge.judge(request())).toEqual({
      checked: true,
      passed: false,
      score: 0.2,
      issues: ['person_changed', 'colour_changed', 'artifacts'],
    })
  })

  it('asks the train questions in the same call for a wedding dress, and scores the train from the same answers', async () => {
    fake.script('POST', path, gemini.qualityJudged({ trainLength: 'medium' }, { weddingDress: true }))
    const verdict = await judgeOf().judge.judge(request(true))
    expect(verdict).toEqual({ checked: true, passed: true, score: 1, issues: [], train: { kind: 'scored', score: 0.8 } })
    const requests = fake.requestsTo(path, 'POST')
    expect(requests).toHaveLength(1)
    const text = requests[0].json.contents[0].parts[0].text
    for (const question of [...GENERAL, ...TRAIN]) expect(text).toContain(`${question}:`)
    const schema = requests[0].json.generationConfig.responseSchema
    expect(schema.required).toEqual([...GENERAL, ...TRAIN])
    expect(schema.properties.trainLength).toEqual({ type: 'STRING', enum: ['none', 'short', 'medium', 'long'] })
    expect(requests[0].json.contents[0].parts.slice(1)).toHaveLength(3)
  })

  it('holds the train score down when the person, pose or background changed, as the train judge does', async () => {
    fake.script('POST', path, gemini.qualityJudged({ sameBackground: false }, { weddingDress: true }))
    const verdict = await judgeOf().judge.judge(request(true))
    expect(verdict).toMatchObject({ checked: true, passed: false, issues: ['person_changed'], train: { kind: 'scored', score: 0.4 } })
  })

  it('serves the bridal pipeline’s train scorer and the quality check from one call per result', async () => {
    fake.script('POST', path, gemini.qualityJudged({ trainLength: 'short', detailsKept: false }, { weddingDress: true }))
    const shared = oneJudgementPerResult(judgeOf().judge)
    const scorer = trainScorerOf(shared)
    const image = result()
    expect(await scorer.score({ result: image, person, garment })).toEqual({ kind: 'scored', score: 0.6 })
    const verdict = await shared.judge({ shopper: person, product: garment, result: image, weddingDress: true })
    expect(verdict).toMatchObject({ checked: true, passed: false, issues: ['details_lost'], train: { kind: 'scored', score: 0.6 } })
    expect(fake.requestsTo(path, 'POST')).toHaveLength(1)
    // Another result is another judgement.
    await shared.judge({ shopper: person, product: garment, result: result(), weddingDress: true })
    expect(fake.requestsTo(path, 'POST')).toHaveLength(2)
  })

  it('asks again for a wedding dress when the result was judged as a standard garment (no train answers yet)', async () => {
    const shared = oneJudgementPerResult(judgeOf().judge)
    const image = result()
    await shared.judge({ shopper: person, product: garment, result: image, weddingDress: false })
    fake.script('POST', path, gemini.qualityJudged({}, { weddingDress: true }))
    const verdict = await shared.judge({ shopper: person, product: garment, result: image, weddingDress: true })
    expect(verdict).toMatchObject({ checked: true, train: { kind: 'scored', score: 0.95 } })
    expect(fake.requestsTo(path, 'POST')).toHaveLength(2)
  })

  const garbage: [string, Parameters<FakeServer['script']>[2], string][] = [
    [
      'off-schema JSON (an answer missing)',
      gemini.json({ garmentOnBody: true, samePerson: true }),
      'the answer does not follow the schema',
    ],
    ['off-schema JSON (a string for a boolean)', gemini.qualityJudged({ colourKept: 'yes' }), 'the answer does not follow the schema'],
    ['a free score instead of the answers', gemini.json({ score: 0.9, passed: true }), 'the answer does not follow the schema'],
    ['a JSON array', gemini.json([true, true]), 'the answer does not follow the schema'],
    ['text that is not JSON', gemini.textOnly('The try-on looks great.'), 'the answer does not follow the schema'],
    ['an answer cut short (MAX_TOKENS)', gemini.truncated('{"garmentOnBody": true, "samePer'), 'no answer (finishReason MAX_TOKENS)'],
    ['no candidates', gemini.noCandidates(), 'no answer'],
    ['a safety finish', gemini.finished('SAFETY'), 'blocked (SAFETY)'],
    ['a prohibited-content finish', gemini.finished('PROHIBITED_CONTENT'), 'blocked (PROHIBITED_CONTENT)'],
    ['a blocked prompt', gemini.promptBlocked('OTHER'), 'blocked (OTHER)'],
    ['an HTTP 400', gemini.error(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.'), 'HTTP 400'],
    ['an HTTP 429, after one retry', gemini.quotaExceeded('0.5s'), 'HTTP 429'],
    ['an HTTP 500, after one retry', gemini.error(500, 'INTERNAL', 'An internal error has occurred.'), 'HTTP 500'],
    ['a 404 NOT_FOUND for the model', gemini.modelGone(MODEL), 'the model is not served (404 NOT_FOUND)'],
    ['a body that is not JSON', { text: '<html>', contentType: 'text/html' }, 'malformed'],
  ]

  it.each(garbage)('answers checked: false on %s, with the reason logged, and never throws', async (_, reply, reason) => {
    fake.script('POST', path, reply)
    const { judge, logs } = judgeOf()
    const verdict = await judge.judge(request())
    expect(verdict).toMatchObject({ checked: false })
    expect((verdict as Extract<JudgeVerdict, { checked: false }>).reason).toContain(reason)
    expect(verdict).not.toHaveProperty('train')
    expect(logText(logs)).toContain('gemini quality judge could not judge')
    expect(logText(logs)).toContain(reason)
  })

  it.each(garbage)('leaves a wedding dress’s train score unavailable too on %s', async (_, reply) => {
    fake.script('POST', path, reply)
    const verdict = await judgeOf().judge.judge(request(true))
    expect(verdict).toMatchObject({ checked: false, train: { kind: 'unavailable' } })
  })

  it('answers checked: false for a wedding dress whose train answers are missing', async () => {
    fake.script('POST', path, gemini.qualityJudged())
    expect(await judgeOf().judge.judge(request(true))).toMatchObject({ checked: false, train: { kind: 'unavailable' } })
  })

  it('marks 429 and 5xx as outages (what the breaker counts), retried once; a 404 for the model as not served, not retried', async () => {
    fake.script('POST', path, gemini.error(503, 'UNAVAILABLE', 'The model is overloaded.'))
    const first = judgeOf()
    expect(await first.judge.judge(request())).toMatchObject({ checked: false, outage: true })
    expect(fake.requestsTo(path, 'POST')).toHaveLength(2)
    expect(first.sleeps).toHaveLength(1)

    fake.reset()
    fake.script('POST', path, gemini.modelUnknown(MODEL))
    const second = judgeOf()
    expect(await second.judge.judge(request(true))).toMatchObject({
      checked: false,
      modelNotServed: true,
      train: { kind: 'unavailable', modelNotServed: true },
    })
    expect(fake.requestsTo(path, 'POST')).toHaveLength(1)
    expect(second.sleeps).toEqual([])
  })

  it('answers checked: false when the judge cannot be reached, and when the try-on’s deadline has passed', async () => {
    expect(await judgeOf('http://127.0.0.1:9').judge.judge(request())).toMatchObject({ checked: false, outage: true })
    const { judge } = judgeOf()
    const verdict = await judge.judge({ ...request(), signal: AbortSignal.abort() })
    expect(verdict).toMatchObject({ checked: false, reason: expect.stringContaining('deadline') })
    expect(verdict).not.toHaveProperty('outage')
  })

  it('answers checked: false for a result that is not an image, without calling the model', async () => {
    const verdict = await judgeOf().judge.judge({ ...request(), result: { bytes: new Uint8Array([1, 2, 3]), contentType: 'image/png' } })
    expect(verdict).toMatchObject({ checked: false, reason: expect.stringContaining('could not be read') })
    expect(fake.requestsTo(path, 'POST')).toHaveLength(0)
  })
})

describe('quality judge on Vertex AI', () => {
  let fake: FakeServer
  const judgePath = vertexGenerateContentPath('my-project', 'global')
  beforeAll(async () => {
    fake = await startFakeServer((f) => f.script('POST', judgePath, gemini.qualityJudged({}, { weddingDress: true })))
  })
  afterAll(() => fake?.close())
  beforeEach(() => fake.reset())

  const judgeOf = () => {
    const t = testRuntime()
    const config = { project: 'my-project', location: 'global', model: MODEL, baseUrl: fake.url, tokens: staticAccessToken('ya29.judge') }
    return { ...t, judge: createVertexQualityJudge(config, t.runtime) }
  }

  it('posts the same questions and schema to the publisher model, images in camelCase, with the bearer token', async () => {
    expect(await judgeOf().judge.judge(request(true))).toEqual({
      checked: true,
      passed: true,
      score: 1,
      issues: [],
      train: { kind: 'scored', score: 0.95 },
    })
    const [sent] = fake.requestsTo(judgePath, 'POST')
    expect(sent.headers.authorization).toBe('Bearer ya29.judge')
    expect(sent.json.contents[0].parts.slice(1).map((p: any) => p.inlineData.mimeType)).toEqual(['image/jpeg', 'image/png', 'image/jpeg'])
    expect(sent.json.generationConfig.responseSchema.required).toEqual([...GENERAL, ...TRAIN])
  })

  it('marks Vertex’s 404 "Publisher Model … was not found" as a model not served', async () => {
    fake.script('POST', judgePath, vertex.modelNotFound('my-project', 'global', MODEL))
    expect(await judgeOf().judge.judge(request())).toMatchObject({ checked: false, modelNotServed: true })
  })
})
