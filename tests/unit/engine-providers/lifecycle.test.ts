import fc from 'fast-check'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { withCircuitBreaker } from '../../../shared/engine/providers/breaker.ts'
import { createEngineChain } from '../../../shared/engine/providers/chain.ts'
import { createGeminiEngine } from '../../../shared/engine/providers/gemini.ts'
import {
  lifecycleNotice,
  lifecycleVerdict,
  MODEL_LIFECYCLE,
  servedDefault,
  WARN_DAYS,
  type ConfiguredModel,
} from '../../../shared/engine/providers/lifecycle.ts'
import { createModelWatch, watchedEngine } from '../../../shared/engine/providers/model-watch.ts'
import { DEFAULT_MODELS } from '../../../shared/engine/providers/settings.ts'
import type { EngineOutcome, TryOnEngine } from '../../../shared/engine/types.ts'
import { createGeminiQualityJudge } from '../../../shared/quality/gemini-judge.ts'
import { trainScorerOf, watchedJudge } from '../../../shared/quality/judge.ts'
import { gemini, geminiPath, scriptGeminiModels, startFakeServer, type FakeServer } from '../../support/provider-fakes.ts'
import { garment, person, providerResult, testRuntime, tryOn } from './support.ts'

const at = (iso: string) => Date.parse(iso)
const DAY = 86_400_000
const TODAY = at('2026-11-25T12:00:00Z')

/** A clock moved by hand and a log kept, for the watch. */
function clockAndLog(start: number) {
  let now = start
  const logs: Record<string, unknown>[] = []
  return { now: () => now, log: (entry: Record<string, unknown>) => void logs.push(entry), logs, advance: (ms: number) => (now += ms) }
}

/** An engine that counts its calls and answers what it is told. */
function countingEngine(name: string, answer: () => EngineOutcome): TryOnEngine & { calls: number } {
  const engine = {
    name,
    calls: 0,
    async generate() {
      engine.calls++
      return answer()
    },
  }
  return engine
}

const generated: EngineOutcome = { kind: 'generated', image: { bytes: providerResult, contentType: 'image/jpeg' } }

describe('the model lifecycle table', () => {
  it('cites an https source and a read-on day for every row, with valid days and a successor served on the same platform', () => {
    const isDay = (d: string | undefined) => d === undefined || (/^\d{4}-\d{2}-\d{2}$/.test(d) && !Number.isNaN(Date.parse(d)))
    for (const entry of MODEL_LIFECYCLE) {
      expect(entry.source, entry.model).toMatch(/^https:\/\//)
      expect(isDay(entry.readOn) && isDay(entry.shutdown) && isDay(entry.notBefore), entry.model).toBe(true)
      expect(entry.shutdown !== undefined && entry.notBefore !== undefined, entry.model).toBe(false)
      if (entry.successor) {
        const verdict = lifecycleVerdict(entry.platform, entry.successor, at(`${entry.readOn}T00:00:00Z`))
        expect(['served', 'retiring'], `${entry.model} → ${entry.successor}`).toContain(verdict.state)
      }
    }
    const keys = MODEL_LIFECYCLE.map((e) => `${e.platform} ${e.model}`)
    expect(new Set(keys).size).toBe(keys.length)
  })

  it('has every default served today with no date within the warning window', () => {
    const platforms = {
      GEMINI_MODEL: 'gemini-api',
      GEMINI_SCORER_MODEL: 'gemini-api',
      VERTEX_MODEL: 'vertex-ai',
      VERTEX_SCORER_MODEL: 'vertex-ai',
      FASHN_MODEL: 'fashn',
    } as const
    for (const [setting, model] of Object.entries(DEFAULT_MODELS)) {
      expect(lifecycleVerdict(platforms[setting as keyof typeof platforms], model, TODAY).state, setting).toBe('served')
    }
  })

  it.each([
    ['gemini-api', 'gemini-2.5-flash-image', '2026-11-25T12:00:00Z', { state: 'retired', since: '2026-10-02' }],
    ['gemini-api', 'gemini-2.5-flash', '2026-11-25T12:00:00Z', { state: 'retired', since: '2026-10-16' }],
    ['vertex-ai', 'gemini-2.5-flash-image', '2026-11-25T12:00:00Z', { state: 'served' }],
    ['vertex-ai', 'gemini-2.5-flash-image', '2027-02-20T00:00:00Z', { state: 'retiring', on: '2027-03-15', daysLeft: 23, firm: true }],
    ['vertex-ai', 'virtual-try-on-001', '2026-12-20T00:00:01Z', { state: 'served' }],
    ['vertex-ai', 'virtual-try-on-001', '2026-12-21T00:00:00Z', { state: 'retiring', on: '2027-01-20', daysLeft: 30 }],
    ['vertex-ai', 'virtual-try-on-001', '2027-01-19T23:59:59Z', { state: 'retiring', daysLeft: 1 }],
    ['vertex-ai', 'virtual-try-on-001', '2027-01-20T00:00:00Z', { state: 'retired', since: '2027-01-20' }],
    ['vertex-ai', 'gemini-3.5-flash', '2027-05-25T00:00:00Z', { state: 'retiring', on: '2027-05-19', firm: false }],
    ['gemini-api', 'gemini-3.1-flash-image', '2030-01-01T00:00:00Z', { state: 'served' }],
    ['gemini-api', 'gemini-9-imaginary', '2026-11-25T12:00:00Z', { state: 'unknown' }],
  ] as const)('%s %s on %s: %j', (platform, model, when, expected) => {
    expect(lifecycleVerdict(platform, model, at(when))).toMatchObject(expected)
  })

  it('is retired exactly from the shutdown day, and warns only within the window before it (property)', () => {
    const dated = MODEL_LIFECYCLE.filter((e) => e.shutdown)
    fc.assert(
      fc.property(fc.constantFrom(...dated), fc.integer({ min: -400 * DAY, max: 400 * DAY }), (entry, offset) => {
        const day = at(`${entry.shutdown}T00:00:00Z`)
        const verdict = lifecycleVerdict(entry.platform, entry.model, day + offset)
        if (offset >= 0) return verdict.state === 'retired'
        if (offset >= -WARN_DAYS * DAY) return verdict.state === 'retiring' && verdict.daysLeft >= 1 && verdict.daysLeft <= WARN_DAYS
        return verdict.state === 'served'
      }),
    )
  })

  it('lets a default past its shutdown give way to its successor', () => {
    expect(servedDefault('vertex-ai', 'virtual-try-on-001', at('2027-01-19T12:00:00Z'))).toBe('virtual-try-on-001')
    expect(servedDefault('vertex-ai', 'virtual-try-on-001', at('2027-01-20T00:00:00Z'))).toBe('gemini-3.1-flash-image')
    expect(servedDefault('gemini-api', 'gemini-2.5-flash-image', TODAY)).toBe('gemini-3.1-flash-image')
  })

  it('says which setting names which model, since when, from which source and what to set instead', () => {
    const configured: ConfiguredModel = { setting: 'GEMINI_MODEL', platform: 'gemini-api', model: 'gemini-2.5-flash-image' }
    expect(lifecycleNotice(configured, lifecycleVerdict('gemini-api', 'gemini-2.5-flash-image', TODAY))).toBe(
      'GEMINI_MODEL names gemini-2.5-flash-image, which the Gemini API shut down on 2026-10-02 ' +
        '(https://ai.google.dev/gemini-api/docs/deprecations, read on 2026-11-25): it is not called; set GEMINI_MODEL=gemini-3.1-flash-image',
    )
    const vertex: ConfiguredModel = { setting: 'VERTEX_MODEL', platform: 'vertex-ai', model: 'virtual-try-on-001' }
    expect(lifecycleNotice(vertex, lifecycleVerdict('vertex-ai', 'virtual-try-on-001', at('2027-01-10T00:00:00Z')))).toMatch(
      /^VERTEX_MODEL names virtual-try-on-001, which Vertex AI shuts down on 2027-01-20, in 10 days \(https:.*\); set VERTEX_MODEL=gemini-3\.1-flash-image$/,
    )
    expect(lifecycleNotice(vertex, lifecycleVerdict('vertex-ai', 'virtual-try-on-001', TODAY))).toBeUndefined()
  })
})

describe('watching a configured model', () => {
  const vertexModel: ConfiguredModel = { setting: 'VERTEX_MODEL', platform: 'vertex-ai', model: 'virtual-try-on-001' }

  it('warns at start-up within 30 days of the shutdown, then at most once a day as calls come', () => {
    const c = clockAndLog(at('2026-12-25T09:00:00Z'))
    const watch = createModelWatch(vertexModel, c)
    const warnings = () => c.logs.filter((l) => l.msg === 'configured model retires soon')
    expect(warnings()).toEqual([
      expect.objectContaining({
        level: 'warn',
        setting: 'VERTEX_MODEL',
        model: 'virtual-try-on-001',
        on: '2027-01-20',
        daysLeft: 26,
        successor: 'gemini-3.1-flash-image',
      }),
    ])
    c.advance(23 * 3_600_000)
    expect(watch.refusal()).toBeUndefined()
    expect(warnings()).toHaveLength(1)
    c.advance(3_600_000)
    expect(watch.refusal()).toBeUndefined()
    expect(warnings()).toHaveLength(2)
    expect(warnings()[1]).toMatchObject({ daysLeft: 25 })
  })

  it('says nothing for a model served with no date near, and notes one the table does not know', () => {
    const quiet = clockAndLog(TODAY)
    createModelWatch(vertexModel, quiet)
    expect(quiet.logs).toEqual([])
    const unknown = clockAndLog(TODAY)
    createModelWatch({ setting: 'GEMINI_MODEL', platform: 'gemini-api', model: 'gemini-9-imaginary' }, unknown)
    expect(unknown.logs).toEqual([expect.objectContaining({ level: 'info', msg: expect.stringContaining('not in the lifecycle table') })])
  })

  it('never calls an engine whose model is past its shutdown day: it fails at once, with the operator’s notice logged', async () => {
    const c = clockAndLog(at('2027-01-20T08:00:00Z'))
    const inner = countingEngine('vertex', () => generated)
    const engine = watchedEngine(inner, vertexModel, c)
    expect(c.logs).toContainEqual(expect.objectContaining({ level: 'error', msg: 'configured model is not served', since: '2027-01-20' }))
    const outcome = await engine.generate(tryOn())
    expect(outcome).toMatchObject({
      kind: 'failed',
      modelNotServed: true,
      reason: expect.stringContaining('set VERTEX_MODEL=gemini-3.1-flash-image'),
    })
    expect(inner.calls).toBe(0)
  })

  describe('a provider answering 404 NOT_FOUND for the model', () => {
    let fake: FakeServer
    beforeAll(async () => {
      fake = await startFakeServer()
    })
    afterAll(() => fake?.close())
    beforeEach(() => {
      fake.reset()
      scriptGeminiModels(fake, { served: { 'gemini-3.1-flash-image': gemini.image(providerResult) }, gone: ['gemini-3-pro-image'] })
    })

    it('logs the notice (setting, model, what to set), opens the breaker at once and stops calling', async () => {
      const t = testRuntime()
      const configured: ConfiguredModel = { setting: 'GEMINI_MODEL', platform: 'gemini-api', model: 'gemini-3-pro-image' }
      const adapter = createGeminiEngine({ apiKey: 'AIza', baseUrl: fake.url, model: configured.model }, t.runtime)
      const engine = withCircuitBreaker(watchedEngine(adapter, configured, t.runtime), {
        policy: { failures: 5, openMs: 30_000, modelNotServedOpenMs: 600_000 },
        now: t.runtime.now,
        log: t.runtime.log,
      })
      expect(await engine.generate(tryOn())).toMatchObject({ kind: 'failed', modelNotServed: true })
      expect(t.logs).toContainEqual(
        expect.objectContaining({
          level: 'error',
          msg: 'configured model is not served',
          setting: 'GEMINI_MODEL',
          model: 'gemini-3-pro-image',
          answered: '404 NOT_FOUND',
          notice: expect.stringContaining('set GEMINI_MODEL to a model the Gemini API serves'),
        }),
      )
      expect(t.logs).toContainEqual(
        expect.objectContaining({ msg: 'provider circuit open: the configured model is not served', forMs: 600_000 }),
      )
      expect(await engine.generate(tryOn())).toEqual({
        kind: 'failed',
        reason: 'gemini: skipped, circuit open because the configured model is not served',
      })
      expect(fake.requestsTo(geminiPath('gemini-3-pro-image'))).toHaveLength(1)
      // Ten minutes on, one request probes it again.
      t.advance(600_000)
      await engine.generate(tryOn())
      expect(fake.requestsTo(geminiPath('gemini-3-pro-image'))).toHaveLength(2)
    })

    it('in a chain, a retired model falls through to the next engine at once', async () => {
      const t = testRuntime()
      const retired: ConfiguredModel = { setting: 'GEMINI_MODEL', platform: 'gemini-api', model: 'gemini-2.5-flash-image' }
      const adapter = createGeminiEngine({ apiKey: 'AIza', baseUrl: fake.url, model: retired.model }, t.runtime)
      const next = countingEngine('fashn', () => generated)
      const chain = createEngineChain([watchedEngine(adapter, retired, t.runtime), next], {
        budgetMs: 60_000,
        log: t.runtime.log,
        now: t.runtime.now,
      })
      const outcome = await chain.generate(tryOn())
      expect(outcome.kind === 'generated' && outcome.image.engine).toBe('fashn')
      expect(fake.requests).toHaveLength(0)
      expect(t.logs).toContainEqual(
        expect.objectContaining({ msg: 'engine failed; falling back to the next', engine: 'gemini', next: 'fashn' }),
      )
    })
  })
})

describe('a train judge whose model is gone (the quality judge that scores a live wedding dress)', () => {
  let fake: FakeServer
  const result = { bytes: providerResult, contentType: 'image/jpeg' as const }
  beforeAll(async () => {
    fake = await startFakeServer()
  })
  afterAll(() => fake?.close())
  beforeEach(() => {
    fake.reset()
    scriptGeminiModels(fake, {
      served: { 'gemini-3.5-flash': gemini.qualityJudged({}, { weddingDress: true }) },
      gone: ['gemini-2.5-flash', 'gemini-3.6-flash'],
    })
  })

  const judge = (model: string) => {
    const t = testRuntime()
    // As shared/service.ts builds it: the train scored from the answers of the watched quality judge.
    const scorer = trainScorerOf(
      watchedJudge(
        createGeminiQualityJudge({ apiKey: 'AIza', baseUrl: fake.url, model }, t.runtime),
        { setting: 'GEMINI_SCORER_MODEL', platform: 'gemini-api', model },
        t.runtime,
      ),
    )
    return { ...t, scorer }
  }
  const loud = (logs: Record<string, unknown>[]) =>
    logs.filter((l) => l.level === 'error' && String(l.msg).includes('billed without a quality check or a train score'))

  it('is never called past its shutdown day: unavailable (billed as delivered), with an error for every wedding dress', async () => {
    const { scorer, logs } = judge('gemini-2.5-flash')
    for (let i = 0; i < 2; i++) {
      expect(await scorer.score({ result, person, garment })).toMatchObject({ kind: 'unavailable', modelNotServed: true })
    }
    expect(fake.requests).toHaveLength(0)
    expect(loud(logs)).toHaveLength(2)
    expect(loud(logs)[0]).toMatchObject({
      setting: 'GEMINI_SCORER_MODEL',
      notice: expect.stringContaining('set GEMINI_SCORER_MODEL=gemini-3.5-flash'),
    })
  })

  it('after a 404 NOT_FOUND is left alone for ten minutes, each skipped score still logged, then asked again', async () => {
    const { scorer, logs, advance } = judge('gemini-3.6-flash')
    expect(await scorer.score({ result, person, garment })).toMatchObject({ kind: 'unavailable', modelNotServed: true })
    expect(await scorer.score({ result, person, garment })).toMatchObject({ kind: 'unavailable', modelNotServed: true })
    expect(fake.requestsTo(geminiPath('gemini-3.6-flash'))).toHaveLength(1)
    expect(loud(logs)).toHaveLength(2)
    expect(logs).toContainEqual(expect.objectContaining({ msg: 'configured model is not served', answered: '404 NOT_FOUND' }))
    advance(600_000)
    await scorer.score({ result, person, garment })
    expect(fake.requestsTo(geminiPath('gemini-3.6-flash'))).toHaveLength(2)
  })

  it('a served judge scores as before', async () => {
    const { scorer, logs } = judge('gemini-3.5-flash')
    expect(await scorer.score({ result, person, garment })).toEqual({ kind: 'scored', score: 0.95 })
    expect(loud(logs)).toEqual([])
  })
})
