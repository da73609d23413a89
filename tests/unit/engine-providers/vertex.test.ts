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
import { asInput, makeNoiseImage, makeShopperPhoto } from '../../support/images.ts'
import { makeServiceAccount, startFakeServer, verifyJwt, vertex, vertexPredictPath, type FakeServer } from '../../support/provider-fakes.ts'
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
