import { describe, expect, it } from 'vitest'
import { createDecodeBudget, decodeImage, encodeJpeg, type RgbaImage } from '../../../shared/images/codecs/index.ts'
import { createLocalEngine } from '../../../shared/engine/local/index.ts'
import type { EngineOutcome, GeneratedImage, InputImage, TryOnRequest } from '../../../shared/engine/types.ts'
import {
  asInput,
  encodeImage,
  makeFlatImage,
  makeGarmentPhoto,
  makeNoiseImage,
  makeShopperPhoto,
  type EncodedPhoto,
  type Rgb,
} from '../../support/images.ts'

const shopper = makeShopperPhoto({ width: 200, height: 300 })
const red: Rgb = [200, 30, 40]
const tshirt = makeGarmentPhoto({ kind: 'tshirt', color: red, width: 160, height: 160 })

function generate(request: Partial<TryOnRequest>): Promise<EngineOutcome<GeneratedImage>> {
  return createLocalEngine().generate({ person: asInput(shopper), garment: asInput(tshirt), category: undefined, ...request })
}

function generatedImage(outcome: EngineOutcome<GeneratedImage>): RgbaImage {
  if (outcome.kind !== 'generated') throw new Error(`expected a generated image, got ${outcome.kind}: ${outcome.reason}`)
  return decodeImage(outcome.image.bytes, 'jpeg')
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i])
}

/** The labelled format with its bytes spoiled: cut short, or a PNG chunk whose checksum no longer matches. */
function spoiled(photo: EncodedPhoto, how: 'truncated' | 'damaged'): InputImage {
  const bytes = how === 'truncated' ? photo.bytes.slice(0, photo.bytes.length >> 1) : photo.bytes.slice()
  if (how === 'damaged') bytes[bytes.length >> 1] ^= 0x55
  return { ...asInput(photo), bytes }
}

/** Share of pixels in the middle of the frame now near the garment's colour. */
function garmentShareAtCentre(image: RgbaImage, color: Rgb): number {
  let near = 0
  let total = 0
  for (let y = Math.floor(image.height * 0.3); y < image.height * 0.45; y++) {
    for (let x = Math.floor(image.width * 0.4); x < image.width * 0.6; x++) {
      const o = (y * image.width + x) * 4
      if (Math.hypot(image.data[o] - color[0], image.data[o + 1] - color[1], image.data[o + 2] - color[2]) < 60) near++
      total++
    }
  }
  return near / total
}

describe('local engine cancellation', () => {
  it('fails without work when the request was aborted before it started', async () => {
    const controller = new AbortController()
    controller.abort()
    expect(await generate({ signal: controller.signal })).toEqual({ kind: 'failed', reason: 'aborted' })
  })

  it('stops between stages when the request is aborted while it runs', async () => {
    const controller = new AbortController()
    const running = generate({ signal: controller.signal })
    controller.abort()
    expect(await running).toEqual({ kind: 'failed', reason: 'aborted' })
  })
})

describe('local engine with undecodable images', () => {
  const people = {
    jpeg: makeShopperPhoto({ width: 120, height: 180, format: 'jpeg' }),
    png: makeShopperPhoto({ width: 120, height: 180, format: 'png' }),
    webp: makeShopperPhoto({ width: 120, height: 180, format: 'webp' }),
  }

  it.each([
    ['a truncated JPEG', spoiled(people.jpeg, 'truncated')],
    ['a truncated PNG', spoiled(people.png, 'truncated')],
    ['a PNG with a damaged chunk', spoiled(people.png, 'damaged')],
    ['a truncated WebP', spoiled(people.webp, 'truncated')],
    ['PNG bytes labelled as JPEG', { ...asInput(people.png), format: 'jpeg' as const }],
  ])('refuses %s as the photo of the person, as invalid input', async (_, person) => {
    const outcome = await generate({ person })
    expect(outcome.kind).toBe('invalid_input')
    if (outcome.kind === 'invalid_input') expect(outcome.reason).toMatch(/^userPhoto could not be decoded/)
  })

  it.each([
    ['a truncated JPEG', spoiled(makeGarmentPhoto({ kind: 'jacket', color: red, width: 120, height: 120, format: 'jpeg' }), 'truncated')],
    ['a truncated WebP', spoiled(makeGarmentPhoto({ kind: 'jacket', color: red, width: 120, height: 120, format: 'webp' }), 'truncated')],
  ])('refuses %s as the product image, as invalid input', async (_, garment) => {
    const outcome = await generate({ garment })
    expect(outcome.kind).toBe('invalid_input')
    if (outcome.kind === 'invalid_input') expect(outcome.reason).toMatch(/^productImage could not be decoded/)
  })
})

describe('local engine with photos that are not a shopper and a garment', () => {
  it.each([
    ['random noise', makeNoiseImage({ width: 200, height: 300 })],
    ['an empty studio shot', makeFlatImage({ width: 200, height: 300, color: [236, 233, 228] })],
  ])('answers that nobody is there rather than dress a guessed figure when the person photo is %s', async (_, person) => {
    const outcome = await generate({ person: asInput(person) })
    expect(outcome).toEqual({ kind: 'no_person', reason: 'local engine: no person was found in the shopper photo' })
  })

  it.each([
    ['a flat colour', makeFlatImage({ width: 160, height: 160, color: [30, 140, 90] }), [30, 140, 90] as Rgb],
    ['random noise', makeNoiseImage({ width: 160, height: 160 }), undefined],
  ])('takes the whole picture as the garment when the product image is %s', async (_, product, color) => {
    const image = generatedImage(await generate({ garment: asInput(product) }))
    const plain = generatedImage(await generate({}))
    expect(image.data).not.toEqual(plain.data)
    if (color) expect(garmentShareAtCentre(image, color)).toBeGreaterThan(0.8)
  })

  it.each([
    [1, 1],
    [3, 2],
    [2, 600],
    [600, 2],
    [31, 400],
  ])('refuses a %ix%i person photo as invalid input, not a crash', async (width, height) => {
    const person = makeFlatImage({ width, height, color: [120, 130, 140] })
    const outcome = await generate({ person: asInput(person) })
    expect(outcome).toMatchObject({
      kind: 'invalid_input',
      reason: expect.stringMatching(new RegExp(`userPhoto.*${width}×${height} pixels, too small`)),
    })
  })

  it('tries a photo just wide enough, and refuses it only for want of a person', async () => {
    const outcome = await generate({ person: asInput(makeFlatImage({ width: 32, height: 400, color: [120, 130, 140] })) })
    expect(outcome).toEqual({ kind: 'no_person', reason: 'local engine: no person was found in the shopper photo' })
  })

  it('returns new bytes even when the garment adds nothing to the photo', async () => {
    // A shopper JPEG that re-encodes to itself, and a fully transparent garment: the dressed image is the photo.
    let person = encodeJpeg(makeShopperPhoto({ width: 140, height: 210 }).pixels, 88)
    for (let round = 0; round < 60; round++) person = encodeJpeg(decodeImage(person, 'jpeg'), 88)
    expect(sameBytes(encodeJpeg(decodeImage(person, 'jpeg'), 88), person)).toBe(true)
    const clear = { width: 64, height: 64, data: new Uint8Array(64 * 64 * 4) }
    const outcome = await generate({
      person: { bytes: person, format: 'jpeg', width: 140, height: 210 },
      garment: { bytes: encodeImage(clear, 'png'), format: 'png', width: 64, height: 64 },
    })
    expect(outcome.kind).toBe('generated')
    if (outcome.kind === 'generated') expect(sameBytes(outcome.image.bytes, person)).toBe(false)
  })
})

describe('the decode budget of a request in the local engine', () => {
  // A shopper on a studio backdrop, as PNG: a photo the engine can dress, so the whole request runs.
  const png = makeShopperPhoto({ width: 300, height: 400, format: 'png' })

  it('charges every decode to the request budget, at the size decoded', async () => {
    const budget = createDecodeBudget(1_000_000)
    const outcome = await generate({ person: asInput(png), garment: asInput(tshirt), decodeBudget: budget })
    expect(outcome.kind).toBe('generated')
    // The PNG at full size; the 160 × 160 JPEG garment at full size too (it is under the 768 px the engine wants).
    expect(budget.remaining).toBe(1_000_000 - 300 * 400 - 160 * 160)
  })

  it('refuses with invalid_input once the budget cannot pay for the next decode', async () => {
    const budget = createDecodeBudget(160 * 160 + 1000)
    const outcome = await generate({ person: asInput(png), garment: asInput(tshirt), decodeBudget: budget })
    expect(outcome).toMatchObject({ kind: 'invalid_input', reason: expect.stringMatching(/userPhoto.*budget/) })
  })

  it('decodes the product image first, so a broken one stops the request before the photo costs anything', async () => {
    const budget = createDecodeBudget(1_000_000)
    const outcome = await generate({ person: asInput(png), garment: spoiled(tshirt, 'truncated'), decodeBudget: budget })
    expect(outcome).toMatchObject({ kind: 'invalid_input', reason: expect.stringContaining('productImage') })
    // The cut JPEG's frame header was read (and charged) before its data ran out; the photo was never touched.
    expect(budget.remaining).toBe(1_000_000 - 160 * 160)
  })
})
