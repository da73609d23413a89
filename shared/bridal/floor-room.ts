import type { InputImage } from '../engine/types.ts'
import { decodeImage, encodeJpeg } from '../engine/local/codecs/index.ts'

/** Never more than half the photo again: a pre-treatment adds room, it does not change the picture. */
const MAX_SHARE = 0.5

/**
 * The shopper photo with `rows` more rows of floor below it, so an engine that keeps the photo's framing
 * has room to lay the train out. The new floor takes its colour from the floor at the photo's bottom corners
 * (the feet stand in the middle of the bottom edge), graded across the row as they are.
 */
export function padWithFloor(person: InputImage, rows: number): InputImage {
  const image = decodeImage(person.bytes, person.format)
  const { width, height } = image
  const extra = Math.max(1, Math.min(Math.round(height * MAX_SHARE), Math.round(rows)))
  const out = new Uint8Array(width * (height + extra) * 4)
  out.set(image.data)
  const band = Math.max(1, Math.round(height * 0.04))
  const strip = Math.max(1, Math.round(width * 0.05))
  const corner = (from: number, to: number): number[] => {
    const values: number[][] = [[], [], []]
    for (let y = height - band; y < height; y++) {
      for (let x = from; x < to; x++) for (let c = 0; c < 3; c++) values[c].push(image.data[(y * width + x) * 4 + c])
    }
    return values.map((v) => v.sort((a, b) => a - b)[v.length >> 1])
  }
  const left = corner(0, strip)
  const right = corner(width - strip, width)
  for (let y = height; y < height + extra; y++) {
    for (let x = 0; x < width; x++) {
      const t = width > 1 ? x / (width - 1) : 0
      const o = (y * width + x) * 4
      for (let c = 0; c < 3; c++) out[o + c] = Math.round(left[c] * (1 - t) + right[c] * t)
      out[o + 3] = 255
    }
  }
  const bytes = encodeJpeg({ width, height: height + extra, data: out }, 90)
  return { bytes, format: 'jpeg', width, height: height + extra }
}
