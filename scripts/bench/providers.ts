/**
 * The providers' fakes with a fixed latency, for the "time we add" rows: Gemini and Vertex answer after
 * `latencyMs`; FASHN accepts a run at once and reports it `processing` until `latencyMs` after the run arrived,
 * then `completed` with a CDN URL. Every reply is the provider's documented wire format
 * (tests/support/provider-fakes.ts); nothing is recorded, so a long run does not fill the parent's memory.
 */
import { defaultPolling } from '../../shared/engine/providers/fashn.ts'
import { DEFAULT_MODELS } from '../../shared/engine/providers/settings.ts'
import { makeShopperPhoto } from '../../tests/support/images.ts'
import { gemini, geminiPath, startFakeServer, vertex, vertexPredictPath, type FakeServer } from '../../tests/support/provider-fakes.ts'

export type ProviderName = 'fashn' | 'vertex' | 'gemini'

export interface LatencyFakes {
  latencyMs: number
  /** The service's environment for TRYON_ENGINE=<provider> against its fake. */
  env(provider: ProviderName): Record<string, string>
  /** The provider's own time in one request, which the "added" figures subtract. */
  providerMs: number
  /** FASHN only: how long after completion the adapter's polling schedule looks again (one polling interval at most). */
  pollingOvershootMs: number
  /** FASHN only: the polling interval in which the prediction completes. */
  pollingIntervalMs: number
  close(): Promise<void>
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export async function startLatencyFakes(latencyMs = 3_000): Promise<LatencyFakes> {
  // What the providers return: a 768×1152 photo-like JPEG (about the size of a real try-on result).
  const result = makeShopperPhoto({ width: 768, height: 1152, format: 'jpeg', shirtColor: [30, 120, 200], seed: 5 }).bytes
  const google = await startFakeServer(
    (f) => {
      f.script(
        'POST',
        geminiPath(DEFAULT_MODELS.GEMINI_MODEL),
        async () => (await sleep(latencyMs), gemini.image(result, { mimeType: 'image/jpeg' })),
      )
      f.script('POST', vertexPredictPath('bench-project', 'us-central1'), async () => (await sleep(latencyMs), vertex.image(result)))
    },
    { record: false },
  )

  const startedAt = new Map<string, number>()
  let next = 0
  const fashn: FakeServer = await startFakeServer(
    (f) => {
      f.script('POST', '/v1/run', () => {
        const id = `bench-${++next}-u1`
        startedAt.set(id, performance.now())
        return { json: { id, error: null } }
      })
      f.script('GET', /^\/v1\/status\/[^/]+$/, (request) => {
        const id = decodeURIComponent(request.path.split('/').pop()!)
        const started = startedAt.get(id)
        if (started === undefined) return { status: 404, json: { error: 'NotFound', message: 'Prediction not found' } }
        if (performance.now() - started < latencyMs) return { json: { id, status: 'processing', error: null } }
        startedAt.delete(id)
        return { json: { id, status: 'completed', output: [`${f.url}/cdn/${id}/output_0.jpg`], error: null } }
      })
      f.script('GET', /^\/cdn\//, { bytes: result, contentType: 'image/jpeg' })
    },
    { record: false },
  )

  // The adapter's polling schedule (waits from the accepted run): the first poll at or after completion.
  let at = 0
  let wait = defaultPolling.firstMs
  while (at + wait < latencyMs) {
    at += wait
    wait = Math.min(defaultPolling.maxMs, wait * defaultPolling.factor)
  }
  return {
    latencyMs,
    providerMs: latencyMs,
    pollingOvershootMs: at + wait - latencyMs,
    pollingIntervalMs: wait,
    env(provider): Record<string, string> {
      const env: Record<ProviderName, Record<string, string>> = {
        fashn: { TRYON_ENGINE: 'fashn', FASHN_API_KEY: 'fa-bench', FASHN_BASE_URL: fashn.url },
        vertex: { TRYON_ENGINE: 'vertex', VERTEX_PROJECT: 'bench-project', VERTEX_ACCESS_TOKEN: 'ya29.bench', VERTEX_BASE_URL: google.url },
        gemini: { TRYON_ENGINE: 'gemini', GEMINI_API_KEY: 'AIza-bench', GEMINI_BASE_URL: google.url },
      }
      // FASHN answers with a result URL on the fake's loopback address, which the guarded download refuses otherwise.
      return { ...env[provider], TRYON_ALLOW_PRIVATE_IMAGE_HOSTS: '1' }
    },
    async close() {
      await Promise.all([google.close(), fashn.close()])
    },
  }
}
