import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createGeminiTrainScorer, scoreOf } from '../../../shared/bridal/gemini-scorer.ts'
import { encodeBase64 } from '../../../shared/images/base64.ts'
import { gemini, geminiPath, startFakeServer, type FakeServer } from '../../support/provider-fakes.ts'
import { garment, logText, person, providerResult, testRuntime } from './support.ts'

const path = geminiPath('gemini-2.5-flash')
const result = { bytes: providerResult, contentType: 'image/jpeg' as const }

describe('Gemini train judge', () => {
  let fake: FakeServer
  beforeAll(async () => {
    fake = await startFakeServer((f) => f.script('POST', path, gemini.json({ trainScore: 0.82, reason: 'full train on the floor' })))
  })
  afterAll(() => fake?.close())
  beforeEach(() => fake.reset())

  const scorer = (baseUrl = fake.url) => {
    const t = testRuntime()
    return { ...t, scorer: createGeminiTrainScorer({ apiKey: 'AIza-judge', baseUrl, model: 'gemini-2.5-flash' }, t.runtime) }
  }

  it('sends the original photo, the gown and the result with a JSON schema, and returns the score', async () => {
    const { scorer: judge } = scorer()
    expect(await judge.score({ result, person, garment })).toEqual({ kind: 'scored', score: 0.82 })
    const [request] = fake.requestsTo(path, 'POST')
    expect(request.headers['x-goog-api-key']).toBe('AIza-judge')
    const parts = request.json.contents[0].parts
    expect(parts[0].text).toContain("Rate only how well image 3 renders the gown's train")
    expect(parts.slice(1).map((p: any) => p.inline_data.data)).toEqual([encodeBase64(person.bytes), encodeBase64(garment.bytes), encodeBase64(providerResult)])
    expect(request.json.generationConfig).toMatchObject({
      temperature: 0,
      responseMimeType: 'application/json',
      responseSchema: { type: 'OBJECT', properties: { trainScore: { type: 'NUMBER' } }, required: ['trainScore'] },
    })
  })

  it.each([
    ['a score out of range', gemini.json({ trainScore: 1.7 })],
    ['JSON without a score', gemini.json({ verdict: 'good' })],
    ['text that is not JSON', gemini.textOnly('The train looks great, about 0.8.')],
    ['a blocked prompt', gemini.promptBlocked('SAFETY')],
    ['an HTTP 400', gemini.error(400, 'INVALID_ARGUMENT', 'bad')],
    ['a body that is not JSON', { text: '<html>', contentType: 'text/html' }],
  ])('is unavailable (trainScore null) on %s', async (_, reply) => {
    fake.script('POST', path, reply)
    const { scorer: judge, logs } = scorer()
    const outcome = await judge.score({ result, person, garment })
    expect(outcome.kind).toBe('unavailable')
    expect(logText(logs)).toContain('gemini train judge unavailable')
  })

  it('is unavailable when the judge cannot be reached, after one retry', async () => {
    const { scorer: judge, sleeps } = scorer('http://127.0.0.1:9')
    expect((await judge.score({ result, person, garment })).kind).toBe('unavailable')
    expect(sleeps).toHaveLength(1)
  })

  it('reads a score in a ```json fence', () => {
    expect(scoreOf('```json\n{"trainScore": 0.4}\n```')).toBe(0.4)
    expect(scoreOf('{"trainScore": "0.4"}')).toBeUndefined()
  })
})
