import { rgbaRows, type RgbaImage, type RowSource } from './codecs/raster.ts'

/** Area-average downscale so the long side is at most maxLongSide; returns the image itself when already small enough. */
export function downscaleToFit(image: RgbaImage, maxLongSide: number): RgbaImage {
  const size = fitted(image, maxLongSide)
  return size ? resizeArea(image, size.width, size.height) : image
}

/** downscaleToFit as a row source: each strip asked for is computed from the source rows it covers. */
export function downscaleRowsToFit(source: RowSource, maxLongSide: number): RowSource {
  const size = fitted(source, maxLongSide)
  return size ? resizeAreaRows(source, size.width, size.height) : source
}

function fitted(image: { width: number; height: number }, maxLongSide: number): { width: number; height: number } | undefined {
  const longSide = Math.max(image.width, image.height)
  if (longSide <= maxLongSide) return undefined
  const factor = maxLongSide / longSide
  return { width: Math.max(1, Math.round(image.width * factor)), height: Math.max(1, Math.round(image.height * factor)) }
}

/** Separable box-filter resize for shrinking: every source pixel contributes to exactly one output pixel per axis. */
export function resizeArea(image: RgbaImage, width: number, height: number): RgbaImage {
  const data = new Uint8Array(width * height * 4)
  resizeAreaRows(rgbaRows(image), width, height, data).rows(0, height)
  return { width, height, data }
}

/**
 * resizeArea one strip at a time: output rows [y, y + count) read only the source rows they cover, once.
 * `into` is where the strips go (by default a buffer of the largest strip asked for).
 */
export function resizeAreaRows(source: RowSource, width: number, height: number, into?: Uint8Array): RowSource {
  const sw = source.width
  const columnStart = spans(sw, width)
  const rowStart = spans(source.height, height)
  let largestBox = 0
  for (let y = 0; y < height; y++) largestBox = Math.max(largestBox, rowStart[y + 1] - rowStart[y])
  let widestBox = 0
  for (let x = 0; x < width; x++) widestBox = Math.max(widestBox, columnStart[x + 1] - columnStart[x])
  largestBox *= widestBox
  // Lanes 0 and 2 (and 1 and 3) are summed together in the 16-bit halves of one number, which holds the sum
  // of up to 257 bytes without carrying into its neighbour; larger boxes take one number per lane.
  const packed = largestBox <= 257
  const sums = packed ? new Int32Array(2 * sw) : new Float64Array(4 * sw)
  let strip = into ?? new Uint8Array(0)
  return {
    width,
    height,
    rows(y, count) {
      const bytes = count * width * 4
      if (strip.length < bytes) strip = new Uint8Array(bytes)
      const first = rowStart[y]
      const read = source.rows(first, rowStart[y + count] - first)
      // One 32-bit read per pixel; the four byte lanes are summed apart, so byte order does not matter.
      const aligned = read.byteOffset % 4 === 0 ? read : read.slice()
      const pixels = new Int32Array(aligned.buffer, aligned.byteOffset, aligned.length >> 2)
      const out = new Int32Array(strip.buffer, strip.byteOffset, bytes >> 2)
      if (packed) packedRows(pixels, first, sw, columnStart, rowStart, out, width, y, y + count, sums as Int32Array)
      else laneRows(pixels, first, sw, columnStart, rowStart, out, width, y, y + count, sums as Float64Array)
      return strip.subarray(0, bytes)
    },
  }
}

/**
 * Per output row: the source rows it covers summed down each column (one pass over the source, in order),
 * then those sums summed across each output pixel's span, and the exact box mean rounded (by multiplying
 * with the reciprocal, as division is slow; the nudge keeps exact halves rounding up).
 */
function packedRows(
  pixels: Int32Array,
  first: number,
  sw: number,
  columnStart: Int32Array,
  rowStart: Int32Array,
  out: Int32Array,
  width: number,
  y0: number,
  y1: number,
  sums: Int32Array,
): void {
  const evenSums = sums.subarray(0, sw)
  const oddSums = sums.subarray(sw)
  for (let y = y0, o = 0; y < y1; y++) {
    const from = rowStart[y]
    const to = rowStart[y + 1]
    for (let p = (from - first) * sw, s = 0; s < sw; p++, s++) {
      const v = pixels[p]
      evenSums[s] = v & 0xff00ff
      oddSums[s] = (v >>> 8) & 0xff00ff
    }
    for (let sy = from + 1; sy < to; sy++) {
      for (let p = (sy - first) * sw, s = 0; s < sw; p++, s++) {
        const v = pixels[p]
        evenSums[s] += v & 0xff00ff
        oddSums[s] += (v >>> 8) & 0xff00ff
      }
    }
    const rows = to - from
    for (let x = 0; x < width; x++, o++) {
      let even = 0
      let odd = 0
      for (let s = columnStart[x], end = columnStart[x + 1]; s < end; s++) {
        even += evenSums[s]
        odd += oddSums[s]
      }
      const area = rows * (columnStart[x + 1] - columnStart[x])
      const k = 1 / area
      const half = area / 2 + 1e-7 * area
      out[o] =
        (((even & 0xffff) + half) * k) |
        ((((odd & 0xffff) + half) * k) << 8) |
        ((((even >>> 16) + half) * k) << 16) |
        ((((odd >>> 16) + half) * k) << 24)
    }
  }
}

function laneRows(
  pixels: Int32Array,
  first: number,
  sw: number,
  columnStart: Int32Array,
  rowStart: Int32Array,
  out: Int32Array,
  width: number,
  y0: number,
  y1: number,
  columnSums: Float64Array,
): void {
  for (let y = y0, o = 0; y < y1; y++) {
    const from = rowStart[y]
    const to = rowStart[y + 1]
    columnSums.fill(0)
    for (let sy = from; sy < to; sy++) {
      for (let p = (sy - first) * sw, end = p + sw, s = 0; p < end; p++, s += 4) {
        const v = pixels[p]
        columnSums[s] += v & 255
        columnSums[s + 1] += (v >>> 8) & 255
        columnSums[s + 2] += (v >>> 16) & 255
        columnSums[s + 3] += v >>> 24
      }
    }
    const rows = to - from
    for (let x = 0; x < width; x++, o++) {
      let a = 0,
        b = 0,
        c = 0,
        d = 0
      for (let s = columnStart[x] * 4, end = columnStart[x + 1] * 4; s < end; s += 4) {
        a += columnSums[s]
        b += columnSums[s + 1]
        c += columnSums[s + 2]
        d += columnSums[s + 3]
      }
      const area = rows * (columnStart[x + 1] - columnStart[x])
      const k = 1 / area
      const half = area / 2 + 1e-7 * area
      out[o] = ((a + half) * k) | (((b + half) * k) << 8) | (((c + half) * k) << 16) | (((d + half) * k) << 24)
    }
  }
}

function spans(source: number, target: number): Int32Array {
  const starts = new Int32Array(target + 1)
  for (let i = 0; i <= target; i++) starts[i] = Math.min(source, Math.round((i * source) / target))
  for (let i = 1; i <= target; i++) if (starts[i] <= starts[i - 1]) starts[i] = Math.min(source, starts[i - 1] + 1)
  return starts
}
