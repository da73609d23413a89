import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { random } from '../../../devstack/samples/drawing.ts'
import { createDecodeBudget, decodeImage, type RgbaImage } from '../../../shared/images/codecs/index.ts'
import { blankCoefficients, coefficientsOf, writeJpeg, type CoefficientImage, type JpegLayout } from '../../support/jpeg-writer.ts'

const layouts: JpegLayout[] = ['gray', '4:4:4', '4:2:2', '4:2:0', 'cmyk', 'ycck']

/** Coefficients as an encoder leaves them: DC terms anywhere, AC terms sparser with frequency, some blocks flat. */
function randomCoefficients(width: number, height: number, layout: JpegLayout, quality: number, seed: number): CoefficientImage {
  const image = blankCoefficients(width, height, layout, quality)
  const next = random(seed)
  for (const c of image.components) {
    for (let off = 0; off < c.blocks.length; off += 64) {
      c.blocks[off] = Math.round((next() - 0.5) * 240)
      if (next() < 0.3) continue
      for (let i = 1; i < 64; i++) {
        if (next() * (i + 2) > 2) continue
        // Mostly small, now and then up to the 10-bit values of an 8-bit JPEG.
        const magnitude = next() < 0.05 ? 1 + Math.floor(next() * 1023) : 1 + Math.floor(next() * 12)
        c.blocks[off + i] = next() < 0.5 ? -magnitude : magnitude
      }
    }
  }
  return image
}

const coefficientImage = (...choices: JpegLayout[]) =>
  fc
    .record({
      layout: fc.constantFrom(...choices),
      width: fc.integer({ min: 1, max: 72 }),
      height: fc.integer({ min: 1, max: 72 }),
      quality: fc.integer({ min: 30, max: 100 }),
      restartInterval: fc.constantFrom(0, 1, 2, 5),
      seed: fc.integer(),
    })
    .map((p) => ({ ...p, image: randomCoefficients(p.width, p.height, p.layout, p.quality, p.seed) }))

/** Every long side a caller may ask for that picks a different scale: 1/8, 1/4, 1/2 and full size. */
function scales(width: number, height: number): number[] {
  const long = Math.max(width, height)
  return [1, Math.ceil(long / 8) + 1, Math.ceil(long / 4) + 1, Math.ceil(long / 2) + 1]
}

function expectSamePixels(a: RgbaImage, b: RgbaImage, label: string): void {
  expect([a.width, a.height], label).toEqual([b.width, b.height])
  const first = a.data.findIndex((v, i) => v !== b.data[i])
  expect(first, `${label}: first differing byte`).toBe(-1)
}

describe('JPEG reduced-scale decoding of random coefficients (fast-check)', () => {
  it('gives the same pixels for a progressive file as for the baseline file of the same coefficients, at every scale', () => {
    fc.assert(
      fc.property(coefficientImage(...layouts), ({ image, restartInterval, layout }) => {
        const baseline = writeJpeg(image, { restartInterval })
        const progressive = writeJpeg(image, { restartInterval, progressive: true })
        for (const minLongSide of scales(image.width, image.height)) {
          const label = `${layout} ${image.width}x${image.height}, restarts every ${restartInterval}, long side ${minLongSide}`
          expectSamePixels(decodeImage(progressive, 'jpeg', { minLongSide }), decodeImage(baseline, 'jpeg', { minLongSide }), label)
        }
      }),
      { numRuns: 60 },
    )
  })

  it("makes each pixel at 1/8 its block's DC term, round(DC × quantizer / 8) + 128, clamped", () => {
    fc.assert(
      fc.property(coefficientImage('gray'), ({ image, restartInterval }) => {
        const width = Math.ceil(image.width / 8)
        const height = Math.ceil(image.height / 8)
        for (const progressive of [false, true]) {
          const decoded = decodeImage(writeJpeg(image, { restartInterval, progressive }), 'jpeg', { minLongSide: 1 })
          expect([decoded.width, decoded.height]).toEqual([width, height])
          const { blocks, quant, blocksPerLine } = image.components[0]
          for (let y = 0; y < height; y++) {
            for (let x = 0; x < width; x++) {
              const expected = Math.min(255, Math.max(0, Math.round((blocks[(y * blocksPerLine + x) * 64] * quant[0]) / 8) + 128))
              expect(decoded.data[(y * width + x) * 4], `block ${x},${y} (${progressive ? 'progressive' : 'baseline'})`).toBe(expected)
            }
          }
        }
      }),
      { numRuns: 40 },
    )
  })
})

/** Random pixels kept away from black and white, so no decoded sample clips and a block's mean is its DC term. */
function randomPixels(width: number, height: number, seed: number): RgbaImage {
  const next = random(seed)
  const data = new Uint8Array(width * height * 4)
  for (let i = 0; i < data.length; i++) data[i] = (i & 3) === 3 ? 255 : 80 + Math.floor(next() * 96)
  return { width, height, data }
}

/** The mean of each whole 8×8 block of the full-size decode, channel by channel. */
function blockMeans(image: RgbaImage): RgbaImage {
  const width = Math.floor(image.width / 8)
  const height = Math.floor(image.height / 8)
  const data = new Uint8Array(width * height * 4)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let channel = 0; channel < 4; channel++) {
        let sum = 0
        for (let i = 0; i < 64; i++) sum += image.data[((y * 8 + (i >> 3)) * image.width + x * 8 + (i & 7)) * 4 + channel]
        data[(y * width + x) * 4 + channel] = Math.round(sum / 64)
      }
    }
  }
  return { width, height, data }
}

describe('JPEG decoding at 1/8 against the full-size decode (fast-check)', () => {
  // Colour that is not subsampled, so each pixel at 1/8 covers one block of every component, and converted linearly
  // (CMYK multiplies two components: the mean of a product is not the product of the means).
  it.each([
    ['gray', 1],
    ['4:4:4', 2],
  ] as const)('gives the block means of the full-size decode within rounding (%s)', (layout, tolerance) => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 60, max: 98 }),
        fc.boolean(),
        fc.integer(),
        (columns, rows, quality, progressive, seed) => {
          const bytes = writeJpeg(coefficientsOf(randomPixels(columns * 8, rows * 8, seed), layout, quality), { progressive })
          const eighth = decodeImage(bytes, 'jpeg', { minLongSide: 1 })
          const means = blockMeans(decodeImage(bytes, 'jpeg'))
          expect([eighth.width, eighth.height]).toEqual([means.width, means.height])
          for (let i = 0; i < means.data.length; i++) {
            expect(Math.abs(eighth.data[i] - means.data[i]), `byte ${i}`).toBeLessThanOrEqual(tolerance)
          }
        },
      ),
      { numRuns: 40 },
    )
  })
})

describe('JPEG files with many restart intervals and large progressive files at 1/8', () => {
  it('decodes a file with a restart marker after every MCU, hundreds of them', () => {
    const image = randomCoefficients(203, 301, '4:2:0', 90, 7)
    const baseline = decodeImage(writeJpeg(image), 'jpeg')
    const restarted = decodeImage(writeJpeg(image, { restartInterval: 1 }), 'jpeg')
    expectSamePixels(restarted, baseline, '247 restart intervals')
  })

  it('charges a progressive JPEG at 1/8 for its planes and one DC term a block, not every coefficient', () => {
    const budget = createDecodeBudget(1_000_000)
    const bytes = writeJpeg(randomCoefficients(64, 64, '4:2:0', 90, 3), { progressive: true })
    const decoded = decodeImage(bytes, 'jpeg', { minLongSide: 8, budget })
    expect([decoded.width, decoded.height]).toEqual([8, 8])
    expect(budget.remaining).toBe(1_000_000 - 64 - 64)
  })
})
