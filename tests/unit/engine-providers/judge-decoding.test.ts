import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDecodeBudget } from '../../../shared/images/codecs/index.ts'
import { decodeUpright } from '../../../shared/images/upright.ts'
import { createGeminiQualityJudge } from '../../../shared/quality/gemini-judge.ts'
import { gemini, geminiPath, startFakeServer, type FakeServer } from '../../support/provider-fakes.ts'
import { asInput, makeShopperPhoto } from '../../support/images.ts'
import { garment, providerResult, testRuntime } from './support.ts'

/** The quality judge's re-encodes and the request's decoding budget (issue 24: each photo decoded once a request). */
describe('the quality judge and the request’s decoded copies', () => {
  const MODEL = 'gemini-3.5-flash'
  const path = geminiPath(MODEL)
  let fake: FakeServer
  beforeAll(async () => {
    fake = await startFakeServer((f) => f.script('POST', path, gemini.qualityJudged()))
  })
  afterAll(() => fake?.close())

  it('charges its re-encodes to the request’s budget, and re-encodes the shopper photo from the request’s copy', async () => {
    const judge = createGeminiQualityJudge({ apiKey: 'AIza-judge', baseUrl: fake.url, model: MODEL }, testRuntime().runtime)
    // Larger than the judge is sent (2048 px), so it is re-encoded.
    const big = asInput(makeShopperPhoto({ width: 1800, height: 2700, format: 'jpeg' }))
    const request = () => ({
      shopper: big,
      product: garment,
      result: { bytes: providerResult.slice(), contentType: 'image/jpeg' as const },
    })
    const decoding = createDecodeBudget(240e6)
    expect(await judge.judge({ ...request(), weddingDress: false, decodeBudget: decoding })).toMatchObject({ checked: true })
    expect(decoding.remaining).toBeLessThan(240e6)
    // As a wedding dress's pre-treatment leaves it: the photo decoded once for the request.
    const holding = createDecodeBudget(240e6)
    decodeUpright(big, { side: 1536, budget: holding })
    const before = holding.remaining
    expect(await judge.judge({ ...request(), weddingDress: false, decodeBudget: holding })).toMatchObject({ checked: true })
    expect(holding.remaining).toBe(before)
    const [first, second] = fake.requestsTo(path, 'POST').map((r) => r.json.contents[0].parts[1].inline_data.data)
    expect(second).toBe(first)
  })
})
