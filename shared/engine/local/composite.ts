import type { RgbaImage } from '../../images/codecs/raster.ts'
import type { GarmentCategory } from '../types.ts'
import type { Scale, Placement } from './fit.ts'
import type { GarmentCutout } from './garment.ts'
import type { BodyLayout } from './person.ts'
import type { Mask } from './segmentation.ts'

/** Multiplicative shading from the person photo, on a half-resolution grid over the garment's area. */
interface ShadingMap {
  x0: number
  y0: number
  width: number
  height: number
  factor: Float32Array
}

/**
 * The air between the torso and an arm held out from it, row by row from the shoulders: four analysis-image x per row
 * (left air from, to; right air from, to; ends exclusive, from >= to where there is none).
 */
export interface ArmAir {
  firstRow: number
  spans: Float32Array
}

/** Air a garment keeps off, as a share of the figure's height, next to the torso and the arm: a seam's give. */
const AIR_MARGIN = 0.01
/**
 * Air under an arm at least this wide (share of the figure's height, margins taken off) is kept free of a garment's
 * body too, not only of its sleeves: the README's demo shopper, arms hanging a little apart, has 0.021 at most there,
 * an arms-out figure far more.
 */
const WIDE_AIR = 0.04
/** An arm further than this share of the figure's height from the torso is not looked for. */
const ARM_REACH = 0.3

/**
 * The air under an arm held out from the body, down to the hips (a dress: the waist, below which its skirt stands out;
 * trousers: none), which compositeGarment keeps a garment's sleeves out of (and its body, where the air is WIDE_AIR).
 * A sleeve fitted to the arm's reach spans that air, and a T-shirt on an arms-out pose hung its sleeves straight down
 * into it, pasted on to the eye (tuning soft 51, photo 182). A row has such air where the silhouette shows again
 * beyond the torso's span, further out on the same side.
 */
export function airUnderArms(mask: Mask, body: BodyLayout, category: GarmentCategory): ArmAir {
  const H = body.figureHeight
  const firstRow = Math.max(0, Math.ceil(body.shoulderY))
  const end = category === 'bottom' ? firstRow : Math.min(mask.height, Math.floor(category === 'dress' ? body.waistY : body.hipY))
  const spans = new Float32Array(Math.max(0, end - firstRow) * 4)
  const margin = AIR_MARGIN * H
  const reach = ARM_REACH * H
  const { width, data } = mask
  for (let y = firstRow; y < end; y++) {
    const left = body.torso.left[y]
    const right = body.torso.right[y]
    if (Number.isNaN(left) || Number.isNaN(right)) continue
    const row = y * width
    for (const [edge, step, at] of [
      [Math.floor(left), -1, 0],
      [Math.ceil(right), 1, 2],
    ] as const) {
      // Out through the torso's own pixels past its span, then across the air to the arm, if one is within reach.
      let x = edge
      while (x >= 0 && x < width && data[row + x]) x += step
      const airStart = x
      while (x >= 0 && x < width && Math.abs(x - edge) < reach && !data[row + x]) x += step
      if (x < 0 || x >= width || !data[row + x]) continue
      const near = step < 0 ? x + 1 + margin : airStart + margin
      const far = step < 0 ? airStart + 1 - margin : x - margin
      spans[(y - firstRow) * 4 + at] = near
      spans[(y - firstRow) * 4 + at + 1] = far
    }
  }
  return { firstRow, spans }
}

/**
 * Draws the fitted garment over the person: garment colour and texture, modulated by the person's own light
 * and folds, blended through the garment's soft alpha. Draws in place (a copy of a full photo costs time and
 * memory) and returns the same image.
 */
export function compositeGarment(
  person: RgbaImage,
  bodyMask: Mask,
  maskScale: Scale,
  garment: GarmentCutout,
  placement: Placement,
  figureHeight: number,
  air?: ArmAir,
): RgbaImage {
  const { width, height } = person
  const out = person.data
  const g = garment.image
  const gw = g.width
  const gh = g.height
  const gd = g.data
  const yStart = Math.max(0, placement.top)
  const yEnd = Math.min(height, placement.bottom)
  if (yEnd <= yStart) return person

  let minX = width
  let maxX = 0
  for (let y = yStart; y < yEnd; y++) {
    const i = (y - placement.top) * 4
    minX = Math.min(minX, Math.max(0, Math.floor(placement.outputX[i])))
    maxX = Math.max(maxX, Math.min(width, Math.ceil(placement.outputX[i + 3])))
  }
  if (maxX <= minX) return person
  const shading = shadingMap(person, bodyMask, maskScale, minX, yStart, maxX, yEnd, figureHeight)
  const guardRamp = Math.max(2, figureHeight * 0.01)
  const wideAir = WIDE_AIR * figureHeight

  for (let y = yStart; y < yEnd; y++) {
    const i = y - placement.top
    const guard = y < placement.guardY ? 0 : Math.min(1, (y - placement.guardY) / guardRamp)
    if (guard <= 0) continue
    const guardShare = guard / 255
    const gy = Math.min(gh - 1, Math.max(0, placement.sourceRow[i] - 0.5))
    const gy0 = Math.floor(gy)
    const gy1 = Math.min(gh - 1, gy0 + 1)
    const fy = gy - gy0
    const row0 = gy0 * gw
    const row1 = gy1 * gw
    const shadingRow = Math.min(shading.height - 1, (y - shading.y0) >> 1) * shading.width
    // A skirt hangs free below the hips: the legs' outline must not show through it.
    const bodyShading = 1 - Math.min(1, Math.max(0, (y - placement.hangsFreeBelow) / (figureHeight * 0.05)))
    // The air under a raised arm on this row, in output x.
    const airRow = air ? Math.floor((y + 0.5) / maskScale.y) - air.firstRow : -1
    const hasAir = air !== undefined && airRow >= 0 && airRow * 4 < air.spans.length
    const airLeftFrom = hasAir ? air.spans[airRow * 4] * maskScale.x : 0
    const airLeftTo = hasAir ? air.spans[airRow * 4 + 1] * maskScale.x : 0
    const airRightFrom = hasAir ? air.spans[airRow * 4 + 2] * maskScale.x : 0
    const airRightTo = hasAir ? air.spans[airRow * 4 + 3] * maskScale.x : 0
    // A sleeve is kept out of any air under an arm; a body cut wider than the torso only out of wide air (an arm held
    // out): next to an arm hanging a little apart it is cloth, and cut it showed the wall through slits.
    const leftWide = airLeftTo - airLeftFrom >= wideAir
    const rightWide = airRightTo - airRightFrom >= wideAir
    for (let segment = 0; segment < 3; segment++) {
      const sleeve = segment !== 1
      const cutLeft = sleeve || leftWide
      const cutRight = sleeve || rightWide
      const xa = placement.outputX[i * 4 + segment]
      const xb = placement.outputX[i * 4 + segment + 1]
      if (xb - xa < 0.01) continue
      const ga = placement.garmentX[i * 4 + segment]
      const slope = (placement.garmentX[i * 4 + segment + 1] - ga) / (xb - xa)
      const from = Math.max(0, Math.ceil(xa - 0.5))
      const to = Math.min(width, Math.ceil(xb - 0.5))
      for (let x = from; x < to; x++) {
        if ((cutLeft && x >= airLeftFrom && x < airLeftTo) || (cutRight && x >= airRightFrom && x < airRightTo)) continue
        const gx = ga + (x + 0.5 - xa) * slope - 0.5
        if (gx <= -1 || gx >= gw) continue
        const gx0 = Math.floor(gx)
        const fx = gx - gx0
        // A tap past the garment's edge gets no weight (and a valid index, so its zero product stays finite).
        const left = gx0 >= 0 ? gx0 : 0
        const right = gx0 + 1 < gw ? gx0 + 1 : gw - 1
        const wl = gx0 >= 0 ? 1 - fx : 0
        const wr = gx0 + 1 < gw ? fx : 0
        const p00 = (row0 + left) * 4
        const p10 = (row0 + right) * 4
        const p01 = (row1 + left) * 4
        const p11 = (row1 + right) * 4
        const a00 = gd[p00 + 3] * wl * (1 - fy)
        const a10 = gd[p10 + 3] * wr * (1 - fy)
        const a01 = gd[p01 + 3] * wl * fy
        const a11 = gd[p11 + 3] * wr * fy
        const alpha = a00 + a10 + a01 + a11
        if (alpha < 1) continue
        const o = (y * width + x) * 4
        const light = 1 + (shading.factor[shadingRow + Math.min(shading.width - 1, (x - shading.x0) >> 1)] - 1) * bodyShading
        const coverage = alpha * guardShare
        // The colour is the alpha-weighted mean (v / alpha) times light and coverage: alpha cancels.
        const k = light * guardShare
        const keep = 1 - coverage
        const red = out[o] * keep + (gd[p00] * a00 + gd[p10] * a10 + gd[p01] * a01 + gd[p11] * a11) * k
        const green = out[o + 1] * keep + (gd[p00 + 1] * a00 + gd[p10 + 1] * a10 + gd[p01 + 1] * a01 + gd[p11 + 1] * a11) * k
        const blue = out[o + 2] * keep + (gd[p00 + 2] * a00 + gd[p10 + 2] * a10 + gd[p01 + 2] * a01 + gd[p11 + 2] * a11) * k
        out[o] = red > 255 ? 255 : red
        out[o + 1] = green > 255 ? 255 : green
        out[o + 2] = blue > 255 ? 255 : blue
      }
    }
  }
  return person
}

/**
 * Fold shading is the ratio of lightly to heavily blurred luminance inside the body; overall lighting is the
 * heavy blur against the body's mean. Blurs are weighted by the body mask so the backdrop does not bleed in.
 */
function shadingMap(
  person: RgbaImage,
  mask: Mask,
  maskScale: Scale,
  x0: number,
  y0: number,
  x1: number,
  y1: number,
  figureHeight: number,
): ShadingMap {
  const width = Math.max(1, Math.ceil((x1 - x0) / 2))
  const height = Math.max(1, Math.ceil((y1 - y0) / 2))
  const n = width * height
  const luma = new Float32Array(n)
  const channels = [new Float32Array(n), new Float32Array(n), new Float32Array(n)]
  const weight = new Float32Array(n)
  const d = person.data
  const maskColumn = new Int32Array(width)
  for (let x = 0; x < width; x++)
    maskColumn[x] = Math.min(mask.width - 1, Math.floor((Math.min(person.width - 1, x0 + x * 2) + 1) / maskScale.x))
  for (let y = 0; y < height; y++) {
    const py = Math.min(person.height - 1, y0 + y * 2)
    const py1 = Math.min(person.height - 1, py + 1)
    const my = Math.min(mask.height - 1, Math.floor((py + 1) / maskScale.y))
    const maskRow = my * mask.width
    for (let x = 0; x < width; x++) {
      const px = Math.min(person.width - 1, x0 + x * 2)
      const px1 = Math.min(person.width - 1, px + 1)
      const a = (py * person.width + px) * 4
      const b = (py * person.width + px1) * 4
      const c = (py1 * person.width + px) * 4
      const e = (py1 * person.width + px1) * 4
      const inside = mask.data[maskRow + maskColumn[x]]
      const w = inside ? 1 : 0.02
      const i = y * width + x
      const red = (d[a] + d[b] + d[c] + d[e]) / 4
      const green = (d[a + 1] + d[b + 1] + d[c + 1] + d[e + 1]) / 4
      const blue = (d[a + 2] + d[b + 2] + d[c + 2] + d[e + 2]) / 4
      channels[0][i] = red * w
      channels[1][i] = green * w
      channels[2][i] = blue * w
      luma[i] = (0.299 * red + 0.587 * green + 0.114 * blue) * w
      weight[i] = w
    }
  }
  const fineRadius = Math.max(1, Math.round((figureHeight * 0.004) / 2))
  const foldRadius = Math.max(2, Math.round((figureHeight * 0.03) / 2))
  const lightRadius = Math.max(3, Math.round((figureHeight * 0.12) / 2))
  const fine = normalizedBlur(luma, weight, width, height, fineRadius)
  const fold = normalizedBlur(luma, weight, width, height, foldRadius)
  const light = normalizedBlur(luma, weight, width, height, lightRadius)
  const fineChannels = channels.map((c) => normalizedBlur(c, weight, width, height, fineRadius))
  const foldChannels = channels.map((c) => normalizedBlur(c, weight, width, height, foldRadius))
  const bodyShare = boxSum(weight, width, height, fineRadius)
  const windowArea = (2 * fineRadius + 1) * (2 * fineRadius + 1)
  let total = 0
  let count = 0
  for (let i = 0; i < n; i++) {
    if (weight[i] === 1) {
      total += light[i]
      count++
    }
  }
  const reference = count ? total / count : 128
  const crossings = patternCrossings(fine, fold, weight, width, height, foldRadius)
  const factor = new Float32Array(n)
  for (let i = 0; i < n; i++) {
    // A print that crosses the fold blur again and again (stripes, dots) is no fold: its shading fades out.
    const plain = clamp((PRINT_CROSSINGS - crossings[i]) / (PRINT_CROSSINGS - FOLD_CROSSINGS), 0, 1)
    const folds = 1 + (foldCurve(clamp(sharedRatio(fineChannels, foldChannels, i), 0.8, 1.22)) - 1) * plain
    const lighting = Math.sqrt(clamp((light[i] + 10) / (reference + 10), 0.85, 1.15))
    const share = Math.min(1, bodyShare[i] / windowArea)
    factor[i] = 1 + (folds * lighting - 1) * share
  }
  return { x0, y0, width, height, factor }
}

/**
 * How many times the fine light crosses the fold blur within a fold's window, down the columns or along the rows (the
 * more): a fold or an edge crosses it once or twice, a striped or dotted top many times.
 */
function patternCrossings(
  fine: Float32Array,
  fold: Float32Array,
  weight: Float32Array,
  width: number,
  height: number,
  r: number,
): Float32Array {
  const down = new Float32Array(fine.length)
  const along = new Float32Array(fine.length)
  const side = (i: number) => {
    if (weight[i] !== 1) return 0
    const ratio = (fine[i] + 10) / (fold[i] + 10)
    return ratio > 1 + CROSSING_MARGIN ? 1 : ratio < 1 - CROSSING_MARGIN ? -1 : 0
  }
  // A crossing is marked where the side changes from the last side seen along the line, at `count` steps of `step`.
  const mark = (marks: Float32Array, start: number, count: number, step: number) => {
    let last = 0
    for (let k = 0, i = start; k < count; k++, i += step) {
      const s = side(i)
      if (s !== 0 && last !== 0 && s !== last) marks[i] = 1
      if (s !== 0) last = s
    }
  }
  for (let x = 0; x < width; x++) mark(down, x, height, width)
  for (let y = 0; y < height; y++) mark(along, y * width, width, 1)
  const columns = boxSum(down, width, height, r)
  const rows = boxSum(along, width, height, r)
  const span = 2 * r + 1
  for (let i = 0; i < columns.length; i++) columns[i] = Math.max(columns[i], rows[i]) / span
  return columns
}

/** How far from 1 the fine-to-fold ratio must be to count as one side of a crossing (noise stays within it). */
const CROSSING_MARGIN = 0.04
/** Crossings in a fold's window that fold shading keeps whole, and at which it is gone. */
const FOLD_CROSSINGS = 3
const PRINT_CROSSINGS = 5

/** Channels darker than this over a fold's width carry too little light to tell a shadow from a change of colour. */
const LIT_CHANNEL = 40
/**
 * A channel between this and LIT_CHANNEL still shows a change of colour against the lit ones, when it moves the other
 * way by more than DIM_CHANNEL_MOVE (green over blue: where green's blur is just under 40 and blue's over).
 */
const DIM_CHANNEL = 10
const DIM_CHANNEL_MOVE = 0.1

/**
 * The fold's ratio of fine to fold-blurred light, as far as every lit channel agrees on it: a fold or a shadow scales
 * all channels alike, while a stripe or a print of another hue moves them apart (lime over grey: red and green rise as
 * blue falls) and is not copied onto the garment. Channels agreeing in direction give the ratio nearest 1; disagreeing,
 * or a dim channel moving against them, 1; no lit channel (a black top), 1. Stripes of one hue, lighter and darker (navy
 * over pink), agree: patternCrossings fades those.
 */
function sharedRatio(fineChannels: Float32Array[], foldChannels: Float32Array[], i: number): number {
  let low = Infinity
  let high = -Infinity
  let dimUp = false
  let dimDown = false
  for (let c = 0; c < 3; c++) {
    const blurred = foldChannels[c][i]
    if (blurred < DIM_CHANNEL) continue
    const ratio = (fineChannels[c][i] + 10) / (blurred + 10)
    if (blurred >= LIT_CHANNEL) {
      if (ratio < low) low = ratio
      if (ratio > high) high = ratio
    } else {
      dimUp ||= ratio > 1 + DIM_CHANNEL_MOVE
      dimDown ||= ratio < 1 - DIM_CHANNEL_MOVE
    }
  }
  if (low > 1 && low !== Infinity) return dimDown ? 1 : low
  if (high < 1 && high !== -Infinity) return dimUp ? 1 : high
  return 1
}

/** x^0.8 on [0.8, 1.22], from a table: Math.pow per pixel is slow and the curve is smooth (error < 1e-7). */
const FOLD_STEPS = 4096
const FOLD_TABLE = Float64Array.from({ length: FOLD_STEPS + 2 }, (_, i) => (0.8 + (0.42 * Math.min(i, FOLD_STEPS)) / FOLD_STEPS) ** 0.8)

function foldCurve(x: number): number {
  const t = ((x - 0.8) / 0.42) * FOLD_STEPS
  const i = t | 0
  return FOLD_TABLE[i] + (FOLD_TABLE[i + 1] - FOLD_TABLE[i]) * (t - i)
}

/** Mean of the weighted signal over a (2r+1)² window: weights keep the backdrop out of the body's average. */
function normalizedBlur(weighted: Float32Array, weight: Float32Array, width: number, height: number, r: number): Float32Array {
  const sum = boxSum(weighted, width, height, r)
  const norm = boxSum(weight, width, height, r)
  for (let i = 0; i < sum.length; i++) sum[i] = norm[i] > 1e-6 ? sum[i] / norm[i] : 0
  return sum
}

/** Sum over a (2r+1)² window clipped to the image, by running sums in each direction. */
function boxSum(src: Float32Array, width: number, height: number, r: number): Float32Array {
  const tmp = new Float32Array(src.length)
  const out = new Float32Array(src.length)
  for (let y = 0; y < height; y++) {
    const row = y * width
    let sum = 0
    for (let x = 0; x < Math.min(width, r); x++) sum += src[row + x]
    for (let x = 0; x < width; x++) {
      if (x + r < width) sum += src[row + x + r]
      if (x - r - 1 >= 0) sum -= src[row + x - r - 1]
      tmp[row + x] = sum
    }
  }
  for (let x = 0; x < width; x++) {
    let sum = 0
    for (let y = 0; y < Math.min(height, r); y++) sum += tmp[y * width + x]
    for (let y = 0; y < height; y++) {
      if (y + r < height) sum += tmp[(y + r) * width + x]
      if (y - r - 1 >= 0) sum -= tmp[(y - r - 1) * width + x]
      out[y * width + x] = sum
    }
  }
  return out
}

function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v
}
