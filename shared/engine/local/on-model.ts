import type { RgbaImage } from '../../images/codecs/raster.ts'
import { maskBounds, type Mask, type MaskBounds } from './segmentation.ts'

/**
 * An on-model product photo (a model wearing the product on a plain backdrop) stands out from its backdrop whole:
 * head, neck, arms and legs beside, above and below the garment. When the top of the foreground is a narrow head
 * with a skin-coloured face, skin of that colour is taken off from the ends of every row inward (arms, neck, bare
 * torso and legs; the garment stops it), thin gaps that opens inside the garment (a skin-coloured stripe) are
 * closed again, and only the garment's own piece is kept (hair and shoes are left apart once the skin is gone).
 * A garment the model's own colour (a nude or blush gown on fair skin) cannot be told from skin this way: the mask
 * is then left as it was. A wooden hanger's hook reads as a head too and goes the same way, with the rows of its colour.
 */
export function withoutModel(image: RgbaImage, mask: Mask): Mask {
  const box = maskBounds(mask)
  if (!box) return mask
  const face = readFace(image, mask, box)
  if (!face || face.headShare > HEAD_SHARE) return mask
  const skin = face.colour
  const { width, height, data } = mask
  const isSkin = new Uint8Array(width * height)
  for (let i = 0; i < isSkin.length; i++) if (data[i] && looksLike(image.data, i, skin)) isSkin[i] = 1
  const kept = Uint8Array.from(data)
  for (let y = box.y0; y < box.y1; y++) trimRowEnds(kept, data, isSkin, y * width, box.x0, box.x1)
  closeThinGaps(kept, data, width, box, Math.max(2, Math.round((box.y1 - box.y0) * MAX_GAP)))
  const garment = largestPieces(kept, width, height)
  let area = 0
  let garmentArea = 0
  let skinLike = 0
  for (let i = 0; i < data.length; i++) {
    area += data[i]
    if (!garment[i]) continue
    garmentArea++
    skinLike += isSkin[i]
  }
  // Little left, or what is left is itself mostly the skin's colour: not a garment this can separate from skin.
  if (garmentArea < area * 0.2 || skinLike > garmentArea * 0.3) return mask
  return { width, height, data: garment }
}

/** The head and neck of a model wearing the garment: at most this share of the foreground's height. */
const HEAD_SHARE = 0.3

/** A head and neck this share of the foreground at most, and more than HEAD_SHARE of it: the model's bust alone. */
const BUST_HEAD_SHARE = 0.5

/**
 * The skin colour (RGB) of a model whose garment did not come out: the foreground of an on-model product photo is the
 * model's head over a bust (the head and neck more than HEAD_SHARE of it, at most BUST_HEAD_SHARE), as withoutModel
 * would read the face otherwise. The garment below was lost against the backdrop (white stripes on white, soft 20511),
 * and what stood out, a bare torso and arms, is the model's skin, not the garment's colour. Undefined for a foreground
 * that is a whole model, whatever the garment's colour: a brown dress on a model of the same brown stays brown.
 */
export function bustOnlySkin(image: RgbaImage, mask: Mask): Rgb | undefined {
  const box = maskBounds(mask)
  const face = box && readFace(image, mask, box)
  return face && face.headShare > HEAD_SHARE ? face.colour : undefined
}

/** A vertical gap (share of the foreground's height) small enough to be a stripe of the garment, not a limb. */
const MAX_GAP = 0.05
/** Largest per-channel difference from the face's colour, once brightness is matched, still read as skin. */
const SKIN_TOLERANCE = 14
/** Consecutive pixels not of skin that stop a row's trimming: fewer are the soft edge of a limb. */
const STOP_RUN = 3

/** The first and one past the last set pixel of row `y` within [x0, x1); l < 0 when the row is empty. */
function rowExtent({ width, data }: Mask, y: number, x0: number, x1: number): { l: number; r: number } {
  let l = -1
  let r = -1
  for (let x = x0; x < x1; x++) {
    if (!data[y * width + x]) continue
    if (l < 0) l = x
    r = x + 1
  }
  return { l, r }
}

type Rgb = [number, number, number]

/**
 * The model's skin colour from the face, and the share of the foreground's height the head and neck take, or undefined
 * when the photo does not start with a head: the top rows of the foreground narrow (under half its widest row) for at
 * least 5% of its height and at most BUST_HEAD_SHARE of it, above shoulders much wider, the lower half of them (below
 * the hair) mostly one warm colour with red over green over blue, as skin is.
 */
function readFace(image: RgbaImage, mask: Mask, box: MaskBounds): { colour: Rgb; headShare: number } | undefined {
  const { width, data } = mask
  const extents: number[] = []
  for (let y = box.y0; y < box.y1; y++) {
    const { l, r } = rowExtent(mask, y, box.x0, box.x1)
    extents.push(l < 0 ? 0 : r - l)
  }
  const widest = Math.max(...extents)
  // The head ends where the shoulders start: the first row much wider than the head (measured above the neck).
  let headRows = 0
  let headWidth = 0
  let neck = false
  for (; headRows < extents.length; headRows++) {
    const extent = extents[headRows]
    if (headRows >= 2 && extent > headWidth * (neck ? 1.15 : 1.6)) break
    if (extent < headWidth * 0.8) neck = true
    if (!neck) headWidth = Math.max(headWidth, extent)
  }
  if (headWidth > widest * 0.5) return undefined
  const tall = box.y1 - box.y0
  if (headRows < tall * 0.05 || headRows > tall * BUST_HEAD_SHARE) return undefined
  const samples: number[][] = [[], [], []]
  for (let y = box.y0 + (headRows >> 1); y < box.y0 + headRows; y++) {
    const { l, r } = rowExtent(mask, y, box.x0, box.x1)
    const third = (r - l) / 3
    for (let x = Math.ceil(l + third); x < r - third; x++) {
      if (!data[y * width + x]) continue
      for (let c = 0; c < 3; c++) samples[c].push(image.data[(y * width + x) * 4 + c])
    }
  }
  if (samples[0].length < 6) return undefined
  const [r, g, b] = samples.map((v) => [...v].sort((a, b) => a - b)[v.length >> 1])
  const colour: Rgb = [r, g, b]
  if (!(r > g && g > b && r - b >= 25 && r - g <= 0.45 * r)) return undefined
  let alike = 0
  for (let i = 0; i < samples[0].length; i++) {
    const k = brightnessMatch(samples[0][i], samples[1][i], samples[2][i], colour)
    if (Math.max(...colour.map((v, c) => Math.abs(samples[c][i] - k * v))) <= SKIN_TOLERANCE) alike++
  }
  return alike >= samples[0].length * 0.6 ? { colour, headShare: headRows / tall } : undefined
}

function brightnessMatch(r: number, g: number, b: number, colour: number[]): number {
  const k = (r * colour[0] + g * colour[1] + b * colour[2]) / (colour[0] ** 2 + colour[1] ** 2 + colour[2] ** 2)
  return Math.min(1.3, Math.max(0.5, k))
}

/** Skin in light or shade: the face's colour scaled to the pixel's brightness, each channel within the tolerance. */
function looksLike(pixels: Uint8Array, i: number, skin: number[]): boolean {
  const r = pixels[i * 4]
  const g = pixels[i * 4 + 1]
  const b = pixels[i * 4 + 2]
  const k = brightnessMatch(r, g, b, skin)
  return (
    Math.abs(r - k * skin[0]) <= SKIN_TOLERANCE &&
    Math.abs(g - k * skin[1]) <= SKIN_TOLERANCE &&
    Math.abs(b - k * skin[2]) <= SKIN_TOLERANCE
  )
}

/** Takes skin (and the backdrop between limbs) off both ends of one row, up to the first run of something else. */
function trimRowEnds(kept: Uint8Array, mask: Uint8Array, isSkin: Uint8Array, row: number, x0: number, x1: number): void {
  const trim = (from: number, to: number, step: number) => {
    let run = 0
    let x = from
    for (; x !== to; x += step) {
      const i = row + x
      if (mask[i] && !isSkin[i]) {
        if (++run >= STOP_RUN) break
      } else run = 0
    }
    // Stopped on a run: the run stays; ran through: the whole row goes.
    const end = x === to ? to : x - step * (STOP_RUN - 1)
    for (let j = from; j !== end; j += step) kept[row + j] = 0
  }
  trim(x0, x1, 1)
  trim(x1 - 1, x0 - 1, -1)
}

/** Puts back what the trimming took from a column between kept pixels less than `gap` rows apart. */
function closeThinGaps(kept: Uint8Array, mask: Uint8Array, width: number, box: MaskBounds, gap: number): void {
  for (let x = box.x0; x < box.x1; x++) {
    let last = -1
    for (let y = box.y0; y < box.y1; y++) {
      const i = y * width + x
      if (!kept[i]) continue
      if (last >= 0 && y - last > 1 && y - last <= gap) {
        let whole = true
        for (let t = last + 1; t < y && whole; t++) whole = mask[t * width + x] === 1
        if (whole) for (let t = last + 1; t < y; t++) kept[t * width + x] = 1
      }
      last = y
    }
  }
}

/** The largest 4-connected piece, with any other piece at least a fifth its size (two legs of trousers apart at a gap). */
function largestPieces(kept: Uint8Array, width: number, height: number): Uint8Array {
  const label = new Int32Array(width * height)
  const sizes = [0]
  const stack: number[] = []
  for (let start = 0; start < kept.length; start++) {
    if (!kept[start] || label[start]) continue
    const id = sizes.length
    let size = 0
    label[start] = id
    stack.push(start)
    while (stack.length) {
      const i = stack.pop() as number
      size++
      const x = i % width
      const neighbours = [x > 0 ? i - 1 : -1, x < width - 1 ? i + 1 : -1, i - width, i + width]
      for (const n of neighbours) {
        if (n < 0 || n >= kept.length || !kept[n] || label[n]) continue
        label[n] = id
        stack.push(n)
      }
    }
    sizes.push(size)
  }
  const largest = Math.max(...sizes)
  const out = new Uint8Array(kept.length)
  for (let i = 0; i < kept.length; i++) if (label[i] && sizes[label[i]] >= largest * 0.2) out[i] = 1
  return out
}
