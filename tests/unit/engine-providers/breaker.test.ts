import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { withCircuitBreaker, type BreakerPolicy } from '../../../shared/engine/providers/breaker.ts'
import type { EngineOutcome, TryOnEngine } from '../../../shared/engine/types.ts'
import { providerResult, tryOn } from './support.ts'

const outage: EngineOutcome = { kind: 'failed', reason: 'fashn: network: refused', outage: true }
const ordinaryFailure: EngineOutcome = { kind: 'failed', reason: 'fashn: prediction ended as canceled' }
const generated: EngineOutcome = { kind: 'generated', image: { bytes: providerResult, contentType: 'image/jpeg' } }
const rejected: EngineOutcome = { kind: 'rejected', reason: 'fashn rejected the content' }
const policy: BreakerPolicy = { failures: 3, openMs: 30_000, modelNotServedOpenMs: 600_000 }

/** A provider answering what `next` says, counting calls; a virtual clock moved by hand. */
function setup(next: () => EngineOutcome | Promise<EngineOutcome>) {
  let now = 0
  let calls = 0
  const logs: Record<string, unknown>[] = []
  const provider: TryOnEngine = {
    name: 'fashn',
    async generate() {
      calls++
      return next()
    },
  }
  const engine = withCircuitBreaker(provider, { policy, now: () => now, log: (entry) => logs.push(entry) })
  return { engine, logs, calls: () => calls, advance: (ms: number) => (now += ms) }
}

describe('circuit breaker', () => {
  it('opens after N consecutive outages: the next request is skipped at once, without calling the provider', async () => {
    const s = setup(() => outage)
    for (let i = 0; i < 3; i++) expect(await s.engine.generate(tryOn())).toEqual(outage)
    expect(s.calls()).toBe(3)
    const skipped = await s.engine.generate(tryOn())
    expect(skipped).toEqual({ kind: 'failed', reason: 'fashn: skipped, circuit open after 3 consecutive outages' })
    expect(s.calls()).toBe(3)
    expect(s.logs).toContainEqual(expect.objectContaining({ msg: 'provider circuit open: skipping it', engine: 'fashn', forMs: 30_000 }))
  })

  it('counts only outages, consecutively: an answer of any other kind starts the count again', async () => {
    const answers = [outage, outage, ordinaryFailure, outage, outage, rejected, outage, outage, generated]
    const s = setup(() => answers.shift()!)
    for (let i = 0; i < 9; i++) await s.engine.generate(tryOn())
    expect(s.calls()).toBe(9)
  })

  it('after T lets exactly one request probe while the others are still skipped; a good answer closes it', async () => {
    let release: (outcome: EngineOutcome) => void = () => {}
    let answer: () => EngineOutcome | Promise<EngineOutcome> = () => outage
    const s = setup(() => answer())
    for (let i = 0; i < 3; i++) await s.engine.generate(tryOn())
    s.advance(29_999)
    await s.engine.generate(tryOn())
    expect(s.calls()).toBe(3)

    s.advance(1)
    answer = () => new Promise((resolve) => (release = resolve))
    const probe = s.engine.generate(tryOn())
    const during = await s.engine.generate(tryOn())
    expect(during).toMatchObject({ kind: 'failed', reason: expect.stringContaining('circuit open') })
    expect(s.calls()).toBe(4)
    release(generated)
    expect(await probe).toEqual(generated)

    answer = () => generated
    expect(await s.engine.generate(tryOn())).toEqual(generated)
    expect(s.calls()).toBe(5)
  })

  it('re-opens for another T when the probe fails', async () => {
    const s = setup(() => outage)
    for (let i = 0; i < 3; i++) await s.engine.generate(tryOn())
    s.advance(30_000)
    await s.engine.generate(tryOn())
    expect(s.calls()).toBe(4)
    s.advance(29_000)
    await s.engine.generate(tryOn())
    expect(s.calls()).toBe(4)
    s.advance(1_000)
    await s.engine.generate(tryOn())
    expect(s.calls()).toBe(5)
  })

  it('matches a reference model on random sequences of answers and clock moves (property)', async () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant('call' as const), answer: fc.constantFrom(outage, ordinaryFailure, generated, rejected) }),
      fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 40_000 }) }),
    )
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 60 }), async (steps) => {
        let answer: EngineOutcome = generated
        const s = setup(() => answer)
        // The model: consecutive outages, and the time until which calls are skipped.
        let consecutive = 0
        let openUntil: number | undefined
        let clock = 0
        let expectedCalls = 0
        for (const st of steps) {
          if (st.kind === 'wait') {
            s.advance(st.ms)
            clock += st.ms
            continue
          }
          answer = st.answer
          const skipped = openUntil !== undefined && clock < openUntil
          const outcome = await s.engine.generate(tryOn())
          if (skipped) {
            if (outcome.kind !== 'failed' || !outcome.reason.includes('circuit open')) return false
            continue
          }
          expectedCalls++
          if (st.answer === outage) {
            consecutive++
            if (openUntil !== undefined || consecutive >= policy.failures) openUntil = clock + policy.openMs
          } else {
            consecutive = 0
            openUntil = undefined
          }
        }
        return s.calls() === expectedCalls
      }),
      { numRuns: 200 },
    )
  })
})
