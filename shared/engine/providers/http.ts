import type { ProviderRuntime } from './runtime.ts'
import { parseJsonBytes } from '../../encoding/json-bytes.ts'
import { readCapped } from '../../streams/read-capped.ts'
import { jsonBody, type JsonBody } from './json-body.ts'

/** Why a provider call produced no answer we can read. */
export type ProviderFailureKind = 'deadline' | 'timeout' | 'network' | 'malformed' | 'too_large' | 'refused' | 'auth'

/** A provider call that ended without a usable answer; adapters turn it into a `failed` outcome. */
export class ProviderError extends Error {
  readonly kind: ProviderFailureKind
  constructor(kind: ProviderFailureKind, message: string, options: { cause?: unknown } = {}) {
    super(message, options)
    this.name = 'ProviderError'
    this.kind = kind
  }
}

export interface RetryPolicy {
  /** Tries in all after network failures, timeouts and 5xx answers, the first included. */
  attempts: number
  baseDelayMs: number
  maxDelayMs: number
  /**
   * Tries in all while the provider answers 429. A quota frees up with time, so these waits are longer and are
   * spent within the deadline; without this, a 429 counts as any other failure.
   */
  rateLimited?: { attempts: number; baseDelayMs: number; maxDelayMs: number }
}

export const defaultRetry: RetryPolicy = {
  attempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  // Waits of about 1.5, 3, 6, 12, 12… s: over a minute in all, which a per-minute quota (Vertex: 50 a minute) needs.
  rateLimited: { attempts: 8, baseDelayMs: 2_000, maxDelayMs: 16_000 },
}

export interface JsonCall {
  /** Names the provider in log lines. */
  provider: string
  url: string
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  /** Sent as JSON; the Base64Bytes in it are written as base64 strings a chunk at a time (json-body.ts). */
  body?: unknown
  /** Sent as application/x-www-form-urlencoded instead of a JSON body. */
  form?: Record<string, string>
  /** The generation's deadline: once it aborts, nothing is retried. */
  signal?: AbortSignal
  /** Milliseconds until `signal` aborts, when known: a wait that would not leave time for one more try is not begun. */
  remainingMs?: () => number
  /** How long a try needs to be worth sending after a wait (default 1 s). */
  minAttemptMs?: number
  /** One attempt (connect, headers and body) gives up after this long and counts as transient. */
  attemptTimeoutMs: number
  maxResponseBytes: number
  /**
   * The answer carries an image as base64 (Gemini's inlineData, Vertex's bytesBase64Encoded): its strings of
   * 64 KB or more stay in the answer's bytes as LargeString values, decoded there (json-bytes.ts).
   */
  largeStrings?: boolean
  retry?: RetryPolicy
  /** Which answers deserve another attempt; by default 429 and 5xx. */
  isTransient?: (status: number, body: unknown) => boolean
  /** The wait an answer asks for in its body (Google's RetryInfo), in ms; `Retry-After` is read in any case. */
  serverDelayMs?: (answer: JsonAnswer) => number | undefined
  /**
   * False for a call that starts paid work (FASHN's POST /v1/run): after a timeout or a broken connection it may
   * have reached the provider, so it is tried again only when it provably never left (connection refused, DNS)
   * or when the provider answered with a transient status.
   */
  idempotent?: boolean
}

export interface JsonAnswer {
  status: number
  headers: Headers
  /** The parsed JSON body; undefined when a non-2xx answer was not JSON. */
  body: unknown
}

export const transientStatus = (status: number): boolean => status === 429 || (status >= 500 && status !== 501)

/**
 * One JSON call with retries: network errors, attempt timeouts and transient statuses are tried again after a
 * jittered exponential backoff, or after the wait the server asked for (`Retry-After`, or `serverDelayMs`).
 * 429s get their own, longer budget of tries. No wait is begun that would end past the deadline: the last
 * answer (or failure) stands at once, so a fallback engine gets the time instead. The last answer is returned
 * whatever its status; a 2xx that is not JSON, or no answer at all, throws ProviderError.
 */
export async function requestJson(runtime: ProviderRuntime, call: JsonCall): Promise<JsonAnswer> {
  const policy = call.retry ?? defaultRetry
  const isTransient = call.isTransient ?? ((status: number) => transientStatus(status))
  const headers = headersOf(call)
  const body = bodyOf(call)
  let streamed = typeof body === 'object' && body.length >= STREAM_FROM_BYTES
  let failures = 0
  let rateLimited = 0
  for (let attempt = 1; ; attempt++) {
    if (call.signal?.aborted) throw deadlineError(call)
    const timeout = AbortSignal.timeout(call.attemptTimeoutMs)
    const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout
    let answer: JsonAnswer
    try {
      const response = await runtime.fetch(call.url, { method: call.method ?? 'GET', signal, ...sent(headers, body, streamed) })
      answer = await readJson(response, call, signal)
    } catch (error) {
      if (call.signal?.aborted) throw deadlineError(call)
      if (error instanceof ProviderError && error.kind !== 'timeout') throw error
      const failure = error instanceof ProviderError ? error : noAnswer(call, timeout.aborted, error)
      if (call.idempotent === false && !neverSent(error)) throw failure
      failures++
      if (failures >= policy.attempts) throw failure
      const delay = fullJitter(runtime, policy, failures)
      if (!(await waitToRetry(runtime, call, delay, policy.maxDelayMs, { attempt, failure: failure.kind }))) throw failure
      continue
    }
    if (answer.status === 411 && streamed) {
      // Length Required: the server refused the body before reading it, so sending it again, whole, is safe.
      streamed = false
      continue
    }
    if (!isTransient(answer.status, answer.body)) return answer
    const limit = answer.status === 429 && policy.rateLimited ? policy.rateLimited : undefined
    const tries = limit ? ++rateLimited : ++failures
    if (tries >= (limit ?? policy).attempts) return answer
    const asked = serverDelay(runtime, answer, call)
    const delay = asked ?? (limit ? equalJitter(runtime, limit, tries) : fullJitter(runtime, policy, tries))
    if (!(await waitToRetry(runtime, call, delay, (limit ?? policy).maxDelayMs, { attempt, status: answer.status }))) return answer
  }
}

function headersOf(call: JsonCall): Record<string, string> {
  const contentType = call.form ? 'application/x-www-form-urlencoded' : call.body !== undefined ? 'application/json' : undefined
  return { accept: 'application/json', ...(contentType && { 'content-type': contentType }), ...call.headers }
}

function bodyOf(call: JsonCall): string | JsonBody | undefined {
  if (call.form) return new URLSearchParams(call.form).toString()
  return call.body === undefined ? undefined : jsonBody(call.body)
}

/**
 * A body this large (two images, base64) is sent as a stream of chunks written as they go out. Runtimes hold a
 * whole body given as bytes or text several times over while sending it (Deno 2: about three copies), a stream
 * not at all. Where the runtime honours it (Node's undici, workerd) the stream is sent with its Content-Length;
 * Deno sends streams without one, as chunked transfer coding, which every HTTP/1.1 server must accept
 * (RFC 9112 §7.1), or as HTTP/2 DATA frames, where a length is optional (RFC 9113 §8.1.1). A server that still
 * refuses (411 Length Required) gets the body again, whole.
 */
const STREAM_FROM_BYTES = 64 * 1024

function sent(headers: Record<string, string>, body: string | JsonBody | undefined, streamed: boolean): RequestInit {
  if (body === undefined || typeof body === 'string') return { headers, body }
  if (!streamed) return { headers, body: body.bytes() }
  // duplex: what fetch asks of a streamed request body (undici requires it; the Fetch standard's RequestInit).
  return { headers: { ...headers, 'content-length': String(body.length) }, body: body.stream(), duplex: 'half' } as RequestInit
}

async function readJson(response: Response, call: JsonCall, signal: AbortSignal): Promise<JsonAnswer> {
  const bytes = await readCapped(response, call.maxResponseBytes, signal, tooLarge(call.maxResponseBytes))
  const ok = response.status >= 200 && response.status <= 299
  let body: unknown
  try {
    body = bytes.byteLength === 0 ? undefined : call.largeStrings ? parseJsonBytes(bytes) : JSON.parse(new TextDecoder().decode(bytes))
  } catch (error) {
    if (ok)
      throw new ProviderError('malformed', `${call.provider} answered HTTP ${response.status} with a body that is not JSON`, {
        cause: error,
      })
  }
  if (ok && body === undefined) throw new ProviderError('malformed', `${call.provider} answered HTTP ${response.status} with an empty body`)
  return { status: response.status, headers: response.headers, body }
}

/** Full jitter: a random wait up to the exponential step (network failures and 5xx). */
function fullJitter(runtime: ProviderRuntime, policy: { baseDelayMs: number; maxDelayMs: number }, tries: number): number {
  return runtime.random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (tries - 1))
}

/** Equal jitter: at least half the step, so a 429 is never retried at once. */
function equalJitter(runtime: ProviderRuntime, policy: { baseDelayMs: number; maxDelayMs: number }, tries: number): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (tries - 1))
  return step / 2 + (runtime.random() * step) / 2
}

/** The wait the answer asked for: `Retry-After` (seconds or an HTTP date), else what the body says. */
function serverDelay(runtime: ProviderRuntime, answer: JsonAnswer, call: JsonCall): number | undefined {
  const header = answer.headers.get('retry-after')?.trim()
  if (header && /^\d+$/.test(header)) return Number(header) * 1000
  if (header) {
    const at = Date.parse(header)
    if (Number.isFinite(at)) return Math.max(0, at - runtime.now())
  }
  const fromBody = call.serverDelayMs?.(answer)
  return fromBody !== undefined && Number.isFinite(fromBody) && fromBody >= 0 ? fromBody : undefined
}

/**
 * Waits before the next try, or answers false when the deadline would pass first (then the caller gives up
 * at once). Without a known deadline, a wait is capped at `capMs`.
 */
async function waitToRetry(
  runtime: ProviderRuntime,
  call: JsonCall,
  delayMs: number,
  capMs: number,
  context: Record<string, unknown>,
): Promise<boolean> {
  const left = call.remainingMs?.()
  const delay = Math.round(left === undefined ? Math.min(delayMs, capMs) : delayMs)
  if (left !== undefined && delay + (call.minAttemptMs ?? 1_000) > left) {
    runtime.log({
      level: 'warn',
      msg: 'provider asked for a wait past the deadline; not retrying',
      provider: call.provider,
      ...context,
      waitMs: delay,
      remainingMs: Math.round(left),
    })
    return false
  }
  runtime.log({ level: 'warn', msg: 'provider call failed; retrying', provider: call.provider, ...context, waitMs: delay })
  try {
    await runtime.sleep(delay, call.signal)
  } catch {
    throw deadlineError(call)
  }
  return true
}

/**
 * True when the request provably never reached the server: the connection was refused or the name did not
 * resolve (Node's undici puts the code on `cause`; Deno and others only say it in the message).
 */
export function neverSent(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && NOT_SENT_CODES.has(code)) return true
    if (NOT_SENT_MESSAGE.test(e.message)) return true
  }
  return false
}

const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'UND_ERR_CONNECT_TIMEOUT'])
// "bad port", "Requests to port N are blocked": the Fetch standard's blocked ports, refused before connecting.
const NOT_SENT_MESSAGE =
  /connection refused|ECONNREFUSED|ENOTFOUND|getaddrinfo|dns error|failed to lookup address|bad port|requests to port \d+ are blocked/i

function deadlineError(call: JsonCall): ProviderError {
  return new ProviderError('deadline', `${call.provider}: the generation deadline passed`)
}

function noAnswer(call: JsonCall, timedOut: boolean, cause: unknown): ProviderError {
  return timedOut
    ? new ProviderError('timeout', `${call.provider} did not answer within ${call.attemptTimeoutMs} ms`, { cause })
    : new ProviderError('network', `${call.provider} could not be reached: ${cause instanceof Error ? cause.message : String(cause)}`, {
        cause,
      })
}

/** A short excerpt of a provider's own words, for logs only (never shown to the caller). */
export function excerpt(value: unknown, max = 300): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value))
  return text.length > max ? `${text.slice(0, max)}…` : text
}

/** The error for an answer over `maxBytes`, as `readCapped` asks for it. */
export function tooLarge(maxBytes: number): (declared: number | null) => ProviderError {
  return (declared) =>
    new ProviderError(
      'too_large',
      declared !== null
        ? `the answer declares ${declared} bytes, more than the ${maxBytes} allowed`
        : `the answer is larger than the ${maxBytes} bytes allowed`,
    )
}
