import { describe, expect, it } from 'vitest'
import type { RgbaImage } from '../../../shared/images/codecs/raster.ts'
import { downscaleToFit, resizeArea } from '../../../shared/images/resize.ts'

function noise(width: number, height: number, seed: number): RgbaImage {
  let state = seed
  const data = Uint8Array.from({ length: width * height * 4 }, () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff
    return state >> 23
  })
  return { width, height, data }
}

/** Each output pixel the rounded mean of the source box it covers, computed the slow way. */
function referenceResize(image: RgbaImage, width: number, height: number): Uint8Array {
  const edges = (source: number, target: number) => {
    const starts = Array.from({ length: target + 1 }, (_, i) => Math.min(source, Math.round((i * source) / target)))
    for (let i = 1; i <= target; i++) if (starts[i] <= starts[i - 1]) starts[i] = Math.min(source, starts[i - 1] + 1)
    return starts
  }
  const columns = edges(image.width, width)
  const rows = edges(image.height, height)
  const out = new Uint8Array(width * height * 4)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < 4; c++) {
        let sum = 0
        let count = 0
        for (let sy = rows[y]; sy < rows[y + 1]; sy++) {
          for (let sx = columns[x]; sx < columns[x + 1]; sx++, count++) sum += image.data[(sy * image.width + sx) * 4 + c]
        }
        out[(y * width + x) * 4 + c] = Math.floor(sum / count + 0.5)
      }
    }
  }
  return out
}

describe('area resize', () => {
  it.each([
    [97, 61, 20, 13],
    [512, 768, 107, 160],
    [50, 50, 50, 50],
    [7, 3, 1, 1],
    [100, 90, 5, 4],
    [133, 217, 132, 216],
  ])('gives every pixel, alpha included, the rounded mean of its box: %ix%i to %ix%i', (sw, sh, width, height) => {
    const source = noise(sw, sh, sw * 31 + sh)
    const resized = resizeArea(source, width, height)
    expect([resized.width, resized.height]).toEqual([width, height])
    expect(resized.data).toEqual(referenceResize(source, width, height))
  })

  it('reads an image whose pixels start at an offset that is not a multiple of four', () => {
    const source = noise(40, 30, 5)
    const shifted = new Uint8Array(source.data.length + 1)
    shifted.set(source.data, 1)
    const resized = resizeArea({ width: 40, height: 30, data: shifted.subarray(1) }, 9, 7)
    expect(resized.data).toEqual(referenceResize(source, 9, 7))
  })

  it('shrinks to a long side and leaves smaller images as they are', () => {
    const source = noise(300, 200, 9)
    expect(downscaleToFit(source, 300)).toBe(source)
    const shrunk = downscaleToFit(source, 120)
    expect([shrunk.width, shrunk.height]).toEqual([120, 80])
  })
})
