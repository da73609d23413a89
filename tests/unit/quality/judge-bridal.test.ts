import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createLocalPretreatment } from '../../../shared/bridal/local-pretreatment.ts'
import { generateWithTrain } from '../../../shared/bridal/pipeline.ts'
import { createLocalEngine } from '../../../shared/engine/local/index.ts'
import type { GeneratedImage } from '../../../shared/engine/types.ts'
import { providerSettingsOf, providerEnvShape } from '../../../shared/engine/providers/settings.ts'
import { trainScorerOf } from '../../../shared/quality/judge.ts'
import { createLiveQualityJudge } from '../../../shared/quality/live-judge.ts'
import { z } from 'zod'
import { encodeBase64 } from '../../../shared/images/base64.ts'
import { gemini, geminiPath, startFakeServer, vertexGenerateContentPath, type FakeServer } from '../../support/provider-fakes.ts'
import { asInput, makeGarmentPhoto, makeShopperPhoto } from '../../support/images.ts'
import { testRuntime } from '../engine-providers/support.ts'

const slate: [number, number, number] = [120, 128, 140]
const ivory: [number, number, number] = [242, 236, 224]
const person = asInput(makeShopperPhoto({ width: 400, height: 600, background: slate }))
const gown = asInput(makeGarmentPhoto({ kind: 'gown-with-train', color: ivory, width: 320, height: 320, transparentBackground: true }))
const env = (vars: Record<string, string>) => z.object(providerEnvShape).parse(vars)
const path = geminiPath('gemini-3.5-flash')

describe('a wedding dress judged once: the train score and the quality check from one call', () => {
  let fake: FakeServer
  beforeAll(async () => {
    fake = await startFakeServer((f) => f.script('POST', path, gemini.qualityJudged({ trainLength: 'medium' }, { weddingDress: true })))
  })
  afterAll(() => fake?.close())
  beforeEach(() => fake.reset())

  it('scores the train inside the bridal pipeline and answers the quality check after it without a second call', async () => {
    const t = testRuntime()
    const settings = providerSettingsOf('local', env({ GEMINI_API_KEY: 'AIza-live', GEMINI_BASE_URL: fake.url }), t.runtime.now())
    const judge = createLiveQualityJudge(settings, t.runtime)
    expect(judge).toBeDefined()
    const steps = { pretreatment: createLocalPretreatment(), scorer: trainScorerOf(judge!) }
    const { image, bridal } = await generateWithTrain(
      createLocalEngine(),
      steps,
      { person, garment: gown, category: 'dress' },
      { threshold: 0.5, log: () => {}, tryOnId: 't' },
    )
    expect(bridal).toEqual({ applied: true, trainScore: 0.8, reason: 'train_rendered' })
    const result = image as GeneratedImage
    const verdict = await judge!.judge({ shopper: person, product: gown, result, weddingDress: true })
    expect(verdict).toEqual({ checked: true, passed: true, score: 1, issues: [], train: { kind: 'scored', score: 0.8 } })

    const calls = fake.requestsTo(path, 'POST')
    expect(calls).toHaveLength(1)
    const parts = calls[0].json.contents[0].parts
    // The result the engine made is the third image; the train questions ride in the same call.
    expect(parts[3].inline_data.data).toBe(encodeBase64(result.bytes))
    expect(calls[0].json.generationConfig.responseSchema.required).toContain('trainLength')
    expect(calls[0].json.generationConfig.responseSchema.required).toContain('colourKept')
  })
})

describe('the live quality judge from the settings', () => {
  it('is the Gemini API judge when GEMINI_API_KEY is set, on GEMINI_SCORER_MODEL', async () => {
    const fake = await startFakeServer((f) => f.script('POST', geminiPath('gemini-3.5-flash-lite'), gemini.qualityJudged()))
    try {
      const t = testRuntime()
      const vars = { GEMINI_API_KEY: 'AIza-live', GEMINI_BASE_URL: fake.url, GEMINI_SCORER_MODEL: 'gemini-3.5-flash-lite' }
      const judge = createLiveQualityJudge(providerSettingsOf('local', env(vars), t.runtime.now()), t.runtime)!
      const result = { bytes: makeShopperPhoto({ width: 96, height: 160, seed: 7 }).bytes, contentType: 'image/jpeg' as const }
      expect(await judge.judge({ shopper: person, product: gown, result, weddingDress: false })).toMatchObject({
        checked: true,
        passed: true,
      })
      expect(fake.requestsTo(geminiPath('gemini-3.5-flash-lite'), 'POST')).toHaveLength(1)
    } finally {
      await fake.close()
    }
  })

  it('is Gemini on Vertex AI at VERTEX_GEMINI_LOCATION with a Vertex token, when that is the judge configured', async () => {
    const judgePath = vertexGenerateContentPath('my-project', 'global')
    const fake = await startFakeServer((f) => f.script('POST', judgePath, gemini.qualityJudged({ grossArtifacts: true })))
    try {
      const t = testRuntime()
      const vars = {
        TRYON_TRAIN_SCORER: 'vertex',
        VERTEX_PROJECT: 'my-project',
        VERTEX_ACCESS_TOKEN: 'ya29.live',
        VERTEX_BASE_URL: fake.url,
      }
      const judge = createLiveQualityJudge(providerSettingsOf('local', env(vars), t.runtime.now()), t.runtime)!
      const result = { bytes: makeShopperPhoto({ width: 96, height: 160, seed: 8 }).bytes, contentType: 'image/jpeg' as const }
      expect(await judge.judge({ shopper: person, product: gown, result, weddingDress: false })).toMatchObject({
        checked: true,
        passed: false,
        issues: ['artifacts'],
      })
      expect(fake.requestsTo(judgePath, 'POST')[0].headers.authorization).toBe('Bearer ya29.live')
    } finally {
      await fake.close()
    }
  })

  it('is none when the train scorer is local: the measured checks stand alone', () => {
    const t = testRuntime()
    expect(createLiveQualityJudge(providerSettingsOf('local', env({}), t.runtime.now()), t.runtime)).toBeUndefined()
  })
})
