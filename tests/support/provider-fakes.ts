/**
 * Local stand-ins for the generation providers, on 127.0.0.1, speaking each provider's documented wire format
 * (../shared/reference/providers-wire-formats.md and the Vertex AI Virtual Try-On reference). Each route plays a
 * script of replies in order (the last one repeats) and every request is recorded for assertions.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { decodeBase64, encodeBase64 } from '../../shared/images/base64.ts'

export interface RecordedRequest {
  method: string
  path: string
  headers: IncomingHttpHeaders
  text: string
  /** The body parsed as JSON, or undefined. */
  json: any
}

export type FakeReply =
  | { status?: number; json?: unknown; text?: string; bytes?: Uint8Array; contentType?: string; headers?: Record<string, string> }
  /** Never answers: holds the request until the client gives up. */
  | { hang: true }
  /** Reads the whole request, then closes the connection without a word: the request did reach the provider. */
  | { drop: true }
  /** A body in parts and without a Content-Length (chunked), then ended, or held open (`hang`) until the client gives up. */
  | { parts: Uint8Array[]; contentType?: string; hang?: boolean }

type Handler = (request: RecordedRequest) => FakeReply | Promise<FakeReply>

export interface FakeServer {
  url: string
  requests: RecordedRequest[]
  /** Requests to one path (exact, or matching a pattern). */
  requestsTo(path: string | RegExp, method?: string): RecordedRequest[]
  /** Replies for a route, played in order; the last one repeats. */
  script(method: string, path: string | RegExp, ...replies: (FakeReply | Handler)[]): void
  reset(): void
  close(): Promise<void>
}

export async function startFakeServer(
  defaults: (fake: FakeServer) => void = () => {},
  options: { record?: boolean } = {},
): Promise<FakeServer> {
  const routes: { method: string; path: string | RegExp; replies: (FakeReply | Handler)[] }[] = []
  const requests: RecordedRequest[] = []
  const matches = (pattern: string | RegExp, path: string) => (typeof pattern === 'string' ? pattern === path : pattern.test(path))

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const text = Buffer.concat(chunks).toString('utf8')
    let json: unknown
    try {
      json = text ? JSON.parse(text) : undefined
    } catch {
      json = undefined
    }
    const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, text, json }
    // A benchmark's fake keeps nothing: thousands of bodies of two photos each would fill its memory.
    if (options.record !== false) requests.push(recorded)
    const route = routes.find((r) => r.method === recorded.method && matches(r.path, recorded.path))
    if (!route) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'NotFound', message: 'no such route' }))
      return
    }
    const next = route.replies.length > 1 ? route.replies.shift()! : route.replies[0]
    const reply = typeof next === 'function' ? await next(recorded) : next
    if ('parts' in reply) {
      res.writeHead(200, { 'content-type': reply.contentType ?? 'application/octet-stream' })
      for (const part of reply.parts) res.write(part)
      if (reply.hang) req.socket.once('close', () => res.destroy())
      else res.end()
      return
    }
    if ('hang' in reply) {
      // Held until the client aborts; the socket is then closed without an answer.
      req.socket.once('close', () => res.destroy())
      return
    }
    if ('drop' in reply) {
      req.socket.destroy()
      return
    }
    const headers: Record<string, string> = { ...reply.headers }
    let body: string | Uint8Array = ''
    if (reply.bytes) {
      body = reply.bytes
      headers['content-type'] = reply.contentType ?? 'application/octet-stream'
    } else if (reply.text !== undefined) {
      body = reply.text
      headers['content-type'] = reply.contentType ?? 'application/json'
    } else if (reply.json !== undefined) {
      body = JSON.stringify(reply.json)
      headers['content-type'] = 'application/json'
    }
    res.writeHead(reply.status ?? 200, headers).end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  const fake: FakeServer = {
    url: `http://127.0.0.1:${port}`,
    requests,
    requestsTo: (path, method) => requests.filter((r) => matches(path, r.path.split('?')[0]) && (!method || r.method === method)),
    script(method, path, ...replies) {
      const existing = routes.findIndex((r) => r.method === method && String(r.path) === String(path))
      if (existing >= 0) routes.splice(existing, 1)
      routes.unshift({ method, path, replies })
    },
    reset() {
      routes.length = 0
      requests.length = 0
      defaults(fake)
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  defaults(fake)
  return fake
}

// ---- FASHN: POST /v1/run, GET /v1/status/{id}; results on its CDN ----

export const FASHN_PREDICTION = '123a87r9-4129-4bb3-be18-9c9fb5bd7fc1-u1'

export interface FashnFake extends FakeServer {
  /** The bytes its CDN serves as the result. */
  output: Uint8Array
  outputUrl: string
}

export async function startFashnFake(output: Uint8Array, options: { record?: boolean } = {}): Promise<FashnFake> {
  const outputPath = `/cdn/${FASHN_PREDICTION}/output_0.jpg`
  const fake = (await startFakeServer((f) => {
    f.script('POST', '/v1/run', fashn.checkedRun())
    f.script('GET', '/v1/credits', fashn.credits(234, 100))
    f.script(
      'GET',
      `/v1/status/${FASHN_PREDICTION}`,
      fashn.status('starting'),
      fashn.status('in_queue'),
      fashn.status('processing'),
      fashn.completed(`${f.url}${outputPath}`),
    )
    f.script('GET', outputPath, { bytes: output, contentType: 'image/jpeg' })
  }, options)) as FashnFake
  fake.output = output
  fake.outputUrl = `${fake.url}${outputPath}`
  return fake
}

/**
 * The inputs each FASHN model requires (docs.fashn.ai/api-reference/tryon-v1-6 and /tryon-max): v1.6 takes
 * `garment_image` and a `category`; Try-On Max takes `product_image` and has no `category`. A run with the other
 * model's inputs is refused as FASHN refuses a bad request: 400 with a string `error` and a `message`
 * (docs.fashn.ai/api-overview/error-handling).
 */
const FASHN_INPUTS: Record<string, { required: string[]; refused: string[] }> = {
  'tryon-v1.6': { required: ['model_image', 'garment_image'], refused: ['product_image'] },
  'tryon-max': { required: ['model_image', 'product_image'], refused: ['garment_image', 'category'] },
}

export const fashn = {
  submitted: (id = FASHN_PREDICTION): FakeReply => ({ json: { id, error: null } }),
  /** POST /v1/run that checks the model's documented inputs before issuing a prediction id. */
  checkedRun:
    (id = FASHN_PREDICTION) =>
    (request: RecordedRequest): FakeReply => {
      const rules = FASHN_INPUTS[request.json?.model_name]
      if (!rules) return fashn.submitError(400, 'BadRequest', `Unknown model_name: ${request.json?.model_name}`)
      const inputs = request.json.inputs ?? {}
      const missing = rules.required.find((name) => typeof inputs[name] !== 'string')
      if (missing) return fashn.submitError(400, 'BadRequest', `inputs.${missing} is required`)
      const extra = rules.refused.find((name) => name in inputs)
      if (extra) return fashn.submitError(400, 'BadRequest', `inputs.${extra} is not an input of ${request.json.model_name}`)
      return fashn.submitted(id)
    },
  /** GET /v1/credits: the account's balance (docs.fashn.ai/api-reference/credits). */
  credits: (total: number, subscription = 0): FakeReply => ({
    json: { credits: { total, subscription, on_demand: total - subscription } },
  }),
  /** A refused submit: no id, `error` is a string naming the error. */
  submitError: (status: number, name: string, message: string): FakeReply => ({ status, json: { error: name, message } }),
  status: (status: string): FakeReply => ({ json: { id: FASHN_PREDICTION, status, error: null } }),
  completed: (output: string): FakeReply => ({ json: { id: FASHN_PREDICTION, status: 'completed', output: [output], error: null } }),
  /** A failed prediction: on status, `error` is an object. */
  failed: (name: string, message: string): FakeReply => ({
    json: { id: FASHN_PREDICTION, status: 'failed', output: null, error: { name, message } },
  }),
}

// ---- Gemini: POST /v1beta/models/{model}:generateContent ----

export const geminiPath = (model: string) => `/v1beta/models/${model}:generateContent`

export const gemini = {
  /** The documented success shape (camelCase), the image after a text part. */
  image: (bytes: Uint8Array, options: { snakeCase?: boolean; thoughtImage?: Uint8Array; mimeType?: string } = {}): FakeReply => {
    const inline = (data: Uint8Array) =>
      options.snakeCase
        ? { inline_data: { mime_type: options.mimeType ?? 'image/png', data: encodeBase64(data) } }
        : { inlineData: { mimeType: options.mimeType ?? 'image/png', data: encodeBase64(data) } }
    const parts: unknown[] = [{ text: 'Here is the try-on.' }]
    // Gemini 3 image models send interim images marked `thought: true` before the final one, and sign parts with a
    // `thoughtSignature` (ai.google.dev/gemini-api/docs/image-generation, "Thinking process", "Thought signatures").
    if (options.thoughtImage) parts.push({ ...inline(options.thoughtImage), thought: true })
    parts.push(options.thoughtImage ? { ...inline(bytes), thoughtSignature: 'Cg0ICRIJc2lnbmF0dXJl' } : inline(bytes))
    const finish = options.snakeCase ? { finish_reason: 'STOP' } : { finishReason: 'STOP' }
    return {
      json: {
        candidates: [{ content: { role: 'model', parts }, ...finish, index: 0 }],
        usageMetadata: { promptTokenCount: 560, candidatesTokenCount: 1290, totalTokenCount: 1850 },
        modelVersion: 'gemini-3.1-flash-image',
      },
    }
  },
  promptBlocked: (blockReason: string): FakeReply => ({
    json: {
      promptFeedback: { blockReason },
      usageMetadata: { promptTokenCount: 12559, totalTokenCount: 12559 },
      modelVersion: 'gemini-3.1-flash-image',
    },
  }),
  finished: (finishReason: string, finishMessage?: string): FakeReply => ({
    json: {
      candidates: [{ content: { role: 'model' }, finishReason, ...(finishMessage && { finishMessage }), index: 0 }],
      usageMetadata: { promptTokenCount: 560, candidatesTokenCount: 0, totalTokenCount: 560 },
    },
  }),
  textOnly: (text: string): FakeReply => ({
    json: { candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }] },
  }),
  /**
   * A JSON-mode answer (generationConfig.responseMimeType application/json with a responseSchema, as the train
   * judge asks): the JSON comes back as the text of the first part.
   */
  json: (value: unknown): FakeReply => ({
    json: { candidates: [{ content: { role: 'model', parts: [{ text: JSON.stringify(value) }] }, finishReason: 'STOP', index: 0 }] },
  }),
  /** The train judge's answers to its questions, each one given. */
  judged: (answers: Partial<Record<string, unknown>> = {}): FakeReply =>
    gemini.json({
      gownOnBody: true,
      croppedAboveFeet: false,
      trainOnFloor: true,
      trainContinuous: true,
      trainLength: 'long',
      samePerson: true,
      reason: 'train spread on the floor',
      ...answers,
    }),
  /**
   * The quality judge's answers (shared/quality/gemini-judge.ts), each one given: a result that passes; with
   * `weddingDress` the train answers too, as one reply to one call. usageMetadata as the API reports it
   * (ai.google.dev/gemini-api/docs/tokens): three images at 1,120 tokens each for Gemini 3, the questions, the answer.
   */
  qualityJudged: (answers: Partial<Record<string, unknown>> = {}, options: { weddingDress?: boolean } = {}): FakeReply => {
    const reply = gemini.json({
      garmentOnBody: true,
      samePerson: true,
      samePose: true,
      sameBackground: true,
      colourKept: true,
      detailsKept: true,
      grossArtifacts: false,
      ...(options.weddingDress && {
        gownOnBody: true,
        croppedAboveFeet: false,
        trainOnFloor: true,
        trainContinuous: true,
        trainLength: 'long',
      }),
      reason: 'the garment is worn as shown, the person and the scene are kept',
      ...answers,
    }) as { json: Record<string, unknown> }
    return {
      json: {
        ...reply.json,
        usageMetadata: { promptTokenCount: 3742, candidatesTokenCount: 61, thoughtsTokenCount: 212, totalTokenCount: 4015 },
        modelVersion: 'gemini-3.5-flash',
      },
    }
  },
  /** An answer cut short by maxOutputTokens: its text is not whole JSON, and the finish reason says so. */
  truncated: (text: string): FakeReply => ({
    json: { candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'MAX_TOKENS', index: 0 }] },
  }),
  /** No candidate and no promptFeedback: nothing to read. */
  noCandidates: (): FakeReply => ({ json: { candidates: [], usageMetadata: { promptTokenCount: 3742, totalTokenCount: 3742 } } }),
  error: (code: number, status: string, message: string, details?: unknown[]): FakeReply => ({
    status: code,
    json: { error: { code, message, status, ...(details && { details }) } },
  }),
  /**
   * A model the Gemini API has shut down: 404 NOT_FOUND, "This model models/<id> is no longer available…", the
   * wording reported for shut-down ids (../shared/reference/model-lifecycle.md).
   */
  modelGone: (model: string): FakeReply =>
    gemini.error(
      404,
      'NOT_FOUND',
      `This model models/${model} is no longer available. Please update your code to use a newer model for the latest features and improvements.`,
    ),
  /** An id the Gemini API never knew: 404 NOT_FOUND in its other wording. */
  modelUnknown: (model: string): FakeReply =>
    gemini.error(
      404,
      'NOT_FOUND',
      `models/${model} is not found for API version v1beta, or is not supported for generateContent. ` +
        'Call ListModels to see the list of available models and their supported methods.',
    ),
  /** GET /v1beta/models/{model}: the Model resource (ai.google.dev/api/models#Model), free of charge. */
  model: (model: string, methods = ['generateContent', 'countTokens']): FakeReply => ({
    json: {
      name: `models/${model}`,
      version: '001',
      displayName: model,
      description: `Stand-in for ${model}`,
      inputTokenLimit: 131_072,
      outputTokenLimit: 32_768,
      supportedGenerationMethods: methods,
    },
  }),
  /** A 429 as the Gemini API answers it: the wait is a RetryInfo entry of error.details, with no Retry-After header. */
  quotaExceeded: (retryDelay: string): FakeReply =>
    gemini.error(429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota, please check your plan and billing details.', [
      {
        '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
        violations: [
          {
            quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
            quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier',
          },
        ],
      },
      {
        '@type': 'type.googleapis.com/google.rpc.Help',
        links: [{ description: 'Learn more about Gemini API quotas', url: 'https://ai.google.dev/gemini-api/docs/rate-limits' }],
      },
      { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay },
    ]),
}

export const geminiModelPath = (model: string) => `/v1beta/models/${model}`

/**
 * The Gemini API's models on a fake: `served` answer generateContent with their reply and their metadata on GET;
 * `gone` answer 404 NOT_FOUND "is no longer available" to both; any other id the "is not found" wording.
 */
export function scriptGeminiModels(fake: FakeServer, models: { served: Record<string, FakeReply>; gone?: string[] }): void {
  const modelOf = (path: string) => decodeURIComponent(/^\/v1beta\/models\/([^/:?]+)/.exec(path)?.[1] ?? '')
  const answer = (request: RecordedRequest, served: (model: string) => FakeReply): FakeReply => {
    const model = modelOf(request.path)
    if (models.gone?.includes(model)) return gemini.modelGone(model)
    return model in models.served ? served(model) : gemini.modelUnknown(model)
  }
  fake.script('POST', /^\/v1beta\/models\/[^/:]+:generateContent$/, (request) => answer(request, (model) => models.served[model]))
  fake.script('GET', /^\/v1beta\/models\/[^/:]+$/, (request) => answer(request, (model) => gemini.model(model)))
}

// ---- Vertex AI: OAuth token endpoint, :predict on virtual-try-on-001, :generateContent on Gemini ----

export const vertexPredictPath = (project: string, location: string, model = 'virtual-try-on-001') =>
  `/v1/projects/${project}/locations/${location}/publishers/google/models/${model}:predict`

/** Gemini on Vertex AI: the same request and answer bodies as the Gemini API, on a project's publisher model. */
export const vertexGenerateContentPath = (project: string, location: string, model = 'gemini-3.5-flash') =>
  `/v1/projects/${project}/locations/${location}/publishers/google/models/${model}:generateContent`

/** publishers.models.get (Vertex AI REST v1, ModelGardenService.GetPublisherModel): a model's metadata, free. */
export const vertexPublisherModelPath = (model: string) => `/v1/publishers/google/models/${model}`

export const vertex = {
  image: (bytes: Uint8Array): FakeReply => ({
    json: { predictions: [{ mimeType: 'image/jpeg', bytesBase64Encoded: encodeBase64(bytes) }] },
  }),
  filtered: (raiFilteredReason: string): FakeReply => ({ json: { predictions: [{ raiFilteredReason }] } }),
  error: (code: number, status: string, message: string): FakeReply => ({ status: code, json: { error: { code, message, status } } }),
  token: (accessToken: string, expiresIn = 3599): FakeReply => ({
    json: { access_token: accessToken, expires_in: expiresIn, token_type: 'Bearer' },
  }),
  /** A retired or unknown model: 404 NOT_FOUND in Vertex AI's wording (seen in genkit-ai/genkit#4688). */
  modelNotFound: (project: string, location: string, model: string): FakeReply =>
    vertex.error(
      404,
      'NOT_FOUND',
      `Publisher Model \`projects/${project}/locations/${location}/publishers/google/models/${model}\` was not found or your ` +
        'project does not have access to it. Please ensure you are using a valid model version. For more information, see: ' +
        'https://cloud.google.com/vertex-ai/generative-ai/docs/learn/model-versions',
    ),
  /** `:predict` on a Gemini model: refused (../shared/reference/model-lifecycle.md, Vertex AI). */
  geminiOnPredict: (): FakeReply =>
    vertex.error(400, 'FAILED_PRECONDITION', 'Gemini cannot be accessed through Vertex Predict/RawPredict API.'),
  /** The PublisherModel resource (Vertex AI REST v1): name, version and launch stage. */
  publisherModel: (model: string): FakeReply => ({
    json: { name: `publishers/google/models/${model}`, versionId: '001', openSourceCategory: 'PROPRIETARY', launchStage: 'GA' },
  }),
}

/** A service-account key file with a fresh RSA key, and the public key to verify what is signed with it. */
export async function makeServiceAccount(tokenUri: string): Promise<{ json: string; publicKey: CryptoKey; clientEmail: string }> {
  const pair = (await crypto.subtle.generateKey(
    { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
    true,
    ['sign', 'verify'],
  )) as CryptoKeyPair
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey('pkcs8', pair.privateKey))
  const pem = `-----BEGIN PRIVATE KEY-----\n${encodeBase64(pkcs8).replace(/(.{64})/g, '$1\n')}\n-----END PRIVATE KEY-----\n`
  const clientEmail = 'tryon@test-project.iam.gserviceaccount.com'
  const json = JSON.stringify({
    type: 'service_account',
    project_id: 'test-project',
    private_key_id: 'key-1',
    private_key: pem,
    client_email: clientEmail,
    token_uri: tokenUri,
  })
  return { json, publicKey: pair.publicKey, clientEmail }
}

/** Checks an RS256 JWT against a public key; returns its header and claims, or null when the signature is wrong. */
export async function verifyJwt(jwt: string, publicKey: CryptoKey): Promise<{ header: any; claims: any } | null> {
  const [header, claims, signature] = jwt.split('.')
  const fromUrl = (part: string) => decodeBase64(part.replace(/-/g, '+').replace(/_/g, '/'))!
  const valid = await crypto.subtle.verify(
    'RSASSA-PKCS1-v1_5',
    publicKey,
    new Uint8Array(fromUrl(signature)),
    new TextEncoder().encode(`${header}.${claims}`),
  )
  if (!valid) return null
  const decode = (part: string) => JSON.parse(new TextDecoder().decode(fromUrl(part)))
  return { header: decode(header), claims: decode(claims) }
}
