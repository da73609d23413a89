import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  parseServiceAccount,
  serviceAccountTokens,
  staticAccessToken,
  type AccessTokenSource,
} from '../../../shared/engine/providers/google-auth.ts'
import { abortableSleep } from '../../../shared/engine/providers/runtime.ts'
import { createVertexEngine, vertexEndpoint } from '../../../shared/engine/providers/vertex.ts'
import { decodeBase64, encodeBase64 } from '../../../shared/images/base64.ts'
import { readImageHeader } from '../../../shared/images/sniff.ts'
import { asInput, makeFlatImage, makeNoiseImage, makeShopperPhoto } from '../../support/images.ts'
import {
  gemini,
  makeServiceAccount,
  startFakeServer,
  verifyJwt,
  vertex,
  vertexGenerateContentPath,
  vertexPredictPath,
  type FakeServer,
} from '../../support/provider-fakes.ts'
import { garment, logText, person, providerResult, testRuntime, tryOn, within, type TestRuntime } from './support.ts'

const predictPath = vertexPredictPath('test-project', 'europe-west4')

describe('Vertex AI Virtual Try-On adapter', () => {
  let fake: FakeServer
  let account: Awaited<ReturnType<typeof makeServiceAccount>>
  beforeAll(async () => {
    fake = await startFakeServer((f) => {
      f.script('POST', '/token', vertex.token('ya29.first'), vertex.token('ya29.second'))
      f.script('POST', predictPath, vertex.image(providerResult))
    })
    account = await makeServiceAccount(`${fake.url}/token`)
  })
  afterAll(() => fake?.close())
  beforeEach(() => fake.reset())

  const engineWith = (tokens?: (t: TestRuntime) => AccessTokenSource) => {
    const t = testRuntime()
    const source = tokens ? tokens(t) : serviceAccountTokens(parseServiceAccount(account.json), t.runtime)
    const engine = createVertexEngine({ project: 'test-project', location: 'europe-west4', baseUrl: fake.url, tokens: source }, t.runtime)
    return { ...t, engine }
  }

  it('builds the regional :predict URL for virtual-try-on-001', () => {
    expect(vertexEndpoint({ project: 'p-1', location: 'us-central1' })).toBe(
      'https://us-central1-aiplatform.googleapis.com/v1/projects/p-1/locations/us-central1/publishers/google/models/virtual-try-on-001:predict',
    )
    expect(vertexEndpoint({ project: 'p-1', location: 'global' })).toMatch(
      /^https:\/\/aiplatform\.googleapis\.com\/v1\/projects\/p-1\/locations\/global\//,
    )
  })

  describe('service-account OAuth', () => {
    it('exchanges an RS256 JWT signed with the key file for a token, then predicts with base64 person and product images', async () => {
      const { engine } = engineWith()
      const outcome = await engine.generate(tryOn())
      expect(outcome).toEqual({ kind: 'generated', image: { bytes: providerResult, contentType: 'image/jpeg', engine: 'vertex' } })

      const [tokenRequest] = fake.requestsTo('/token', 'POST')
      expect(tokenRequest.headers['content-type']).toBe('application/x-www-form-urlencoded')
      const form = new URLSearchParams(tokenRequest.text)
      expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer')
      const jwt = await verifyJwt(form.get('assertion')!, account.publicKey)
      expect(jwt).not.toBeNull()
      expect(jwt!.header).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'key-1' })
      expect(jwt!.claims).toMatchObject({
        iss: account.clientEmail,
        aud: `${fake.url}/token`,
        scope: 'https://www.googleapis.com/auth/cloud-platform',
      })
      expect(jwt!.claims.exp - jwt!.claims.iat).toBe(3600)

      const [predict] = fake.requestsTo(predictPath, 'POST')
      expect(predict.headers.authorization).toBe('Bearer ya29.first')
      expect(predict.json).toEqual({
        instances: [
          {
            personImage: { image: { bytesBase64Encoded: encodeBase64(person.bytes) } },
            productImages: [{ image: { bytesBase64Encoded: encodeBase64(garment.bytes) } }],
          },
        ],
        parameters: { sampleCount: 1, outputOptions: { mimeType: 'image/jpeg', compressionQuality: 90 } },
      })
    })

    it('caches the token until shortly before it expires, then exchanges again', async () => {
      const { engine, advance } = engineWith()
      await engine.generate(tryOn())
      await engine.generate(tryOn())
      expect(fake.requestsTo('/token')).toHaveLength(1)
      advance(3599_000 - 30_000)
      await engine.generate(tryOn())
      expect(fake.requestsTo('/token')).toHaveLength(2)
      expect(fake.requestsTo(predictPath).map((r) => r.headers.authorization)).toEqual([
        'Bearer ya29.first',
        'Bearer ya29.first',
        'Bearer ya29.second',
      ])
    })

    it('shares one exchange between concurrent generations', async () => {
      const { engine } = engineWith()
      await Promise.all([engine.generate(tryOn()), engine.generate(tryOn()), engine.generate(tryOn())])
      expect(fake.requestsTo('/token')).toHaveLength(1)
    })

    it('drops a token the API refuses (401) and retries once with a fresh one', async () => {
      fake.script(
        'POST',
        predictPath,
        vertex.error(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.'),
        vertex.image(providerResult),
      )
      const { engine } = engineWith()
      expect((await engine.generate(tryOn())).kind).toBe('generated')
      expect(fake.requestsTo('/token')).toHaveLength(2)
      expect(fake.requestsTo(predictPath).map((r) => r.headers.authorization)).toEqual(['Bearer ya29.first', 'Bearer ya29.second'])
    })

    it('fails (without calling predict) when the token endpoint refuses the assertion', async () => {
      fake.script('POST', '/token', { status: 400, json: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' } })
      const { engine, logs } = engineWith()
      expect(await engine.generate(tryOn())).toMatchObject({ kind: 'failed', reason: expect.stringContaining('auth') })
      expect(fake.requestsTo(predictPath)).toHaveLength(0)
      expect(logText(logs)).toContain('Invalid JWT Signature.')
    })

    it('uses a given access token as it is', async () => {
      const { engine } = engineWith(() => staticAccessToken('ya29.given'))
      expect((await engine.generate(tryOn())).kind).toBe('generated')
      expect(fake.requestsTo('/token')).toHaveLength(0)
      expect(fake.requestsTo(predictPath)[0].headers.authorization).toBe('Bearer ya29.given')
    })
  })

  describe('input preparation', () => {
    it('re-encodes a WebP shopper photo as JPEG (Vertex takes JPEG and PNG only) and sends a PNG as it is', async () => {
      const webp = asInput(makeShopperPhoto({ width: 100, height: 160, format: 'webp' }))
      await engineWith(() => staticAccessToken('t')).engine.generate(tryOn({ person: webp }))
      const instance = fake.requestsTo(predictPath)[0].json.instances[0]
      const sentPerson = decodeBase64(instance.personImage.image.bytesBase64Encoded)!
      expect(readImageHeader(sentPerson)).toEqual({ format: 'jpeg', width: 100, height: 160 })
      expect(instance.productImages[0].image.bytesBase64Encoded).toBe(encodeBase64(garment.bytes))
    })
  })

  describe('outcomes', () => {
    it('decodes a large result where it lies in the answer', async () => {
      const large = asInput(makeNoiseImage({ width: 400, height: 400, format: 'jpeg' })).bytes
      fake.script('POST', predictPath, vertex.image(large))
      const outcome = await engineWith().engine.generate(tryOn())
      expect(outcome.kind === 'generated' && Buffer.from(outcome.image.bytes).equals(Buffer.from(large))).toBe(true)
    })

    it('maps raiFilteredReason to rejected and logs the reason', async () => {
      fake.script('POST', predictPath, vertex.filtered('58061214: The image was filtered by Responsible AI'))
      const { engine, logs } = engineWith(() => staticAccessToken('t'))
      expect(await engine.generate(tryOn())).toEqual({ kind: 'rejected', reason: 'vertex rejected the content' })
      expect(logText(logs)).toContain('58061214')
    })

    it('maps an answer with every prediction filtered out (none left) to rejected', async () => {
      fake.script('POST', predictPath, { json: {} })
      expect((await engineWith(() => staticAccessToken('t')).engine.generate(tryOn())).kind).toBe('rejected')
    })

    it('maps a 400 about Responsible AI to rejected and any other 400 to failed', async () => {
      fake.script(
        'POST',
        predictPath,
        vertex.error(
          400,
          'INVALID_ARGUMENT',
          'Image generation failed with the following error: The input image was blocked by Responsible AI practices.',
        ),
      )
      expect((await engineWith(() => staticAccessToken('t')).engine.generate(tryOn())).kind).toBe('rejected')
      fake.script('POST', predictPath, vertex.error(400, 'INVALID_ARGUMENT', 'Invalid value at instances[0].personImage'))
      expect((await engineWith(() => staticAccessToken('t')).engine.generate(tryOn())).kind).toBe('failed')
    })

    it.each([
      ["The prompt couldn't be submitted. It might violate our policies.", 'rejected'],
      [
        'Image generation failed with the following error: The prompt could not be submitted. This prompt contains sensitive words that violate Google’s Responsible AI practices. Try rephrasing the prompt. Support codes: 42876398',
        'rejected',
      ],
      ['The input image was blocked by Responsible AI practices.', 'rejected'],
      ['Your request might violate our policies. Support codes: 17301594', 'rejected'],
      ['Invalid value at instances[0].personImage', 'failed'],
      ['Image is too large: the safety margin of 10 MB was exceeded.', 'failed'],
      ['Request contains an invalid argument.', 'failed'],
    ])('INVALID_ARGUMENT "%s" → %s (the responsible-AI page’s wording, not loose keywords)', async (message, kind) => {
      fake.script('POST', predictPath, vertex.error(400, 'INVALID_ARGUMENT', message))
      expect((await engineWith(() => staticAccessToken('t')).engine.generate(tryOn())).kind).toBe(kind)
      expect(fake.requestsTo(predictPath)).toHaveLength(1)
    })

    it('needs status INVALID_ARGUMENT for a refusal: the same words under another status are a failure', async () => {
      fake.script('POST', predictPath, vertex.error(400, 'FAILED_PRECONDITION', "The prompt couldn't be submitted."))
      expect((await engineWith(() => staticAccessToken('t')).engine.generate(tryOn())).kind).toBe('failed')
    })

    it('retries 429 RESOURCE_EXHAUSTED and 503, then succeeds', async () => {
      fake.script(
        'POST',
        predictPath,
        vertex.error(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded'),
        vertex.error(503, 'UNAVAILABLE', 'try later'),
        vertex.image(providerResult),
      )
      const { engine, sleeps } = engineWith(() => staticAccessToken('t'))
      expect((await engine.generate(tryOn())).kind).toBe('generated')
      expect(sleeps).toEqual([1500, 250])
    })

    it('waits a 429’s RetryInfo, and fails at once (outage) when the wait would pass the deadline', async () => {
      const quota = {
        status: 429,
        json: {
          error: {
            code: 429,
            status: 'RESOURCE_EXHAUSTED',
            message: 'Quota exceeded',
            details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '20s' }],
          },
        },
      }
      fake.script('POST', predictPath, quota, vertex.image(providerResult))
      const roomy = engineWith(() => staticAccessToken('t'))
      expect((await roomy.engine.generate(tryOn(within(roomy, 120_000)))).kind).toBe('generated')
      expect(roomy.sleeps).toEqual([20_000])

      fake.reset()
      fake.script('POST', predictPath, quota, vertex.image(providerResult))
      const tight = engineWith(() => staticAccessToken('t'))
      expect(await tight.engine.generate(tryOn(within(tight, 15_000)))).toMatchObject({ kind: 'failed', outage: true })
      expect(fake.requestsTo(predictPath)).toHaveLength(1)
    })

    it('fails after the last attempt of 500', async () => {
      fake.script('POST', predictPath, vertex.error(500, 'INTERNAL', 'Internal error'))
      expect((await engineWith(() => staticAccessToken('t')).engine.generate(tryOn())).kind).toBe('failed')
      expect(fake.requestsTo(predictPath)).toHaveLength(4)
    })

    it.each([
      ['a body that is not JSON', { text: 'upstream connect error', contentType: 'text/plain' }],
      ['an image that is not base64', { json: { predictions: [{ mimeType: 'image/png', bytesBase64Encoded: '!!!not base64!!!' }] } }],
      [
        'base64 that is not an image',
        { json: { predictions: [{ mimeType: 'image/png', bytesBase64Encoded: encodeBase64(new TextEncoder().encode('hello')) }] } },
      ],
    ])('fails on %s', async (_, reply) => {
      fake.script('POST', predictPath, reply)
      expect(await engineWith(() => staticAccessToken('t')).engine.generate(tryOn())).toMatchObject({
        kind: 'failed',
        reason: expect.stringContaining('malformed'),
      })
    })

    it('fails within the deadline when predict never answers', async () => {
      fake.script('POST', predictPath, { hang: true })
      const t = testRuntime({ sleep: abortableSleep })
      const engine = createVertexEngine(
        { project: 'test-project', location: 'europe-west4', baseUrl: fake.url, tokens: staticAccessToken('t') },
        t.runtime,
      )
      expect(await engine.generate(tryOn({ signal: AbortSignal.timeout(200) }))).toMatchObject({
        kind: 'failed',
        reason: expect.stringContaining('deadline'),
      })
    })
  })
})

describe('Vertex AI with a Gemini image model (VERTEX_MODEL=gemini-3.1-flash-image, :generateContent)', () => {
  const MODEL = 'gemini-3.1-flash-image'
  const globalPath = vertexGenerateContentPath('test-project', 'global', MODEL)
  let fake: FakeServer
  beforeAll(async () => {
    fake = await startFakeServer((f) => {
      f.script('POST', globalPath, gemini.image(providerResult))
      // Vertex refuses Gemini on :predict: the engine must never send it there.
      f.script('POST', vertexPredictPath('test-project', 'us-central1', MODEL), vertex.geminiOnPredict())
    })
  })
  afterAll(() => fake?.close())
  beforeEach(() => fake.reset())

  /** The real hosts, each request sent on to the fake: the URL the engine built is what is checked. */
  const engineAt = (geminiLocation?: string) => {
    const called: string[] = []
    const t = testRuntime({
      fetch: (input, init) => {
        const url = String(input)
        called.push(url)
        return globalThis.fetch(url.replace(/^https:\/\/[^/]+/, fake.url), init)
      },
    })
    const engine = createVertexEngine(
      { project: 'test-project', location: 'us-central1', geminiLocation, model: MODEL, tokens: staticAccessToken('ya29.g') },
      t.runtime,
    )
    return { ...t, engine, called }
  }

  it('posts generateContent at location global, on the host without a region prefix, with the Gemini body in camelCase', async () => {
    const { engine, called } = engineAt()
    const outcome = await engine.generate(tryOn())
    expect(outcome).toEqual({ kind: 'generated', image: { bytes: providerResult, contentType: 'image/jpeg', engine: 'vertex' } })
    expect(called).toEqual([`https://aiplatform.googleapis.com${globalPath}`])
    const [request] = fake.requestsTo(globalPath, 'POST')
    expect(request.headers.authorization).toBe('Bearer ya29.g')
    const [text, first, second] = request.json.contents[0].parts
    expect(text.text).toContain('wearing the garment from image 2')
    expect(first).toEqual({ inlineData: { mimeType: 'image/jpeg', data: encodeBase64(person.bytes) } })
    expect(second).toEqual({ inlineData: { mimeType: 'image/png', data: encodeBase64(garment.bytes) } })
    expect(request.json.generationConfig).toEqual({ responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '9:16' } })
  })

  it('uses a regional host when VERTEX_GEMINI_LOCATION names a region', async () => {
    fake.script('POST', vertexGenerateContentPath('test-project', 'europe-west4', MODEL), gemini.image(providerResult))
    const { engine, called } = engineAt('europe-west4')
    expect((await engine.generate(tryOn())).kind).toBe('generated')
    expect(called[0]).toMatch(/^https:\/\/europe-west4-aiplatform\.googleapis\.com\/v1\/projects\/test-project\/locations\/europe-west4\//)
  })

  it('keeps the final image when thought images come first, and takes WebP as it is', async () => {
    const sketch = makeFlatImage({ width: 20, height: 20, color: [0, 0, 0], format: 'png' }).bytes
    fake.script('POST', globalPath, gemini.image(providerResult, { thoughtImage: sketch }))
    const webp = asInput(makeFlatImage({ width: 40, height: 60, color: [90, 90, 90], format: 'webp' }))
    const outcome = await engineAt().engine.generate(tryOn({ garment: webp }))
    expect(outcome.kind === 'generated' && outcome.image.bytes).toEqual(providerResult)
    expect(fake.requestsTo(globalPath)[0].json.contents[0].parts[2].inlineData.mimeType).toBe('image/webp')
  })

  it('answers a safety block as a rejection and a retired model as a model not served', async () => {
    fake.script('POST', globalPath, gemini.finished('IMAGE_SAFETY'))
    expect(await engineAt().engine.generate(tryOn())).toEqual({ kind: 'rejected', reason: 'vertex rejected the content' })
    fake.script('POST', globalPath, vertex.modelNotFound('test-project', 'global', MODEL))
    const { engine, sleeps } = engineAt()
    expect(await engine.generate(tryOn())).toMatchObject({ kind: 'failed', modelNotServed: true })
    expect(sleeps).toEqual([])
  })
})

describe('Vertex AI Virtual Try-On past its retirement', () => {
  it('a 404 NOT_FOUND "Publisher Model … was not found" on :predict is a model not served, not retried', async () => {
    const path = vertexPredictPath('test-project', 'us-central1')
    const fake = await startFakeServer((f) =>
      f.script('POST', path, vertex.modelNotFound('test-project', 'us-central1', 'virtual-try-on-001')),
    )
    try {
      const t = testRuntime()
      const engine = createVertexEngine(
        { project: 'test-project', location: 'us-central1', baseUrl: fake.url, tokens: staticAccessToken('t') },
        t.runtime,
      )
      expect(await engine.generate(tryOn())).toEqual({
        kind: 'failed',
        reason: 'vertex: the configured model is not served (404 NOT_FOUND)',
        modelNotServed: true,
      })
      expect(fake.requestsTo(path)).toHaveLength(1)
      expect(t.sleeps).toEqual([])
    } finally {
      await fake.close()
    }
  })
})
