import type { EngineOutcome, NoImageOutcome, ResultImage, TryOnEngine, TryOnRequest } from '../types.ts'
import { ProviderError, transientStatus, type ProviderFailureKind } from './http.ts'
import { describeField, InputPreparationError } from './images.ts'
import type { ProviderRuntime } from './runtime.ts'

/**
 * Anything an adapter's call chain threw, as an outcome billing can settle on: an image we could not prepare
 * is the caller's (400), everything else is ours or the provider's (500). Provider wording goes to the log only.
 */
function outcomeOfError(engine: string, error: unknown, runtime: ProviderRuntime): NoImageOutcome {
  if (error instanceof InputPreparationError) {
    runtime.log({
      level: 'warn',
      msg: 'input image could not be prepared for the provider',
      engine,
      field: error.field,
      error: error.message,
    })
    return { kind: 'invalid_input', reason: `${describeField(error.field)} could not be decoded` }
  }
  if (error instanceof ProviderError) {
    runtime.log({
      level: error.kind === 'deadline' ? 'warn' : 'error',
      msg: 'provider call failed',
      engine,
      failure: error.kind,
      error: error.message,
    })
    return { kind: 'failed', reason: `${engine}: ${error.kind}: ${error.message}`, ...(OUTAGE_KINDS.has(error.kind) && { outage: true }) }
  }
  runtime.log({
    level: 'error',
    msg: 'provider adapter failed unexpectedly',
    engine,
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  })
  return { kind: 'failed', reason: `${engine}: unexpected error` }
}

/** A provider adapter as an engine: whatever its call chain throws is answered as an outcome, never thrown on. */
export function providerEngine<Image extends ResultImage>(
  engine: string,
  runtime: ProviderRuntime,
  generate: (request: TryOnRequest) => Promise<EngineOutcome<Image>>,
): TryOnEngine<Image> {
  return {
    name: engine,
    async generate(request) {
      try {
        return await generate(request)
      } catch (error) {
        return outcomeOfError(engine, error, runtime)
      }
    },
  }
}

/** The provider said no to the content: logged with its words, answered with ours (422). */
export function rejected(engine: string, runtime: ProviderRuntime, detail: Record<string, unknown>): NoImageOutcome {
  runtime.log({ level: 'warn', msg: 'provider rejected the content', engine, ...detail })
  return { kind: 'rejected', reason: `${engine} rejected the content` }
}

/** The provider could not generate: logged with its words (500, refunded; a chain tries the next engine). */
export function failed(engine: string, runtime: ProviderRuntime, why: string, detail: Record<string, unknown> = {}): NoImageOutcome {
  runtime.log({ level: 'error', msg: 'provider failed', engine, why, ...detail })
  return { kind: 'failed', reason: `${engine}: ${why}` }
}

/** A provider's error answer: 429 and 5xx (still there after the retries) say it is down or saturated. */
export function failedAnswer(
  engine: string,
  runtime: ProviderRuntime,
  status: number,
  why: string,
  detail: Record<string, unknown> = {},
): NoImageOutcome {
  runtime.log({ level: 'error', msg: 'provider failed', engine, why, status, ...detail })
  return { kind: 'failed', reason: `${engine}: ${why}`, ...(transientStatus(status) && { outage: true }) }
}

/**
 * The provider does not serve the configured model (404 NOT_FOUND): a configuration error, never retried; the
 * breaker opens at once and the operator's notice (which setting, what to set instead) is logged by model-watch.ts.
 */
export function modelNotServed(engine: string, runtime: ProviderRuntime, detail: Record<string, unknown> = {}): NoImageOutcome {
  runtime.log({ level: 'error', msg: 'provider failed', engine, why: 'the model is not served (404 NOT_FOUND)', status: 404, ...detail })
  return { kind: 'failed', reason: `${engine}: the configured model is not served (404 NOT_FOUND)`, modelNotServed: true }
}

/** No answer in time, or none at all: the provider is unreachable or too slow. */
const OUTAGE_KINDS = new Set<ProviderFailureKind>(['deadline', 'timeout', 'network'])
