import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { drawGarment } from '../../devstack/samples/garment-photo.ts'
import { encodePng } from '../../devstack/samples/png-encoder.ts'
import { drawShopper } from '../../devstack/samples/shopper-photo.ts'
import { decodeImage, encodeJpeg, type RgbaImage } from '../../shared/images/codecs/index.ts'
import { decodeBase64, encodeBase64 } from '../../shared/images/base64.ts'
import { asDisplayed } from '../../shared/images/display.ts'
import { readImageHeader } from '../../shared/images/sniff.ts'
import type { CreatedKey } from '../support/database.ts'
import { DISPLAY_P3, fromSrgb, iccProfile, SRGB } from '../support/icc-profiles.ts'
import { coefficientsOf, writeJpeg } from '../support/jpeg-writer.ts'
import { iccpBody, iccSegments, withJpegSegments, withPngChunks } from '../support/photo-metadata.ts'
import { gemini, geminiPath, startFakeServer, type FakeServer } from '../support/provider-fakes.ts'
import { expectErrorBody, postTryOn, startTestStack, type TestStack } from '../support/stack.ts'
import { DEFAULT_MODELS } from '../../shared/engine/providers/settings.ts'

/**
 * The formats phones and shops send (the table in docs/api.md#images): each is either tried on as its plain
 * equivalent (an 8-bit sRGB JPEG or PNG of the same picture) would be, or refused with a 400 naming what is accepted.
 */
const slate: [number, number, number] = [120, 128, 140]
const { image: person, geometry } = drawShopper({ width: 240, height: 400, background: slate, seed: 12 })
const shirt = drawGarment({ kind: 'tshirt', color: [200, 40, 45], width: 200, height: 200, transparentBackground: true }).image
/** A palette PNG packs a flat-coloured garment so small that it needs a larger one to pass the 1 KB minimum. */
const largeShirt = drawGarment({ kind: 'tshirt', color: [200, 40, 45], width: 480, height: 480, transparentBackground: true }).image

/** At most 6 levels per channel and alpha 0 or 255: a picture a palette of 256 colours holds. */
function posterised(image: RgbaImage): RgbaImage {
  const data = image.data.map((v, i) => ((i & 3) === 3 ? (v < 128 ? 0 : 255) : Math.round(v / 51) * 51))
  for (let i = 0; i < data.length; i += 4) if (data[i + 3] === 0) data.set([0, 0, 0, 0], i)
  return { ...image, data }
}

function gray(image: RgbaImage): RgbaImage {
  const data = image.data.slice()
  for (let i = 0; i < data.length; i += 4) data.set([data[i], data[i], data[i]], i)
  return { ...image, data }
}

/** The same picture with its colours as a Display P3 file stores them (so a colour-managed viewer shows `image`). */
function inDisplayP3(image: RgbaImage): RgbaImage {
  const data = image.data.slice()
  const cache = new Map<number, [number, number, number]>()
  for (let i = 0; i < data.length; i += 4) {
    const key = (data[i] << 16) | (data[i + 1] << 8) | data[i + 2]
    const p3 = cache.get(key) ?? fromSrgb(DISPLAY_P3, [data[i], data[i + 1], data[i + 2]])
    cache.set(key, p3)
    data.set(p3, i)
  }
  return { ...image, data }
}

/** The mean colour of the shopper's chest in a result, where the shirt is worn. */
function chestColour(image: RgbaImage): number[] {
  const sum = [0, 0, 0]
  let count = 0
  const top = Math.round(geometry.shoulderY + 0.1 * (geometry.waistY - geometry.shoulderY))
  const bottom = Math.round(geometry.waistY)
  const half = Math.round(0.5 * geometry.shoulderHalfWidth)
  for (let y = top; y < bottom; y++) {
    for (let x = Math.round(geometry.centreX) - half; x < geometry.centreX + half; x++, count++) {
      for (let c = 0; c < 3; c++) sum[c] += image.data[(y * image.width + x) * 4 + c]
    }
  }
  return sum.map((v) => v / count)
}

function meanDifference(a: RgbaImage, b: RgbaImage): number {
  expect([a.width, a.height]).toEqual([b.width, b.height])
  let sum = 0
  for (let i = 0; i < a.data.length; i++) if ((i & 3) !== 3) sum += Math.abs(a.data[i] - b.data[i])
  return sum / ((a.data.length / 4) * 3)
}

const padded = (header: number[]) => Uint8Array.from({ length: 4096 }, (_, i) => header[i] ?? 0)
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0))
/** An ISO BMFF file's first box: size, "ftyp", major brand, minor version, compatible brands. */
const ftyp = (major: string, ...compatible: string[]) => {
  const size = 16 + 4 * compatible.length
  return padded([0, 0, 0, size, ...ascii('ftyp'), ...ascii(major), 0, 0, 0, 0, ...compatible.flatMap(ascii)])
}

interface Handled {
  name: string
  userPhoto?: Uint8Array
  productImage?: Uint8Array
  /** The plain file of the same picture the case must be tried on like. */
  plain: { userPhoto?: Uint8Array; productImage?: Uint8Array }
}

const plainPerson = encodeJpeg(person, 92)
const plainShirt = encodePng(shirt)
const handled: Handled[] = [
  { name: 'a CMYK JPEG (Adobe APP14, transform 0)', userPhoto: writeJpeg(coefficientsOf(person, 'cmyk', 92)), plain: {} },
  { name: 'a YCCK JPEG (Adobe APP14, transform 2)', userPhoto: writeJpeg(coefficientsOf(person, 'ycck', 92)), plain: {} },
  { name: 'a grayscale JPEG', userPhoto: encodeJpeg(gray(person), 92), plain: { userPhoto: encodeJpeg(gray(person), 92) } },
  { name: 'a grayscale PNG', userPhoto: encodePng(gray(person), { colorType: 0 }), plain: { userPhoto: encodePng(gray(person)) } },
  {
    name: 'a grayscale PNG with alpha',
    productImage: encodePng(gray(shirt), { colorType: 4 }),
    plain: { productImage: encodePng(gray(shirt)) },
  },
  { name: 'a 16-bit RGBA PNG', productImage: encodePng(shirt, { bitDepth: 16 }), plain: {} },
  { name: 'a 16-bit RGB PNG', userPhoto: encodePng(person, { colorType: 2, bitDepth: 16 }), plain: { userPhoto: encodePng(person) } },
  {
    name: 'a palette PNG with transparency (tRNS)',
    productImage: encodePng(posterised(largeShirt), { colorType: 3 }),
    plain: { productImage: encodePng(posterised(largeShirt)) },
  },
  {
    name: 'a JPEG with a Display P3 profile',
    userPhoto: withJpegSegments(encodeJpeg(inDisplayP3(person), 95), iccSegments(iccProfile(DISPLAY_P3))),
    plain: {},
  },
  {
    name: 'a PNG with a Display P3 profile',
    productImage: withPngChunks(encodePng(inDisplayP3(shirt)), [{ type: 'iCCP', body: iccpBody(iccProfile(DISPLAY_P3)) }]),
    plain: {},
  },
  {
    name: 'a JPEG with an sRGB profile',
    userPhoto: withJpegSegments(plainPerson, iccSegments(iccProfile(SRGB))),
    plain: {},
  },
]

const refused = [
  { name: 'HEIC', bytes: ftyp('heic', 'mif1', 'heic') },
  { name: 'HEIF', bytes: ftyp('mif1', 'mif1') },
  { name: 'AVIF', bytes: ftyp('avif', 'mif1', 'miaf', 'MA1B') },
  { name: 'GIF', bytes: padded(ascii('GIF89a')) },
  { name: 'TIFF', bytes: padded([0x49, 0x49, 0x2a, 0]) },
]

describe('what phones and shops send, through the local engine', () => {
  let t: TestStack
  let key: CreatedKey
  const body = (images: { userPhoto?: Uint8Array; productImage?: Uint8Array }) => ({
    userPhoto: encodeBase64(images.userPhoto ?? plainPerson),
    productImage: encodeBase64(images.productImage ?? plainShirt),
    clothingType: 'T-shirt',
  })
  async function result(images: { userPhoto?: Uint8Array; productImage?: Uint8Array }): Promise<RgbaImage> {
    const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: body(images) })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return decodeImage(new Uint8Array(await (await fetch(res.body.resultUrl)).arrayBuffer()), 'jpeg')
  }
  beforeAll(async () => {
    t = await startTestStack()
    key = await t.createKey({ credits: 40 })
  })
  afterAll(async () => {
    await t?.close()
  })

  it.each(handled)('tries on $name as its plain equivalent', async (testCase) => {
    const [image, plain] = [await result(testCase), await result(testCase.plain)]
    expect(meanDifference(image, plain)).toBeLessThan(3)
  })

  it('shows a P3 garment in its sRGB colours; taken as sRGB, its stored values would be far off', async () => {
    const p3 = withPngChunks(encodePng(inDisplayP3(shirt)), [{ type: 'iCCP', body: iccpBody(iccProfile(DISPLAY_P3)) }])
    const unmanaged = encodePng(inDisplayP3(shirt))
    const [managed, plain, raw] = await Promise.all(
      [p3, plainShirt, unmanaged].map(async (productImage) => chestColour(await result({ productImage }))),
    )
    const off = (a: number[], b: number[]) => Math.max(...a.map((v, c) => Math.abs(v - b[c])))
    expect(off(managed, plain)).toBeLessThan(2)
    expect(off(raw, plain)).toBeGreaterThan(10)
  })

  it.each(refused)('refuses $name with 400 unsupported_image naming it and what is accepted, at no cost', async ({ name, bytes }) => {
    const before = await t.balanceOf(key)
    const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: body({ userPhoto: bytes }) })
    expectErrorBody(
      res,
      400,
      'unsupported_image',
      new RegExp(`^userPhoto: image is ${name}, which is not accepted .*send a JPEG, PNG or WebP image`),
    )
    expect(await t.balanceOf(key)).toBe(before)
  })
})

describe('what phones and shops send, through a provider (the Gemini fake)', () => {
  let t: TestStack
  let fake: FakeServer
  let key: CreatedKey
  const path = geminiPath(DEFAULT_MODELS.GEMINI_MODEL)
  beforeAll(async () => {
    fake = await startFakeServer((f) => f.script('POST', path, gemini.image(plainPerson)))
    t = await startTestStack({ env: { TRYON_ENGINE: 'gemini', GEMINI_API_KEY: 'AIza-live', GEMINI_BASE_URL: fake.url } })
    key = await t.createKey({ credits: 20, mode: 'live' })
  })
  afterAll(async () => {
    await t?.close()
    await fake?.close()
  })
  beforeEach(() => fake.reset())

  async function sentToGemini(userPhoto: Uint8Array): Promise<Uint8Array> {
    const res = await postTryOn(t.stack.functionUrl, {
      apiKey: key.apiKey,
      body: { userPhoto: encodeBase64(userPhoto), productImage: encodeBase64(plainShirt) },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return decodeBase64(fake.requestsTo(path)[0].json.contents[0].parts[1].inline_data.data)!
  }

  it.each([
    ['a CMYK JPEG', writeJpeg(coefficientsOf(person, 'cmyk', 92))],
    ['a YCCK JPEG', writeJpeg(coefficientsOf(person, 'ycck', 92))],
    ['a Display P3 JPEG', withJpegSegments(encodeJpeg(inDisplayP3(person), 95), iccSegments(iccProfile(DISPLAY_P3)))],
  ])('sends %s re-encoded as a plain sRGB JPEG of the picture the shopper saw', async (_, bytes) => {
    const received = await sentToGemini(bytes)
    const header = readImageHeader(received)!
    expect(header.format).toBe('jpeg')
    expect(asDisplayed(header, received)).toEqual({ format: 'jpeg', width: 240, height: 400 })
    expect(meanDifference(decodeImage(received, 'jpeg'), person)).toBeLessThan(3)
  })

  it('sends a JPEG whose profile is sRGB as it is', async () => {
    const bytes = withJpegSegments(plainPerson, iccSegments(iccProfile(SRGB)))
    expect(await sentToGemini(bytes)).toEqual(bytes)
  })
})
