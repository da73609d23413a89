import type { GarmentCategory } from '../types.ts'
import type { RgbaImage } from '../../images/codecs/raster.ts'
import { measureGarmentShape, upperCentre, type GarmentCutout } from './garment-shape.ts'
import { bustOnlySkin, withoutModel } from './on-model.ts'
import { downscaleToFit } from '../../images/resize.ts'
import { median } from '../../median.ts'
import { maskBounds, segmentForeground, type Mask, type MaskBounds, type SegmentOptions } from './segmentation.ts'

export type { GarmentCutout } from './garment-shape.ts'

const ANALYSIS_SIDE = 256

export function extractGarment(image: RgbaImage): GarmentCutout {
  // On a studio backdrop the distance from it is averaged over a few pixels first: fabric of the backdrop's
  // own colour (a white gown on a white sweep) comes out whole instead of in scraps. When that reads as no
  // garment shape at all (thin parts lost to the averaging), the cut pixel by pixel is taken instead.
  const smoothed = cutGarment(image, { smoothRadius: SMOOTH_RADIUS })
  if (!smoothed.separated || smoothed.shape) return smoothed
  const sharp = cutGarment(image)
  return sharp.shape ? sharp : smoothed
}

/** Radius (analysis pixels) over which the backdrop distance is averaged when single pixels leave the garment in scraps. */
const SMOOTH_RADIUS = 2

function cutGarment(image: RgbaImage, options: SegmentOptions = {}): GarmentCutout {
  const small = downscaleToFit(image, ANALYSIS_SIDE)
  const segmentation = segmentForeground(small, options)
  // Nothing separable from the backdrop: the whole picture is taken as the garment (e.g. a fabric close-up).
  const separated = segmentation.coverage >= 0.01
  const mask = separated ? garmentMask(small, segmentation.mask) : fullMask(small.width, small.height)
  const box = boundingBox(mask)
  const scaleX = image.width / small.width
  const scaleY = image.height / small.height
  const x0 = Math.floor(box.x0 * scaleX)
  const y0 = Math.floor(box.y0 * scaleY)
  const x1 = Math.min(image.width, Math.ceil(box.x1 * scaleX))
  const y1 = Math.min(image.height, Math.ceil(box.y1 * scaleY))
  const cut = cutOut(image, mask, x0, y0, x1 - x0, y1 - y0, scaleX, scaleY)
  const { left, right } = rowEdges(cut)
  const height = cut.height
  const widthAt = (from: number, to: number): number => {
    const widths: number[] = []
    for (let y = Math.floor(height * from); y <= Math.min(height - 1, Math.floor(height * to)); y++) widths.push(right[y] - left[y])
    widths.sort((a, b) => a - b)
    return widths[widths.length >> 1] || cut.width
  }
  let waistRow = 0.35
  let narrowest = Infinity
  for (let y = Math.floor(height * 0.2); y < height * 0.5; y++) {
    if (right[y] - left[y] < narrowest) {
      narrowest = right[y] - left[y]
      waistRow = y / height
    }
  }
  const torso = torsoEdges(cut, left, right)
  const cutout: GarmentCutout = {
    image: cut,
    left,
    right,
    torsoLeft: torso.left,
    torsoRight: torso.right,
    topWidth: widthAt(0.03, 0.1),
    waistRow,
    hasLegs: hasTwoLegs(cut),
    separated,
    bustSkin: separated ? bustOnlySkin(small, segmentation.mask) : undefined,
  }
  cutout.shape = separated && !cutout.hasLegs ? measureGarmentShape(cutout) : undefined
  return cutout
}

/** The product's pixels among what stands out from the backdrop of a (downscaled) product photo. */
export function garmentMask(image: RgbaImage, foreground: Mask): Mask {
  return withoutProps(image, withoutModel(image, foreground))
}

/** Category from the garment's shape alone: two legs → bottom; tall and narrow → dress; otherwise a top. */
export function guessCategory(garment: GarmentCutout, hint?: string): GarmentCategory {
  const text = (hint ?? '').toLowerCase()
  if (/dress|gown|robe|frock/.test(text)) return 'dress'
  if (/jacket|coat|blazer|parka|cardigan|outerwear/.test(text)) return 'outerwear'
  if (/trouser|pant|jean|short|skirt|legging|bottom/.test(text)) return 'bottom'
  if (/shirt|tee|top|blouse|sweater|hoodie|polo|jumper/.test(text)) return 'top'
  if (garment.hasLegs) return 'bottom'
  const aspect = garment.image.height / garment.image.width
  if (aspect >= 1.25) return 'dress'
  return 'top'
}

/**
 * The mask without what is above and below the garment in another colour: a hanger (withoutHanger), a dress form's neck
 * and the torso below a shirt's hem, a stand and its base, a studio shadow. Rows at the top and the bottom are dropped
 * while most of what they hold is not of the garment's colour (read across its middle): a hanger's bar that shows no
 * hook goes that way, with the shoulders beside it. Taking only its pixels kept the shoulders, but on other products
 * kept the few pixels of the garment's colour such rows hold (soft 3161: an on-model dress cut to a band of arms).
 */
function withoutProps(image: RgbaImage, mask: Mask): Mask {
  const { width, height, data } = mask
  const box = boundingBox(mask)
  const samples: number[][] = [[], [], []]
  for (let y = Math.floor(box.y0 + 0.3 * (box.y1 - box.y0)); y < box.y0 + 0.6 * (box.y1 - box.y0); y++) {
    for (let x = Math.floor(box.x0 + 0.3 * (box.x1 - box.x0)); x < box.x0 + 0.7 * (box.x1 - box.x0); x++) {
      if (!data[y * width + x]) continue
      for (let c = 0; c < 3; c++) samples[c].push(image.data[(y * width + x) * 4 + c])
    }
  }
  if (samples[0].length === 0) return mask
  const fabric = samples.map((v) => v.sort((a, b) => a - b)[v.length >> 1])
  const hung = withoutHanger(image, mask, box, fabric)
  const out = hung ?? Uint8Array.from(data)
  const fabricShare = (y: number) => {
    let inside = 0
    let like = 0
    for (let x = 0; x < width; x++) {
      const i = y * width + x
      if (!out[i]) continue
      inside++
      if (colourDistance(image, i, fabric) <= FABRIC_REACH) like++
    }
    return inside ? like / inside : 1
  }
  // A hanger taken off leaves the garment's own top: what is below it is not a form's neck.
  if (!hung) for (let y = box.y0; y < box.y1 && fabricShare(y) < 0.5; y++) out.fill(0, y * width, (y + 1) * width)
  for (let y = box.y1 - 1; y >= box.y0 && fabricShare(y) < 0.5; y--) out.fill(0, y * width, (y + 1) * width)
  // A form's neck between two straps survives the rows above: other colours in the middle of the top rows go too.
  const band = Math.max(1, Math.round((box.y1 - box.y0) * 0.12))
  const middle = (box.x0 + box.x1) / 2
  const reach = (box.x1 - box.x0) * 0.12
  for (let y = box.y0; y < Math.min(height, box.y0 + band); y++) {
    for (let x = Math.max(0, Math.floor(middle - reach)); x <= Math.min(width - 1, Math.ceil(middle + reach)); x++) {
      const i = y * width + x
      if (!out[i]) continue
      if (colourDistance(image, i, fabric) > FABRIC_REACH) out[i] = 0
    }
  }
  return { width, height, data: out }
}

/** colourDistance within which a pixel is of a colour: the fabric's, or (withoutHanger) the hanger's. */
const FABRIC_REACH = 90

/** The sum of the channels' differences between pixel `i` and a colour. */
function colourDistance(image: RgbaImage, i: number, colour: readonly number[]): number {
  const d = image.data
  return Math.abs(d[i * 4] - colour[0]) + Math.abs(d[i * 4 + 1] - colour[1]) + Math.abs(d[i * 4 + 2] - colour[2])
}

/** A hook's rows span no more than this share of the garment's widest row. */
const HOOK_WIDTH = 0.06
/** Nor more than this share of the mask's height (trousers are narrow). */
const HOOK_HEIGHT = 0.03
/** Fewer such rows at the top are the rounding of a shoulder or a waistband, not a hook. */
const HOOK_ROWS = 0.03
/** Below the hook, rows narrower than this share of the widest are the hanger's bar alone (its colour is read there). */
const BAR_TIP = 0.3
/** How far below the hook the bar may reach, as a share of the mask's height. */
const BAR_ROWS = 0.15
/** A row left with fewer pixels than this share of the garment's width is a prop's outline, not the garment. */
const BAR_WISPS = 0.1

/**
 * The mask (a copy) without a hanger, or undefined when it shows no hook. The hook stands above the garment: rows each
 * spanning (leftmost to rightmost pixel) at most HOOK_WIDTH of the widest row (HOOK_HEIGHT of the mask's height for a
 * narrow garment) for HOOK_ROWS of its height at least; they go whatever their colour (the hook's edge, blended with the
 * wall, passed for a dark fabric and kept it: soft 10596's T-shirt measured 3 px across its top and went on low, the
 * bar across the chest). Then, on the rows below, the pixels of the hanger's colour (read on the hook and the bar's
 * tip) nearer to it than to the fabric's, down to the first row with none, and the wisps of the bar's outline. The
 * garment's shoulders beside the bar stay. Straps are two pieces a bodice's width apart and span it: no hook.
 */
function withoutHanger(image: RgbaImage, mask: Mask, box: MaskBounds, fabric: readonly number[]): Uint8Array | undefined {
  const { width, data } = mask
  const spans: number[] = []
  for (let y = box.y0; y < box.y1; y++) {
    let left = -1
    let right = -1
    for (let x = box.x0; x < box.x1; x++) {
      if (!data[y * width + x]) continue
      if (left < 0) left = x
      right = x
    }
    spans.push(left < 0 ? 0 : right - left + 1)
  }
  const widest = Math.max(...spans)
  let rows = 0
  const stem = Math.max(HOOK_WIDTH * widest, HOOK_HEIGHT * spans.length)
  while (rows < spans.length && spans[rows] <= stem) rows++
  if (rows < HOOK_ROWS * spans.length || rows === spans.length) return undefined
  let tip = rows
  while (tip < spans.length && spans[tip] < BAR_TIP * widest) tip++
  const samples: number[][] = [[], [], []]
  for (let y = box.y0; y < box.y0 + tip; y++) {
    for (let x = box.x0; x < box.x1; x++) {
      const i = y * width + x
      if (data[i]) for (let c = 0; c < 3; c++) samples[c].push(image.data[i * 4 + c])
    }
  }
  const hanger = samples.map(median)
  const out = Uint8Array.from(data)
  out.fill(0, box.y0 * width, (box.y0 + rows) * width)
  const last = Math.min(box.y1, box.y0 + rows + Math.ceil(BAR_ROWS * spans.length))
  for (let y = box.y0 + rows; y < last; y++) {
    let found = false
    for (let x = box.x0; x < box.x1; x++) {
      const i = y * width + x
      if (!out[i]) continue
      const d = colourDistance(image, i, hanger)
      if (d > FABRIC_REACH || d >= colourDistance(image, i, fabric)) continue
      out[i] = 0
      found = true
    }
    if (!found) break
  }
  withoutWisps(out, width, box, box.y0 + rows, last)
  return out
}

/**
 * A prop's outline, blended with the wall, is left in wisps above the garment once the prop's colour is gone: rows in
 * [from, to) with fewer pixels than BAR_WISPS of the box's width go, down to the first with more.
 */
function withoutWisps(out: Uint8Array, width: number, box: MaskBounds, from: number, to: number): void {
  for (let y = from; y < to; y++) {
    let count = 0
    for (let x = box.x0; x < box.x1; x++) count += out[y * width + x]
    if (count >= BAR_WISPS * (box.x1 - box.x0)) break
    out.fill(0, y * width + box.x0, y * width + box.x1)
  }
}

function fullMask(width: number, height: number): Mask {
  return { width, height, data: new Uint8Array(width * height).fill(1) }
}

/** The mask's box, or the whole picture when nothing is set. */
function boundingBox(mask: Mask): MaskBounds {
  return maskBounds(mask) ?? { x0: 0, y0: 0, x1: mask.width, y1: mask.height }
}

/** Crops the image and gives it the mask, upsampled bilinearly and eased so edges are soft but free of backdrop fringe. */
function cutOut(
  image: RgbaImage,
  mask: Mask,
  x0: number,
  y0: number,
  width: number,
  height: number,
  scaleX: number,
  scaleY: number,
): RgbaImage {
  const out = new Uint8Array(width * height * 4)
  const m = mask.data
  const mw = mask.width
  const mh = mask.height
  // The horizontal sampling positions are the same on every row.
  const columns0 = new Int32Array(width)
  const columns1 = new Int32Array(width)
  const weights = new Float64Array(width)
  for (let x = 0; x < width; x++) {
    const mx = Math.min(mw - 1, Math.max(0, (x0 + x + 0.5) / scaleX - 0.5))
    columns0[x] = Math.floor(mx)
    columns1[x] = Math.min(mw - 1, columns0[x] + 1)
    weights[x] = mx - columns0[x]
  }
  for (let y = 0; y < height; y++) {
    const my = Math.min(mh - 1, Math.max(0, (y0 + y + 0.5) / scaleY - 0.5))
    const my0 = Math.floor(my)
    const my1 = Math.min(mh - 1, my0 + 1)
    const fy = my - my0
    for (let x = 0; x < width; x++) {
      const mx0 = columns0[x]
      const mx1 = columns1[x]
      const fx = weights[x]
      const top = m[my0 * mw + mx0] * (1 - fx) + m[my0 * mw + mx1] * fx
      const bottom = m[my1 * mw + mx0] * (1 - fx) + m[my1 * mw + mx1] * fx
      const coverage = top * (1 - fy) + bottom * fy
      const t = Math.min(1, Math.max(0, (coverage - 0.35) / 0.5))
      const s = (y0 + y) * image.width + x0 + x
      const o = (y * width + x) * 4
      out[o] = image.data[s * 4]
      out[o + 1] = image.data[s * 4 + 1]
      out[o + 2] = image.data[s * 4 + 2]
      out[o + 3] = Math.round(t * t * (3 - 2 * t) * image.data[s * 4 + 3])
    }
  }
  return { width, height, data: out }
}

function rowEdges({ width, height, data }: RgbaImage) {
  const left = new Float32Array(height).fill(NaN)
  const right = new Float32Array(height).fill(NaN)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (data[(y * width + x) * 4 + 3] < 128) continue
      if (Number.isNaN(left[y])) left[y] = x
      right[y] = x + 1
    }
  }
  let last = height - 1
  while (last > 0 && Number.isNaN(left[last])) last--
  for (let y = last; y >= 0; y--) {
    if (Number.isNaN(left[y])) {
      left[y] = y < height - 1 ? left[y + 1] : 0
      right[y] = y < height - 1 ? right[y + 1] : width
    }
  }
  for (let y = last + 1; y < height; y++) {
    left[y] = left[last]
    right[y] = right[last]
  }
  return { left, right }
}

/**
 * The run through the centre column on each row, no wider than the lower body (sleeves attached at the top
 * of a flat-lay widen the run; sleeves hanging apart from the body are separate runs already).
 */
function torsoEdges({ width, height, data }: RgbaImage, left: Float32Array, right: Float32Array) {
  const cx = upperCentre(left, right, width)
  const runLeft = new Float32Array(height).fill(NaN)
  const runRight = new Float32Array(height).fill(NaN)
  for (let y = 0; y < height; y++) {
    const row = y * width * 4
    if (data[row + cx * 4 + 3] < 128) continue
    let l = cx
    let r = cx
    while (l > 0 && data[row + (l - 1) * 4 + 3] >= 128) l--
    while (r < width - 1 && data[row + (r + 1) * 4 + 3] >= 128) r++
    runLeft[y] = l
    runRight[y] = r + 1
  }
  const lower: number[] = []
  for (let y = Math.floor(height * 0.55); y < height * 0.9; y++) if (!Number.isNaN(runLeft[y])) lower.push(runRight[y] - runLeft[y])
  lower.sort((a, b) => a - b)
  const limit = lower.length ? lower[lower.length >> 1] * 1.08 : width
  const torsoLeft = Float32Array.from(left)
  const torsoRight = Float32Array.from(right)
  for (let y = 0; y < height; y++) {
    if (Number.isNaN(runLeft[y])) continue
    const centre = (runLeft[y] + runRight[y]) / 2
    const half = Math.min(runRight[y] - runLeft[y], limit) / 2
    torsoLeft[y] = Math.max(runLeft[y], centre - half)
    torsoRight[y] = Math.min(runRight[y], centre + half)
  }
  return { left: torsoLeft, right: torsoRight }
}

function hasTwoLegs({ width, height, data }: RgbaImage): boolean {
  const cx = Math.floor(width / 2)
  let gapRows = 0
  const from = Math.floor(height * 0.6)
  for (let y = from; y < height; y++) {
    const row = y * width * 4
    const centreEmpty = data[row + cx * 4 + 3] < 64
    let leftSolid = false
    let rightSolid = false
    for (let x = 0; x < cx; x++) if (data[row + x * 4 + 3] > 192) leftSolid = true
    for (let x = cx + 1; x < width; x++) if (data[row + x * 4 + 3] > 192) rightSolid = true
    if (centreEmpty && leftSolid && rightSolid) gapRows++
  }
  return gapRows > (height - from) * 0.6
}
