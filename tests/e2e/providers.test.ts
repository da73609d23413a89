import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { decodeBase64, encodeBase64 } from '../../shared/images/base64.ts'
import { readImageHeader } from '../../shared/images/sniff.ts'
import type { CreatedKey } from '../support/database.ts'
import { makeGarmentPhoto, makeNoiseImage, makeShopperPhoto } from '../support/images.ts'
import {
  fashn,
  FASHN_PREDICTION,
  gemini,
  geminiPath,
  makeServiceAccount,
  startFakeServer,
  startFashnFake,
  vertex,
  vertexGenerateContentPath,
  vertexPredictPath,
  verifyJwt,
  type FakeServer,
  type FashnFake,
} from '../support/provider-fakes.ts'
import { expectErrorBody, postTryOn, startTestStack, type ApiResponse, type TestStack } from '../support/stack.ts'

/**
 * What the providers "generate": a distinct JPEG, so the stored result can be traced back to the provider. It is
 * another shopper in a red shirt, not the yellow T-shirt put on this shopper, so the result check would rightly fail
 * it: this file is about the providers' wire format, so its live keys are not checked (level off). The check of a
 * provider's result is tested in tests/e2e/quality.test.ts.
 */
const providerResult = makeShopperPhoto({ width: 96, height: 160, format: 'jpeg', shirtColor: [200, 30, 30], seed: 7 }).bytes
const userPhoto = encodeBase64(makeShopperPhoto({ width: 160, height: 280, format: 'jpeg' }).bytes)
const productImage = encodeBase64(makeGarmentPhoto({ kind: 'tshirt', color: [240, 200, 20], width: 160, height: 160, format: 'png' }).bytes)
const standard = { userPhoto, productImage, clothingType: 'T-shirt' }
const slate: [number, number, number] = [120, 128, 140]
const ivory: [number, number, number] = [242, 236, 224]
const wedding = {
  userPhoto: encodeBase64(makeShopperPhoto({ width: 400, height: 600, background: slate, format: 'jpeg' }).bytes),
  productImage: encodeBase64(
    makeGarmentPhoto({ kind: 'gown-with-train', color: ivory, width: 320, height: 320, transparentBackground: true }).bytes,
  ),
  productType: 'wedding-dress',
  locale: 'fr',
}
const statusPath = `/v1/status/${FASHN_PREDICTION}`
const IMAGE_MODEL = 'gemini-3.1-flash-image'
const JUDGE_MODEL = 'gemini-3.5-flash'

interface TryOnRow {
  status: string
  outcome: string
  credits_charged: number
  engine: string | null
}

/** Status, body, stored result, balance, ledger and try-on row: the whole effect of one request. */
function expectations(t: () => TestStack) {
  return {
    async latestTryOn(key: CreatedKey): Promise<TryOnRow> {
      const [row] = await t().stack.sql<TryOnRow[]>`
        select status, outcome, credits_charged, engine from tryon.tryons where account_id = ${key.accountId} order by created_at desc limit 1`
      return row
    },
    async ledgerKinds(key: CreatedKey): Promise<string[]> {
      const rows = await t().stack.sql<{ kind: string; reason: string }[]>`
        select kind, reason from tryon.ledger where account_id = ${key.accountId} and tryon_id is not null order by id`
      return rows.map((r) => `${r.kind}:${r.reason}`)
    },
    async expectStoredResult(res: ApiResponse) {
      expect(res.body.resultUrl.startsWith(`${t().stack.url}/storage/v1/object/public/`)).toBe(true)
      const image = await fetch(res.body.resultUrl)
      expect(image.status).toBe(200)
      expect(new Uint8Array(await image.arrayBuffer())).toEqual(providerResult)
    },
    async expectBalanced(key: CreatedKey, balance: number) {
      expect(await t().ledger(key)).toEqual({ balance, reserved: 0, ledgerBalance: balance, ledgerReserved: 0, heldByTryOns: 0 })
    },
  }
}

describe('FASHN engine through the endpoint (TRYON_ENGINE=fashn)', () => {
  let t: TestStack
  let fake: FashnFake
  const x = expectations(() => t)
  beforeAll(async () => {
    fake = await startFashnFake(providerResult)
    t = await startTestStack({ env: { TRYON_ENGINE: 'fashn', FASHN_API_KEY: 'fa-live-key', FASHN_BASE_URL: fake.url } })
  })
  afterAll(async () => {
    await t?.close()
    await fake?.close()
  })
  beforeEach(() => {
    fake.reset()
    fake.script('GET', statusPath, fashn.completed(fake.outputUrl))
  })
  const post = (key: CreatedKey, body: unknown = standard) => postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body })

  it('queue → processing → completed: 200, the result stored in our bucket, 1 credit charged, engine fashn recorded', async () => {
    fake.script('GET', statusPath, fashn.status('in_queue'), fashn.status('processing'), fashn.completed(fake.outputUrl))
    const key = await t.createKey({ credits: 3, mode: 'live', quality: 'off' })
    const res = await post(key)

    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ success: true, creditsRemaining: 2, creditsCharged: 1 })
    expect(JSON.stringify(res.body)).not.toContain(fake.url)
    await x.expectStoredResult(res)
    expect(fake.requestsTo('/v1/run')[0].json.inputs).toMatchObject({
      category: 'tops',
      model_image: expect.stringMatching(/^data:image\/jpeg;base64,/),
    })
    expect(fake.requestsTo(statusPath)).toHaveLength(3)
    expect(await x.latestTryOn(key)).toEqual({ status: 'succeeded', outcome: 'generated', credits_charged: 1, engine: 'fashn' })
    expect(await x.ledgerKinds(key)).toEqual(['reservation:standard', 'charge:generated'])
    await x.expectBalanced(key, 2)
  })

  it('retries a 429 from FASHN and still delivers, charging once', async () => {
    fake.script('POST', '/v1/run', fashn.submitError(429, 'RateLimitExceeded', 'Too many requests'), fashn.submitted())
    const key = await t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    const res = await post(key)
    expect(res.status).toBe(200)
    expect(fake.requestsTo('/v1/run')).toHaveLength(2)
    await x.expectBalanced(key, 0)
  })

  it('ContentModerationError: 422 ai_content_rejected, refunded, FASHN’s words not shown', async () => {
    fake.script('GET', statusPath, fashn.failed('ContentModerationError', 'NSFW content detected in model image'))
    const key = await t.createKey({ credits: 2, mode: 'live', quality: 'off' })
    const res = await post(key)
    expectErrorBody(res, 422, 'ai_content_rejected')
    expect(res.body.error).not.toContain('NSFW')
    expect(await x.latestTryOn(key)).toMatchObject({ status: 'failed', outcome: 'ai_content_rejected', credits_charged: 0 })
    expect(await x.ledgerKinds(key)).toEqual(['reservation:standard', 'refund:ai_content_rejected'])
    await x.expectBalanced(key, 2)
    expect(JSON.stringify(t.logs)).toContain('NSFW content detected in model image')
  })

  it('PoseError: 400 person_not_found, as the local engine answers a photo with nobody in it, refunded', async () => {
    fake.script('GET', statusPath, fashn.failed('PoseError', 'pose estimation failed: 0 keypoints'))
    const key = await t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    const res = await post(key)
    expectErrorBody(
      res,
      400,
      'person_not_found',
      'No person found in userPhoto: send a photo of a person, head to feet for a wedding dress',
    )
    expect(await x.latestTryOn(key)).toMatchObject({ status: 'failed', outcome: 'person_not_found', credits_charged: 0 })
    await x.expectBalanced(key, 1)
  })

  it('PipelineError: 500 generation_failed, refunded', async () => {
    fake.script('GET', statusPath, fashn.failed('PipelineError', 'worker crashed'))
    const key = await t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    const res = await post(key)
    expectErrorBody(res, 500, 'generation_failed')
    expect(await x.ledgerKinds(key)).toEqual(['reservation:standard', 'refund:generation_failed'])
    await x.expectBalanced(key, 1)
  })

  it('a malformed answer from FASHN: 500 generation_failed, refunded', async () => {
    fake.script('POST', '/v1/run', { text: '<html>502 Bad Gateway</html>', contentType: 'text/html' })
    const key = await t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    expectErrorBody(await post(key), 500, 'generation_failed')
    await x.expectBalanced(key, 1)
  })

  describe('a large result streams from FASHN’s URL into our bucket', () => {
    const large = makeNoiseImage({ width: 640, height: 640, format: 'jpeg' }).bytes
    const outputPath = () => new URL(fake.outputUrl).pathname
    const storedFiles = async () =>
      (await readdir(join(t.dataDir, 'storage'), { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name)

    it('stores the provider’s bytes exactly and charges 1 credit', async () => {
      expect(large.byteLength).toBeGreaterThan(300_000)
      fake.script('GET', outputPath(), { parts: [large.subarray(0, 280_000), large.subarray(280_000)], contentType: 'image/jpeg' })
      const key = await t.createKey({ credits: 1, mode: 'live', quality: 'off' })
      const res = await post(key)
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      const stored = await fetch(res.body.resultUrl)
      expect(Buffer.from(await stored.arrayBuffer()).equals(Buffer.from(large))).toBe(true)
      await x.expectBalanced(key, 0)
    })

    it('a body that passes the 25 MB cap mid-stream: 500 generation_failed, refunded, nothing left in the bucket', async () => {
      const before = await storedFiles()
      fake.script('GET', outputPath(), { parts: [large, new Uint8Array(25 * 1024 * 1024)], contentType: 'image/jpeg' })
      const key = await t.createKey({ credits: 1, mode: 'live', quality: 'off' })
      expectErrorBody(await post(key), 500, 'generation_failed')
      expect(await x.latestTryOn(key)).toMatchObject({ status: 'failed', outcome: 'generation_failed', credits_charged: 0 })
      expect(await x.ledgerKinds(key)).toEqual(['reservation:standard', 'refund:generation_failed'])
      await x.expectBalanced(key, 1)
      expect(await storedFiles()).toEqual(before)
      expect(JSON.stringify(t.logs)).toContain('result download failed while it was being stored')
    })

    it('a wedding dress: the judge reads the streamed result whole, and the result is stored', async () => {
      fake.script('GET', outputPath(), { parts: [large.subarray(0, 280_000), large.subarray(280_000)], contentType: 'image/jpeg' })
      const key = await t.createKey({ credits: 2, mode: 'live', quality: 'off' })
      const res = await post(key, wedding)
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.bridal).toMatchObject({ applied: true })
      const stored = await fetch(res.body.resultUrl)
      expect(Buffer.from(await stored.arrayBuffer()).equals(Buffer.from(large))).toBe(true)
    })
  })

  it('a wedding dress goes to FASHN as a one-piece with floor room added below the feet, and is billed by the bridal rules', async () => {
    const key = await t.createKey({ credits: 2, mode: 'live', quality: 'off' })
    const res = await post(key, wedding)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const inputs = fake.requestsTo('/v1/run')[0].json.inputs
    expect(inputs.category).toBe('one-pieces')
    // FASHN takes no train guidance: the pre-treatment's only help is floor room, so the train fits the picture.
    const sent = readImageHeader(decodeBase64(inputs.model_image.replace(/^data:[^,]*,/, ''))!)
    expect(sent?.width).toBe(400)
    expect(sent!.height).toBeGreaterThan(600)
    // No Gemini key or Vertex account: the local scorer (auto); FASHN's answer is framed unlike the padded photo.
    expect(res.body.bridal).toEqual({ applied: true, trainScore: null, reason: 'score_unavailable' })
    expect(await x.latestTryOn(key)).toMatchObject({ status: 'succeeded', engine: 'fashn' })
  })

  it('a wedding dress on a photo cropped above the feet: FASHN cannot lay a train, so the pre-treatment row (1 credit)', async () => {
    const key = await t.createKey({ credits: 2, mode: 'live', quality: 'off' })
    const croppedPhoto = makeShopperPhoto({ width: 400, height: 600, background: slate, fullLength: false, format: 'jpeg' }).bytes
    const res = await post(key, { ...wedding, userPhoto: encodeBase64(croppedPhoto) })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({
      creditsCharged: 1,
      bridal: { applied: false, trainScore: null, reason: 'train_pretreatment_unavailable' },
    })
    const sent = fake.requestsTo('/v1/run')[0].json.inputs.model_image.replace(/^data:[^,]*,/, '')
    expect(sent).toBe(encodeBase64(croppedPhoto))
    await x.expectBalanced(key, 1)
  })

  it('a garment with no train sent as a wedding dress goes to FASHN as what it is, without padding, for 1 credit', async () => {
    const key = await t.createKey({ credits: 2, mode: 'live', quality: 'off' })
    const res = await post(key, { ...wedding, productImage })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(fake.requestsTo('/v1/run')[0].json.inputs.category).toBe('auto')
    expect(res.body).toMatchObject({
      creditsCharged: 1,
      bridal: { applied: false, trainScore: null, reason: 'train_pretreatment_unavailable' },
    })
    await x.expectBalanced(key, 1)
  })

  it('a test key never calls FASHN: the local engine answers and is recorded', async () => {
    const key = await t.createKey({ credits: 1, mode: 'test' })
    const res = await post(key)
    expect(res.status).toBe(200)
    expect(fake.requests).toHaveLength(0)
    expect(await x.latestTryOn(key)).toMatchObject({ status: 'succeeded', engine: 'local' })
  })
})

describe('Vertex AI Virtual Try-On through the endpoint (TRYON_ENGINE=vertex)', () => {
  let t: TestStack
  let fake: FakeServer
  let account: Awaited<ReturnType<typeof makeServiceAccount>>
  const x = expectations(() => t)
  const predictPath = vertexPredictPath('test-project', 'europe-west4')
  beforeAll(async () => {
    fake = await startFakeServer((f) => {
      f.script('POST', '/token', vertex.token('ya29.e2e'))
      f.script('POST', predictPath, vertex.image(providerResult))
    })
    account = await makeServiceAccount(`${fake.url}/token`)
    t = await startTestStack({
      env: {
        TRYON_ENGINE: 'vertex',
        VERTEX_PROJECT: 'test-project',
        VERTEX_LOCATION: 'europe-west4',
        VERTEX_BASE_URL: fake.url,
        VERTEX_SERVICE_ACCOUNT_JSON: account.json,
      },
    })
  })
  afterAll(async () => {
    await t?.close()
    await fake?.close()
  })
  beforeEach(() => fake.reset())
  const post = (key: CreatedKey) => postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: standard })

  it('signs in with the service account, predicts, stores the result and charges 1 credit; the token is reused', async () => {
    const key = await t.createKey({ credits: 2, mode: 'live', quality: 'off' })
    const first = await post(key)
    const second = await post(key)
    expect([first.status, second.status]).toEqual([200, 200])
    await x.expectStoredResult(first)
    expect(await verifyJwt(new URLSearchParams(fake.requestsTo('/token')[0].text).get('assertion')!, account.publicKey)).not.toBeNull()
    expect(fake.requestsTo('/token')).toHaveLength(1)
    expect(fake.requestsTo(predictPath).map((r) => r.headers.authorization)).toEqual(['Bearer ya29.e2e', 'Bearer ya29.e2e'])
    expect(await x.latestTryOn(key)).toEqual({ status: 'succeeded', outcome: 'generated', credits_charged: 1, engine: 'vertex' })
    await x.expectBalanced(key, 0)
  })

  it('raiFilteredReason: 422 ai_content_rejected, refunded', async () => {
    fake.script('POST', predictPath, vertex.filtered('Your current safety filter threshold filtered out the generated image.'))
    const key = await t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    expectErrorBody(await post(key), 422, 'ai_content_rejected')
    expect(await x.ledgerKinds(key)).toEqual(['reservation:standard', 'refund:ai_content_rejected'])
    await x.expectBalanced(key, 1)
  })

  it('429 then success: retried within the budget, charged once', async () => {
    fake.script(
      'POST',
      predictPath,
      vertex.error(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model'),
      vertex.image(providerResult),
    )
    const key = await t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    expect((await post(key)).status).toBe(200)
    expect(fake.requestsTo(predictPath)).toHaveLength(2)
    await x.expectBalanced(key, 0)
  })

  it('a 400 Vertex does not explain as a safety block: 500 generation_failed, refunded, not retried', async () => {
    fake.script('POST', predictPath, vertex.error(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.'))
    const key = await t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    expectErrorBody(await post(key), 500, 'generation_failed')
    expect(fake.requestsTo(predictPath)).toHaveLength(1)
    await x.expectBalanced(key, 1)
  })
})

describe('Gemini engine and train judge through the endpoint (TRYON_ENGINE=gemini, TRYON_TRAIN_SCORER=gemini)', () => {
  let t: TestStack
  let fake: FakeServer
  const x = expectations(() => t)
  beforeAll(async () => {
    fake = await startFakeServer((f) => {
      f.script('POST', geminiPath(IMAGE_MODEL), gemini.image(providerResult))
      f.script('POST', geminiPath(JUDGE_MODEL), gemini.qualityJudged({ trainLength: 'medium' }, { weddingDress: true }))
    })
    t = await startTestStack({
      env: { TRYON_ENGINE: 'gemini', TRYON_TRAIN_SCORER: 'gemini', GEMINI_API_KEY: 'AIza-live', GEMINI_BASE_URL: fake.url },
    })
  })
  afterAll(async () => {
    await t?.close()
    await fake?.close()
  })
  beforeEach(() => fake.reset())
  const post = (key: CreatedKey, body: unknown = standard) => postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body })

  it('standard: 200, result stored, 1 credit, engine gemini; the judge is not asked', async () => {
    const key = await t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    const res = await post(key)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    await x.expectStoredResult(res)
    expect(fake.requestsTo(geminiPath(JUDGE_MODEL))).toHaveLength(0)
    expect(await x.latestTryOn(key)).toEqual({ status: 'succeeded', outcome: 'generated', credits_charged: 1, engine: 'gemini' })
    await x.expectBalanced(key, 0)
  })

  it('wedding dress: the prompt asks for the train on the floor, the judge scores it, 2 credits charged', async () => {
    const key = await t.createKey({ credits: 2, mode: 'live', quality: 'off' })
    const res = await post(key, wedding)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ creditsCharged: 2, bridal: { applied: true, trainScore: 0.8, reason: 'train_rendered' } })
    const [generation] = fake.requestsTo(geminiPath(IMAGE_MODEL))
    const prompt = generation.json.contents[0].parts[0].text
    // The pre-treatment's train, measured on the product photo, sizes the request.
    expect(prompt).toMatch(
      /full train spread out on the floor .* reaching about \d+% of the person's height beyond the feet and about [\d.]+ times as wide as the hem/,
    )
    expect(prompt).toContain('write it in French')
    // One call: the quality judge's, with the train questions beside the general ones (the key's level is off, so its
    // general answers go unused).
    expect(fake.requestsTo(geminiPath(JUDGE_MODEL))).toHaveLength(1)
    const judged = fake.requestsTo(geminiPath(JUDGE_MODEL))[0].json
    expect(judged.generationConfig).toMatchObject({
      responseMimeType: 'application/json',
      responseSchema: { required: expect.arrayContaining(['gownOnBody', 'trainOnFloor', 'garmentOnBody']) },
    })
    // The judge sees the photo the engine was given (padded with floor room), the gown and the result.
    expect(judged.contents[0].parts[1].inline_data.data).toBe(generation.json.contents[0].parts[1].inline_data.data)
    expect(judged.contents[0].parts[3].inline_data.data).toBe(encodeBase64(providerResult))
    await x.expectBalanced(key, 0)
  })

  it('wedding dress with a malformed judge answer: trainScore null, delivered and charged (score unavailable)', async () => {
    fake.script('POST', geminiPath(JUDGE_MODEL), gemini.textOnly('Looks lovely!'))
    const key = await t.createKey({ credits: 2, mode: 'live', quality: 'off' })
    const res = await post(key, wedding)
    expect(res.status).toBe(200)
    expect(res.body.bridal).toEqual({ applied: true, trainScore: null, reason: 'score_unavailable' })
    await x.expectBalanced(key, 0)
  })

  it.each([
    ['a blocked prompt', gemini.promptBlocked('PROHIBITED_CONTENT')],
    ['finishReason IMAGE_SAFETY', gemini.finished('IMAGE_SAFETY', 'Unable to show the generated image.')],
  ])('%s: 422 ai_content_rejected, refunded', async (_, reply) => {
    fake.script('POST', geminiPath(IMAGE_MODEL), reply)
    const key = await t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    const res = await post(key)
    expectErrorBody(res, 422, 'ai_content_rejected')
    expect(res.body.error).not.toMatch(/cannot help|Unable to show/)
    await x.expectBalanced(key, 1)
  })

  it('a text-only reply (no image, finishReason STOP): 500 generation_failed, refunded, the model’s words not shown', async () => {
    fake.script('POST', geminiPath(IMAGE_MODEL), gemini.textOnly('I cannot help with that request.'))
    const key = await t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    const res = await post(key)
    expectErrorBody(res, 500, 'generation_failed')
    expect(res.body.error).not.toMatch(/cannot help/)
    await x.expectBalanced(key, 1)
  })

  it('a wedding-dress rejection refunds both credits', async () => {
    fake.script('POST', geminiPath(IMAGE_MODEL), gemini.finished('PROHIBITED_CONTENT'))
    const key = await t.createKey({ credits: 2, mode: 'live', quality: 'off' })
    expectErrorBody(await post(key, wedding), 422, 'ai_content_rejected')
    expect(fake.requestsTo(geminiPath(JUDGE_MODEL))).toHaveLength(0)
    await x.expectBalanced(key, 2)
  })

  it('a test key never calls Gemini, neither to generate nor to judge', async () => {
    const key = await t.createKey({ credits: 4, mode: 'test' })
    expect((await post(key)).status).toBe(200)
    expect((await post(key, wedding)).status).toBe(200)
    expect(fake.requests).toHaveLength(0)
  })
})

describe('fallback chain through the endpoint (TRYON_ENGINE=fashn,gemini, 3 s budget)', () => {
  let t: TestStack
  let fashnFake: FashnFake
  let geminiFake: FakeServer
  const x = expectations(() => t)
  beforeAll(async () => {
    fashnFake = await startFashnFake(providerResult)
    geminiFake = await startFakeServer((f) => f.script('POST', geminiPath(IMAGE_MODEL), gemini.image(providerResult)))
    t = await startTestStack({
      env: {
        TRYON_ENGINE: 'fashn,gemini',
        TRYON_GENERATION_TIMEOUT_MS: '3000',
        FASHN_API_KEY: 'fa-live-key',
        FASHN_BASE_URL: fashnFake.url,
        GEMINI_API_KEY: 'AIza-live',
        GEMINI_BASE_URL: geminiFake.url,
      },
    })
  })
  afterAll(async () => {
    await t?.close()
    await fashnFake?.close()
    await geminiFake?.close()
  })
  beforeEach(() => {
    fashnFake.reset()
    geminiFake.reset()
    fashnFake.script('GET', statusPath, fashn.completed(fashnFake.outputUrl))
  })
  const post = (key: CreatedKey) => postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: standard })

  it('FASHN succeeds: Gemini is never asked and the row says fashn', async () => {
    const key = await t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    expect((await post(key)).status).toBe(200)
    expect(geminiFake.requests).toHaveLength(0)
    expect(await x.latestTryOn(key)).toMatchObject({ engine: 'fashn' })
  })

  it('FASHN fails: Gemini produces the image, the row records gemini, 1 credit charged', async () => {
    fashnFake.script('GET', statusPath, fashn.failed('PipelineError', 'upstream GPU pool exhausted'))
    const key = await t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    const res = await post(key)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    await x.expectStoredResult(res)
    expect(geminiFake.requestsTo(geminiPath(IMAGE_MODEL))).toHaveLength(1)
    expect(await x.latestTryOn(key)).toEqual({ status: 'succeeded', outcome: 'generated', credits_charged: 1, engine: 'gemini' })
    await x.expectBalanced(key, 0)
  })

  it('FASHN hangs: after its share of the budget Gemini answers within the deadline', async () => {
    fashnFake.script('POST', '/v1/run', { hang: true })
    const key = await t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    const res = await post(key)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(await x.latestTryOn(key)).toMatchObject({ engine: 'gemini' })
  })

  it('FASHN rejects the content: 422 and no fallback to Gemini', async () => {
    fashnFake.script('GET', statusPath, fashn.failed('ContentModerationError', 'prohibited'))
    const key = await t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    expectErrorBody(await post(key), 422, 'ai_content_rejected')
    expect(geminiFake.requests).toHaveLength(0)
    await x.expectBalanced(key, 1)
  })

  it('FASHN refuses the input: 400 and no fallback to Gemini', async () => {
    fashnFake.script('GET', statusPath, fashn.failed('ImageLoadError', 'Error loading garment image'))
    const key = await t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    expectErrorBody(await post(key), 400, 'unsupported_image', /product image \(productImage\)/)
    expect(geminiFake.requests).toHaveLength(0)
  })

  it('both providers too slow: 500 generation_failed at the deadline, refunded', async () => {
    fashnFake.script('POST', '/v1/run', { hang: true })
    geminiFake.script('POST', geminiPath(IMAGE_MODEL), { hang: true })
    const key = await t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    const res = await post(key)
    expectErrorBody(res, 500, 'generation_failed')
    expect(geminiFake.requests).toHaveLength(1)
    expect(await x.ledgerKinds(key)).toEqual(['reservation:standard', 'refund:generation_failed'])
    await x.expectBalanced(key, 1)
  })
})

describe('Gemini on Vertex AI (VERTEX_MODEL=gemini-3.1-flash-image) with a judge whose model is gone (VERTEX_SCORER_MODEL=gemini-2.5-flash)', () => {
  let t: TestStack
  let fake: FakeServer
  const x = expectations(() => t)
  const imagePath = vertexGenerateContentPath('test-project', 'global', IMAGE_MODEL)
  const judgePath = vertexGenerateContentPath('test-project', 'global', 'gemini-2.5-flash')
  beforeAll(async () => {
    fake = await startFakeServer((f) => {
      f.script('POST', imagePath, gemini.image(providerResult))
      f.script('POST', judgePath, vertex.modelNotFound('test-project', 'global', 'gemini-2.5-flash'))
    })
    t = await startTestStack({
      env: {
        TRYON_ENGINE: 'vertex',
        TRYON_TRAIN_SCORER: 'vertex',
        VERTEX_PROJECT: 'test-project',
        VERTEX_MODEL: IMAGE_MODEL,
        VERTEX_SCORER_MODEL: 'gemini-2.5-flash',
        VERTEX_BASE_URL: fake.url,
        VERTEX_ACCESS_TOKEN: 'ya29.given',
      },
    })
  })
  afterAll(async () => {
    await t?.close()
    await fake?.close()
  })
  beforeEach(() => fake.reset())
  const post = (key: CreatedKey, body: unknown = standard) => postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body })

  it('generates through :generateContent at location global (never :predict), stores the result, 1 credit', async () => {
    const key = await t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    const res = await post(key)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    await x.expectStoredResult(res)
    expect(fake.requestsTo(imagePath, 'POST')).toHaveLength(1)
    expect(fake.requests.map((r) => r.path)).toEqual([imagePath])
    expect(await x.latestTryOn(key)).toEqual({ status: 'succeeded', outcome: 'generated', credits_charged: 1, engine: 'vertex' })
  })

  it('a wedding dress: the train asked for in words, the gone judge never called, delivered and charged 2 (score unavailable), and loud in the log', async () => {
    const key = await t.createKey({ credits: 2, mode: 'live', quality: 'off' })
    const res = await post(key, wedding)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ creditsCharged: 2, bridal: { applied: true, trainScore: null, reason: 'score_unavailable' } })
    const prompt = fake.requestsTo(imagePath)[0].json.contents[0].parts[0].text
    expect(prompt).toMatch(/full train spread out on the floor .* reaching about \d+% of the person's height beyond the feet/)
    expect(fake.requestsTo(judgePath)).toHaveLength(0)
    await x.expectBalanced(key, 0)
    expect(t.logs).toContainEqual(
      expect.objectContaining({
        level: 'error',
        msg: 'quality judge not called: its model is not served; this wedding dress is billed without a quality check or a train score',
        setting: 'VERTEX_SCORER_MODEL',
        model: 'gemini-2.5-flash',
        notice: expect.stringContaining('set VERTEX_SCORER_MODEL=gemini-3.5-flash'),
      }),
    )
  })
})

describe('a retired image model in a chain (TRYON_ENGINE=gemini,fashn, GEMINI_MODEL=gemini-2.5-flash-image)', () => {
  let t: TestStack
  let geminiFake: FakeServer
  let fashnFake: FashnFake
  const x = expectations(() => t)
  beforeAll(async () => {
    geminiFake = await startFakeServer((f) =>
      f.script('POST', geminiPath('gemini-2.5-flash-image'), gemini.modelGone('gemini-2.5-flash-image')),
    )
    fashnFake = await startFashnFake(providerResult)
    t = await startTestStack({
      env: {
        TRYON_ENGINE: 'gemini,fashn',
        GEMINI_API_KEY: 'AIza-live',
        GEMINI_BASE_URL: geminiFake.url,
        GEMINI_MODEL: 'gemini-2.5-flash-image',
        FASHN_API_KEY: 'fa-live-key',
        FASHN_BASE_URL: fashnFake.url,
      },
    })
  })
  afterAll(async () => {
    await t?.close()
    await geminiFake?.close()
    await fashnFake?.close()
  })

  it('says so at start-up, never calls Gemini, and FASHN delivers: 200, 1 credit, engine fashn', async () => {
    expect(t.logs).toContainEqual(
      expect.objectContaining({
        level: 'error',
        msg: 'configured model is not served',
        setting: 'GEMINI_MODEL',
        since: '2026-10-02',
        notice: expect.stringContaining('set GEMINI_MODEL=gemini-3.1-flash-image'),
      }),
    )
    fashnFake.script('GET', statusPath, fashn.completed(fashnFake.outputUrl))
    const key = await t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: standard })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    await x.expectStoredResult(res)
    expect(geminiFake.requests).toHaveLength(0)
    expect(await x.latestTryOn(key)).toEqual({ status: 'succeeded', outcome: 'generated', credits_charged: 1, engine: 'fashn' })
    await x.expectBalanced(key, 0)
  })
})
