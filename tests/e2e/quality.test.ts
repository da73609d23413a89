import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { encodeBase64 } from '../../shared/images/base64.ts'
import type { CreatedKey } from '../support/database.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../support/images.ts'
import { gemini, geminiPath, startFakeServer, type FakeServer } from '../support/provider-fakes.ts'
import { postTryOn, startTestStack, type ApiResponse, type TestStack } from '../support/stack.ts'

/**
 * Checked results (docs/billing.md, "Checked results"): each billing row through the endpoint, with the test scenario
 * on the local engine and with the Gemini engine and judge fakes answering pass, fail and garbage.
 */
const userPhoto = encodeBase64(makeShopperPhoto({ width: 240, height: 420, format: 'jpeg' }).bytes)
const productImage = encodeBase64(makeGarmentPhoto({ kind: 'tshirt', color: [200, 40, 40], width: 200, height: 200, format: 'png' }).bytes)
const standard = { userPhoto, productImage, clothingType: 'T-shirt' }
const ivory: [number, number, number] = [242, 236, 224]
const wedding = {
  userPhoto: encodeBase64(makeShopperPhoto({ width: 400, height: 600, background: [120, 128, 140], format: 'jpeg' }).bytes),
  productImage: encodeBase64(
    makeGarmentPhoto({ kind: 'gown-with-train', color: ivory, width: 320, height: 320, transparentBackground: true }).bytes,
  ),
  productType: 'wedding-dress',
}
const IMAGE_MODEL = 'gemini-3.1-flash-image'
const JUDGE_MODEL = 'gemini-3.5-flash'

interface TryOnRow {
  status: string
  outcome: string
  credits_charged: number
  short_id: string | null
  quality_checked: boolean | null
  quality_passed: boolean | null
  quality_issues: string[] | null
}

function helpers(t: () => TestStack) {
  return {
    async setLevel(key: CreatedKey, level: 'off' | 'measured' | 'judge') {
      await t().stack.sql`select tryon.set_key_quality(${key.keyId}::uuid, ${level})`
    },
    async row(tryOnId: string): Promise<TryOnRow> {
      const [row] = await t().stack.sql<TryOnRow[]>`
        select status, outcome, credits_charged, short_id, quality_checked, quality_passed, to_jsonb(quality_issues) as quality_issues
        from tryon.tryons where id = ${tryOnId}`
      return row
    },
    async expectBalanced(key: CreatedKey, balance: number) {
      expect(await t().ledger(key)).toEqual({ balance, reserved: 0, ledgerBalance: balance, ledgerReserved: 0, heldByTryOns: 0 })
    },
    async stored(res: ApiResponse): Promise<Uint8Array> {
      const image = await fetch(res.body.resultUrl)
      expect(image.status).toBe(200)
      return new Uint8Array(await image.arrayBuffer())
    },
  }
}

describe('checked results on the local engine (test keys)', () => {
  let t: TestStack
  const x = helpers(() => t)
  beforeAll(async () => {
    t = await startTestStack()
  })
  afterAll(async () => {
    await t?.close()
  })
  const post = (key: CreatedKey, body: unknown, scenario?: string) =>
    postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body, headers: scenario ? { 'X-Tryon-Scenario': scenario } : {} })

  it('a test key with no level of its own is measured: the local result is checked, passed and charged', async () => {
    const key = await t.createKey({ credits: 1 })
    const res = await post(key, standard)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ creditsCharged: 1, quality: { checked: true, passed: true, issues: [] } })
    expect(res.body.shortId).toMatch(/^[0-9A-Za-z]{10}$/)
    expect(await x.row(res.body.tryOnId)).toMatchObject({
      outcome: 'generated',
      credits_charged: 1,
      quality_checked: true,
      quality_passed: true,
    })
    await x.expectBalanced(key, 0)
  })

  it('X-Tryon-Scenario: quality_failed: delivered and stored, 0 credits, shortId null, the quality object says why', async () => {
    const key = await t.createKey({ credits: 1 })
    const res = await post(key, standard, 'quality_failed')
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({
      success: true,
      shortId: null,
      creditsCharged: 0,
      creditsRemaining: 1,
      quality: { checked: true, passed: false, score: 0, issues: ['scenario_forced'] },
    })
    expect((await x.stored(res)).length).toBeGreaterThan(100)
    expect(await x.row(res.body.tryOnId)).toMatchObject({
      status: 'succeeded',
      outcome: 'quality_failed',
      credits_charged: 0,
      short_id: null,
      quality_checked: true,
      quality_passed: false,
      quality_issues: ['scenario_forced'],
    })
    await x.expectBalanced(key, 1)
  })

  it('a wedding dress whose result fails its check is free too, whatever the train scored; its bridal verdict is kept', async () => {
    const key = await t.createKey({ credits: 2 })
    await x.setLevel(key, 'measured')
    const res = await post(key, wedding, 'quality_failed')
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ shortId: null, creditsCharged: 0, creditsRemaining: 2, quality: { passed: false } })
    expect(res.body.bridal).toBeDefined()
    expect(await x.row(res.body.tryOnId)).toMatchObject({ outcome: 'quality_failed', credits_charged: 0 })
    await x.expectBalanced(key, 2)
  })

  it('at level measured the local result is measured: charged exactly when it passed, with a short id exactly then', async () => {
    const key = await t.createKey({ credits: 1 })
    await x.setLevel(key, 'measured')
    const res = await post(key, standard)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const { quality } = res.body
    expect(quality).toMatchObject({ checked: true })
    expect(typeof quality.passed).toBe('boolean')
    expect(quality.score).toBeGreaterThanOrEqual(0)
    expect(quality.score).toBeLessThanOrEqual(1)
    expect(res.body.creditsCharged).toBe(quality.passed ? 1 : 0)
    expect(res.body.shortId === null).toBe(!quality.passed)
    expect(quality.passed ? [] : quality.issues.length).not.toBe(0)
    const row = await x.row(res.body.tryOnId)
    expect(row).toMatchObject({ outcome: quality.passed ? 'generated' : 'quality_failed', quality_passed: quality.passed })
    await x.expectBalanced(key, quality.passed ? 0 : 1)
  })

  it('level off: the check does not run, even for a key that had one', async () => {
    const key = await t.createKey({ credits: 1 })
    await x.setLevel(key, 'off')
    const res = await post(key, standard)
    expect(res.status).toBe(200)
    expect(res.body.quality).toBeUndefined()
    expect(res.body.creditsCharged).toBe(1)
  })
})

describe('checked results with the Gemini engine and judge (live keys at the default level: judge)', () => {
  let t: TestStack
  let fake: FakeServer
  const x = helpers(() => t)
  /** What the fake "generates": the local engine's own result for the same photos, which the measurements pass. */
  let generated: Uint8Array
  let measuredPassed = false
  beforeAll(async () => {
    fake = await startFakeServer()
    t = await startTestStack({
      env: { TRYON_ENGINE: 'gemini', TRYON_TRAIN_SCORER: 'gemini', GEMINI_API_KEY: 'AIza-live', GEMINI_BASE_URL: fake.url },
    })
    // Test keys always run the local engine: its result, measured at level measured, is what the fake answers with.
    const probe = await t.createKey({ credits: 1 })
    await x.setLevel(probe, 'measured')
    const res = await postTryOn(t.stack.functionUrl, { apiKey: probe.apiKey, body: standard })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    measuredPassed = res.body.quality.passed === true
    generated = await x.stored(res)
  })
  afterAll(async () => {
    await t?.close()
    await fake?.close()
  })
  beforeEach(() => fake.reset())
  const post = (key: CreatedKey) => postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: standard })

  /** A live key at the default level: where a judge is configured, as here, that is `judge`. */
  const liveKey = () => t.createKey({ credits: 1, mode: 'live' })

  it('the local result the fake answers with passes the measurements (so the judge decides below)', () => {
    expect(measuredPassed).toBe(true)
  })

  it('judge passes: 1 credit, a short id, quality passed; one judge call with the three images (default level)', async () => {
    fake.script('POST', geminiPath(IMAGE_MODEL), gemini.image(generated))
    fake.script('POST', geminiPath(JUDGE_MODEL), gemini.qualityJudged())
    const key = await liveKey()
    const res = await post(key)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ creditsCharged: 1, quality: { checked: true, passed: true, score: expect.any(Number) } })
    expect(res.body.shortId).toMatch(/^[0-9A-Za-z]{10}$/)
    const calls = fake.requestsTo(geminiPath(JUDGE_MODEL))
    expect(calls).toHaveLength(1)
    // The Gemini API's REST form (snake_case, as the train judge sends it): the shopper photo, the product, the result.
    const parts = (calls[0].json.contents as { parts: { inline_data?: unknown }[] }[]).flatMap((c) => c.parts)
    expect(parts.filter((p) => p.inline_data)).toHaveLength(3)
    await x.expectBalanced(key, 0)
  })

  it('a live key set to measured: checked, passed and charged, the judge never asked', async () => {
    fake.script('POST', geminiPath(IMAGE_MODEL), gemini.image(generated))
    const key = await t.createKey({ credits: 1, mode: 'live', quality: 'measured' })
    const res = await post(key)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ creditsCharged: 1, quality: { checked: true, passed: true } })
    expect(fake.requestsTo(geminiPath(JUDGE_MODEL))).toHaveLength(0)
    await x.expectBalanced(key, 0)
  })

  it('judge fails (the colour changed): delivered, 0 credits, shortId null, issues from its answers', async () => {
    fake.script('POST', geminiPath(IMAGE_MODEL), gemini.image(generated))
    fake.script('POST', geminiPath(JUDGE_MODEL), gemini.qualityJudged({ colourKept: false }))
    const key = await liveKey()
    const res = await post(key)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({
      shortId: null,
      creditsCharged: 0,
      quality: { checked: true, passed: false, issues: ['colour_changed'] },
    })
    expect(await x.stored(res)).toEqual(generated)
    expect(await x.row(res.body.tryOnId)).toMatchObject({
      outcome: 'quality_failed',
      credits_charged: 0,
      quality_issues: ['colour_changed'],
    })
    await x.expectBalanced(key, 1)
  })

  it('judge answers garbage: the check could not run, billed as usual with quality.checked false', async () => {
    fake.script('POST', geminiPath(IMAGE_MODEL), gemini.image(generated))
    fake.script('POST', geminiPath(JUDGE_MODEL), gemini.textOnly('Looks lovely!'))
    const key = await liveKey()
    const res = await post(key)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ creditsCharged: 1, quality: { checked: false, passed: null, score: null, issues: [] } })
    expect(res.body.shortId).toMatch(/^[0-9A-Za-z]{10}$/)
    expect(await x.row(res.body.tryOnId)).toMatchObject({ outcome: 'generated', quality_checked: false })
    await x.expectBalanced(key, 0)
  })

  it('a result the measurements fail is not sent to the judge: free, and the judge is not paid for', async () => {
    // The shopper photo sent back unchanged: nothing was put on.
    fake.script('POST', geminiPath(IMAGE_MODEL), gemini.image(makeShopperPhoto({ width: 240, height: 420, format: 'jpeg' }).bytes))
    const key = await liveKey()
    const res = await post(key)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ creditsCharged: 0, shortId: null, quality: { checked: true, passed: false } })
    expect(res.body.quality.issues.length).toBeGreaterThan(0)
    expect(fake.requestsTo(geminiPath(JUDGE_MODEL))).toHaveLength(0)
    await x.expectBalanced(key, 1)
  })
})

describe('a live wedding dress judged once: the train score and the check from one call (TRYON_ENGINE=gemini)', () => {
  let t: TestStack
  let fake: FakeServer
  const x = helpers(() => t)
  /** The local engine's wedding dress for the same photos: a gown with its train, which the measurements pass. */
  let gown: Uint8Array
  beforeAll(async () => {
    fake = await startFakeServer()
    t = await startTestStack({
      env: { TRYON_ENGINE: 'gemini', TRYON_TRAIN_SCORER: 'gemini', GEMINI_API_KEY: 'AIza-live', GEMINI_BASE_URL: fake.url },
    })
    const probe = await t.createKey({ credits: 2 })
    const res = await postTryOn(t.stack.functionUrl, { apiKey: probe.apiKey, body: wedding })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ bridal: { reason: 'train_rendered' }, quality: { checked: true, passed: true } })
    gown = await x.stored(res)
  })
  afterAll(async () => {
    await t?.close()
    await fake?.close()
  })
  beforeEach(() => fake.reset())
  const judgeCalls = () => fake.requestsTo(geminiPath(JUDGE_MODEL))

  it('the default level (judge): one call answers the train and the general questions; train rendered, checked, 2 credits', async () => {
    fake.script('POST', geminiPath(IMAGE_MODEL), gemini.image(gown))
    fake.script('POST', geminiPath(JUDGE_MODEL), gemini.qualityJudged({ trainLength: 'long' }, { weddingDress: true }))
    const key = await t.createKey({ credits: 2, mode: 'live' })
    const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: wedding })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({
      creditsCharged: 2,
      bridal: { applied: true, trainScore: 0.95, reason: 'train_rendered' },
      quality: { checked: true, passed: true, issues: [] },
    })
    expect(judgeCalls()).toHaveLength(1)
    const required = judgeCalls()[0].json.generationConfig.responseSchema.required
    expect(required).toEqual(expect.arrayContaining(['garmentOnBody', 'colourKept', 'gownOnBody', 'trainOnFloor', 'trainLength']))
    await x.expectBalanced(key, 0)
  })

  it('the same call failing the result (artifacts): delivered free with its train score, still one call', async () => {
    fake.script('POST', geminiPath(IMAGE_MODEL), gemini.image(gown))
    fake.script('POST', geminiPath(JUDGE_MODEL), gemini.qualityJudged({ grossArtifacts: true }, { weddingDress: true }))
    const key = await t.createKey({ credits: 2, mode: 'live' })
    const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: wedding })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({
      creditsCharged: 0,
      shortId: null,
      bridal: { applied: true, trainScore: 0.95 },
      quality: { checked: true, passed: false, issues: ['artifacts'] },
    })
    expect(judgeCalls()).toHaveLength(1)
    await x.expectBalanced(key, 2)
  })

  it('a key at level off still has its train judged, in one call whose general answers go unused', async () => {
    fake.script('POST', geminiPath(IMAGE_MODEL), gemini.image(gown))
    fake.script('POST', geminiPath(JUDGE_MODEL), gemini.qualityJudged({ trainLength: 'medium', colourKept: false }, { weddingDress: true }))
    const key = await t.createKey({ credits: 2, mode: 'live', quality: 'off' })
    const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: wedding })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ creditsCharged: 2, bridal: { applied: true, trainScore: 0.8, reason: 'train_rendered' } })
    expect(res.body).not.toHaveProperty('quality')
    expect(judgeCalls()).toHaveLength(1)
    await x.expectBalanced(key, 0)
  })
})

describe('a failed result generated again on the next engine of the chain (TRYON_ENGINE=gemini,local)', () => {
  let t: TestStack
  let fake: FakeServer
  const x = helpers(() => t)
  beforeAll(async () => {
    fake = await startFakeServer()
    t = await startTestStack({
      env: { TRYON_ENGINE: 'gemini,local', TRYON_TRAIN_SCORER: 'gemini', GEMINI_API_KEY: 'AIza-live', GEMINI_BASE_URL: fake.url },
    })
  })
  afterAll(async () => {
    await t?.close()
    await fake?.close()
  })

  it('Gemini sends the photo back unchanged: generated again on the local engine, checked again, passed, charged once', async () => {
    // The shopper photo as it came: nothing was put on. The judge is asked only about the second result.
    fake.script('POST', geminiPath(IMAGE_MODEL), gemini.image(makeShopperPhoto({ width: 240, height: 420, format: 'jpeg' }).bytes))
    fake.script('POST', geminiPath(JUDGE_MODEL), gemini.qualityJudged())
    const key = await t.createKey({ credits: 1, mode: 'live' })
    await x.setLevel(key, 'judge')
    const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: standard })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ creditsCharged: 1, quality: { checked: true, passed: true, issues: [] } })
    expect(res.body.shortId).toMatch(/^[0-9A-Za-z]{10}$/)
    expect(fake.requestsTo(geminiPath(IMAGE_MODEL))).toHaveLength(1)
    expect(fake.requestsTo(geminiPath(JUDGE_MODEL))).toHaveLength(1)
    const [row] = await t.stack.sql<{ engine: string; outcome: string }[]>`
      select engine, outcome from tryon.tryons where id = ${res.body.tryOnId}`
    expect(row).toEqual({ engine: 'local', outcome: 'generated' })
    await x.expectBalanced(key, 0)
  })

  it('a wedding dress is generated again too, through its whole pipeline: its train scored again, checked, charged 2', async () => {
    fake.reset()
    fake.script('POST', geminiPath(IMAGE_MODEL), gemini.image(makeShopperPhoto({ width: 400, height: 600, format: 'jpeg' }).bytes))
    fake.script('POST', geminiPath(JUDGE_MODEL), gemini.qualityJudged({}, { weddingDress: true }))
    const key = await t.createKey({ credits: 2, mode: 'live' })
    await x.setLevel(key, 'measured')
    const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: wedding })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({
      creditsCharged: 2,
      bridal: { applied: true, reason: 'train_rendered' },
      quality: { checked: true, passed: true, issues: [] },
    })
    expect(res.body.shortId).toMatch(/^[0-9A-Za-z]{10}$/)
    expect(fake.requestsTo(geminiPath(IMAGE_MODEL))).toHaveLength(1)
    // The train of each result is judged: Gemini's (the photo unchanged) and the local engine's.
    expect(fake.requestsTo(geminiPath(JUDGE_MODEL))).toHaveLength(2)
    expect(await x.row(res.body.tryOnId)).toMatchObject({ outcome: 'train_rendered', credits_charged: 2, quality_passed: true })
    const [row] = await t.stack.sql<{ engine: string }[]>`select engine from tryon.tryons where id = ${res.body.tryOnId}`
    expect(row.engine).toBe('local')
    await x.expectBalanced(key, 0)
  })
})
