import { JpegChroma, JpegEncoder } from 'image-in-browser/lib/src/formats/jpeg-encoder.js'
import { MemoryImage } from 'image-in-browser/lib/src/image/image.js'
import { describe, expect, it } from 'vitest'
import {
  decodeImage,
  decodeImageRows,
  encodeJpeg,
  encodeJpegRows,
  type RgbaImage,
  type RowSource,
} from '../../../shared/images/codecs/index.ts'
import { rgbaRows } from '../../../shared/images/codecs/raster.ts'
import { downscaleRowsToFit, resizeArea, resizeAreaRows } from '../../../shared/images/resize.ts'
import { prepareInput } from '../../../shared/engine/providers/images.ts'
import { asInput, makeNoiseImage, makeShopperPhoto } from '../../support/images.ts'

const shopper = makeShopperPhoto({ width: 203, height: 301, format: 'png' }).pixels

function foreignJpeg(image: RgbaImage, chroma: JpegChroma): Uint8Array {
  const memory = MemoryImage.fromBytes({ width: image.width, height: image.height, bytes: image.data.slice().buffer, numChannels: 4 })
  return new JpegEncoder(90).encode({ image: memory, chroma })
}

/** Rows [y, y + count) of whole pixels. */
const rowsOf = (image: RgbaImage, y: number, count: number) => image.data.slice(y * image.width * 4, (y + count) * image.width * 4)

/** Where two byte arrays first differ (-1 when equal): quicker than a deep equality over megabytes. */
function firstDifference(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) return Math.min(a.length, b.length)
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i
  return -1
}

/** A source that records the largest strip it was asked for, and how many rows it gave in all. */
function counting(source: RowSource): RowSource & { largest: number; total: number } {
  const counted = {
    width: source.width,
    height: source.height,
    largest: 0,
    total: 0,
    rows(y: number, count: number) {
      counted.largest = Math.max(counted.largest, count)
      counted.total += count
      return source.rows(y, count)
    },
  }
  return counted
}

describe('decoding a JPEG strip by strip', () => {
  it.each([
    ['4:2:0', encodeJpeg(shopper, 92), 0],
    ['4:2:0 at half scale', encodeJpeg(shopper, 92), 120],
    ['4:4:4', foreignJpeg(shopper, JpegChroma.yuv444), 0],
    ['4:4:4 at quarter scale', foreignJpeg(shopper, JpegChroma.yuv444), 60],
  ])('gives the rows of the whole decode, from any row and in any count (%s)', (_, bytes, minLongSide) => {
    const whole = decodeImage(bytes, 'jpeg', { minLongSide })
    const strips = decodeImageRows(bytes, 'jpeg', { minLongSide })
    expect([strips.width, strips.height]).toEqual([whole.width, whole.height])
    for (const [y, count] of [
      [0, 16],
      [16, 16],
      [7, 1],
      [9, 10],
      [whole.height - 3, 3],
      [0, whole.height],
    ]) {
      expect(firstDifference(strips.rows(y, count), rowsOf(whole, y, count))).toBe(-1)
    }
  })
})

describe('resizing strip by strip', () => {
  it.each([
    [101, 150],
    [20, 30],
    [202, 17],
  ])('gives the whole resize to %ix%i, strip by strip', (width, height) => {
    const whole = resizeArea(shopper, width, height)
    const source = counting(rgbaRows(shopper))
    const strips = resizeAreaRows(source, width, height)
    for (let y = 0; y < height; y += 16) {
      const count = Math.min(16, height - y)
      expect(firstDifference(strips.rows(y, count), rowsOf(whole, y, count))).toBe(-1)
    }
    // Every source row is read once, and a strip reads only the rows it covers.
    expect(source.total).toBe(shopper.height)
    expect(source.largest).toBeLessThanOrEqual(Math.ceil((16 * shopper.height) / height) + 1)
  })
})

describe('encoding strip by strip', () => {
  it('writes the same bytes as the whole-image encoder, reading 16 rows at a time', () => {
    const source = counting(rgbaRows(shopper))
    expect(firstDifference(encodeJpegRows(source, 85), encodeJpeg(shopper, 85))).toBe(-1)
    expect(source.largest).toBe(16)
  })

  it('re-encodes a large JPEG for a provider without ever converting more than a strip of it', () => {
    const photo = asInput(makeNoiseImage({ width: 2100, height: 900, format: 'jpeg' }))
    const policy = { formats: ['jpeg'] as const, maxBytes: 10 * 1024 * 1024, maxLongSide: 1000 }
    // The bytes the whole-image path gives: decode, shrink, encode.
    const reference = encodeJpeg(resizeArea(decodeImage(photo.bytes, 'jpeg', { minLongSide: 1000 }), 1000, 429), 92)
    expect(firstDifference(prepareInput(photo, 'userPhoto', policy).bytes, reference)).toBe(-1)

    const source = counting(decodeImageRows(photo.bytes, 'jpeg', { minLongSide: 1000 }))
    encodeJpegRows(downscaleRowsToFit(source, 1000), 92)
    expect(source.total).toBe(source.height)
    expect(source.largest).toBeLessThan(40)
  })
})
