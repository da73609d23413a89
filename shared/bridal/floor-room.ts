import type { InputImage } from '../engine/types.ts'
import { encodeJpeg, type DecodeBudget } from '../images/codecs/index.ts'
import { decodeUpright } from '../images/upright.ts'
import { DEFAULT_OUTPUT_SIDE } from '../engine/local/index.ts'
import { median } from '../median.ts'

/** Never more than half the photo again: a pre-treatment adds room, it does not change the picture. */
const MAX_SHARE = 0.5
/**
 * The padded photo is made at no more than engines take (providers are sent about 2048 px, the local engine keeps
 * 1536): a JPEG decoded at the DCT scale that still gives the local engine's 1536 px (a 12 MP photo at 2016 px, a
 * 40 MP one at 1936), the copy the pre-treatment already decoded for its analysis, so the photo is decoded once; any
 * other image shrunk to 4096. A 40 MP photo padded at full size was 60 MP to encode, over the pixel limit the engine
 * then holds it to; at 2048 px, a 40 MP progressive JPEG was decoded a second time at half scale (about a second).
 */
const PADDED_MIN_LONG_SIDE = DEFAULT_OUTPUT_SIDE
const PADDED_MAX_LONG_SIDE = 4096

/**
 * The shopper photo with `rows` more rows of floor below it, so an engine that keeps the photo's framing
 * has room to lay the train out. The new floor continues the floor at the photo's bottom edge column by
 * column; where the feet or their shadow stand on that edge, the floor's run across the row (read robustly,
 * lighter in the middle under a vignette, graded by the light) stands in, so they are not drawn on into it.
 * `standing` tells, for a position t from 0 to 1 across the photo, whether the shopper stands there on the
 * bottom edge (their feet, as the analysis of the photo found them). The result counts its added rows (addedFloorRows).
 */
export function padWithFloor(person: InputImage, rows: number, standing?: (t: number) => boolean, budget?: DecodeBudget): InputImage {
  const image = decodeUpright(person, { side: PADDED_MIN_LONG_SIDE, maxSide: PADDED_MAX_LONG_SIDE, budget })
  const { width, height } = image
  // `rows` and the rows added before are in the photo's own rows; this copy may be smaller.
  const scale = height / person.height
  const extra = Math.max(1, Math.min(Math.round(height * MAX_SHARE), Math.round(rows * scale)))
  const out = new Uint8Array(width * (height + extra) * 4)
  out.set(image.data)
  const band = Math.max(1, Math.round(height * 0.02))
  const columns: number[][] = [[], [], []]
  const values: number[] = []
  for (let x = 0; x < width; x++) {
    for (let c = 0; c < 3; c++) {
      values.length = 0
      for (let y = height - band; y < height; y++) values.push(image.data[(y * width + x) * 4 + c])
      values.sort((a, b) => a - b)
      columns[c].push(values[values.length >> 1])
    }
  }
  // Each column goes on as it ends (boards and tiles run towards the camera), except where something other
  // than floor ends it (the feet, their shadow): there the floor's run across the row stands in.
  const floor = columns.map((column) => robustQuadratic(column))
  const colour = new Uint8Array(width * 3)
  for (let x = 0; x < width; x++) {
    const t = x / Math.max(1, width - 1)
    const outlier = standing?.(t) || floor.some((fit, c) => !fit.fits(columns[c][x], t))
    for (let c = 0; c < 3; c++) colour[x * 3 + c] = Math.max(0, Math.min(255, Math.round(outlier ? floor[c].at(t) : columns[c][x])))
  }
  for (let y = height; y < height + extra; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4
      out.set(colour.subarray(x * 3, x * 3 + 3), o)
      out[o + 3] = 255
    }
  }
  const bytes = encodeJpeg({ width, height: height + extra, data: out }, 90)
  return { bytes, format: 'jpeg', width, height: height + extra, addedFloorRows: extra + (person.addedFloorRows ?? 0) * scale }
}

/**
 * A quadratic a + b·t + c·t² (t from 0 to 1 across the row) through the values, fitted three times, each time
 * without the values far from the last fit: whatever stands on the floor is an outlier to its run.
 */
function robustQuadratic(values: number[]): { at(t: number): number; fits(value: number, t: number): boolean } {
  const n = values.length
  let keep = values.map(() => true)
  let coefficients = [median(values), 0, 0]
  let limit = Infinity
  for (let round = 0; round < 3; round++) {
    const m = [
      [0, 0, 0, 0],
      [0, 0, 0, 0],
      [0, 0, 0, 0],
    ]
    for (let i = 0; i < n; i++) {
      if (!keep[i]) continue
      const t = n > 1 ? i / (n - 1) : 0
      const f = [1, t, t * t]
      for (let r = 0; r < 3; r++) {
        for (let k = 0; k < 3; k++) m[r][k] += f[r] * f[k]
        m[r][3] += f[r] * values[i]
      }
    }
    const solved = solve3(m)
    if (!solved) break
    coefficients = solved
    const at = (i: number) => coefficients[0] + coefficients[1] * (i / Math.max(1, n - 1)) + coefficients[2] * (i / Math.max(1, n - 1)) ** 2
    const residuals = values.map((v, i) => Math.abs(v - at(i)))
    limit = Math.max(4, 2.5 * 1.4826 * median(residuals))
    keep = residuals.map((r) => r <= limit)
  }
  const [a, b, c] = coefficients
  const at = (t: number) => a + b * t + c * t * t
  return { at, fits: (value, t) => Math.abs(value - at(t)) <= limit }
}

function solve3(m: number[][]): number[] | undefined {
  for (let col = 0; col < 3; col++) {
    let pivot = col
    for (let r = col + 1; r < 3; r++) if (Math.abs(m[r][col]) > Math.abs(m[pivot][col])) pivot = r
    if (Math.abs(m[pivot][col]) < 1e-9) return undefined
    ;[m[col], m[pivot]] = [m[pivot], m[col]]
    for (let r = 0; r < 3; r++) {
      if (r === col) continue
      const factor = m[r][col] / m[col][col]
      for (let k = col; k < 4; k++) m[r][k] -= factor * m[col][k]
    }
  }
  return [m[0][3] / m[0][0], m[1][3] / m[1][1], m[2][3] / m[2][2]]
}
