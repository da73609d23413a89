import type { EngineOutcome, GarmentCategory, TryOnEngine, TryOnRequest } from '../types.ts'
import { excerpt, ProviderError, requestJson, transientStatus, type JsonAnswer, type RetryPolicy } from './http.ts'
import { dataUri, preparePair, type InputPolicy, type PreparedImage } from './images.ts'
import { asRecord } from './json.ts'
import { failed, failedAnswer, providerEngine, rejected } from './outcomes.ts'
import { defaultOutputLimits, fetchOutput, type OutputLimits } from './output.ts'
import type { ProviderRuntime } from './runtime.ts'
import type { FashnModel } from './settings.ts'

export interface FashnConfig {
  apiKey: string
  /** https://api.fashn.ai unless a proxy or a test fake stands in. */
  baseUrl: string
  /** FASHN_MODEL: tryon-v1.6 (default) or tryon-max, each with its own inputs. */
  model?: FashnModel
  mode?: 'performance' | 'balanced' | 'quality'
}

export interface FashnOptions {
  /** Status polling: the first wait, its growth per poll and its ceiling. */
  polling?: { firstMs: number; factor: number; maxMs: number }
  retry?: RetryPolicy
  output?: OutputLimits
  /** One call's limit (default 30 s): a run that times out is never sent again. */
  attemptTimeoutMs?: number
}

/**
 * FASHN's guidance for its 1K endpoints: at most 2000 px on the long edge, JPEG (or PNG), and no oversized
 * base64 payloads (its troubleshooting page blames those for 500s); 4 MB keeps the JSON body near 11 MB at most.
 */
const FASHN_INPUT: InputPolicy = { formats: ['jpeg', 'png'], maxBytes: 4 * 1024 * 1024, maxLongSide: 2000 }
const CATEGORY: Record<GarmentCategory, string> = { top: 'tops', outerwear: 'tops', bottom: 'bottoms', dress: 'one-pieces' }
const RUNNING = new Set(['starting', 'in_queue', 'processing'])
const NAME = 'fashn'

/**
 * Status polling. FASHN's SDKs poll every 1 s (fashn-typescript-sdk src/resources/predictions.ts,
 * DEFAULT_POLL_INTERVAL); its published limits allow about 50 status calls per 10 s and 6 concurrent jobs per
 * account. Waits of 1 s growing by 1.25× to 2 s make at most 6 polls in a job's first 10 s and 5 in any later
 * 10 s, so 6 jobs at once stay under 40 per 10 s, whichever isolates run them; a 429 on a poll is waited out.
 */
export const defaultPolling = { firstMs: 1_000, factor: 1.25, maxMs: 2_000 }

/**
 * FASHN Virtual Try-On (POST /v1/run, then GET /v1/status/{id} until the prediction settles). Images go as
 * data URIs; the result URL FASHN returns is downloaded at once, since it expires after 72 hours.
 */
export function createFashnEngine(config: FashnConfig, runtime: ProviderRuntime, options: FashnOptions = {}): TryOnEngine {
  const base = config.baseUrl.replace(/\/+$/, '')
  const polling = options.polling ?? defaultPolling
  const output = options.output ?? defaultOutputLimits
  const headers = { authorization: `Bearer ${config.apiKey}` }
  const call = (request: TryOnRequest) => ({
    provider: NAME,
    headers,
    signal: request.signal,
    remainingMs: request.remainingMs,
    attemptTimeoutMs: options.attemptTimeoutMs ?? 30_000,
    maxResponseBytes: 256 * 1024,
    retry: options.retry,
    // 429 OutOfCredits will not pass by waiting; rate and concurrency limits will.
    isTransient: (status: number, body: unknown) => transientStatus(status) && errorName(body) !== 'OutOfCredits',
  })
  /**
   * POST /v1/run starts paid work, and FASHN rules out duplicates only "if you retry after an API-level error",
   * where "no prediction ID was issued" (docs.fashn.ai/api-overview/error-handling). So a run is tried again
   * only after FASHN's own error answer (429 RateLimitExceeded or ConcurrencyLimitExceeded, 5xx with its
   * `{ error, message }` body), or when it provably never left (refused connection, DNS); never after a timeout,
   * a dropped connection or a gateway's error page, when the prediction may have started.
   */
  const runCall = (request: TryOnRequest) => ({
    ...call(request),
    idempotent: false,
    // A retried run still needs the time to process (5 s at the fastest): otherwise leave it to the next engine.
    minAttemptMs: 5_000,
    isTransient: (status: number, body: unknown) =>
      transientStatus(status) && errorName(body) !== undefined && errorName(body) !== 'OutOfCredits',
  })

  /** POST /v1/run. The inputs are prepared here, so nothing holds them once the run is submitted. */
  async function submit(request: TryOnRequest): Promise<JsonAnswer> {
    const [person, garment] = await preparePair(runtime.prepareImage, request, FASHN_INPUT)
    const model = config.model ?? 'tryon-v1.6'
    return requestJson(runtime, {
      ...runCall(request),
      url: `${base}/v1/run`,
      method: 'POST',
      body: {
        model_name: model,
        inputs: model === 'tryon-max' ? maxInputs(request, person, garment) : v16Inputs(request, person, garment),
      },
    })
  }

  /** Try-On v1.6 (docs.fashn.ai/api-reference/tryon-v1-6): the garment image and its category. */
  function v16Inputs(request: TryOnRequest, person: PreparedImage, garment: PreparedImage): Record<string, unknown> {
    return {
      model_image: dataUri(person),
      garment_image: dataUri(garment),
      category: request.category ? CATEGORY[request.category] : 'auto',
      mode: config.mode ?? 'balanced',
      output_format: 'jpeg',
      return_base64: false,
    }
  }

  /**
   * Try-On Max (docs.fashn.ai/api-reference/tryon-max): `product_image`, not `garment_image`, and no `category` (it
   * reads shoes, hats, jewellery and bags as well as clothing). Of its optional inputs: the shop's description as a
   * `prompt`, the 1k `resolution` (the fewest credits and seconds) in `balanced` mode, one image.
   */
  function maxInputs(request: TryOnRequest, person: PreparedImage, garment: PreparedImage): Record<string, unknown> {
    const description = productDescription(request.clothingType)
    return {
      model_image: dataUri(person),
      product_image: dataUri(garment),
      ...(description && { prompt: `The product is: ${description}` }),
      resolution: '1k',
      generation_mode: 'balanced',
      num_images: 1,
      output_format: 'jpeg',
      return_base64: false,
    }
  }

  async function generate(request: TryOnRequest): Promise<EngineOutcome> {
    const { signal } = request
    const submitted = await submit(request)
    const id = predictionId(submitted)
    if (typeof id !== 'string') return id

    let wait = polling.firstMs
    for (;;) {
      try {
        await runtime.sleep(wait, signal)
      } catch {
        throw new ProviderError('deadline', `fashn: the deadline passed while prediction ${id} was running`)
      }
      wait = Math.min(polling.maxMs, wait * polling.factor)
      const answer = await requestJson(runtime, { ...call(request), url: `${base}/v1/status/${encodeURIComponent(id)}` })
      if (answer.status !== 200)
        return failedAnswer(NAME, runtime, answer.status, `status answered HTTP ${answer.status}`, {
          prediction: id,
          provider: excerpt(answer.body),
        })
      const prediction = asRecord(answer.body)
      const status = prediction.status
      if (typeof status === 'string' && RUNNING.has(status)) continue
      if (status === 'completed') {
        const outputs = prediction.output
        const image = await fetchOutput(runtime, Array.isArray(outputs) ? outputs[0] : undefined, {
          engine: NAME,
          allowHttp: base.startsWith('http:'),
          limits: output,
          signal,
        })
        return { kind: 'generated', image }
      }
      if (status === 'failed') return runtimeError(prediction.error, id)
      return failed(NAME, runtime, `prediction ended as ${excerpt(status)}`, { prediction: id })
    }
  }

  /** The prediction id of a submit answer, or the outcome when FASHN refused it. */
  function predictionId(answer: JsonAnswer): string | EngineOutcome {
    const body = asRecord(answer.body)
    const ok = answer.status >= 200 && answer.status <= 299
    if (ok && typeof body.id === 'string' && body.id !== '' && (body.error === null || body.error === undefined)) return body.id
    // On submit `error` is a string (the error's name), with the details in `message`.
    const name = typeof body.error === 'string' ? body.error : undefined
    if (name) return classify(name, body.message, { status: answer.status })
    return failedAnswer(NAME, runtime, answer.status, `run answered HTTP ${answer.status} without a prediction id`, {
      provider: excerpt(answer.body),
    })
  }

  /** On status (and webhooks) `error` is an object: { name, message }. */
  function runtimeError(error: unknown, id: string): EngineOutcome {
    const record = asRecord(error)
    const name = typeof record.name === 'string' ? record.name : typeof error === 'string' ? error : 'unknown'
    return classify(name, record.message, { prediction: id })
  }

  /**
   * FASHN's error names, as its SDK documents them (fashn-typescript-sdk src/resources/predictions.ts,
   * PredictionStatusResponse.Error.name) and docs.fashn.ai/api-overview/error-handling.
   */
  function classify(name: string, message: unknown, context: Record<string, unknown>): EngineOutcome {
    const detail = { ...context, providerError: name, providerMessage: excerpt(message) }
    switch (name) {
      case 'ContentModerationError':
      case 'NSFWError':
      // "Third-party processor failure", caused by "External service restrictions (content/prompt limitations)";
      // the fix is to modify the image inputs, so it is a refusal of this content. (3rdPartyProviderError, the
      // unclassified provider failure the SDK says to retry, stays a failure.)
      case 'ThirdPartyError':
        return rejected(NAME, runtime, detail)
      case 'PoseError':
        runtime.log({ level: 'warn', msg: 'provider found no person in the shopper photo', engine: NAME, ...detail })
        return { kind: 'no_person', reason: 'fashn: no person pose was found in the shopper photo' }
      case 'ImageLoadError':
        return invalidInput(detail, `The generation engine could not load ${whichImage(message)}`)
      case 'InputValidationError':
        return invalidInput(detail, 'The generation engine did not accept these images as a person photo and a garment photo')
      case 'PhotoTypeError':
        return invalidInput(detail, 'The product image (productImage) could not be used: the garment photo type was not recognised')
      default: {
        // An API-level error keeps its HTTP status: 429 and 5xx mean FASHN is saturated or down.
        const status = typeof context.status === 'number' ? context.status : 200
        return failedAnswer(NAME, runtime, status, `provider error ${name}`, detail)
      }
    }
  }

  function invalidInput(detail: Record<string, unknown>, reason: string): EngineOutcome {
    runtime.log({ level: 'warn', msg: 'provider refused the input images', engine: NAME, ...detail })
    return { kind: 'invalid_input', reason }
  }

  return providerEngine(NAME, runtime, generate)
}

/** The caller's free text as one short line of words, or nothing. */
function productDescription(text: string | undefined): string | undefined {
  const clean = text
    ?.replace(/[\p{Cc}"`\\]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 100)
  return clean ? clean : undefined
}

function errorName(body: unknown): string | undefined {
  const error = asRecord(body).error
  return typeof error === 'string' ? error : undefined
}

/** FASHN names the image in its message ("Error loading model image: …"); our message names the field. */
function whichImage(message: unknown): string {
  const text = typeof message === 'string' ? message.toLowerCase() : ''
  if (text.includes('model image')) return 'the shopper photo (userPhoto)'
  if (text.includes('garment image')) return 'the product image (productImage)'
  return 'one of the images'
}
