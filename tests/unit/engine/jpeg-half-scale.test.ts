import { JpegChroma, JpegEncoder } from 'image-in-browser/lib/src/formats/jpeg-encoder.js'
import { MemoryImage } from 'image-in-browser/lib/src/image/image.js'
import { describe, expect, it } from 'vitest'
import { decodeImage, encodeJpeg, type RgbaImage } from '../../../shared/images/codecs/index.ts'
import { makeShopperPhoto } from '../../support/images.ts'

/** The 2×2 means of a full-size decode: what a half-scale decode stands for. */
function halve(image: RgbaImage): RgbaImage {
  const width = Math.ceil(image.width / 2)
  const height = Math.ceil(image.height / 2)
  const data = new Uint8Array(width * height * 4)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < 4; c++) {
        let sum = 0
        let count = 0
        for (const [dx, dy] of [
          [0, 0],
          [1, 0],
          [0, 1],
          [1, 1],
        ]) {
          const sx = 2 * x + dx
          const sy = 2 * y + dy
          if (sx >= image.width || sy >= image.height) continue
          sum += image.data[(sy * image.width + sx) * 4 + c]
          count++
        }
        data[(y * width + x) * 4 + c] = Math.round(sum / count)
      }
    }
  }
  return { width, height, data }
}

function differences(a: RgbaImage, b: RgbaImage): { largest: number; mean: number } {
  expect([a.width, a.height]).toEqual([b.width, b.height])
  let largest = 0
  let sum = 0
  for (let i = 0; i < a.data.length; i++) {
    const d = Math.abs(a.data[i] - b.data[i])
    largest = Math.max(largest, d)
    sum += d
  }
  return { largest, mean: sum / a.data.length }
}

const photo = makeShopperPhoto({ width: 240, height: 360, format: 'png' }).pixels

function foreign(chroma: JpegChroma): Uint8Array {
  const memory = MemoryImage.fromBytes({ width: photo.width, height: photo.height, bytes: photo.data.slice().buffer, numChannels: 4 })
  return new JpegEncoder(90).encode({ image: memory, chroma })
}

describe('JPEG decoding at half scale', () => {
  it('gives the 2×2 means of the full-size decode within rounding when colour is not subsampled', () => {
    const bytes = foreign(JpegChroma.yuv444)
    const half = decodeImage(bytes, 'jpeg', { minLongSide: 180 })
    expect([half.width, half.height]).toEqual([120, 180])
    expect(differences(half, halve(decodeImage(bytes, 'jpeg'))).largest).toBeLessThanOrEqual(2)
  })

  it.each([
    ['this encoder', encodeJpeg(photo, 90)],
    ['another encoder', foreign(JpegChroma.yuv420)],
  ])('stays close to those means with 4:2:0 colour, which is coarser at half scale (%s)', (_, bytes) => {
    const half = decodeImage(bytes, 'jpeg', { minLongSide: 180 })
    expect([half.width, half.height]).toEqual([120, 180])
    // Each half-scale colour sample covers 4×4 pixels instead of 2×2: only colour edges differ.
    expect(differences(half, halve(decodeImage(bytes, 'jpeg'))).mean).toBeLessThan(1)
  })
})
