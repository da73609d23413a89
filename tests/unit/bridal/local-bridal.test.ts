import { beforeAll, describe, expect, it } from 'vitest'
import { createLocalPretreatment, measureGown, trainFor } from '../../../shared/bridal/local-pretreatment.ts'
import { createLocalTrainScorer } from '../../../shared/bridal/local-scorer.ts'
import { generateWithTrain, withBridalScenario } from '../../../shared/bridal/pipeline.ts'
import type { BridalSteps } from '../../../shared/bridal/ports.ts'
import { createLocalEngine } from '../../../shared/engine/local/index.ts'
import { extractGarment } from '../../../shared/engine/local/garment.ts'
import type { InputImage } from '../../../shared/engine/types.ts'
import { ApiError } from '../../../shared/http/errors.ts'
import { asInput, makeFlatImage, makeGarmentPhoto, makeShopperPhoto, type GarmentKind } from '../../support/images.ts'

const slate: [number, number, number] = [120, 128, 140]
const ivory: [number, number, number] = [242, 236, 224]
const person = asInput(makeShopperPhoto({ width: 400, height: 600, background: slate }))
const cropped = asInput(makeShopperPhoto({ width: 400, height: 600, background: slate, fullLength: false }))
const garment = (kind: GarmentKind) => makeGarmentPhoto({ kind, color: ivory, width: 320, height: 320, transparentBackground: true })

const engine = createLocalEngine()
const local: BridalSteps = { pretreatment: createLocalPretreatment(), scorer: createLocalTrainScorer() }
const silent = () => {}

async function scoreOf(kind: GarmentKind, shopper: InputImage = person): Promise<number | null> {
  const { bridal } = await generateWithTrain(engine, local, { person: shopper, garment: asInput(garment(kind)), category: 'dress' }, { threshold: 0.5, log: silent, tryOnId: 't' })
  return bridal.trainScore
}

describe('local train pre-treatment', () => {
  it('reads a floor-length gown from its silhouette and a flared one as wider', () => {
    const train = measureGown(extractGarment(garment('gown-with-train').pixels))
    const plain = measureGown(extractGarment(garment('gown').pixels))
    const short = measureGown(extractGarment(garment('dress').pixels))
    expect(train.lengthOverTop).toBeGreaterThan(2.9)
    expect(plain.lengthOverTop).toBeGreaterThan(2.9)
    expect(short.lengthOverTop).toBeLessThan(2.9)
    expect(train.flare).toBeGreaterThan(plain.flare + 0.1)
  })

  it('sizes the train from the gown: longer and wider for a flared gown, none for a hem above the ankles', () => {
    const flared = trainFor({ lengthOverTop: 4, flare: 0.65 })
    const narrow = trainFor({ lengthOverTop: 4, flare: 0.44 })
    expect(flared.length).toBeGreaterThan(narrow.length)
    expect(flared.spread).toBeGreaterThan(narrow.spread)
    expect(narrow.length).toBeGreaterThan(0)
    expect(trainFor({ lengthOverTop: 2.5, flare: 0.75 })).toEqual({ length: 0, spread: 1 })
  })

  it('prepares a train for a gown and none for a T-shirt', async () => {
    const gown = await local.pretreatment.prepare({ person, garment: asInput(garment('gown-with-train')) })
    const shirt = await local.pretreatment.prepare({ person, garment: asInput(garment('tshirt')) })
    expect(gown).toMatchObject({ kind: 'prepared', train: { length: expect.any(Number), spread: expect.any(Number) } })
    expect(gown.kind === 'prepared' && gown.train.length).toBeGreaterThan(0.05)
    expect(shirt).toMatchObject({ kind: 'prepared', train: { length: 0, spread: 1 } })
  })

  it('reports unavailable when no gown stands out from the product photo, or it cannot be decoded', async () => {
    const flat = asInput(makeFlatImage({ width: 200, height: 200, color: [250, 250, 250] }))
    expect(await local.pretreatment.prepare({ person, garment: flat })).toMatchObject({ kind: 'unavailable' })
    const broken = { ...asInput(garment('gown')), bytes: new Uint8Array(2000).fill(1) }
    expect(await local.pretreatment.prepare({ person, garment: broken })).toMatchObject({ kind: 'unavailable' })
  })
})

describe('local train scorer', () => {
  const scores: Record<string, number | null> = {}
  beforeAll(async () => {
    for (const kind of ['gown-with-train', 'gown', 'dress', 'tshirt'] as GarmentKind[]) scores[kind] = await scoreOf(kind)
    scores.cropped = await scoreOf('gown-with-train', cropped)
  })

  it('scores a gown photographed with its train above the threshold', () => {
    expect(scores['gown-with-train']).toBeGreaterThanOrEqual(0.5)
  })

  it('orders the cases: train > plain gown > short dress, T-shirt and cropped photo, which score below the threshold', () => {
    expect(scores['gown-with-train']!).toBeGreaterThan(scores.gown!)
    expect(scores.gown!).toBeGreaterThan(scores.dress!)
    for (const low of ['dress', 'tshirt', 'cropped']) expect(scores[low], low).toBeLessThan(0.5)
  })

  it('gives the same score for the same images', async () => {
    expect(await scoreOf('gown-with-train')).toBe(scores['gown-with-train'])
    expect(await scoreOf('dress')).toBe(scores.dress)
  })

  it('keeps every score in [0, 1] with three decimals', () => {
    for (const score of Object.values(scores)) {
      expect(score).toBeGreaterThanOrEqual(0)
      expect(score).toBeLessThanOrEqual(1)
      expect(Math.round(score! * 1000) / 1000).toBe(score)
    }
  })

  it('reports unavailable when the result cannot be decoded', async () => {
    const result = { bytes: new Uint8Array(3000).fill(9), contentType: 'image/jpeg' as const }
    expect(await local.scorer.score({ result, person, garment: asInput(garment('gown')) })).toMatchObject({ kind: 'unavailable' })
  })
})

describe('bridal verdict', () => {
  const request = () => ({ person, garment: asInput(garment('gown-with-train')), category: 'dress' as const })

  it('applies the train at or above the threshold and not below it, on the same score', async () => {
    const score = (await scoreOf('gown-with-train'))!
    const at = await generateWithTrain(engine, local, request(), { threshold: score, log: silent, tryOnId: 't' })
    const above = await generateWithTrain(engine, local, request(), { threshold: Math.min(1, score + 0.001), log: silent, tryOnId: 't' })
    expect(at.bridal).toEqual({ applied: true, trainScore: score, reason: 'train_rendered' })
    expect(above.bridal).toEqual({ applied: false, trainScore: score, reason: 'train_score_low' })
  })

  it('turns a crash of the pre-treatment into 503 bridal_preprocessing_failed before generating', async () => {
    let generated = 0
    const counting = { name: 'local', generate: (r: Parameters<typeof engine.generate>[0]) => (generated++, engine.generate(r)) }
    const crashing: BridalSteps = { ...local, pretreatment: { name: 'broken', prepare: () => Promise.reject(new Error('out of memory')) } }
    const error = await generateWithTrain(counting, crashing, request(), { threshold: 0.5, log: silent, tryOnId: 't' }).catch((e) => e)
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({ code: 'bridal_preprocessing_failed' })
    expect(generated).toBe(0)
  })

  it('treats a scorer that throws or answers NaN as unavailable (score null, delivered)', async () => {
    for (const score of [() => Promise.reject(new Error('model offline')), async () => ({ kind: 'scored' as const, score: Number.NaN })]) {
      const steps: BridalSteps = { ...local, scorer: { name: 'broken', score } }
      const { bridal } = await generateWithTrain(engine, steps, request(), { threshold: 0.5, log: silent, tryOnId: 't' })
      expect(bridal).toEqual({ applied: true, trainScore: null, reason: 'score_unavailable' })
    }
  })

  it('forces a low score at half the threshold, whatever the threshold', async () => {
    for (const threshold of [0.5, 0.8]) {
      const steps = withBridalScenario(local, 'train_score_low', threshold)
      const { bridal } = await generateWithTrain(engine, steps, request(), { threshold, log: silent, tryOnId: 't' })
      expect(bridal).toEqual({ applied: false, trainScore: threshold / 2, reason: 'train_score_low' })
    }
  })

  it('generates the gown without a train when the pre-treatment is unavailable', async () => {
    const trains: unknown[] = []
    const watching = { name: 'local', generate: (r: Parameters<typeof engine.generate>[0]) => (trains.push(r.train), engine.generate(r)) }
    const steps = withBridalScenario(local, 'train_pretreatment_unavailable', 0.5)
    const { bridal } = await generateWithTrain(watching, steps, request(), { threshold: 0.5, log: silent, tryOnId: 't' })
    expect(bridal).toEqual({ applied: false, trainScore: null, reason: 'train_pretreatment_unavailable' })
    expect(trains).toEqual([undefined])
  })
})
