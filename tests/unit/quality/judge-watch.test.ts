import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createGeminiQualityJudge } from '../../../shared/quality/gemini-judge.ts'
import { watchedJudge } from '../../../shared/quality/judge.ts'
import { gemini, geminiPath, scriptGeminiModels, startFakeServer, type FakeServer } from '../../support/provider-fakes.ts'
import { garment, person, providerResult, testRuntime } from '../engine-providers/support.ts'

const result = { bytes: providerResult, contentType: 'image/jpeg' as const }
const request = (weddingDress = false) => ({ shopper: person, product: garment, result, weddingDress })
const breaker = { failures: 3, openMs: 30_000, modelNotServedOpenMs: 600_000 }

describe('a quality judge whose model is watched', () => {
  let fake: FakeServer
  beforeAll(async () => {
    fake = await startFakeServer()
  })
  afterAll(() => fake?.close())
  beforeEach(() => {
    fake.reset()
    scriptGeminiModels(fake, { served: { 'gemini-3.5-flash': gemini.qualityJudged() }, gone: ['gemini-2.5-flash', 'gemini-3.6-flash'] })
  })

  const judgeOf = (model: string) => {
    const t = testRuntime()
    const judge = watchedJudge(
      createGeminiQualityJudge({ apiKey: 'AIza', baseUrl: fake.url, model }, t.runtime),
      { setting: 'GEMINI_SCORER_MODEL', platform: 'gemini-api', model },
      { ...t.runtime, breaker },
    )
    return { ...t, judge }
  }
  const loud = (logs: Record<string, unknown>[]) =>
    logs.filter((l) => l.level === 'error' && String(l.msg).includes('billed without a quality check'))

  it('is never called past its shutdown day: checked: false, with an error naming the setting for every try-on', async () => {
    const { judge, logs } = judgeOf('gemini-2.5-flash')
    expect(await judge.judge(request())).toMatchObject({ checked: false, modelNotServed: true })
    expect(await judge.judge(request(true))).toMatchObject({ checked: false, modelNotServed: true, train: { kind: 'unavailable' } })
    expect(fake.requests).toHaveLength(0)
    expect(loud(logs)).toHaveLength(2)
    expect(loud(logs)[0]).toMatchObject({
      setting: 'GEMINI_SCORER_MODEL',
      notice: expect.stringContaining('set GEMINI_SCORER_MODEL=gemini-3.5-flash'),
    })
  })

  it('after a 404 NOT_FOUND is left alone for ten minutes, each skipped check logged, then asked again', async () => {
    const { judge, logs, advance } = judgeOf('gemini-3.6-flash')
    expect(await judge.judge(request())).toMatchObject({ checked: false, modelNotServed: true })
    expect(await judge.judge(request())).toMatchObject({ checked: false, modelNotServed: true })
    expect(fake.requestsTo(geminiPath('gemini-3.6-flash'))).toHaveLength(1)
    expect(loud(logs)).toHaveLength(2)
    expect(logs).toContainEqual(expect.objectContaining({ msg: 'configured model is not served', answered: '404 NOT_FOUND' }))
    advance(600_000)
    await judge.judge(request())
    expect(fake.requestsTo(geminiPath('gemini-3.6-flash'))).toHaveLength(2)
  })

  it('skips a judge that is down after consecutive outages, then lets one probe through and closes on an answer', async () => {
    fake.script('POST', geminiPath('gemini-3.5-flash'), gemini.error(503, 'UNAVAILABLE', 'The model is overloaded.'))
    const { judge, logs, advance } = judgeOf('gemini-3.5-flash')
    for (let i = 0; i < breaker.failures; i++) expect(await judge.judge(request())).toMatchObject({ checked: false, outage: true })
    // Each judgement tried twice (one retry).
    expect(fake.requests).toHaveLength(2 * breaker.failures)
    expect(await judge.judge(request())).toMatchObject({ checked: false, outage: true, reason: expect.stringContaining('circuit open') })
    expect(fake.requests).toHaveLength(2 * breaker.failures)
    expect(logs).toContainEqual(expect.objectContaining({ msg: 'quality judge circuit open: skipping it' }))

    advance(breaker.openMs)
    fake.script('POST', geminiPath('gemini-3.5-flash'), gemini.qualityJudged({ colourKept: false }))
    expect(await judge.judge(request())).toMatchObject({ checked: true, passed: false, issues: ['colour_changed'] })
    expect(await judge.judge(request())).toMatchObject({ checked: true })
    expect(fake.requests).toHaveLength(2 * breaker.failures + 2)
  })

  it('does not count answers that are not outages (off-schema, blocked) toward the breaker', async () => {
    fake.script('POST', geminiPath('gemini-3.5-flash'), gemini.textOnly('looks fine'))
    const { judge } = judgeOf('gemini-3.5-flash')
    for (let i = 0; i < breaker.failures + 2; i++) await judge.judge(request())
    expect(fake.requests).toHaveLength(breaker.failures + 2)
  })

  it('a served judge judges as before, without an error', async () => {
    const { judge, logs } = judgeOf('gemini-3.5-flash')
    expect(await judge.judge(request())).toEqual({ checked: true, passed: true, score: 1, issues: [] })
    expect(loud(logs)).toEqual([])
  })
})
