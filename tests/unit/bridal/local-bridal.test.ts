import { beforeAll, describe, expect, it } from 'vitest'
import { createLocalPretreatment, trainFor } from '../../../shared/bridal/local-pretreatment.ts'
import { createLocalTrainScorer, measureTrain } from '../../../shared/bridal/local-scorer.ts'
import { generateWithTrain } from '../../../shared/bridal/pipeline.ts'
import type { BridalSteps, PretreatmentOutcome } from '../../../shared/bridal/ports.ts'
import { createDecodeBudget, decodeImage, encodeJpeg, type RgbaImage } from '../../../shared/images/codecs/index.ts'
import { padWithFloor } from '../../../shared/bridal/floor-room.ts'
import { analyseShopper, createLocalEngine, floorRowsIn, shopperPixels } from '../../../shared/engine/local/index.ts'
import type { GarmentShape } from '../../../shared/engine/local/garment-shape.ts'
import type { GeneratedImage, InputImage } from '../../../shared/engine/types.ts'
import { TryOnFailure } from '../../../shared/failure.ts'
import { toApiError } from '../../../shared/http/errors.ts'
import { withBridalScenario } from '../../../shared/tryon/engines.ts'
import { asInput, makeFlatImage, makeGarmentPhoto, makeShopperPhoto, type GarmentKind } from '../../support/images.ts'

const slate: [number, number, number] = [120, 128, 140]
const ivory: [number, number, number] = [242, 236, 224]
const shopper = makeShopperPhoto({ width: 400, height: 600, background: slate })
const person = asInput(shopper)
const cropped = asInput(makeShopperPhoto({ width: 400, height: 600, background: slate, fullLength: false }))
const nobody = asInput(makeFlatImage({ width: 400, height: 600, color: [200, 196, 190], format: 'jpeg' }))
const garment = (kind: GarmentKind) =>
  asInput(makeGarmentPhoto({ kind, color: ivory, width: 320, height: 320, transparentBackground: true }))
const gown = garment('gown-with-train')
/** The shopper photo with a third of the figure's height of plain floor added below the feet. */
const roomy = ((): InputImage => {
  const { pixels, geometry } = shopper
  const height = pixels.height + Math.round(0.33 * geometry.figureHeight)
  const data = new Uint8Array(pixels.width * height * 4)
  data.set(pixels.data)
  for (let i = pixels.data.length; i < data.length; i += 4) data.set([...slate, 255], i)
  return { bytes: encodeJpeg({ width: pixels.width, height, data }, 92), format: 'jpeg', width: pixels.width, height }
})()

const engine = createLocalEngine()
const local: BridalSteps = { pretreatment: createLocalPretreatment(), scorer: createLocalTrainScorer() }
const silent = () => {}

/** The shopper photo cut off `below` of the figure's height under the soles: feet in, hardly any floor. */
function withFloorRoom(below: number): InputImage {
  const { pixels, geometry } = shopper
  const height = Math.round(geometry.floorY + below * geometry.figureHeight)
  const image: RgbaImage = { width: pixels.width, height, data: pixels.data.slice(0, pixels.width * height * 4) }
  return { bytes: encodeJpeg(image, 92), format: 'jpeg', width: image.width, height }
}

async function generated(
  shopperPhoto: InputImage,
  product: InputImage,
  train?: { length: number; spread: number },
): Promise<GeneratedImage> {
  const outcome = await engine.generate({ person: shopperPhoto, garment: product, category: 'dress', train })
  if (outcome.kind !== 'generated') throw new Error(`${outcome.kind}: ${outcome.reason}`)
  return outcome.image
}

describe('local train pre-treatment', () => {
  it('prepares a train for a gown photographed with one, sized from the photo', async () => {
    const prepared = await local.pretreatment.prepare({ person: roomy, garment: gown })
    expect(prepared).toMatchObject({ kind: 'prepared', train: { length: expect.any(Number), spread: expect.any(Number) } })
    if (prepared.kind !== 'prepared') return
    expect(prepared.train.length).toBeGreaterThanOrEqual(0.12)
    expect(prepared.train.spread).toBeGreaterThanOrEqual(1.4)
    // The train fits on the floor in the photo: nothing to add to it.
    expect(prepared.person).toBeUndefined()
  })

  it.each<[GarmentKind, string]>([
    ['gown', 'dress'],
    ['dress', 'dress'],
    ['trousers', 'bottom'],
    ['tshirt', 'unknown'],
  ])('reports a %s as a garment with no train, tried on as a %s', async (kind, category) => {
    expect(await local.pretreatment.prepare({ person, garment: garment(kind) })).toEqual({
      kind: 'unavailable',
      reason: 'the garment has no train to render',
      category,
    })
  })

  it.each<[string, string]>([
    ['T-shirt', 'top'],
    ['Blazer', 'outerwear'],
    ['Pants', 'bottom'],
    ['Jeans', 'bottom'],
  ])('prepares no train for a product the caller names a %s, whatever its photo shows', async (clothingType, category) => {
    // A gown photographed with its train, named a top: the caller's word is taken (tuning studio 7603, a T-shirt spread
    // out, and 8218, white trousers, were read as gowns with trains and dressed as such).
    expect(await local.pretreatment.prepare({ person: roomy, garment: gown, clothingType })).toEqual({
      kind: 'unavailable',
      reason: 'the garment named has no train to render',
      category,
    })
  })

  it.each(['Wedding dress', 'Bridal gown', 'Skirt', 'Bridal skirt', 'Dress'])(
    'reads the train of a gown named %s',
    async (clothingType) => {
      expect(await local.pretreatment.prepare({ person: roomy, garment: gown, clothingType })).toMatchObject({ kind: 'prepared' })
    },
  )

  it('sizes the train longer the further it reaches past the hem in the product photo', () => {
    const shape = (hemRow: number): GarmentShape => ({
      top: 0,
      bottom: 200,
      hemRow,
      waistRow: 50,
      bodiceWidth: 40,
      lengthOverBodice: 5,
      skirtOverBodice: 3,
      flareBeyondTrend: 1.6,
      roundedEnd: 0.05,
      endRise: 0.1,
      hemOverBodice: 4,
      floorLength: true,
      hasTrain: true,
    })
    expect(trainFor(shape(140)).length).toBeGreaterThan(trainFor(shape(180)).length)
    expect(trainFor(shape(180)).spread).toBe(1.6)
  })

  it('reports unavailable when no gown stands out from the product photo, or it cannot be decoded', async () => {
    const flat = asInput(makeFlatImage({ width: 200, height: 200, color: [250, 250, 250] }))
    expect(await local.pretreatment.prepare({ person, garment: flat })).toMatchObject({ kind: 'unavailable' })
    const broken = { ...gown, bytes: new Uint8Array(2000).fill(1) }
    expect(await local.pretreatment.prepare({ person, garment: broken })).toMatchObject({ kind: 'unavailable' })
  })

  it('reports unavailable when the feet are not in the shopper photo, for every engine', async () => {
    for (const guidance of ['draws', 'prompt', 'none'] as const) {
      const outcome = await createLocalPretreatment({ guidance }).prepare({ person: cropped, garment: gown })
      expect(outcome, guidance).toEqual({ kind: 'unavailable', reason: 'the feet are not in the shopper photo' })
    }
  })

  it('needs the person found to draw a train, but leaves an engine it only asks to read the photo itself', async () => {
    expect(await createLocalPretreatment({ guidance: 'draws' }).prepare({ person: nobody, garment: gown })).toEqual({
      kind: 'unavailable',
      reason: 'no person was found in the shopper photo',
    })
    const asked = await createLocalPretreatment({ guidance: 'prompt' }).prepare({ person: nobody, garment: gown })
    expect(asked.kind).toBe('prepared')
    expect(asked.kind === 'prepared' && asked.person).toBeFalsy()
  })

  it('pads a photo with little floor below the feet with more floor, for every engine', async () => {
    const tight = withFloorRoom(0.03)
    for (const guidance of ['draws', 'prompt', 'none'] as const) {
      const outcome = await createLocalPretreatment({ guidance }).prepare({ person: tight, garment: gown })
      expect(outcome.kind, guidance).toBe('prepared')
      if (outcome.kind !== 'prepared' || !outcome.person) throw new Error(`${guidance}: no padded photo`)
      const padded = decodeImage(outcome.person.bytes, outcome.person.format)
      expect([padded.width, outcome.person.width]).toEqual([tight.width, tight.width])
      expect(padded.height).toBe(outcome.person.height)
      expect(padded.height - tight.height).toBeGreaterThanOrEqual(Math.floor(0.12 * shopper.geometry.figureHeight))
      // The added rows are floor: the colour of the photo's bottom corners, no stripes of the feet.
      const row = (padded.height - 2) * padded.width * 4
      for (const x of [0, padded.width >> 1, padded.width - 1]) {
        expect(Math.abs(padded.data[row + x * 4] - slate[0]), `x ${x}`).toBeLessThan(16)
      }
    }
  })
})

describe('floor added below a shopper photo', () => {
  it('is marked on the photo, and the photo reads as it was sent: the same figure, the same feet', async () => {
    const tight = withFloorRoom(0.03)
    const outcome = await createLocalPretreatment().prepare({ person: tight, garment: gown })
    if (outcome.kind !== 'prepared' || !outcome.person) throw new Error('no padded photo')
    expect(outcome.person.addedFloorRows).toBe(outcome.person.height - tight.height)
    const before = analyseShopper(shopperPixels(tight)).body
    const pixels = shopperPixels(outcome.person)
    const after = analyseShopper(pixels, floorRowsIn(outcome.person, pixels.height))
    expect(after.body.found && after.body.feetVisible).toBe(true)
    for (const landmark of ['headTop', 'shoulderY', 'floorY', 'centreX'] as const)
      expect(Math.abs(after.body[landmark] - before[landmark]), landmark).toBeLessThan(1.5)
    // The analysis image and its mask still cover the added rows, at the photo's scale.
    expect(after.small.height / after.small.width).toBeCloseTo(outcome.person.height / outcome.person.width, 1)
    expect(after.segmentation.mask.height).toBe(after.small.height)
  })

  it('is made at no more than engines take: a photo over 4096 px comes back at 4096, its added rows counted at that size', () => {
    const wide = asInput(makeFlatImage({ width: 6000, height: 400, color: [120, 110, 100], format: 'png' }))
    const budget = createDecodeBudget(240e6)
    const padded = padWithFloor({ ...wide, addedFloorRows: 30 }, 150, undefined, budget)
    expect(padded.width).toBe(4096)
    const photoRows = Math.round((400 * 4096) / 6000)
    expect(padded.height).toBe(photoRows + Math.round((150 * photoRows) / 400))
    expect(padded.addedFloorRows).toBeCloseTo(padded.height - photoRows + (30 * photoRows) / 400, 5)
    expect(budget.remaining).toBe(240e6 - 6000 * 400)
  })

  it('continues the floor below the feet, not the shoes', async () => {
    const tight = withFloorRoom(0.02)
    const outcome = await createLocalPretreatment().prepare({ person: tight, garment: gown })
    if (outcome.kind !== 'prepared' || !outcome.person) throw new Error('no padded photo')
    const padded = decodeImage(outcome.person.bytes, outcome.person.format)
    const row = (tight.height + 4) * padded.width * 4
    for (const box of shopper.geometry.shins) {
      const x = Math.round((box[0] + box[2]) / 2)
      expect(Math.abs(padded.data[row + x * 4] - slate[0]), `x ${x}`).toBeLessThan(16)
    }
  })
})

describe('local train scorer', () => {
  const scores: Record<string, number | null> = {}
  let train: { length: number; spread: number }
  beforeAll(async () => {
    const prepared = (await local.pretreatment.prepare({ person, garment: gown })) as Extract<PretreatmentOutcome, { kind: 'prepared' }>
    train = prepared.train
    const score = async (image: GeneratedImage, product: InputImage) => {
      const outcome = await local.scorer.score({ result: image, person, garment: product })
      return outcome.kind === 'scored' ? outcome.score : null
    }
    scores.train = await score(await generated(person, gown, train), gown)
    scores.noTrain = await score(await generated(person, gown), gown)
    scores.plainGown = await score(await generated(person, garment('gown')), garment('gown'))
  })

  it('scores a rendered train above the threshold and the same gown without one below it', () => {
    expect(scores.train).toBeGreaterThanOrEqual(0.5)
    expect(scores.noTrain).toBeLessThan(0.5)
    expect(scores.plainGown).toBeLessThan(0.5)
  })

  it('gives the same score for the same images, in [0, 1] with three decimals', async () => {
    const again = await local.scorer.score({ result: await generated(person, gown, train), person, garment: gown })
    expect(again).toEqual({ kind: 'scored', score: scores.train })
    for (const score of Object.values(scores)) {
      expect(score).toBeGreaterThanOrEqual(0)
      expect(score).toBeLessThanOrEqual(1)
      expect(Math.round(score! * 1000) / 1000).toBe(score)
    }
  })

  it('is unavailable when the result is framed differently from the shopper photo', async () => {
    const wider = makeShopperPhoto({ width: 500, height: 600, background: slate, format: 'jpeg' })
    expect(await local.scorer.score({ result: { bytes: wider.bytes, contentType: 'image/jpeg' }, person, garment: gown })).toEqual({
      kind: 'unavailable',
      reason: 'the result is framed differently from the shopper photo',
    })
  })

  it('is unavailable when no person is found in the shopper photo', async () => {
    const result = { bytes: nobody.bytes, contentType: 'image/jpeg' as const }
    expect(await local.scorer.score({ result, person: nobody, garment: gown })).toEqual({
      kind: 'unavailable',
      reason: 'no person was found in the shopper photo',
    })
  })

  it('is unavailable when the feet are not in the shopper photo', async () => {
    const result = { bytes: cropped.bytes, contentType: 'image/jpeg' as const }
    expect(await local.scorer.score({ result, person: cropped, garment: gown })).toEqual({
      kind: 'unavailable',
      reason: 'the feet are not in the shopper photo',
    })
  })

  it('is unavailable when there is no floor below the feet', () => {
    // The feet found, but standing on the bottom edge: less than 2% of the figure's height of floor below them.
    const { small, body } = analyseShopper(shopperPixels(person))
    const onTheEdge = { ...body, floorY: small.height - 1 - 0.01 * body.figureHeight }
    expect(measureTrain(small, small, ivory, onTheEdge)).toEqual({ unmeasurable: 'no-floor' })
    expect(measureTrain(small, small, ivory, body)).toEqual({ unmeasurable: 'legs-uncovered' })
  })

  it('is unavailable, not a confident score, when the result shows fabric on the floor but no gown on the legs', async () => {
    // The shopper as photographed, with an ivory fan laid on the floor around the feet: a "train" of no gown.
    const image = decodeImage(person.bytes, 'jpeg')
    const { geometry } = shopper
    for (let y = Math.round(geometry.ankleY); y < image.height; y++) {
      const half = 0.2 * geometry.figureHeight * Math.min(1, (y - geometry.ankleY) / (0.05 * geometry.figureHeight))
      for (let x = Math.round(geometry.centreX - half); x < geometry.centreX + half; x++) image.data.set(ivory, (y * image.width + x) * 4)
    }
    const result = { bytes: encodeJpeg(image, 92), contentType: 'image/jpeg' as const }
    expect(await local.scorer.score({ result, person, garment: gown })).toEqual({
      kind: 'unavailable',
      reason: 'the garment does not cover the legs in the result',
    })
  })

  it('is unavailable when the result cannot be decoded', async () => {
    const result = { bytes: new Uint8Array(3000).fill(9), contentType: 'image/jpeg' as const }
    expect(await local.scorer.score({ result, person, garment: gown })).toMatchObject({ kind: 'unavailable' })
  })
})

describe('local engine in wedding-dress mode', () => {
  it('draws no train when the feet are out of the photo, however it is asked', async () => {
    const asked = await generated(cropped, gown, { length: 0.2, spread: 1.8 })
    const plain = await generated(cropped, gown)
    expect(asked.bytes).toEqual(plain.bytes)
  })

  it('answers that nobody is there when it finds no person, rather than place the gown on a guess', async () => {
    expect(await engine.generate({ person: nobody, garment: gown, category: 'dress', train: { length: 0.2, spread: 1.8 } })).toMatchObject({
      kind: 'no_person',
    })
  })
})

describe('bridal verdict', () => {
  const request = () => ({ person, garment: gown, category: 'dress' as const })
  const scoreOf = async () =>
    (await generateWithTrain(engine, local, request(), { threshold: 0.5, log: silent, tryOnId: 't' })).bridal.trainScore

  it('applies the train at or above the threshold and not below it, on the same score', async () => {
    const score = (await scoreOf())!
    const at = await generateWithTrain(engine, local, request(), { threshold: score, log: silent, tryOnId: 't' })
    const above = await generateWithTrain(engine, local, request(), { threshold: score + 0.001, log: silent, tryOnId: 't' })
    expect(at.bridal).toEqual({ applied: true, trainScore: score, reason: 'train_rendered' })
    expect(above.bridal).toEqual({ applied: false, trainScore: score, reason: 'train_score_low' })
  })

  it('charges the pre-treatment row, not a refund, when the photo is cropped above the feet', async () => {
    const { bridal } = await generateWithTrain(
      engine,
      local,
      { ...request(), person: cropped },
      { threshold: 0.5, log: silent, tryOnId: 't' },
    )
    expect(bridal).toEqual({ applied: false, trainScore: null, reason: 'train_pretreatment_unavailable' })
  })

  it('generates and judges against the padded photo when the pre-treatment added floor room', async () => {
    const tight = withFloorRoom(0.03)
    const seen: InputImage[] = []
    const watching = { name: 'local', generate: (r: Parameters<typeof engine.generate>[0]) => (seen.push(r.person), engine.generate(r)) }
    const judged: InputImage[] = []
    const steps: BridalSteps = { ...local, scorer: { name: 'watch', score: async (r) => (judged.push(r.person), local.scorer.score(r)) } }
    const { image, bridal } = await generateWithTrain(
      watching,
      steps,
      { ...request(), person: tight },
      { threshold: 0.5, log: silent, tryOnId: 't' },
    )
    expect(seen[0].height).toBeGreaterThan(tight.height)
    expect(judged).toEqual(seen)
    expect(decodeImage(image.bytes, 'jpeg').height).toBe(seen[0].height)
    expect(bridal.reason).toBe('train_rendered')
  })

  it.each(['tshirt', 'dress'] as GarmentKind[])(
    'charges the pre-treatment row, not a refund, for a %s sent as a wedding dress, tried on as what it is',
    async (kind) => {
      const asked: unknown[] = []
      const watching = {
        name: 'local',
        generate: (r: Parameters<typeof engine.generate>[0]) => (asked.push([r.train, r.category]), engine.generate(r)),
      }
      const { bridal } = await generateWithTrain(
        watching,
        local,
        { person, garment: garment(kind), category: 'dress' },
        { threshold: 0.5, log: silent, tryOnId: 't' },
      )
      expect(bridal).toEqual({ applied: false, trainScore: null, reason: 'train_pretreatment_unavailable' })
      expect(asked).toEqual([[undefined, kind === 'dress' ? 'dress' : undefined]])
    },
  )

  it.each([
    ['Top', 'top'],
    ['Denim jacket', 'outerwear'],
    ['Wide-leg trousers', 'bottom'],
  ] as const)(
    'tries a garment named %s on as what the caller named it when the pre-treatment cannot read it',
    async (clothingType, category) => {
      const asked: unknown[] = []
      const watching = {
        name: 'local',
        generate: (r: Parameters<typeof engine.generate>[0]) => (asked.push([r.train, r.category]), engine.generate(r)),
      }
      const unread: BridalSteps = {
        ...local,
        pretreatment: { name: 'unread', prepare: async () => ({ kind: 'unavailable', reason: 'unclear' }) },
      }
      const { bridal } = await generateWithTrain(
        watching,
        unread,
        { person, garment: garment('tshirt'), category: 'dress', clothingType },
        { threshold: 0.5, log: silent, tryOnId: 't' },
      )
      expect(bridal.reason).toBe('train_pretreatment_unavailable')
      expect(asked).toEqual([[undefined, category]])
    },
  )

  it('keeps a gown the pre-treatment could not read, and that nobody named, a dress', async () => {
    const asked: unknown[] = []
    const watching = {
      name: 'local',
      generate: (r: Parameters<typeof engine.generate>[0]) => (asked.push(r.category), engine.generate(r)),
    }
    const unread: BridalSteps = {
      ...local,
      pretreatment: { name: 'unread', prepare: async () => ({ kind: 'unavailable', reason: 'unclear' }) },
    }
    await generateWithTrain(
      watching,
      unread,
      { person, garment: garment('dress'), category: 'dress' },
      { threshold: 0.5, log: silent, tryOnId: 't' },
    )
    expect(asked).toEqual(['dress'])
  })

  it('treats a prepared train of no length as the pre-treatment row', async () => {
    const steps: BridalSteps = {
      ...local,
      pretreatment: {
        name: 'zero',
        prepare: async ({ garment: g }) => ({ kind: 'prepared', garment: g, train: { length: 0, spread: 1 } }),
      },
    }
    const { bridal } = await generateWithTrain(engine, steps, request(), { threshold: 0.5, log: silent, tryOnId: 't' })
    expect(bridal).toEqual({ applied: false, trainScore: null, reason: 'train_pretreatment_unavailable' })
  })

  it('turns a crash of the pre-treatment into 503 bridal_preprocessing_failed before generating', async () => {
    let calls = 0
    const counting = { name: 'local', generate: (r: Parameters<typeof engine.generate>[0]) => (calls++, engine.generate(r)) }
    const crashing: BridalSteps = { ...local, pretreatment: { name: 'broken', prepare: () => Promise.reject(new Error('out of memory')) } }
    const error = await generateWithTrain(counting, crashing, request(), { threshold: 0.5, log: silent, tryOnId: 't' }).catch((e) => e)
    expect(error).toBeInstanceOf(TryOnFailure)
    expect(toApiError(error)).toMatchObject({ code: 'bridal_preprocessing_failed' })
    expect(calls).toBe(0)
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
