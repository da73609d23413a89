import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createFashnEngine, type FashnOptions } from '../../../shared/engine/providers/fashn.ts'
import { abortableSleep } from '../../../shared/engine/providers/runtime.ts'
import type { GarmentCategory } from '../../../shared/engine/types.ts'
import { decodeBase64, encodeBase64 } from '../../../shared/images/base64.ts'
import { readImageHeader } from '../../../shared/images/sniff.ts'
import { asInput, makeFlatImage } from '../../support/images.ts'
import { fashn, FASHN_PREDICTION, startFashnFake, type FashnFake } from '../../support/provider-fakes.ts'
import { garment, logText, person, providerResult, testRuntime, tryOn } from './support.ts'

const statusPath = `/v1/status/${FASHN_PREDICTION}`

describe('FASHN adapter', () => {
  let fake: FashnFake
  beforeAll(async () => {
    fake = await startFashnFake(providerResult)
  })
  afterAll(() => fake?.close())
  beforeEach(() => fake.reset())

  const engineWith = (options: FashnOptions = {}) => {
    const t = testRuntime()
    return { ...t, engine: createFashnEngine({ apiKey: 'fa-test-key', baseUrl: fake.url }, t.runtime, options) }
  }

  describe('happy path', () => {
    it('submits the documented body, polls starting → in_queue → processing → completed with backoff, and returns the downloaded bytes', async () => {
      const { engine, sleeps } = engineWith()
      const outcome = await engine.generate(tryOn())

      expect(outcome).toEqual({ kind: 'generated', image: { bytes: providerResult, contentType: 'image/jpeg', engine: 'fashn' } })
      const [submit] = fake.requestsTo('/v1/run', 'POST')
      expect(submit.headers.authorization).toBe('Bearer fa-test-key')
      expect(submit.headers['content-type']).toBe('application/json')
      expect(submit.json).toEqual({
        model_name: 'tryon-v1.6',
        inputs: {
          model_image: `data:image/jpeg;base64,${encodeBase64(person.bytes)}`,
          garment_image: `data:image/png;base64,${encodeBase64(garment.bytes)}`,
          category: 'tops',
          mode: 'balanced',
          output_format: 'jpeg',
          return_base64: false,
        },
      })
      const polls = fake.requestsTo(statusPath, 'GET')
      expect(polls).toHaveLength(4)
      expect(polls.every((p) => p.headers.authorization === 'Bearer fa-test-key')).toBe(true)
      expect(sleeps).toEqual([500, 750, 1125, 1687.5])
      expect(fake.requestsTo(/^\/cdn\//)).toHaveLength(1)
    })

    it.each<[GarmentCategory | undefined, string]>([
      ['top', 'tops'],
      ['outerwear', 'tops'],
      ['bottom', 'bottoms'],
      ['dress', 'one-pieces'],
      [undefined, 'auto'],
    ])('maps the garment category %s to %s', async (category, expected) => {
      fake.script('GET', statusPath, fashn.completed(fake.outputUrl))
      const { engine } = engineWith()
      expect((await engine.generate(tryOn({ category }))).kind).toBe('generated')
      expect(fake.requestsTo('/v1/run')[0].json.inputs.category).toBe(expected)
    })

    it('sends a wedding dress as a one-piece', async () => {
      fake.script('GET', statusPath, fashn.completed(fake.outputUrl))
      const { engine } = engineWith()
      await engine.generate(tryOn({ category: 'dress', clothingType: 'Wedding dress', train: { length: 0.12, spread: 1.6 } }))
      expect(fake.requestsTo('/v1/run')[0].json.inputs.category).toBe('one-pieces')
    })

    it('takes a base64 data URI output as well as a URL', async () => {
      fake.script('GET', statusPath, fashn.completed(`data:image/jpeg;base64,${encodeBase64(providerResult)}`))
      const { engine } = engineWith()
      const outcome = await engine.generate(tryOn())
      expect(outcome.kind === 'generated' && outcome.image.bytes).toEqual(providerResult)
      expect(fake.requestsTo(/^\/cdn\//)).toHaveLength(0)
    })
  })

  describe('input preparation', () => {
    it('re-encodes a WebP photo as JPEG and shrinks a PNG beyond 2000 px (a fitting JPEG or PNG goes as it is: see above)', async () => {
      fake.script('GET', statusPath, fashn.completed(fake.outputUrl))
      const webp = asInput(makeFlatImage({ width: 90, height: 150, color: [120, 120, 120], format: 'webp' }))
      const wide = asInput(makeFlatImage({ width: 2200, height: 110, color: [200, 10, 10], format: 'png' }))
      const { engine } = engineWith()
      await engine.generate(tryOn({ person: webp, garment: wide }))

      const inputs = fake.requestsTo('/v1/run')[0].json.inputs
      const sent = (uri: string) => readImageHeader(decodeBase64(uri.slice(uri.indexOf(',') + 1))!)
      expect(inputs.model_image).toMatch(/^data:image\/jpeg;base64,/)
      expect(sent(inputs.model_image)).toEqual({ format: 'jpeg', width: 90, height: 150 })
      expect(sent(inputs.garment_image)).toEqual({ format: 'jpeg', width: 2000, height: 100 })
    })
  })

  describe('content rejection (422)', () => {
    it.each(['ContentModerationError', 'NSFWError'])('maps a failed prediction with %s to rejected, logging FASHN’s message', async (name) => {
      fake.script('GET', statusPath, fashn.status('processing'), fashn.failed(name, 'Prohibited content detected in garment image'))
      const { engine, logs } = engineWith()
      const outcome = await engine.generate(tryOn())
      expect(outcome).toEqual({ kind: 'rejected', reason: 'fashn rejected the content' })
      expect(logText(logs)).toContain('Prohibited content detected in garment image')
    })
  })

  describe('input errors (400)', () => {
    it.each([
      ['PoseError', 'Could not detect body pose in model image', 'The shopper photo (userPhoto) could not be used: no person pose was found in it'],
      ['ImageLoadError', "Error loading garment image: The URL's Content-Type is not an image.", 'The generation engine could not load the product image (productImage)'],
      ['ImageLoadError', 'Error loading model image: timeout', 'The generation engine could not load the shopper photo (userPhoto)'],
      ['InputValidationError', 'model_image must be a valid image', 'The generation engine did not accept these images as a person photo and a garment photo'],
    ])('maps %s to invalid_input with a message of ours', async (name, providerMessage, reason) => {
      fake.script('GET', statusPath, fashn.failed(name, providerMessage))
      const { engine, logs } = engineWith()
      const outcome = await engine.generate(tryOn())
      expect(outcome).toEqual({ kind: 'invalid_input', reason })
      expect(reason).not.toContain(providerMessage)
      expect(logText(logs)).toContain(providerMessage.replace(/"/g, '\\"'))
    })
  })

  describe('failures (500)', () => {
    it.each(['PipelineError', 'ThirdPartyError', '3rdPartyProviderError', 'InternalServerError', 'SomethingNew'])('maps a failed prediction with %s to failed', async (name) => {
      fake.script('GET', statusPath, fashn.failed(name, 'internal details'))
      const { engine } = engineWith()
      const outcome = await engine.generate(tryOn())
      expect(outcome.kind).toBe('failed')
      expect(outcome.kind === 'failed' && outcome.reason).toContain(name)
    })

    it.each(['canceled', 'time_out'])('fails a prediction that ends as %s', async (status) => {
      fake.script('GET', statusPath, fashn.status(status))
      expect((await engineWith().engine.generate(tryOn())).kind).toBe('failed')
    })

    it('reads `error` as a string on a refused submit (401 UnauthorizedAccess) and does not retry it', async () => {
      fake.script('POST', '/v1/run', fashn.submitError(401, 'UnauthorizedAccess', 'Unauthorized: Invalid token'))
      const { engine, logs } = engineWith()
      const outcome = await engine.generate(tryOn())
      expect(outcome.kind).toBe('failed')
      expect(outcome.kind === 'failed' && outcome.reason).toContain('UnauthorizedAccess')
      expect(fake.requestsTo('/v1/run')).toHaveLength(1)
      expect(logText(logs)).toContain('Unauthorized: Invalid token')
    })

    it('does not retry 429 OutOfCredits: waiting will not add credits', async () => {
      fake.script('POST', '/v1/run', fashn.submitError(429, 'OutOfCredits', 'No credits left'))
      const { engine, sleeps } = engineWith()
      expect((await engine.generate(tryOn())).kind).toBe('failed')
      expect(fake.requestsTo('/v1/run')).toHaveLength(1)
      expect(sleeps).toEqual([])
    })

    it('fails on a 200 submit whose body is not JSON (malformed), without retrying', async () => {
      fake.script('POST', '/v1/run', { text: '<html>Bad gateway</html>', contentType: 'text/html' })
      const outcome = await engineWith().engine.generate(tryOn())
      expect(outcome).toMatchObject({ kind: 'failed', reason: expect.stringContaining('malformed') })
      expect(fake.requestsTo('/v1/run')).toHaveLength(1)
    })

    it('fails on a status answer that is not JSON', async () => {
      fake.script('GET', statusPath, { text: '{"id": "123", "status": ', contentType: 'application/json' })
      expect(await engineWith().engine.generate(tryOn())).toMatchObject({ kind: 'failed', reason: expect.stringContaining('malformed') })
    })

    it('fails when the prediction is no longer tracked (404 NotFound)', async () => {
      fake.script('GET', statusPath, fashn.submitError(404, 'NotFound', 'Prediction not found'))
      expect((await engineWith().engine.generate(tryOn())).kind).toBe('failed')
    })

    it('fails when the result is larger than the output cap, and never returns the provider URL', async () => {
      fake.script('GET', statusPath, fashn.completed(fake.outputUrl))
      const outcome = await engineWith({ output: { maxBytes: 1000, downloadTimeoutMs: 5000 } }).engine.generate(tryOn())
      expect(outcome).toMatchObject({ kind: 'failed', reason: expect.stringContaining('too_large') })
    })

    it('fails when the output is not an image', async () => {
      fake.script('GET', fake.outputUrl.slice(fake.url.length), { bytes: new TextEncoder().encode('<html>expired</html>'), contentType: 'text/html' })
      expect((await engineWith().engine.generate(tryOn())).kind).toBe('failed')
    })
  })

  describe('transient errors and retries', () => {
    it('retries a 429 RateLimitExceeded submit after a jittered backoff, then succeeds', async () => {
      fake.script('POST', '/v1/run', fashn.submitError(429, 'RateLimitExceeded', 'Too many requests'), fashn.submitted())
      fake.script('GET', statusPath, fashn.completed(fake.outputUrl))
      const { engine, sleeps } = engineWith()
      expect((await engine.generate(tryOn())).kind).toBe('generated')
      expect(fake.requestsTo('/v1/run')).toHaveLength(2)
      // random() = 0.5 of the first 500 ms step, then the first poll's wait.
      expect(sleeps).toEqual([250, 500])
    })

    it('honours Retry-After on a 429 (within the cap)', async () => {
      fake.script('POST', '/v1/run', { ...fashn.submitError(429, 'ConcurrencyLimitExceeded', 'busy'), headers: { 'retry-after': '3' } }, fashn.submitted())
      fake.script('GET', statusPath, fashn.completed(fake.outputUrl))
      const { engine, sleeps } = engineWith()
      expect((await engine.generate(tryOn())).kind).toBe('generated')
      expect(sleeps[0]).toBe(3000)
    })

    it('retries a 503 while polling', async () => {
      fake.script('GET', statusPath, fashn.status('processing'), fashn.submitError(503, 'InternalServerError', 'upstream'), fashn.completed(fake.outputUrl))
      expect((await engineWith().engine.generate(tryOn())).kind).toBe('generated')
      expect(fake.requestsTo(statusPath)).toHaveLength(3)
    })

    it('gives up after four attempts of 500', async () => {
      fake.script('POST', '/v1/run', fashn.submitError(500, 'InternalServerError', 'boom'))
      const { engine, sleeps } = engineWith()
      expect((await engine.generate(tryOn())).kind).toBe('failed')
      expect(fake.requestsTo('/v1/run')).toHaveLength(4)
      expect(sleeps).toEqual([250, 500, 1000])
    })

    it('fails within the deadline while the prediction keeps processing', async () => {
      fake.script('GET', statusPath, fashn.status('processing'))
      const t = testRuntime({ sleep: abortableSleep })
      const engine = createFashnEngine({ apiKey: 'k', baseUrl: fake.url }, t.runtime, { polling: { firstMs: 20, factor: 1, maxMs: 20 } })
      const outcome = await engine.generate(tryOn({ signal: AbortSignal.timeout(300) }))
      expect(outcome).toMatchObject({ kind: 'failed', reason: expect.stringContaining('deadline') })
      expect(fake.requestsTo(statusPath).length).toBeGreaterThan(1)
    })

    it('fails within the deadline when the provider never answers', async () => {
      fake.script('POST', '/v1/run', { hang: true })
      const t = testRuntime({ sleep: abortableSleep })
      const engine = createFashnEngine({ apiKey: 'k', baseUrl: fake.url }, t.runtime)
      const outcome = await engine.generate(tryOn({ signal: AbortSignal.timeout(200) }))
      expect(outcome).toMatchObject({ kind: 'failed', reason: expect.stringContaining('deadline') })
    })
  })
})
