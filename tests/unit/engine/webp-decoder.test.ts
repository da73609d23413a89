import { describe, expect, it } from 'vitest'
import { random } from '../../../devstack/samples/drawing.ts'
import { decodeImage, ImageDecodeError, type RgbaImage } from '../../../shared/images/codecs/index.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../../support/images.ts'
import { encodeWebpLossless } from '../../support/webp-encoder.ts'

function noisyImage(width: number, height: number, seed: number): RgbaImage {
  const next = random(seed)
  return { width, height, data: Uint8Array.from({ length: width * height * 4 }, () => Math.floor(next() * 256)) }
}

function decodeError(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  return undefined
}

describe('lossless WebP decoding', () => {
  it('decodes a photo exactly', () => {
    const photo = makeShopperPhoto({ width: 120, height: 180, format: 'webp' })
    const decoded = decodeImage(photo.bytes, 'webp')
    expect([decoded.width, decoded.height]).toEqual([120, 180])
    expect(decoded.data).toEqual(photo.pixels.data)
  })

  it('keeps alpha exactly, transparent pixels included', () => {
    const garment = makeGarmentPhoto({
      kind: 'dress',
      color: [150, 20, 90],
      transparentBackground: true,
      format: 'webp',
      width: 90,
      height: 90,
    })
    const decoded = decodeImage(garment.bytes, 'webp')
    expect(decoded.data).toEqual(garment.pixels.data)
    expect(decoded.data.some((v, i) => (i & 3) === 3 && v === 0)).toBe(true)
    expect(decoded.data.some((v, i) => (i & 3) === 3 && v > 0 && v < 255)).toBe(true)
  })

  it.each([
    [1, 1],
    [1, 40],
    [40, 1],
    [33, 17],
  ])('decodes random %ix%i pixels exactly', (width, height) => {
    const source = noisyImage(width, height, width * 100 + height)
    expect(decodeImage(encodeWebpLossless(source), 'webp').data).toEqual(source.data)
  })
})

describe('corrupt WebP data', () => {
  const source = makeShopperPhoto({ width: 60, height: 90, format: 'webp' })
  const bytes = source.bytes

  it('refuses a file cut anywhere, instead of decoding the missing rows as garbage', () => {
    for (let cut = 0; cut < bytes.length; cut += 89) {
      const error = decodeError(() => decodeImage(bytes.subarray(0, cut), 'webp'))
      expect(error, `cut at ${cut} of ${bytes.length}`).toBeInstanceOf(ImageDecodeError)
    }
    expect(decodeError(() => decodeImage(bytes.subarray(0, bytes.length - 1), 'webp'))).toBeInstanceOf(ImageDecodeError)
  })

  it('refuses a chunk that claims more bytes than the file holds', () => {
    const lying = bytes.slice()
    const view = new DataView(lying.buffer)
    view.setUint32(16, view.getUint32(16, true) + 400, true)
    expect(decodeError(() => decodeImage(lying, 'webp'))).toBeInstanceOf(ImageDecodeError)
  })

  it('refuses a broken container or bitstream signature', () => {
    for (const [at, value] of [
      [0, 0x58],
      [8, 0x58],
      [15, 0x20],
      [20, 0x00],
    ]) {
      const damaged = bytes.slice()
      damaged[at] = value
      expect(
        decodeError(() => decodeImage(damaged, 'webp')),
        `byte ${at}`,
      ).toBeInstanceOf(ImageDecodeError)
    }
  })

  it('either decodes a damaged file at its size or throws ImageDecodeError, never anything else', () => {
    const next = random(29)
    for (let round = 0; round < 60; round++) {
      const damaged = bytes.slice()
      const flips = 1 + Math.floor(next() * 6)
      for (let k = 0; k < flips; k++) damaged[12 + Math.floor(next() * (damaged.length - 12))] = Math.floor(next() * 256)
      const error = decodeError(() => {
        const decoded = decodeImage(damaged, 'webp')
        expect(decoded.data.length).toBe(decoded.width * decoded.height * 4)
      })
      if (error !== undefined) expect(error, `round ${round}`).toBeInstanceOf(ImageDecodeError)
    }
  })

  it('refuses PNG bytes and noise under a WebP label', () => {
    const next = random(4)
    const noise = Uint8Array.from({ length: 2048 }, () => Math.floor(next() * 256))
    const riffThenNoise = Uint8Array.from([...bytes.subarray(0, 20), ...noise])
    new DataView(riffThenNoise.buffer).setUint32(4, riffThenNoise.length - 8, true)
    new DataView(riffThenNoise.buffer).setUint32(16, noise.length, true)
    for (const data of [new Uint8Array(0), noise, riffThenNoise, makeShopperPhoto({ width: 20, height: 30, format: 'png' }).bytes]) {
      expect(decodeError(() => decodeImage(data, 'webp'))).toBeInstanceOf(ImageDecodeError)
    }
  })
})
