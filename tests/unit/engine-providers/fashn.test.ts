import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { createFashnEngine, defaultPolling, type FashnOptions } from '../../../shared/engine/providers/fashn.ts'
import { neverSent } from '../../../shared/engine/providers/http.ts'
import { abortableSleep, providerRuntime } from '../../../shared/engine/providers/runtime.ts'
import type { GarmentCategory } from '../../../shared/engine/types.ts'
import { decodeBase64, encodeBase64 } from '../../../shared/images/base64.ts'
import { readImageHeader } from '../../../shared/images/sniff.ts'
import { asInput, makeFlatImage, makeNoiseImage } from '../../support/images.ts'
import { fashn, FASHN_PREDICTION, startFashnFake, type FashnFake } from '../../support/provider-fakes.ts'
import { freePort } from '../../support/process.ts'
import { garment, logText, person, providerResult, testRuntime, tryOn, within } from './support.ts'

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
      // FASHN's SDK polls every second; ours starts there and grows by 1.25× to 2 s.
      expect(sleeps).toEqual([1000, 1250, 1562.5, 1953.125])
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

    it('Try-On Max (FASHN_MODEL=tryon-max) sends product_image, no category, and its documented optional inputs', async () => {
      fake.script('GET', statusPath, fashn.completed(fake.outputUrl))
      const t = testRuntime()
      const engine = createFashnEngine({ apiKey: 'fa-test-key', baseUrl: fake.url, model: 'tryon-max' }, t.runtime)
      // The fake refuses a run without the model's own inputs, as FASHN answers a bad request (400 BadRequest).
      const outcome = await engine.generate(tryOn({ category: 'dress', clothingType: 'Sac à main "Lou"\ncuir' }))
      expect(outcome.kind).toBe('generated')
      expect(fake.requestsTo('/v1/run')[0].json).toEqual({
        model_name: 'tryon-max',
        inputs: {
          model_image: `data:image/jpeg;base64,${encodeBase64(person.bytes)}`,
          product_image: `data:image/png;base64,${encodeBase64(garment.bytes)}`,
          prompt: 'The product is: Sac à main Lou cuir',
          resolution: '1k',
          generation_mode: 'balanced',
          num_images: 1,
          output_format: 'jpeg',
          return_base64: false,
        },
      })
      fake.reset()
      fake.script('GET', statusPath, fashn.completed(fake.outputUrl))
      await engine.generate(tryOn({ clothingType: undefined }))
      expect(fake.requestsTo('/v1/run')[0].json.inputs).not.toHaveProperty('prompt')
    })

    it('the fake holds each model to its inputs: v1.6’s body sent as tryon-max is refused, and fails the run', async () => {
      fake.script('POST', '/v1/run', (request) => fashn.checkedRun()({ ...request, json: { ...request.json, model_name: 'tryon-max' } }))
      const { engine, logs } = engineWith()
      expect(await engine.generate(tryOn())).toMatchObject({ kind: 'failed', reason: 'fashn: provider error BadRequest' })
      expect(logText(logs)).toContain('inputs.product_image is required')
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
      expect(outcome.kind === 'generated' && 'bytes' in outcome.image && outcome.image.bytes).toEqual(providerResult)
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
    it.each(['ContentModerationError', 'NSFWError', 'ThirdPartyError'])(
      'maps a failed prediction with %s to rejected, logging FASHN’s message',
      async (name) => {
        fake.script('GET', statusPath, fashn.status('processing'), fashn.failed(name, 'Prohibited content detected in garment image'))
        const { engine, logs } = engineWith()
        const outcome = await engine.generate(tryOn())
        expect(outcome).toEqual({ kind: 'rejected', reason: 'fashn rejected the content' })
        expect(logText(logs)).toContain('Prohibited content detected in garment image')
      },
    )
  })

  describe('input errors (400)', () => {
    it('maps PoseError to no_person: nobody in the shopper photo, whatever FASHN words it', async () => {
      fake.script('GET', statusPath, fashn.failed('PoseError', 'Could not detect body pose in model image'))
      const { engine, logs } = engineWith()
      const outcome = await engine.generate(tryOn())
      expect(outcome).toEqual({ kind: 'no_person', reason: 'fashn: no person pose was found in the shopper photo' })
      expect(logText(logs)).toContain('Could not detect body pose in model image')
    })

    it.each([
      [
        'ImageLoadError',
        "Error loading garment image: The URL's Content-Type is not an image.",
        'The generation engine could not load the product image (productImage)',
      ],
      ['ImageLoadError', 'Error loading model image: timeout', 'The generation engine could not load the shopper photo (userPhoto)'],
      [
        'InputValidationError',
        'model_image must be a valid image',
        'The generation engine did not accept these images as a person photo and a garment photo',
      ],
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
    it.each(['PipelineError', '3rdPartyProviderError', 'InternalServerError', 'SomethingNew'])(
      'maps a failed prediction with %s to failed',
      async (name) => {
        fake.script('GET', statusPath, fashn.failed(name, 'internal details'))
        const { engine } = engineWith()
        const outcome = await engine.generate(tryOn())
        expect(outcome.kind).toBe('failed')
        expect(outcome.kind === 'failed' && outcome.reason).toContain(name)
      },
    )

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

    describe('a result larger than its first bytes streams on, under the download’s guards', () => {
      const large = asInput(makeNoiseImage({ width: 640, height: 640, format: 'jpeg' })).bytes
      const cdnPath = `/cdn/${FASHN_PREDICTION}/output_0.jpg`
      const read = async (stream: ReadableStream<Uint8Array>) => {
        const chunks: Uint8Array[] = []
        for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk)
        return Buffer.concat(chunks)
      }
      const streamedOutcome = async (options: FashnOptions = {}) => {
        fake.script('GET', statusPath, fashn.completed(fake.outputUrl))
        const outcome = await engineWith(options).engine.generate(tryOn())
        if (outcome.kind !== 'generated' || 'bytes' in outcome.image)
          throw new Error(`expected a streamed image, got ${JSON.stringify(outcome)}`)
        return outcome.image
      }

      it('answers as soon as the first bytes show an image; the stream carries the provider’s bytes exactly', async () => {
        expect(large.byteLength).toBeGreaterThan(300_000)
        fake.script('GET', cdnPath, { bytes: large, contentType: 'image/png', headers: { 'content-length': String(large.byteLength) } })
        const image = await streamedOutcome()
        expect(image).toMatchObject({ contentType: 'image/jpeg', engine: 'fashn', length: large.byteLength })
        expect((await read(image.stream)).equals(Buffer.from(large))).toBe(true)
        expect(image.downloadError()).toBeUndefined()
      })

      it('cuts off a body that passes the cap after its first bytes (no Content-Length), and says why', async () => {
        fake.script('GET', cdnPath, { parts: [large.subarray(0, 100_000), large.subarray(100_000), large] })
        const image = await streamedOutcome({ output: { maxBytes: large.byteLength + 1000, downloadTimeoutMs: 5000 } })
        expect(image.length).toBeNull()
        await expect(read(image.stream)).rejects.toMatchObject({ kind: 'too_large' })
        expect(image.downloadError()).toMatchObject({ kind: 'too_large' })
      })

      it('cuts off a body that stalls after its first bytes, at the download timeout (before them, the generation fails)', async () => {
        const limits = { output: { maxBytes: 10_000_000, downloadTimeoutMs: 300 } }
        fake.script('GET', cdnPath, { parts: [large.subarray(0, 300_000)], hang: true })
        const image = await streamedOutcome(limits)
        await expect(read(image.stream)).rejects.toMatchObject({ kind: 'timeout' })
        expect(image.downloadError()).toMatchObject({ kind: 'timeout' })

        fake.script('GET', cdnPath, { parts: [large.subarray(0, 100_000)], hang: true })
        fake.script('GET', statusPath, fashn.completed(fake.outputUrl))
        expect(await engineWith(limits).engine.generate(tryOn())).toMatchObject({
          kind: 'failed',
          reason: expect.stringContaining('timeout'),
        })
      })

      it('refuses a body whose first 256 KB hold no image header, before answering', async () => {
        fake.script('GET', cdnPath, { parts: [new Uint8Array(200_000), new Uint8Array(200_000)], hang: true })
        fake.script('GET', statusPath, fashn.completed(fake.outputUrl))
        expect(await engineWith().engine.generate(tryOn())).toMatchObject({ kind: 'failed', reason: expect.stringContaining('malformed') })
      })
    })

    it('downloads the result through the guarded image fetcher: a loopback or metadata URL is refused, never fetched', async () => {
      const strict = testRuntime({ fetchImage: providerRuntime().fetchImage })
      const engine = createFashnEngine({ apiKey: 'fa-test-key', baseUrl: fake.url }, strict.runtime)
      fake.script('GET', statusPath, fashn.completed(fake.outputUrl))
      const loopback = await engine.generate(tryOn())
      expect(loopback).toMatchObject({ kind: 'failed', reason: expect.stringContaining('refused') })
      expect(fake.requestsTo(fake.outputUrl.slice(fake.url.length))).toHaveLength(0)
      fake.script('GET', statusPath, fashn.completed('http://169.254.169.254/latest/meta-data/result.jpg'))
      expect(await engine.generate(tryOn())).toMatchObject({ kind: 'failed', reason: expect.stringContaining('refused') })
      expect(logText(strict.logs)).toContain('private, local or reserved address')
    })

    it('fails when the output is not an image', async () => {
      fake.script('GET', fake.outputUrl.slice(fake.url.length), {
        bytes: new TextEncoder().encode('<html>expired</html>'),
        contentType: 'text/html',
      })
      expect((await engineWith().engine.generate(tryOn())).kind).toBe('failed')
    })
  })

  describe('never a double run', () => {
    it('does not send a run again after it timed out: the prediction may have started (outage)', async () => {
      fake.script('POST', '/v1/run', { hang: true }, fashn.submitted())
      const { engine, sleeps } = engineWith({ attemptTimeoutMs: 150 })
      expect(await engine.generate(tryOn())).toMatchObject({ kind: 'failed', reason: expect.stringContaining('timeout'), outage: true })
      expect(fake.requestsTo('/v1/run')).toHaveLength(1)
      expect(sleeps).toEqual([])
    })

    it('does not send a run again after the connection dropped once the request was sent', async () => {
      fake.script('POST', '/v1/run', { drop: true }, fashn.submitted())
      const { engine } = engineWith()
      expect(await engine.generate(tryOn())).toMatchObject({ kind: 'failed', reason: expect.stringContaining('network'), outage: true })
      expect(fake.requestsTo('/v1/run')).toHaveLength(1)
    })

    it('does not retry a 5xx that is not FASHN’s own error answer (a gateway page), but does retry FASHN’s 500', async () => {
      fake.script('POST', '/v1/run', { status: 504, text: '<html>Gateway Timeout</html>', contentType: 'text/html' }, fashn.submitted())
      expect(await engineWith().engine.generate(tryOn())).toMatchObject({ kind: 'failed', outage: true })
      expect(fake.requestsTo('/v1/run')).toHaveLength(1)

      fake.reset()
      fake.script('POST', '/v1/run', fashn.submitError(500, 'InternalServerError', 'boom'), fashn.submitted())
      fake.script('GET', statusPath, fashn.completed(fake.outputUrl))
      expect((await engineWith().engine.generate(tryOn())).kind).toBe('generated')
      expect(fake.requestsTo('/v1/run')).toHaveLength(2)
    })

    it('sends a run again when the connection was refused (it never left), and status polls after a timeout', async () => {
      const closed = `http://127.0.0.1:${await freePort()}`
      let refuse = 1
      const t = testRuntime({
        fetch: (input, init) => {
          const url = String(input)
          if (url.endsWith('/v1/run') && refuse-- > 0) return fetch(`${closed}/v1/run`, init)
          return fetch(input, init)
        },
      })
      fake.script('GET', statusPath, { hang: true }, fashn.completed(fake.outputUrl))
      const engine = createFashnEngine({ apiKey: 'k', baseUrl: fake.url }, t.runtime, { attemptTimeoutMs: 150 })
      expect((await engine.generate(tryOn())).kind).toBe('generated')
      expect(fake.requestsTo('/v1/run')).toHaveLength(1)
      expect(fake.requestsTo(statusPath)).toHaveLength(2)
    })

    it.each([
      [
        'refused connection (undici)',
        Object.assign(new TypeError('fetch failed'), {
          cause: Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' }),
        }),
        true,
      ],
      [
        'unknown host (undici)',
        Object.assign(new TypeError('fetch failed'), {
          cause: Object.assign(new Error('getaddrinfo ENOTFOUND api.fashn.ai'), { code: 'ENOTFOUND' }),
        }),
        true,
      ],
      [
        'refused connection (Deno 2)',
        new TypeError('fetch failed', {
          cause: new Error(
            'error sending request for url (https://api.fashn.ai/v1/run): client error (Connect): tcp connect error: Connection refused (os error 111)',
          ),
        }),
        true,
      ],
      [
        'unknown host (Deno 2)',
        new TypeError('fetch failed', {
          cause: new Error(
            'error sending request for url (https://api.fashn.ai/v1/run): client error (Connect): dns error: failed to lookup address information: Name or service not known',
          ),
        }),
        true,
      ],
      ['a blocked port (Deno)', new TypeError('Fetch failed: Requests to port 1 are blocked'), true],
      [
        'socket closed after sending (undici)',
        Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) }),
        false,
      ],
      [
        'connection reset (Deno)',
        new TypeError(
          'error sending request for url (https://api.fashn.ai/v1/run): connection error: Connection reset by peer (os error 104)',
        ),
        false,
      ],
      ['our own timeout', new DOMException('The operation was aborted due to timeout', 'TimeoutError'), false],
    ])('tells a request that never left from one that may have arrived: %s', (_, error, expected) => {
      expect(neverSent(error)).toBe(expected)
    })
  })

  describe('transient errors and retries', () => {
    it('retries a 429 RateLimitExceeded submit after a jittered backoff, then succeeds', async () => {
      fake.script('POST', '/v1/run', fashn.submitError(429, 'RateLimitExceeded', 'Too many requests'), fashn.submitted())
      fake.script('GET', statusPath, fashn.completed(fake.outputUrl))
      const { engine, sleeps } = engineWith()
      expect((await engine.generate(tryOn())).kind).toBe('generated')
      expect(fake.requestsTo('/v1/run')).toHaveLength(2)
      // Equal jitter on the first 2 s step of a 429 (1 s + random() = 0.5 of 1 s), then the first poll's wait.
      expect(sleeps).toEqual([1500, 1000])
    })

    it('honours Retry-After on a 429 (within the cap)', async () => {
      fake.script(
        'POST',
        '/v1/run',
        { ...fashn.submitError(429, 'ConcurrencyLimitExceeded', 'busy'), headers: { 'retry-after': '3' } },
        fashn.submitted(),
      )
      fake.script('GET', statusPath, fashn.completed(fake.outputUrl))
      const { engine, sleeps } = engineWith()
      expect((await engine.generate(tryOn())).kind).toBe('generated')
      expect(sleeps[0]).toBe(3000)
    })

    it('retries a 503 while polling', async () => {
      fake.script(
        'GET',
        statusPath,
        fashn.status('processing'),
        fashn.submitError(503, 'InternalServerError', 'upstream'),
        fashn.completed(fake.outputUrl),
      )
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

    it('waits out 429s within the deadline, and gives up at once when the next wait would pass it (outage)', async () => {
      const busy = fashn.submitError(429, 'ConcurrencyLimitExceeded', 'Too many concurrent predictions')
      fake.script('POST', '/v1/run', busy, busy, busy, fashn.submitted())
      fake.script('GET', statusPath, fashn.completed(fake.outputUrl))
      const roomy = engineWith()
      expect((await roomy.engine.generate(tryOn(within(roomy, 60_000)))).kind).toBe('generated')
      expect(fake.requestsTo('/v1/run')).toHaveLength(4)
      expect(roomy.sleeps).toEqual([1500, 3000, 6000, 1000])

      fake.reset()
      fake.script('POST', '/v1/run', busy)
      // 1.5 s fits in 8 s with the 5 s a run needs; the next 3 s does not.
      const tight = engineWith()
      const outcome = await tight.engine.generate(tryOn(within(tight, 8_000)))
      expect(outcome).toMatchObject({ kind: 'failed', outage: true })
      expect(fake.requestsTo('/v1/run')).toHaveLength(2)
      expect(tight.sleeps).toEqual([1500])
    })

    it('polls no faster than FASHN’s status limit allows for 6 concurrent jobs (50 per 10 s), however long the job', async () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 400 }), (polls) => {
          const at: number[] = []
          let wait = defaultPolling.firstMs
          for (let i = 0, t = 0; i < polls; i++) {
            t += wait
            at.push(t)
            wait = Math.min(defaultPolling.maxMs, wait * defaultPolling.factor)
          }
          const busiest = Math.max(...at.map((start) => at.filter((x) => x >= start && x < start + 10_000).length))
          return 6 * busiest <= 50 && at[0] === 1_000
        }),
      )
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
