import type { RgbaImage } from '../../images/codecs/raster.ts'
import { median } from '../../median.ts'

/** The garment cut out of its product photo, cropped to its bounding box, with its shape measured. */
export interface GarmentCutout {
  /** Colour with a soft alpha: 0 outside the garment. */
  image: RgbaImage
  /** Left and right edge of the garment on each cutout row (NaN-free; empty rows repeat the nearest). */
  left: Float32Array
  right: Float32Array
  /** The body part of each row, without sleeves (equal to left/right where there are none). */
  torsoLeft: Float32Array
  torsoRight: Float32Array
  /** Width across the top rows: shoulders for tops and dresses, waistband for bottoms. */
  topWidth: number
  /** Row of the narrowest point in the upper half (a dress's waist), as a fraction of the height. */
  waistRow: number
  /** Two legs: the centre line is empty across much of the lower part. */
  hasLegs: boolean
  /** False when nothing stood out from the backdrop and the whole picture was taken as the garment. */
  separated: boolean
  /** The outline read as a garment (waist, length, train); undefined when it is no clean single piece. */
  shape?: GarmentShape
  /**
   * The skin colour (RGB) of an on-model photo's model whose garment did not come out, the foreground a head over a
   * bust (on-model.ts bustOnlySkin): the cut-out is then that skin, not the garment's colour.
   */
  bustSkin?: [number, number, number]
}

/** The centre column of the garment's top rows: the cut-out's own middle is off it when a train is swept aside. */
export function upperCentre(left: Float32Array, right: Float32Array, width: number): number {
  const height = left.length
  const centres: number[] = []
  for (let y = Math.floor(height * 0.03); y <= Math.floor(height * 0.15); y++) centres.push((left[y] + right[y]) / 2)
  centres.sort((a, b) => a - b)
  const centre = centres.length ? centres[centres.length >> 1] : width / 2
  return Math.min(width - 1, Math.max(0, Math.floor(Number.isFinite(centre) ? centre : width / 2)))
}

/**
 * A garment's outline read the way a dressmaker would: where the bodice ends (the waist), how long the skirt
 * is against the bodice, and whether fabric spreads out at the bottom beyond the skirt's own flare (a train
 * lying on the floor). Measured on the cut-out's alpha, after trimming what is not the garment: straps and
 * a dress form's neck above it, a stand and a studio shadow below it.
 */
export interface GarmentShape {
  /** Rows of the cut-out that are the garment itself (top inclusive, bottom exclusive). */
  top: number
  bottom: number
  /** Row of the waist (the narrowest point of the body below the bust), absolute in the cut-out. */
  waistRow: number
  /** Width across the bust, without sleeves: the garment's own scale. */
  bodiceWidth: number
  /** Length from the top to the hem (or the end of the train) over the bodice width. */
  lengthOverBodice: number
  /** Skirt length (waist to bottom) over bodice length (top to waist). */
  skirtOverBodice: number
  /** Widest row of the lower skirt over the width the skirt's own flare would reach there. */
  flareBeyondTrend: number
  /** How much lower the outline's bottom hangs in its middle than towards its sides, over the length: a train's rounded end. */
  roundedEnd: number
  /** How far above the bottom, over the length, the outline is last nearly as wide as at its widest. */
  endRise: number
  /** Widest row of the lower part over the bodice width. */
  hemOverBodice: number
  /** Row where the skirt reaches the floor and the train begins (absolute); `bottom` when there is no train. */
  hemRow: number
  floorLength: boolean
  hasTrain: boolean
}

export function measureGarmentShape(cutout: GarmentCutout): GarmentShape | undefined {
  const { width, height } = cutout.image
  const opaque = garmentPixels(cutout)
  const extent = new Float32Array(height)
  const filled = new Float32Array(height)
  const central = new Float32Array(height)
  const lowest = new Int32Array(width).fill(-1)
  const cx = upperCentre(cutout.left, cutout.right, width)
  for (let y = 0; y < height; y++) {
    let first = -1
    let last = -1
    let count = 0
    for (let x = 0; x < width; x++) {
      if (!opaque[y * width + x]) continue
      if (first < 0) first = x
      last = x
      count++
    }
    extent[y] = first < 0 ? 0 : last - first + 1
    filled[y] = count
    central[y] = centralRun(opaque, width, y, cx)
  }
  // Trim rows much thinner than the garment just below (straps, a dress form's neck) or just above (a stand).
  const look = Math.max(2, Math.round(height * 0.1))
  const widestNear = (from: number, to: number) => {
    let w = 0
    for (let y = Math.max(0, from); y <= Math.min(height - 1, to); y++) w = Math.max(w, filled[y])
    return w
  }
  let top = 0
  while (top < height - 1 && filled[top] < 0.45 * widestNear(top + 1, top + look)) top++
  let bottom = height
  while (bottom > top + 1 && filled[bottom - 1] < 0.3 * widestNear(bottom - 1 - look, bottom - 2)) bottom--
  const h = bottom - top
  if (h < 8) return undefined
  const at = (f: number) => Math.min(bottom - 1, Math.max(top, Math.round(top + f * h)))
  // A garment is one piece: a backdrop that swallowed most of it leaves rows with nothing at the centre
  // (below the neckline and straps, which open the top rows).
  let gaps = 0
  for (let y = at(0.15); y < bottom; y++) if (central[y] === 0) gaps++
  if (gaps > 0.1 * h) return undefined
  // Per column, where the fabric ends at the bottom; a thin run below a gap (a studio shadow, a stand's base)
  // is not the hem.
  const thinRun = Math.max(2, Math.round(h * 0.03))
  for (let x = 0; x < width; x++) {
    let y = bottom - 1
    while (y >= top && !opaque[y * width + x]) y--
    if (y < top) continue
    let runTop = y
    while (runTop - 1 >= top && opaque[(runTop - 1) * width + x]) runTop--
    if (y - runTop + 1 <= thinRun && runTop - 1 >= top) {
      let above = runTop - 1
      while (above >= top && !opaque[above * width + x]) above--
      if (above >= top) y = above
    }
    lowest[x] = y
  }

  // Bust: the body's width between the armholes and the waist; sleeves (hanging apart, or attached at the
  // shoulder in a flat lay) widen only some of these rows, so a low percentile is taken.
  const bust = percentile(central, at(0.08), at(0.3), 0.2)
  let waistRow = at(0.3)
  let narrowest = Infinity
  for (let y = at(0.12); y <= at(0.55); y++) {
    if (central[y] > 0 && central[y] < narrowest) {
      narrowest = central[y]
      waistRow = y
    }
  }
  const bodiceWidth = Math.max(1, bust)
  const bodiceLength = Math.max(1, waistRow - top)
  const skirtLength = bottom - waistRow

  // The skirt's flare, followed down from the waist, extrapolated to the lower rows.
  let hemWidth = 0
  let hemWidest = at(0.78)
  for (let y = at(0.78); y <= at(0.97); y++) {
    if (extent[y] > hemWidth) {
      hemWidth = extent[y]
      hemWidest = y
    }
  }
  const y1 = waistRow + 0.35 * skirtLength
  const y2 = waistRow + 0.6 * skirtLength
  const w1 = percentile(extent, Math.round(y1) - 1, Math.round(y1) + 1, 0.5)
  const w2 = percentile(extent, Math.round(y2) - 1, Math.round(y2) + 1, 0.5)
  const slope = (w2 - w1) / Math.max(1, y2 - y1)
  const trendAtWidest = Math.max(1, w2 + slope * (hemWidest - y2))
  const flareBeyondTrend = hemWidth / trendAtWidest
  // How far the outline's bottom hangs lower in the middle than towards its sides: a train spread on the floor
  // ends in a rounded edge, a hem (even seen a little from above) is nearly straight.
  let left = -1
  let right = -1
  for (let x = 0; x < width; x++) if (lowest[x] >= at(0.85)) (left = left < 0 ? x : left), (right = x)
  let bottomDrop = 0
  if (right > left) {
    const mid = (left + right) / 2
    const half = (right - left) / 2
    const middle: number[] = []
    const sides: number[] = []
    for (let x = left; x <= right; x++) {
      const u = Math.abs(x - mid) / Math.max(1, half)
      // A train swept to one side has its lowest point off the middle, but well inside the outer parts.
      if (u <= 0.4) middle.push(lowest[x])
      else if (u >= 0.7 && u <= 0.85) sides.push(lowest[x])
    }
    middle.sort((a, b) => a - b)
    bottomDrop = ((middle[Math.floor(middle.length * 0.9)] ?? 0) - median(sides)) / h
  }
  // How far above the bottom the outline is last nearly as wide as at its widest: a train's rounded end
  // narrows over a good part of its length, a hem stays wide to the end (a shadow under either is thin).
  let widest = 0
  for (let y = at(0.7); y < bottom; y++) widest = Math.max(widest, extent[y])
  let lastWide = bottom - 1
  while (lastWide > at(0.7) && extent[lastWide] < 0.97 * widest) lastWide--
  const endRise = (bottom - 1 - lastWide) / h
  const lengthOverBodice = h / bodiceWidth
  // No garment is ten times as long as it is wide across the bust: that outline is a few scraps of fabric a
  // backdrop of the same colour left over (a white gown on a white sweep), not a gown to measure.
  if (lengthOverBodice > 10) return undefined
  const skirtOverBodice = skirtLength / bodiceLength
  const hemOverBodice = hemWidth / bodiceWidth

  const floorLength = lengthOverBodice >= 4 && skirtOverBodice >= 2.2
  // Fabric spread on the floor ends in a rounded edge that hangs well below the sides of the outline; a hem
  // (straight, or curved by a camera a little above it) does not. Only a long garment can have a train.
  const hasTrain = lengthOverBodice >= 3.2 && (bottomDrop >= 0.03 || (bottomDrop >= 0.02 && flareBeyondTrend >= 1.15) || endRise >= 0.08)
  // Where the train starts: the row at which the outline leaves the skirt's own flare.
  let hemRow = bottom
  if (hasTrain) {
    for (let y = Math.round(y2); y < bottom; y++) {
      if (extent[y] > 1.08 * (w2 + slope * (y - y2))) {
        hemRow = y
        break
      }
    }
  }
  return {
    top,
    bottom,
    waistRow,
    bodiceWidth,
    lengthOverBodice,
    skirtOverBodice,
    flareBeyondTrend,
    roundedEnd: bottomDrop,
    endRise,
    hemOverBodice,
    hemRow,
    floorLength,
    hasTrain,
  }
}

/**
 * The cut-out's opaque pixels that are the garment's own fabric: a dress form, its stand or a studio shadow
 * of another colour than the fabric are left out (the fabric's colour is read across the middle of it).
 */
function garmentPixels(cutout: GarmentCutout): Uint8Array {
  const { width, height, data } = cutout.image
  const mask = new Uint8Array(width * height)
  const samples: number[][] = [[], [], []]
  for (let y = Math.floor(height * 0.3); y < height * 0.6; y++) {
    for (let x = Math.floor(width * 0.3); x < width * 0.7; x++) {
      const p = (y * width + x) * 4
      if (data[p + 3] < 128) continue
      for (let c = 0; c < 3; c++) samples[c].push(data[p + c])
    }
  }
  const fabric = samples.map((values) => median(values))
  const known = samples[0].length > 0
  for (let i = 0; i < width * height; i++) {
    if (data[i * 4 + 3] < 128) continue
    if (known) {
      const d = Math.abs(data[i * 4] - fabric[0]) + Math.abs(data[i * 4 + 1] - fabric[1]) + Math.abs(data[i * 4 + 2] - fabric[2])
      if (d > 90) continue
    }
    mask[i] = 1
  }
  return mask
}

/**
 * Width of the garment across its centre line on a row: the run through the centre column; where a
 * neckline or a slit opens the centre, the span from the run just left of it to the run just right of it.
 */
function centralRun(mask: Uint8Array, width: number, y: number, cx: number): number {
  const row = y * width
  if (mask[row + cx]) {
    let l = cx
    let r = cx
    while (l > 0 && mask[row + l - 1]) l--
    while (r < width - 1 && mask[row + r + 1]) r++
    return r - l + 1
  }
  const reach = Math.max(1, Math.round(width / 6))
  // The nearest run on each side of the opening: [start, end] columns, or undefined.
  const runFrom = (step: number): [number, number] | undefined => {
    for (let x = cx + step, n = 0; x >= 0 && x < width && n < reach; x += step, n++) {
      if (!mask[row + x]) continue
      let far = x
      while (far + step >= 0 && far + step < width && mask[row + far + step]) far += step
      return step < 0 ? [far, x] : [x, far]
    }
    return undefined
  }
  const left = runFrom(-1)
  const right = runFrom(1)
  if (left && right) return right[1] - left[0] + 1
  const only = left ?? right
  return only ? only[1] - only[0] + 1 : 0
}

function percentile(values: Float32Array, from: number, to: number, share: number): number {
  const picked: number[] = []
  for (let y = Math.max(0, from); y <= Math.min(values.length - 1, to); y++) picked.push(values[y])
  picked.sort((a, b) => a - b)
  return picked.length ? picked[Math.min(picked.length - 1, Math.floor(picked.length * share))] : 0
}
