import type { Logger } from '../../log.ts'
import type { EngineOutcome, TryOnEngine, TryOnRequest } from '../types.ts'

/**
 * TRYON_ENGINE=fashn,gemini: engines tried in order. The next one runs only after a `failed` outcome (provider
 * down, rate-limited past its retries, timed out, answered nonsense); a content rejection or an input refusal
 * is final, since another engine would be asked to do what the first one refused. Every engine but the last
 * gets at most an equal share of the generation budget, so a hanging provider leaves time for the next.
 * The image records which engine made it.
 */
export function createEngineChain(engines: TryOnEngine[], options: { budgetMs: number; log: Logger; now?: () => number }): TryOnEngine {
  if (engines.length === 1) return engines[0]
  const share = Math.floor(options.budgetMs / engines.length)
  const now = options.now ?? Date.now
  return {
    name: engines.map((e) => e.name).join(','),
    after(name) {
      const index = engines.findIndex((engine) => engine.name === name)
      return index >= 0 && index < engines.length - 1 ? createEngineChain(engines.slice(index + 1), options) : undefined
    },
    async generate(request: TryOnRequest): Promise<EngineOutcome> {
      let outcome: EngineOutcome = { kind: 'failed', reason: 'no engine ran' }
      for (const [index, engine] of engines.entries()) {
        const last = index === engines.length - 1
        const endsAt = now() + share
        // A timer we hold and clear: Node 20 may collect an AbortSignal.timeout that only AbortSignal.any refers to,
        // and then the share never ends (nodejs/node#57736).
        const shareEnded = new AbortController()
        const timer = last ? undefined : setTimeout(() => shareEnded.abort(new DOMException('the share ended', 'TimeoutError')), share)
        const signal = last ? request.signal : AbortSignal.any([shareEnded.signal, ...(request.signal ? [request.signal] : [])])
        const remainingMs = last ? request.remainingMs : () => Math.min(endsAt - now(), request.remainingMs?.() ?? Infinity)
        try {
          outcome = await engine.generate({ ...request, signal, remainingMs })
        } finally {
          clearTimeout(timer)
        }
        if (outcome.kind === 'generated')
          return { kind: 'generated', image: { ...outcome.image, engine: outcome.image.engine ?? engine.name } }
        if (outcome.kind !== 'failed' || last || request.signal?.aborted) return outcome
        options.log({
          level: 'warn',
          msg: 'engine failed; falling back to the next',
          engine: engine.name,
          next: engines[index + 1].name,
          reason: outcome.reason,
        })
      }
      return outcome
    },
  }
}
