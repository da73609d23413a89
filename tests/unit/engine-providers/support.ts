import { providerRuntime, type ProviderRuntime } from '../../../shared/engine/providers/runtime.ts'
import { createImageFetcher } from '../../../shared/images/fetch.ts'
import type { InputImage, TryOnRequest } from '../../../shared/engine/types.ts'
import { asInput, makeGarmentPhoto, makeShopperPhoto } from '../../support/images.ts'

export interface TestRuntime {
  runtime: ProviderRuntime
  logs: Record<string, unknown>[]
  /** Every wait the adapter asked for, in order (nothing actually waits). */
  sleeps: number[]
  advance(ms: number): void
}

/**
 * Waits return at once (after one turn of the event loop) and are recorded; the clock is virtual: a wait moves
 * it by its length, and `advance` moves it by hand.
 */
export function testRuntime(overrides: Partial<ProviderRuntime> = {}): TestRuntime {
  const logs: Record<string, unknown>[] = []
  const sleeps: number[] = []
  let now = Date.parse('2026-11-23T10:00:00Z')
  const runtime = providerRuntime({
    sleep: async (ms, signal) => {
      sleeps.push(ms)
      now += ms
      await new Promise((resolve) => setImmediate(resolve))
      if (signal?.aborted) throw signal.reason
    },
    random: () => 0.5,
    now: () => now,
    log: (entry) => logs.push(entry),
    // The fakes serve results from 127.0.0.1, as TRYON_ALLOW_PRIVATE_IMAGE_HOSTS=1 lets a local stack do.
    fetchImage: createImageFetcher({ fetch: overrides.fetch ?? ((input, init) => globalThis.fetch(input, init)), allowPrivateHosts: true }),
    ...overrides,
  })
  return { runtime, logs, sleeps, advance: (ms) => (now += ms) }
}

export const person: InputImage = asInput(makeShopperPhoto({ width: 120, height: 200, format: 'jpeg' }))
export const garment: InputImage = asInput(
  makeGarmentPhoto({ kind: 'tshirt', color: [30, 90, 200], width: 120, height: 120, format: 'png' }),
)
/** What providers send back: a distinct image, so a test can tell the result from the inputs. */
export const providerResult = makeShopperPhoto({ width: 96, height: 160, format: 'jpeg', shirtColor: [200, 30, 30], seed: 7 }).bytes

export function tryOn(overrides: Partial<TryOnRequest> = {}): TryOnRequest {
  return { person, garment, category: 'top', clothingType: 'T-shirt', ...overrides }
}

/** A deadline `ms` ahead on the test runtime's virtual clock (the signal never fires: only time left is known). */
export function within(t: TestRuntime, ms: number): Pick<TryOnRequest, 'remainingMs'> {
  const endsAt = t.runtime.now() + ms
  return { remainingMs: () => endsAt - t.runtime.now() }
}

/** Everything the adapters logged, as one string: provider wording must show up here and nowhere else. */
export const logText = (logs: Record<string, unknown>[]) => JSON.stringify(logs)
