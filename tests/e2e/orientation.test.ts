import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { drawShopper } from '../../devstack/samples/shopper-photo.ts'
import { encodePng } from '../../devstack/samples/png-encoder.ts'
import { decodeImage, encodeJpeg, type RgbaImage } from '../../shared/images/codecs/index.ts'
import { downscaleToFit } from '../../shared/images/resize.ts'
import { decodeBase64, encodeBase64 } from '../../shared/images/base64.ts'
import { asDisplayed } from '../../shared/images/display.ts'
import { readImageHeader } from '../../shared/images/sniff.ts'
import type { CreatedKey } from '../support/database.ts'
import { makeGarmentPhoto } from '../support/images.ts'
import {
  exifSegment,
  exifWithOrientation,
  ORIENTATIONS,
  withJpegSegments,
  withPngChunks,
  withWebpChunks,
} from '../support/photo-metadata.ts'
import {
  fashn,
  FASHN_PREDICTION,
  gemini,
  geminiPath,
  makeServiceAccount,
  startFakeServer,
  startFashnFake,
  vertex,
  vertexPredictPath,
  type FakeServer,
  type RecordedRequest,
} from '../support/provider-fakes.ts'
import { postTryOn, startTestStack, type TestStack } from '../support/stack.ts'
import { encodeWebpLossless } from '../support/webp-encoder.ts'
import { storedPixels, type ExifOrientation } from '../support/jpeg-exif.ts'
import { DEFAULT_MODELS } from '../../shared/engine/providers/settings.ts'

/**
 * One upright, full-length shopper photo, stored as a phone stores it for each EXIF orientation: the pixels turned
 * (or mirrored) and the tag saying how to show them. Every request must be handled as the upright photo would be.
 */
const slate: [number, number, number] = [120, 128, 140]
const upright = withDoorFrame(drawShopper({ width: 240, height: 400, background: slate, seed: 4 }).image)
const garment = encodeBase64(makeGarmentPhoto({ kind: 'tshirt', color: [200, 40, 40], width: 200, height: 200, format: 'png' }).bytes)

/** A door frame along the left edge of the room: the photo is no longer its own mirror image, so a flip shows. */
function withDoorFrame(photo: RgbaImage): RgbaImage {
  const frame = Math.round(photo.width * 0.12)
  for (let y = 0; y < photo.height; y++) for (let x = 0; x < frame; x++) photo.data.set([88, 94, 106], (y * photo.width + x) * 4)
  return photo
}

function storedJpeg(orientation: ExifOrientation): Uint8Array {
  const jpeg = encodeJpeg(storedPixels(upright, orientation), 92)
  return orientation === 1 ? jpeg : withJpegSegments(jpeg, [exifSegment(exifWithOrientation(orientation))])
}

const sent = (bytes: Uint8Array) => ({ userPhoto: encodeBase64(bytes), productImage: garment, clothingType: 'T-shirt' })

/** Mean absolute difference per colour channel (0–255) of two images of the same size. */
function meanDifference(a: RgbaImage, b: RgbaImage): number {
  expect([a.width, a.height]).toEqual([b.width, b.height])
  let sum = 0
  for (let i = 0; i < a.data.length; i++) if ((i & 3) !== 3) sum += Math.abs(a.data[i] - b.data[i])
  return sum / ((a.data.length / 4) * 3)
}

async function resultOf(t: TestStack, key: CreatedKey, body: unknown): Promise<RgbaImage> {
  const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  const bytes = new Uint8Array(await (await fetch(res.body.resultUrl)).arrayBuffer())
  return decodeImage(bytes, readImageHeader(bytes)!.format)
}

describe('phone photos stored sideways, through the local engine', () => {
  let t: TestStack
  let key: CreatedKey
  let reference: RgbaImage
  beforeAll(async () => {
    t = await startTestStack()
    key = await t.createKey({ credits: 40 })
    reference = await resultOf(t, key, sent(storedJpeg(1)))
  })
  afterAll(async () => {
    await t?.close()
  })

  it('reads the upright photo as a portrait (the reference every orientation is compared with)', () => {
    expect([reference.width, reference.height]).toEqual([240, 400])
  })

  it.each(ORIENTATIONS.filter((o) => o !== 1))('dresses the upright shopper for a JPEG with EXIF orientation %i', async (orientation) => {
    const result = await resultOf(t, key, sent(storedJpeg(orientation)))
    expect([result.width, result.height]).toEqual([240, 400])
    // Only the JPEG rounding of differently arranged blocks separates the inputs.
    expect(meanDifference(result, reference)).toBeLessThan(4)
  })

  it('finds nobody standing in the same pixels without the tag (what reading the raw pixels gives), and charges nothing', async () => {
    const before = await t.balanceOf(key)
    const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: sent(encodeJpeg(storedPixels(upright, 6), 92)) })
    expect([res.status, res.body.errorCode]).toEqual([400, 'person_not_found'])
    expect(await t.balanceOf(key)).toBe(before)
  })

  it.each<ExifOrientation>([3, 6, 8])('turns a PNG with an eXIf orientation %i upright', async (orientation) => {
    const stored = storedPixels(upright, orientation)
    const png = withPngChunks(encodePng(stored), [{ type: 'eXIf', body: exifWithOrientation(orientation, { bigEndian: true }) }])
    const result = await resultOf(t, key, sent(png))
    expect(meanDifference(result, reference)).toBeLessThan(4)
  })

  it.each<ExifOrientation>([5, 7])('turns a WebP with an EXIF chunk of orientation %i upright', async (orientation) => {
    const stored = storedPixels(upright, orientation)
    const webp = withWebpChunks(encodeWebpLossless(stored), { exif: exifWithOrientation(orientation) }, stored)
    const result = await resultOf(t, key, sent(webp))
    expect(meanDifference(result, reference)).toBeLessThan(4)
  })

  it('renders the train on an upright bride from a sideways wedding photo, billed as the upright photo is', async () => {
    const bride = withDoorFrame(drawShopper({ width: 300, height: 480, background: slate, seed: 9 }).image)
    const gown = makeGarmentPhoto({ kind: 'gown-with-train', color: [242, 236, 224], width: 320, height: 320, transparentBackground: true })
    const wedding = (bytes: Uint8Array) => ({
      userPhoto: encodeBase64(bytes),
      productImage: encodeBase64(gown.bytes),
      productType: 'wedding-dress',
    })
    const post = (bytes: Uint8Array) => postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: wedding(bytes) })
    const uprightAnswer = await post(encodeJpeg(bride, 92))
    const sideways = withJpegSegments(encodeJpeg(storedPixels(bride, 6), 92), [exifSegment(exifWithOrientation(6))])
    const sidewaysAnswer = await post(sideways)
    expect(uprightAnswer.status).toBe(200)
    expect(sidewaysAnswer.status).toBe(200)
    expect(sidewaysAnswer.body.bridal.reason).toBe(uprightAnswer.body.bridal.reason)
    expect(sidewaysAnswer.body.creditsCharged).toBe(uprightAnswer.body.creditsCharged)
    expect(Math.abs(sidewaysAnswer.body.bridal.trainScore - uprightAnswer.body.bridal.trainScore)).toBeLessThan(0.05)
    const [a, b] = await Promise.all(
      [uprightAnswer, sidewaysAnswer].map(async (r) => new Uint8Array(await (await fetch(r.body.resultUrl)).arrayBuffer())),
    )
    const [first, second] = [a, b].map((bytes) => decodeImage(bytes, 'jpeg'))
    expect(first.height).toBeGreaterThan(first.width)
    // Floor is added below the feet to fit the train; the two readings of the feet may differ by a row or two.
    expect(second.width).toBe(first.width)
    expect(Math.abs(second.height - first.height)).toBeLessThanOrEqual(4)
    const rows = Math.min(first.height, second.height)
    const top = (image: RgbaImage) => ({ width: image.width, height: rows, data: image.data.subarray(0, image.width * rows * 4) })
    expect(meanDifference(top(second), top(first))).toBeLessThan(4)
  })
})

/** The shopper photo a provider received, decoded as stored: it must be the upright photo, with no tag left to apply. */
function expectUpright(bytes: Uint8Array, orientation: number, original: Uint8Array): void {
  const header = readImageHeader(bytes)!
  expect(asDisplayed(header, bytes).orientation).toBeUndefined()
  // An upright photo that fits the provider goes as it was sent; a turned one is decoded, turned and encoded again.
  if (orientation === 1) expect(bytes).toEqual(original)
  else expect(header.format).toBe('jpeg')
  const pixels = decodeImage(bytes, header.format)
  expect(meanDifference(pixels, downscaleToFit(upright, Math.max(pixels.width, pixels.height)))).toBeLessThan(4)
}

const providerResult = encodeJpeg(upright, 85)

describe.each([
  {
    engine: 'gemini',
    async start(): Promise<{ fake: FakeServer; env: Record<string, string> }> {
      const fake = await startFakeServer((f) => f.script('POST', geminiPath(DEFAULT_MODELS.GEMINI_MODEL), gemini.image(providerResult)))
      return { fake, env: { TRYON_ENGINE: 'gemini', GEMINI_API_KEY: 'AIza-live', GEMINI_BASE_URL: fake.url } }
    },
    person: (fake: FakeServer) => personPart(fake.requestsTo(geminiPath(DEFAULT_MODELS.GEMINI_MODEL)).at(-1)!),
  },
  {
    engine: 'vertex',
    async start(): Promise<{ fake: FakeServer; env: Record<string, string> }> {
      const fake = await startFakeServer((f) => {
        f.script('POST', '/token', vertex.token('ya29.orientation'))
        f.script('POST', vertexPredictPath('test-project', 'europe-west4'), vertex.image(providerResult))
      })
      const account = await makeServiceAccount(`${fake.url}/token`)
      const env = {
        TRYON_ENGINE: 'vertex',
        VERTEX_PROJECT: 'test-project',
        VERTEX_LOCATION: 'europe-west4',
        VERTEX_BASE_URL: fake.url,
        VERTEX_SERVICE_ACCOUNT_JSON: account.json,
      }
      return { fake, env }
    },
    person: (fake: FakeServer) =>
      decodeBase64(
        fake.requestsTo(vertexPredictPath('test-project', 'europe-west4')).at(-1)!.json.instances[0].personImage.image.bytesBase64Encoded,
      )!,
  },
  {
    engine: 'fashn',
    async start(): Promise<{ fake: FakeServer; env: Record<string, string> }> {
      const fake = await startFashnFake(providerResult)
      fake.script('GET', `/v1/status/${FASHN_PREDICTION}`, fashn.completed(fake.outputUrl))
      return { fake, env: { TRYON_ENGINE: 'fashn', FASHN_API_KEY: 'fa-live-key', FASHN_BASE_URL: fake.url } }
    },
    person: (fake: FakeServer) => {
      const uri: string = fake.requestsTo('/v1/run').at(-1)!.json.inputs.model_image
      return decodeBase64(uri.slice(uri.indexOf(',') + 1))!
    },
  },
])('phone photos stored sideways, sent to $engine (its fake)', ({ engine, start, person }) => {
  let t: TestStack
  let fake: FakeServer
  let key: CreatedKey
  beforeAll(async () => {
    const started = await start()
    fake = started.fake
    t = await startTestStack({ env: started.env })
    key = await t.createKey({ credits: 20, mode: 'live' })
  })
  afterAll(async () => {
    await t?.close()
    await fake?.close()
  })
  beforeEach(() => {
    fake.reset()
    if (engine === 'fashn')
      fake.script('GET', `/v1/status/${FASHN_PREDICTION}`, fashn.completed(`${fake.url}/cdn/${FASHN_PREDICTION}/output_0.jpg`))
  })

  it.each(ORIENTATIONS)('receives the upright shopper for EXIF orientation %i', async (orientation) => {
    const bytes = storedJpeg(orientation)
    const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: sent(bytes) })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expectUpright(person(fake), orientation, bytes)
    if (engine === 'gemini') {
      // The aspect ratio asked for is the displayed photo's (240 × 400), never the stored one's.
      const config = fake.requestsTo(geminiPath(DEFAULT_MODELS.GEMINI_MODEL)).at(-1)!.json.generationConfig
      expect(config.imageConfig.aspectRatio).toBe('9:16')
    }
  })
})

function personPart(request: RecordedRequest): Uint8Array {
  const part = request.json.contents[0].parts[1].inline_data
  return decodeBase64(part.data)!
}
