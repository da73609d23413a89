import { describe, expect, it } from 'vitest'
import type { GarmentKind } from '../../../devstack/samples/garment-photo.ts'
import { decodeImage, type RgbaImage } from '../../../shared/images/codecs/index.ts'
import { createLocalEngine } from '../../../shared/engine/local/index.ts'
import type { EngineOutcome, GarmentCategory, GeneratedImage, TryOnRequest } from '../../../shared/engine/types.ts'
import type { ImageFormat } from '../../../shared/images/types.ts'
import { asInput, makeGarmentPhoto, makeShopperPhoto, type Box, type Rgb } from '../../support/images.ts'

const shopper = makeShopperPhoto({ width: 300, height: 450 })
const { geometry } = shopper
const red: Rgb = [200, 30, 40]
const green: Rgb = [40, 170, 60]

function garment(kind: GarmentKind, color: Rgb = red, format?: ImageFormat, transparentBackground = false) {
  return makeGarmentPhoto({ kind, color, width: 240, height: 240, format, transparentBackground })
}

async function dress(request: Partial<TryOnRequest> & Pick<TryOnRequest, 'garment'>): Promise<{ bytes: Uint8Array; image: RgbaImage }> {
  const outcome: EngineOutcome<GeneratedImage> = await createLocalEngine().generate({
    person: asInput(shopper),
    category: undefined,
    ...request,
  })
  if (outcome.kind !== 'generated') throw new Error(`expected a generated image, got ${outcome.kind}: ${outcome.reason}`)
  expect(outcome.image.contentType).toBe('image/jpeg')
  return { bytes: outcome.image.bytes, image: decodeImage(outcome.image.bytes, 'jpeg') }
}

function pixelsOf([x0, y0, x1, y1]: Box, visit: (offset: number) => void, width = geometry.width): void {
  for (let y = Math.ceil(y0); y < Math.floor(y1); y++) for (let x = Math.ceil(x0); x < Math.floor(x1); x++) visit((y * width + x) * 4)
}

/** Share of a region's pixels now nearer the garment colour than to what the photo had there. */
function takenByGarment(result: RgbaImage, box: Box, color: Rgb): number {
  let nearer = 0
  let total = 0
  pixelsOf(box, (o) => {
    let toGarment = 0
    let toOriginal = 0
    for (let c = 0; c < 3; c++) {
      toGarment += (result.data[o + c] - color[c]) ** 2
      toOriginal += (result.data[o + c] - shopper.pixels.data[o + c]) ** 2
    }
    if (toGarment < toOriginal) nearer++
    total++
  })
  return nearer / total
}

/** Mean absolute difference from the photo as drawn, before any JPEG encoding. */
function changeFromPhoto(result: RgbaImage, box: Box): number {
  let sum = 0
  let count = 0
  pixelsOf(box, (o) => {
    for (let c = 0; c < 3; c++) sum += Math.abs(result.data[o + c] - shopper.pixels.data[o + c])
    count += 3
  })
  return sum / count
}

function expectUntouchedFaceAndBackdrop(result: RgbaImage): void {
  // Two JPEG generations (the upload and the result) account for a few levels.
  expect(changeFromPhoto(result, geometry.face), 'face').toBeLessThan(6)
  for (const box of geometry.background) expect(changeFromPhoto(result, box), `backdrop ${box.map(Math.round)}`).toBeLessThan(3)
}

type Region = 'torso' | 'thighs' | 'shins'
const regionBoxes: Record<Region, Box[]> = { torso: [geometry.torso], thighs: geometry.thighs, shins: geometry.shins }

/** Where each garment must land, and where it must not (regions left out are not asserted either way). */
const fits: Record<GarmentKind, { covers: Region[]; keeps: Region[] }> = {
  tshirt: { covers: ['torso'], keeps: ['thighs', 'shins'] },
  trousers: { covers: ['thighs', 'shins'], keeps: ['torso'] },
  dress: { covers: ['torso', 'thighs'], keeps: [] },
  gown: { covers: ['torso', 'thighs', 'shins'], keeps: [] },
  'gown-with-train': { covers: ['torso', 'thighs', 'shins'], keeps: [] },
  jacket: { covers: ['torso'], keeps: ['shins'] },
}

describe('local engine dressing a shopper', () => {
  it.each(Object.entries(fits) as [GarmentKind, (typeof fits)[GarmentKind]][])(
    'puts the %s where it is worn and leaves the face and backdrop alone',
    async (kind, { covers, keeps }) => {
      const { image } = await dress({ garment: asInput(garment(kind)) })
      expect([image.width, image.height]).toEqual([300, 450])
      for (const region of covers) {
        // Necklines show what is under them: a share of the torso box keeps the shirt.
        for (const box of regionBoxes[region]) expect(takenByGarment(image, box, red), `${region} covered`).toBeGreaterThan(0.6)
      }
      for (const region of keeps) {
        for (const box of regionBoxes[region]) expect(takenByGarment(image, box, red), `${region} kept`).toBeLessThan(0.1)
      }
      expectUntouchedFaceAndBackdrop(image)
    },
  )

  it('takes the garment colour, shaded by the photo but not tinted by it', async () => {
    for (const color of [red, green]) {
      const { image } = await dress({ garment: asInput(garment('trousers', color)) })
      for (const box of geometry.thighs) {
        const mean = [0, 0, 0]
        let count = 0
        pixelsOf(box, (o) => {
          for (let c = 0; c < 3; c++) mean[c] += image.data[o + c]
          count++
        })
        const distance = Math.hypot(...mean.map((sum, c) => sum / count - color[c]))
        expect(distance).toBeLessThan(45)
      }
    }
  })

  it('gives identical bytes for identical inputs, and different bytes for a different colour', async () => {
    const first = await dress({ garment: asInput(garment('tshirt')) })
    const again = await dress({ garment: asInput(garment('tshirt')) })
    const recoloured = await dress({ garment: asInput(garment('tshirt', green)) })
    expect(again.bytes).toEqual(first.bytes)
    expect(recoloured.bytes).not.toEqual(first.bytes)
    expect(takenByGarment(recoloured.image, geometry.torso, green)).toBeGreaterThan(0.9)
  })

  it('never hands back either input', async () => {
    const product = garment('dress')
    const { bytes } = await dress({ garment: asInput(product) })
    expect(bytes).not.toEqual(shopper.bytes)
    expect(bytes).not.toEqual(product.bytes)
  })

  it('reads JPEG, PNG and WebP photos alike', async () => {
    const results: RgbaImage[] = []
    for (const [personFormat, garmentFormat, transparent] of [
      ['jpeg', 'jpeg', false],
      ['png', 'png', true],
      ['webp', 'webp', true],
      ['png', 'webp', false],
    ] as const) {
      const person = makeShopperPhoto({ width: 300, height: 450, format: personFormat })
      const { image } = await dress({ person: asInput(person), garment: asInput(garment('tshirt', red, garmentFormat, transparent)) })
      expect(takenByGarment(image, geometry.torso, red), `${personFormat} person, ${garmentFormat} garment`).toBeGreaterThan(0.9)
      expectUntouchedFaceAndBackdrop(image)
      results.push(image)
    }
    // A lossless person photo or a cut-out garment changes the result by little more than JPEG noise.
    for (const image of results.slice(1)) expect(changeBetween(image, results[0])).toBeLessThan(5)
  })

  it.each([
    ['a category from the caller', { category: 'bottom' as GarmentCategory }],
    ['a clothing-type hint', { clothingType: 'wide-leg trousers' }],
  ])('lets %s decide what a garment is', async (_, request) => {
    const { image } = await dress({ garment: asInput(garment('tshirt')), ...request })
    for (const box of geometry.thighs) expect(takenByGarment(image, box, red)).toBeGreaterThan(0.6)
    expect(takenByGarment(image, geometry.face, red)).toBe(0)
  })

  it('shrinks a large photo to the configured output size, keeping its proportions', async () => {
    const outcome = await createLocalEngine({ maxOutputSide: 200 }).generate({
      person: asInput(shopper),
      garment: asInput(garment('tshirt')),
      category: undefined,
    })
    expect(outcome.kind).toBe('generated')
    if (outcome.kind !== 'generated') return
    const image = decodeImage(outcome.image.bytes, 'jpeg')
    expect([image.width, image.height]).toEqual([133, 200])
  })
})

function changeBetween(a: RgbaImage, b: RgbaImage): number {
  let sum = 0
  for (let i = 0; i < a.data.length; i++) if ((i & 3) !== 3) sum += Math.abs(a.data[i] - b.data[i])
  return sum / ((a.data.length / 4) * 3)
}
