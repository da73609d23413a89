import { performance } from 'node:perf_hooks'
import { afterAll, describe, expect, it } from 'vitest'
import { createWorkerLocalSteps } from '../../../adapters/local-workers.ts'
import { createDecodeBudget } from '../../../shared/images/codecs/raster.ts'
import { inThreadLocalSteps } from '../../../shared/engine/local/steps.ts'
import { InputPreparationError, prepareInput } from '../../../shared/engine/providers/images.ts'
import { asInput, makeGarmentPhoto, makeShopperPhoto } from '../../support/images.ts'

describe('the local engine on worker threads (the Node dev stack)', () => {
  const workers = createWorkerLocalSteps({ threads: 1 })
  afterAll(() => workers.close())
  const person = asInput(makeShopperPhoto({ width: 1800, height: 2700, format: 'jpeg' }))
  const garment = asInput(makeGarmentPhoto({ kind: 'dress', color: [150, 30, 60], width: 900, height: 1200, format: 'png' }))

  it('generates the same bytes as in the thread, and charges what it decoded to the request budget', async () => {
    const here = createDecodeBudget(240e6)
    const there = createDecodeBudget(240e6)
    const expected = await inThreadLocalSteps().engine.generate({ person, garment, category: 'dress', decodeBudget: here })
    const actual = await workers.engine.generate({ person, garment, category: 'dress', decodeBudget: there })
    expect(actual.kind).toBe('generated')
    expect(actual).toEqual(expected)
    expect(there.remaining).toBe(here.remaining)
    expect(there.workSpent).toBe(here.workSpent)
    expect(there.workSpent).toBeGreaterThan(0)
  })

  it('leaves the event loop free while it decodes and renders: busy for under a fifth of the generation', async () => {
    await workers.engine.generate({ person, garment, category: 'dress' })
    const before = performance.eventLoopUtilization()
    const outcome = await workers.engine.generate({ person, garment, category: 'dress' })
    const used = performance.eventLoopUtilization(before)
    expect(outcome.kind).toBe('generated')
    expect(used.utilization).toBeLessThan(0.2)
  })

  it('measures a result there as in the thread (the quality check), charging its decodes to the request budget', async () => {
    const made = await inThreadLocalSteps().engine.generate({ person, garment, category: 'dress' })
    if (made.kind !== 'generated') throw new Error(made.kind)
    const job = { shopper: person, product: garment, result: made.image, category: 'dress' as const, weddingDress: false }
    const here = createDecodeBudget(240e6)
    const there = createDecodeBudget(240e6)
    const expected = await inThreadLocalSteps().measure({ ...job, decodeBudget: here })
    const actual = await workers.measure({ ...job, decodeBudget: there })
    expect(actual).toEqual(expected)
    expect(actual.measures).not.toEqual({})
    expect(there.remaining).toBe(here.remaining)
    expect(there.remaining).toBeLessThan(240e6)
    expect(there.workSpent).toBe(here.workSpent)
    // The caller's images are copied, not moved: they are still whole on this side.
    expect(person.bytes.byteLength).toBeGreaterThan(0)
    expect(made.image.bytes.byteLength).toBeGreaterThan(0)
  })

  it("answers a photo it cannot decode with the decoder's error", async () => {
    const broken = { ...person, bytes: person.bytes.subarray(0, 2000) }
    const made = { bytes: person.bytes, contentType: 'image/jpeg' as const }
    const job = { shopper: broken, product: garment, result: made, weddingDress: false }
    await expect(workers.measure(job)).rejects.toThrow()
  })

  it("prepares a train there as in the thread, the caller's clothingType included", async () => {
    const gown = asInput(makeGarmentPhoto({ kind: 'gown-with-train', color: [242, 236, 224], width: 600, height: 800, format: 'png' }))
    for (const clothingType of [undefined, 'Wedding dress', 'T-shirt', 'Jeans']) {
      const request = { person, garment: gown, clothingType }
      const expected = await inThreadLocalSteps().bridal('draws').pretreatment.prepare(request)
      const actual = await workers.bridal('draws').pretreatment.prepare(request)
      expect(actual.kind, String(clothingType)).toBe(expected.kind)
      if (actual.kind === 'unavailable') expect(actual).toEqual(expected)
    }
    // A top named so has no train, in a worker too (the message once left the name behind).
    expect(await workers.bridal('draws').pretreatment.prepare({ person, garment: gown, clothingType: 'T-shirt' })).toMatchObject({
      kind: 'unavailable',
      category: 'top',
    })
  })

  it('hands the shopper photo a pre-treatment decoded back to the request, so a provider re-encode decodes it no more', async () => {
    const budget = createDecodeBudget(240e6)
    const gown = asInput(makeGarmentPhoto({ kind: 'gown-with-train', color: [242, 236, 224], width: 600, height: 800, format: 'png' }))
    await workers.bridal('none').pretreatment.prepare({ person, garment: gown, decodeBudget: budget })
    const held = budget.copies?.get(person.bytes)
    expect(held && 'image' in held && held.image.width * held.image.height).toBeGreaterThan(0)
    const spent = budget.remaining
    const prepared = prepareInput(person, 'userPhoto', { formats: ['jpeg'], maxBytes: 10e6, maxLongSide: 1024 }, budget)
    expect(prepared.reencoded).toBe(true)
    expect(budget.remaining).toBe(spent)
  })

  it("re-encodes a provider's input image there as in the thread: the same bytes, the same decodes charged", async () => {
    const policy = { formats: ['jpeg', 'png'] as const, maxBytes: 4.5e6, maxLongSide: 1024 }
    const here = createDecodeBudget(240e6)
    const there = createDecodeBudget(240e6)
    const expected = prepareInput(person, 'userPhoto', policy, here)
    const actual = await workers.prepareImage(person, 'userPhoto', policy, there)
    expect(actual.reencoded).toBe(true)
    expect(actual).toEqual(expected)
    expect(there.remaining).toBe(here.remaining)
    expect(there.remaining).toBeLessThan(240e6)
    // The caller's photo is copied, not moved.
    expect(person.bytes.byteLength).toBeGreaterThan(0)
  })

  it("re-encodes from the request's decoded copy there too, decoding nothing more", async () => {
    const policy = { formats: ['jpeg'] as const, maxBytes: 10e6, maxLongSide: 1024 }
    const budget = createDecodeBudget(240e6)
    const gown = asInput(makeGarmentPhoto({ kind: 'gown-with-train', color: [242, 236, 224], width: 600, height: 800, format: 'png' }))
    await inThreadLocalSteps().bridal('none').pretreatment.prepare({ person, garment: gown, decodeBudget: budget })
    const spent = budget.remaining
    const inThread = prepareInput(person, 'userPhoto', policy, budget)
    expect(budget.remaining).toBe(spent)
    expect(await workers.prepareImage(person, 'userPhoto', policy, budget)).toEqual(inThread)
    expect(budget.remaining).toBe(spent)
  })

  it('answers an image it cannot decode as the thread does, for the provider adapters to answer invalid_input', async () => {
    const broken = { ...person, bytes: person.bytes.subarray(0, 2000) }
    const policy = { formats: ['jpeg'] as const, maxBytes: 1e6, maxLongSide: 512 }
    const thrown = await workers.prepareImage(broken, 'productImage', policy).catch((error) => error)
    expect(thrown).toBeInstanceOf(InputPreparationError)
    expect(thrown).toMatchObject({ field: 'productImage' })
  })

  it('runs the bridal steps there too', async () => {
    const { pretreatment, scorer } = workers.bridal('draws')
    const prepared = await pretreatment.prepare({ person, garment })
    expect(['prepared', 'unavailable']).toContain(prepared.kind)
    const broken = { ...garment, bytes: garment.bytes.subarray(0, 2000) }
    const scored = await scorer.score({ result: { bytes: person.bytes, contentType: 'image/jpeg' }, person, garment: broken })
    expect(scored.kind === 'unavailable' || scored.kind === 'scored').toBe(true)
  })
})
