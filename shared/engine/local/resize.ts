import type { RgbaImage } from './codecs/raster.ts'

/** Area-average downscale so the long side is at most maxLongSide; returns the image itself when already small enough. */
export function downscaleToFit(image: RgbaImage, maxLongSide: number): RgbaImage {
  const longSide = Math.max(image.width, image.height)
  if (longSide <= maxLongSide) return image
  const factor = maxLongSide / longSide
  return resizeArea(image, Math.max(1, Math.round(image.width * factor)), Math.max(1, Math.round(image.height * factor)))
}

/** Separable box-filter resize for shrinking: every source pixel contributes to exactly one output pixel per axis. */
export function resizeArea(image: RgbaImage, width: number, height: number): RgbaImage {
  const { width: sw, height: sh, data } = image
  const columnStart = spans(sw, width)
  const rowStart = spans(sh, height)
  const horizontal = new Uint32Array(width * sh * 4)
  for (let y = 0; y < sh; y++) {
    const src = y * sw * 4
    const dst = y * width * 4
    for (let x = 0; x < width; x++) {
      const from = columnStart[x]
      const to = columnStart[x + 1]
      let r = 0, g = 0, b = 0, a = 0
      for (let sx = from, p = src + from * 4; sx < to; sx++, p += 4) {
        r += data[p]
        g += data[p + 1]
        b += data[p + 2]
        a += data[p + 3]
      }
      const n = to - from
      const o = dst + x * 4
      horizontal[o] = ((r << 8) / n) | 0
      horizontal[o + 1] = ((g << 8) / n) | 0
      horizontal[o + 2] = ((b << 8) / n) | 0
      horizontal[o + 3] = ((a << 8) / n) | 0
    }
  }
  const out = new Uint8Array(width * height * 4)
  const rowLength = width * 4
  for (let y = 0; y < height; y++) {
    const from = rowStart[y]
    const to = rowStart[y + 1]
    const divisor = (to - from) * 256
    const o = y * rowLength
    for (let i = 0; i < rowLength; i++) {
      let sum = 0
      for (let sy = from; sy < to; sy++) sum += horizontal[sy * rowLength + i]
      out[o + i] = ((sum + (divisor >> 1)) / divisor) | 0
    }
  }
  return { width, height, data: out }
}

function spans(source: number, target: number): Int32Array {
  const starts = new Int32Array(target + 1)
  for (let i = 0; i <= target; i++) starts[i] = Math.min(source, Math.round((i * source) / target))
  for (let i = 1; i <= target; i++) if (starts[i] <= starts[i - 1]) starts[i] = Math.min(source, starts[i - 1] + 1)
  return starts
}
