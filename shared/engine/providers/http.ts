import type { ProviderRuntime } from './runtime.ts'
import { readCapped } from '../../http/read-capped.ts'

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
  /** Tries in all, the first included. */
  attempts: number
  baseDelayMs: number
  maxDelayMs: number
}

export const defaultRetry: RetryPolicy = { attempts: 4, baseDelayMs: 500, maxDelayMs: 8_000 }

export interface JsonCall {
  /** Names the provider in log lines. */
  provider: string
  url: string
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  /** Sent as JSON. */
  body?: unknown
  /** Sent as application/x-www-form-urlencoded instead of a JSON body. */
  form?: Record<string, string>
  /** The generation's deadline: once it aborts, nothing is retried. */
  signal?: AbortSignal
  /** One attempt (connect, headers and body) gives up after this long and counts as transient. */
  attemptTimeoutMs: number
  maxResponseBytes: number
  retry?: RetryPolicy
  /** Which answers deserve another attempt; by default 429 and 5xx. */
  isTransient?: (status: number, body: unknown) => boolean
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
 * jittered exponential backoff (at least the server's Retry-After), and never past the deadline. The last
 * answer is returned whatever its status; a 2xx that is not JSON, or no answer at all, throws ProviderError.
 */
export async function requestJson(runtime: ProviderRuntime, call: JsonCall): Promise<JsonAnswer> {
  const retry = call.retry ?? defaultRetry
  const isTransient = call.isTransient ?? ((status: number) => transientStatus(status))
  const headers = headersOf(call)
  const body = bodyOf(call)
  for (let attempt = 1; ; attempt++) {
    if (call.signal?.aborted) throw deadlineError(call)
    const timeout = AbortSignal.timeout(call.attemptTimeoutMs)
    const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout
    let answer: JsonAnswer
    try {
      const response = await runtime.fetch(call.url, { method: call.method ?? 'GET', headers, body, signal })
      answer = await readJson(response, call, signal)
    } catch (error) {
      if (call.signal?.aborted) throw deadlineError(call)
      if (error instanceof ProviderError && error.kind !== 'timeout') throw error
      const failure = error instanceof ProviderError ? error : noAnswer(call, timeout.aborted, error)
      if (attempt >= retry.attempts) throw failure
      runtime.log({ level: 'warn', msg: 'provider call failed; retrying', provider: call.provider, attempt, failure: failure.kind })
      await backoff(runtime, call, retry, attempt, null)
      continue
    }
    if (!isTransient(answer.status, answer.body) || attempt >= retry.attempts) return answer
    runtime.log({ level: 'warn', msg: 'provider answered a transient error; retrying', provider: call.provider, attempt, status: answer.status })
    await backoff(runtime, call, retry, attempt, answer.headers.get('retry-after'))
  }
}

function headersOf(call: JsonCall): Record<string, string> {
  const contentType = call.form ? 'application/x-www-form-urlencoded' : call.body !== undefined ? 'application/json' : undefined
  return { accept: 'application/json', ...(contentType && { 'content-type': contentType }), ...call.headers }
}

function bodyOf(call: JsonCall): string | undefined {
  if (call.form) return new URLSearchParams(call.form).toString()
  return call.body === undefined ? undefined : JSON.stringify(call.body)
}

async function readJson(response: Response, call: JsonCall, signal: AbortSignal): Promise<JsonAnswer> {
  const text = new TextDecoder().decode(await readCapped(response, call.maxResponseBytes, signal, tooLarge(call.maxResponseBytes)))
  const ok = response.status >= 200 && response.status <= 299
  let body: unknown
  try {
    body = text === '' ? undefined : JSON.parse(text)
  } catch (error) {
    if (ok) throw new ProviderError('malformed', `${call.provider} answered HTTP ${response.status} with a body that is not JSON`, { cause: error })
  }
  if (ok && body === undefined) throw new ProviderError('malformed', `${call.provider} answered HTTP ${response.status} with an empty body`)
  return { status: response.status, headers: response.headers, body }
}

/** Full jitter (a random delay up to the exponential step), never shorter than a Retry-After within the cap. */
async function backoff(runtime: ProviderRuntime, call: JsonCall, retry: RetryPolicy, attempt: number, retryAfter: string | null): Promise<void> {
  const step = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (attempt - 1))
  let delay = runtime.random() * step
  const serverSeconds = retryAfter !== null && /^\d+$/.test(retryAfter.trim()) ? Number(retryAfter) : NaN
  if (Number.isFinite(serverSeconds)) delay = Math.max(delay, Math.min(retry.maxDelayMs, serverSeconds * 1000))
  try {
    await runtime.sleep(Math.round(delay), call.signal)
  } catch {
    throw deadlineError(call)
  }
}

function deadlineError(call: JsonCall): ProviderError {
  return new ProviderError('deadline', `${call.provider}: the generation deadline passed`)
}

function noAnswer(call: JsonCall, timedOut: boolean, cause: unknown): ProviderError {
  return timedOut
    ? new ProviderError('timeout', `${call.provider} did not answer within ${call.attemptTimeoutMs} ms`, { cause })
    : new ProviderError('network', `${call.provider} could not be reached: ${cause instanceof Error ? cause.message : String(cause)}`, { cause })
}

/** A short excerpt of a provider's own words, for logs only (never shown to the caller). */
export function excerpt(value: unknown, max = 300): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value)
  return text.length > max ? `${text.slice(0, max)}…` : text
}

/** The error for an answer over `maxBytes`, as `readCapped` asks for it. */
export function tooLarge(maxBytes: number): (declared: number | null) => ProviderError {
  return (declared) =>
    new ProviderError('too_large', declared !== null
      ? `the answer declares ${declared} bytes, more than the ${maxBytes} allowed`
      : `the answer is larger than the ${maxBytes} bytes allowed`)
}
