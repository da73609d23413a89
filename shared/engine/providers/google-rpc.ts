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

/**
 * A Google API's answer that the model named in the URL is not served: 404 with status NOT_FOUND, in any of its
 * wordings: a shut-down model on the Gemini API ("This model models/<id> is no longer available. Please update your
 * code to use a newer model…"), an id it never knew ("models/<id> is not found for API version v1beta, or is not
 * supported for generateContent…"), and Vertex AI's "Publisher Model `projects/…/models/<id>` was not found or your
 * project does not have access to it" (seen in genkit-ai/genkit#4688). A configuration error: retrying cannot help.
 */
export function modelNotFound(answer: JsonAnswer): boolean {
  const error = asRecord(asRecord(answer.body).error)
  return answer.status === 404 && error.status === 'NOT_FOUND' && typeof error.message === 'string' && /\bmodels?\b/i.test(error.message)
}
