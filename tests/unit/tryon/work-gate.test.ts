import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { TryOnFailure } from '../../../shared/failure.ts'
import { errorCatalogue, toApiError } from '../../../shared/http/errors.ts'
import { createWorkGate } from '../../../shared/tryon/work-gate.ts'

/** Work that runs until released, recording when it started. */
function heldWork(started: string[], name: string) {
  let release!: () => void
  const done = new Promise<void>((resolve) => (release = resolve))
  return {
    work: async () => {
      started.push(name)
      await done
      return name
    },
    release,
  }
}

const turn = () => new Promise((resolve) => setImmediate(resolve))

describe('the local work gate', () => {
  it('runs up to its concurrency, queues up to its queue, refuses the rest with 503 service_busy and Retry-After', async () => {
    const gate = createWorkGate({ concurrency: 2, queue: 1, retryAfterSeconds: 3 })
    const started: string[] = []
    const [a, b, c] = ['a', 'b', 'c'].map((name) => heldWork(started, name))
    const runs = [gate.run(a.work), gate.run(b.work), gate.run(c.work)]
    await expect.poll(() => started).toEqual(['a', 'b'])
    expect([gate.running, gate.queued]).toEqual([2, 1])

    const refused = await gate.run(async () => 'd').catch((error) => error)
    expect(refused).toBeInstanceOf(TryOnFailure)
    expect(toApiError(refused)).toMatchObject({ code: 'service_busy', status: 503, headers: { 'Retry-After': '3' } })
    expect(toApiError(refused).message).toBe(errorCatalogue.service_busy.message)

    a.release()
    await expect.poll(() => started).toEqual(['a', 'b', 'c'])
    expect([gate.running, gate.queued]).toEqual([2, 0])
    b.release()
    c.release()
    expect(await Promise.all(runs)).toEqual(['a', 'b', 'c'])
    expect([gate.running, gate.queued]).toEqual([0, 0])
  })

  it('lets admitted work wait whatever the queue holds, so a request is never refused halfway', async () => {
    const gate = createWorkGate({ concurrency: 1, queue: 0, retryAfterSeconds: 1 })
    const started: string[] = []
    const a = heldWork(started, 'a')
    const first = gate.run(a.work)
    await expect(gate.run(async () => 'refused')).rejects.toMatchObject({ kind: 'service_busy' })
    const admitted = gate.run(async () => 'scored', { admitted: true })
    a.release()
    expect(await Promise.all([first, admitted])).toEqual(['a', 'scored'])
  })

  it('drops queued work whose request was aborted, and frees its place', async () => {
    const gate = createWorkGate({ concurrency: 1, queue: 1, retryAfterSeconds: 1 })
    const started: string[] = []
    const a = heldWork(started, 'a')
    const first = gate.run(a.work)
    const abort = new AbortController()
    const queued = gate.run(async () => 'never', { signal: abort.signal })
    abort.abort(new Error('client gone'))
    await expect(queued).rejects.toThrow('client gone')
    expect(gate.queued).toBe(0)
    const next = gate.run(async () => 'next')
    a.release()
    expect(await Promise.all([first, next])).toEqual(['a', 'next'])
  })

  it('keeps its counts exact through any mix of work that succeeds, fails, or is refused (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 0, max: 3 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }),
        async (concurrency, queue, fails) => {
          const gate = createWorkGate({ concurrency, queue, retryAfterSeconds: 1 })
          let running = 0
          let most = 0
          const results = await Promise.allSettled(
            fails.map(async (fail) =>
              gate.run(async () => {
                running++
                most = Math.max(most, running)
                await turn()
                running--
                if (fail) throw new Error('work failed')
                return 'ok'
              }),
            ),
          )
          const refused = results.filter((r) => r.status === 'rejected' && r.reason instanceof TryOnFailure).length
          expect(most).toBeLessThanOrEqual(concurrency)
          expect(refused).toBe(Math.max(0, fails.length - concurrency - queue))
          expect([gate.running, gate.queued]).toEqual([0, 0])
        },
      ),
      { numRuns: 100, seed: 42 },
    )
  })
})
