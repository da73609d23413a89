import { describe, expect, it } from 'vitest'
import { createLocalPretreatment } from '../../../shared/bridal/local-pretreatment.ts'
import { createLocalTrainScorer } from '../../../shared/bridal/local-scorer.ts'
import { generateWithTrain } from '../../../shared/bridal/pipeline.ts'
import {
  createDecodeBudget,
  decodeImage,
  encodeJpeg,
  ImageDecodeError,
  type DecodeBudget,
  type RgbaImage,
} from '../../../shared/images/codecs/index.ts'
import { createLocalEngine } from '../../../shared/engine/local/index.ts'
import { downscaleToFit } from '../../../shared/images/resize.ts'
import { decodeUpright } from '../../../shared/images/upright.ts'
import type { InputImage } from '../../../shared/engine/types.ts'
import { storedPixels } from '../../support/jpeg-exif.ts'
import { writeJpeg, coefficientsOf } from '../../support/jpeg-writer.ts'
import { asInput, makeGarmentPhoto, makeShopperPhoto } from '../../support/images.ts'

/** A request's budget whose pixel spends are recorded: one entry per decode (each decoder spends its image's pixels once). */
function countedBudget(): { budget: DecodeBudget; spends: number[] } {
  const inner = createDecodeBudget(400_000_000)
  const spends: number[] = []
  const budget: DecodeBudget = Object.create(inner)
  Object.defineProperty(budget, 'spend', {
    value: (pixels: number) => {
      spends.push(pixels)
      inner.spend(pixels)
    },
  })
  return { budget, spends }
}

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((v, i) => v === b[i])

function meanAbsoluteDifference(a: RgbaImage, b: RgbaImage): number {
  expect([a.width, a.height]).toEqual([b.width, b.height])
  let sum = 0
  for (let i = 0; i < a.data.length; i++) sum += Math.abs(a.data[i] - b.data[i])
  return sum / a.data.length
}

// 1920 × 2880: a DCT scale of 1/2 gives 1440 px (under the engine's 1536), so the engine's copy is decoded whole.
const shopper = makeShopperPhoto({ width: 960, height: 1440 })
const photo = asInput(shopper)

describe('decoding an input once per request', () => {
  it('decodes the same input once for the steps of one request that need no more detail than the first', () => {
    const { budget, spends } = countedBudget()
    const first = decodeUpright(photo, { side: 1536, budget })
    const again = decodeUpright(photo, { side: 1536, budget })
    const smaller = decodeUpright(photo, { side: 256, budget })
    expect(spends).toEqual([960 * 1440])
    expect(sameBytes(again.data, first.data)).toBe(true)
    expect(Math.max(smaller.width, smaller.height)).toBe(256)
  })

  it('decodes again, and keeps the larger copy, when a later step needs more detail', () => {
    const { budget, spends } = countedBudget()
    decodeUpright(photo, { side: 256, budget })
    decodeUpright(photo, { side: 1536, budget })
    decodeUpright(photo, { side: 512, budget })
    // 1440 / 4 = 360 ≥ 256 (1/4 scale: 240 × 360), then whole; the 512 px step reuses the whole copy.
    expect(spends).toEqual([240 * 360, 960 * 1440])
  })

  it('gives a step reusing a larger copy the pixels of its own decode within a level on average', () => {
    const { budget } = countedBudget()
    decodeUpright(photo, { side: 1536, budget })
    for (const side of [720, 360, 256]) {
      const reused = decodeUpright(photo, { side, budget })
      const direct = decodeUpright(photo, { side })
      expect(meanAbsoluteDifference(reused, direct), `${side} px`).toBeLessThan(1.5)
    }
  })

  it('gives each step its own pixels: one that draws on its copy leaves the next step’s alone', () => {
    const { budget } = countedBudget()
    const first = decodeUpright(photo, { side: 1536, budget })
    const before = first.data.slice()
    first.data.fill(0)
    expect(sameBytes(decodeUpright(photo, { side: 1536, budget }).data, before)).toBe(true)
  })

  it('turns a photo stored sideways once decoded, from the one copy, for every step', () => {
    const upright = shopper.pixels
    const sideways: InputImage = {
      bytes: encodeJpeg(storedPixels(upright, 6), 92),
      format: 'jpeg',
      // As displayed: intake reads the stored size (turned) from the header and the orientation from EXIF.
      width: upright.width,
      height: upright.height,
      orientation: 6,
    }
    const { budget, spends } = countedBudget()
    const engineCopy = decodeUpright(sideways, { side: 1536, budget })
    const analysisCopy = decodeUpright(sideways, { side: 320, budget })
    expect(spends).toHaveLength(1)
    expect([engineCopy.width, engineCopy.height]).toEqual([960, 1440])
    expect(meanAbsoluteDifference(analysisCopy, downscaleToFit(decodeUpright(sideways, { side: 1536 }), 320))).toBeLessThan(1.5)
  })

  it('does not decode again an input whose decoding failed: the same error, no more work', () => {
    const truncated: InputImage = { ...photo, bytes: photo.bytes.subarray(0, photo.bytes.length >> 1) }
    const { budget, spends } = countedBudget()
    let first: unknown
    try {
      decodeUpright(truncated, { side: 1536, budget })
    } catch (error) {
      first = error
    }
    expect(first).toBeInstanceOf(ImageDecodeError)
    const spent = [...spends]
    expect(() => decodeUpright(truncated, { side: 256, budget })).toThrow(first as Error)
    expect(spends).toEqual(spent)
  })

  it('decodes a 10 MP progressive JPEG once for a wedding dress: pre-treatment, floor room, engine and scorer', async () => {
    // Every scan of a progressive photo is read whatever the scale: a 40 MP one decoded twice was about a second more.
    const small = makeShopperPhoto({ width: 1291, height: 1936 }).pixels
    const enlarged = { width: small.width * 2, height: small.height * 2, data: new Uint8Array(small.width * small.height * 16) }
    for (let y = 0; y < enlarged.height; y++) {
      for (let x = 0; x < enlarged.width; x++) {
        const from = ((y >> 1) * small.width + (x >> 1)) * 4
        enlarged.data.set(small.data.subarray(from, from + 4), (y * enlarged.width + x) * 4)
      }
    }
    const person: InputImage = {
      bytes: writeJpeg(coefficientsOf(enlarged, '4:2:0', 85), { progressive: true }),
      format: 'jpeg',
      width: enlarged.width,
      height: enlarged.height,
    }
    const gown = asInput(
      makeGarmentPhoto({ kind: 'gown-with-train', color: [242, 236, 224], width: 320, height: 320, transparentBackground: true }),
    )
    const { budget, spends } = countedBudget()
    const engine = createLocalEngine()
    const steps = { pretreatment: createLocalPretreatment(), scorer: createLocalTrainScorer() }
    const generation = await generateWithTrain(
      engine,
      steps,
      { person, garment: gown, category: 'dress', decodeBudget: budget },
      { threshold: 0.5, log: () => {}, tryOnId: 'test' },
    )
    expect(generation.image.bytes.length).toBeGreaterThan(0)
    // The photo's decodes: its planes at 1/2 scale (1291 × 1936) and its 10 MP of coefficients, kept until the last
    // scan. Every other decode (the gown, the padded photo, the result) is of an image under 2.6 MP.
    expect(spends.filter((pixels) => pixels >= 2582 * 3872)).toEqual([1291 * 1936 + 2582 * 3872])
    expect(decodeImage(person.bytes, 'jpeg', { minLongSide: 1536 }).width).toBe(1291)
  }, 120_000)
})

describe('a large progressive JPEG read by the local steps', () => {
  const pixels = makeShopperPhoto({ width: 240, height: 360 }).pixels
  const progressive = writeJpeg(coefficientsOf(pixels, '4:2:0', 90), { progressive: true })
  const baseline = writeJpeg(coefficientsOf(pixels, '4:2:0', 90))

  it('is decoded at 1/8 past the pixel count given, its DC scans alone, whatever the long side asked', () => {
    const eighth = decodeImage(progressive, 'jpeg', { minLongSide: 360, progressiveEighthAbovePixels: 240 * 360 - 1 })
    expect([eighth.width, eighth.height]).toEqual([30, 45])
    expect(sameBytes(eighth.data, decodeImage(progressive, 'jpeg', { minLongSide: 1 }).data)).toBe(true)
    // At or under the count, and for a baseline file (whose scale costs what it saves), the scale asked for.
    expect(decodeImage(progressive, 'jpeg', { minLongSide: 360, progressiveEighthAbovePixels: 240 * 360 }).width).toBe(240)
    expect(decodeImage(baseline, 'jpeg', { minLongSide: 360, progressiveEighthAbovePixels: 1 }).width).toBe(240)
  })
})
