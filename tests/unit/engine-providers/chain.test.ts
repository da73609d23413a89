import { describe, expect, it } from 'vitest'
import { createEngineChain } from '../../../shared/engine/providers/chain.ts'
import type { EngineOutcome, TryOnEngine, TryOnRequest } from '../../../shared/engine/types.ts'
import { providerResult, tryOn } from './support.ts'

/** An engine answering a fixed outcome and counting its calls; `hang` waits for its signal like a slow provider. */
function engine(name: string, outcome: EngineOutcome | 'hang'): TryOnEngine & { calls: TryOnRequest[] } {
  const calls: TryOnRequest[] = []
  return {
    name,
    calls,
    async generate(request) {
      calls.push(request)
      if (outcome !== 'hang') return outcome
      await new Promise((resolve) => request.signal!.addEventListener('abort', resolve, { once: true }))
      return { kind: 'failed', reason: `${name}: deadline` }
    },
  }
}

const image = { bytes: providerResult, contentType: 'image/jpeg' as const }
const failed: EngineOutcome = { kind: 'failed', reason: 'provider down' }

describe('fallback chain', () => {
  it('tries the next engine after a failure and records which engine produced the image', async () => {
    const logs: Record<string, unknown>[] = []
    const first = engine('fashn', failed)
    const second = engine('gemini', { kind: 'generated', image })
    const chain = createEngineChain([first, second], { budgetMs: 120_000, log: (e) => logs.push(e) })

    expect(chain.name).toBe('fashn,gemini')
    expect(await chain.generate(tryOn())).toEqual({ kind: 'generated', image: { ...image, engine: 'gemini' } })
    expect([first.calls.length, second.calls.length]).toEqual([1, 1])
    expect(logs).toContainEqual(
      expect.objectContaining({ msg: 'engine failed; falling back to the next', engine: 'fashn', next: 'gemini' }),
    )
  })

  it.each<EngineOutcome>([
    { kind: 'rejected', reason: 'moderation' },
    { kind: 'invalid_input', reason: 'no pose' },
  ])('stops at a $kind outcome: another engine is not asked to do what the first refused', async (outcome) => {
    const second = engine('gemini', { kind: 'generated', image })
    const chain = createEngineChain([engine('fashn', outcome), second], { budgetMs: 120_000, log: () => {} })
    expect(await chain.generate(tryOn())).toEqual(outcome)
    expect(second.calls).toHaveLength(0)
  })

  it('gives a hanging engine only its share of the budget, leaving the rest to the next', async () => {
    const first = engine('fashn', 'hang')
    const second = engine('gemini', { kind: 'generated', image })
    const deadline = AbortSignal.timeout(5_000)
    const chain = createEngineChain([first, second], { budgetMs: 400, log: () => {} })
    const outcome = await chain.generate(tryOn({ signal: deadline }))
    expect(outcome.kind === 'generated' && outcome.image.engine).toBe('gemini')
    expect(first.calls[0].signal).not.toBe(deadline)
    expect(second.calls[0].signal).toBe(deadline)
  })

  it('returns the last failure when every engine fails, and stops once the deadline has passed', async () => {
    const chain = createEngineChain([engine('fashn', failed), engine('vertex', { kind: 'failed', reason: 'vertex down' })], {
      budgetMs: 1000,
      log: () => {},
    })
    expect(await chain.generate(tryOn())).toEqual({ kind: 'failed', reason: 'vertex down' })

    const gone = new AbortController()
    gone.abort()
    const second = engine('gemini', { kind: 'generated', image })
    const late = createEngineChain([engine('fashn', failed), second], { budgetMs: 1000, log: () => {} })
    expect(await late.generate(tryOn({ signal: gone.signal }))).toEqual(failed)
    expect(second.calls).toHaveLength(0)
  })

  it('tells each engine but the last the time left in its share, and the last the request’s own', async () => {
    let now = 1_000
    const first = engine('fashn', failed)
    const second = engine('gemini', { kind: 'generated', image })
    const chain = createEngineChain([first, second], { budgetMs: 100_000, log: () => {}, now: () => now })
    const remainingMs = () => 80_000 - now
    await chain.generate(tryOn({ remainingMs }))
    expect(first.calls[0].remainingMs!()).toBe(50_000)
    now += 45_000
    expect(first.calls[0].remainingMs!()).toBe(5_000)
    expect(second.calls[0].remainingMs).toBe(remainingMs)

    // The request's own deadline comes first when it is nearer than the share's end.
    await chain.generate(tryOn({ remainingMs: () => 66_000 - now }))
    expect(first.calls[1].remainingMs!()).toBe(20_000)
  })

  it('is the engine itself when there is only one', () => {
    const only = engine('fashn', failed)
    expect(createEngineChain([only], { budgetMs: 1000, log: () => {} })).toBe(only)
  })

  it('keeps the engine an inner engine already recorded', async () => {
    const chain = createEngineChain([engine('a', failed), engine('b', { kind: 'generated', image: { ...image, engine: 'inner' } })], {
      budgetMs: 1000,
      log: () => {},
    })
    const outcome = await chain.generate(tryOn())
    expect(outcome.kind === 'generated' && outcome.image.engine).toBe('inner')
  })
})
