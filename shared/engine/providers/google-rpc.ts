import type { JsonAnswer } from './http.ts'
import { asArray, asRecord } from './json.ts'

/**
 * The wait a Google API asks for after a 429: not a Retry-After header but an entry of `error.details[]` typed
 * `type.googleapis.com/google.rpc.RetryInfo` whose `retryDelay` is a protobuf Duration in JSON ("5s", "0.5s",
 * "1.250s"). Shape as the Gemini API answers it (seen in langchain-ai/langchain-google issue #945; the type is
 * google/rpc/error_details.proto). Undefined when the answer names no wait.
 */
export function googleRetryDelayMs(answer: JsonAnswer): number | undefined {
  for (const detail of asArray(asRecord(asRecord(answer.body).error).details)) {
    const record = asRecord(detail)
    if (typeof record['@type'] !== 'string' || !record['@type'].endsWith('google.rpc.RetryInfo')) continue
    const delay = record.retryDelay
    // The JSON form of a Duration is seconds with up to nine decimals and an "s"; an object form is tolerated too.
    if (typeof delay === 'string') {
      const match = /^(\d{1,9})(?:\.(\d{1,9}))?s$/.exec(delay.trim())
      if (match) return Number(match[1]) * 1000 + Math.round(Number(`0.${match[2] ?? '0'}`) * 1000)
    } else {
      const { seconds, nanos } = asRecord(delay)
      const s = Number(seconds ?? 0)
      const n = Number(nanos ?? 0)
      if (Number.isFinite(s) && Number.isFinite(n) && s >= 0 && n >= 0 && (seconds !== undefined || nanos !== undefined))
        return s * 1000 + Math.round(n / 1e6)
    }
  }
  return undefined
}
