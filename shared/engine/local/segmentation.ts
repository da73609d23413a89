import type { RgbaImage } from '../../images/codecs/raster.ts'
import { roomBackdropDistance, type EdgeObject } from './room-backdrop.ts'
import { nearBorderColours } from './textured-backdrop.ts'

/** A binary mask (0 or 1 per pixel) at the size of the image it was computed from. */
export interface Mask {
  width: number
  height: number
  data: Uint8Array
}

/** A mask's set pixels' box, ends exclusive; undefined when none is set. */
export interface MaskBounds {
  x0: number
  y0: number
  x1: number
  y1: number
}

export function maskBounds({ width, height, data }: Mask): MaskBounds | undefined {
  let x0 = width
  let y0 = height
  let x1 = 0
  let y1 = 0
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (!data[y * width + x]) continue
      if (x < x0) x0 = x
      if (x >= x1) x1 = x + 1
      if (y < y0) y0 = y
      if (y >= y1) y1 = y + 1
    }
  }
  return x1 > x0 ? { x0, y0, x1, y1 } : undefined
}

export interface Segmentation {
  mask: Mask
  /** Foreground share of the frame, 0..1. */
  coverage: number
  /** Typical deviation of the backdrop from its model: large values mean a busy background. */
  backgroundNoise: number
  /** A room's textured wall was cleared by its tones (SegmentOptions.wallColours, and the wall is one). */
  wallColoursCleared?: boolean
  /**
   * A room photo's figure with every piece stacked on it taken back too (keepStacked): the bars of a top striped in the
   * backdrop's colour, wider than the legs below them. The same array as `mask` when none is.
   */
  stacked?: Mask
}

/**
 * A studio backdrop's smallest threshold: lower finds more of a white gown on a white sweep, but takes in the soft halo
 * around a garment too.
 */
const STUDIO_MIN_THRESHOLD = 22
/** A backdrop whose border a smooth surface fits this badly (RGB levels) is textured: planks of wood, a coarse weave. */
const TEXTURED_NOISE = 14
/** On a textured backdrop, RGB distance from every colour its border shows beyond which a pixel is subject. */
const TEXTURED_REACH = 14
/** Share of a textured backdrop's border whose colours the rest of the border shows: less is noise, not a surface. */
const TEXTURED_REPEAT = 0.95
/**
 * The smallest threshold on the averaged distance (smoothRadius): above averaged sensor noise, and low enough for the
 * bodice of a white gown on a clean white sweep (a level or two off it, averaged) to stay whole.
 */
const SMOOTH_MIN_THRESHOLD = 1.5
/** The least noise a backdrop model reports: a clean backdrop (a white sweep, a PNG) has next to none. */
const MIN_NOISE = 0.75

export interface SegmentOptions {
  /**
   * `studio` (product photos): one smooth backdrop, fitted as a quadratic surface to the border.
   * `room` (shopper photos): a wall above a floor with a line between them, modelled row by row.
   */
  backdrop?: 'studio' | 'room'
  /** A studio backdrop's smallest threshold, instead of the default. */
  studioThreshold?: number
  /**
   * Studio: judge each pixel by its mean distance from the backdrop over a square of this radius. Fabric of
   * the backdrop's own colour (a white gown on a white sweep) differs from it by its folds, weave and shading,
   * a little here and a little there, never at every pixel; averaged, it stands out from a backdrop whose
   * only variation is sensor noise. The mask is shrunk back by the radius afterwards.
   */
  smoothRadius?: number
  /**
   * Room: a wall too textured for the row model (bricks of different tones, mortar) is also cleared by the tones it
   * shows along the frame's top and sides (textured-wall.ts). Garments of the wall's tones go with it, so this is a
   * second reading, for a figure the first one did not find.
   */
  wallColours?: boolean
}

/**
 * Separates the subject from its backdrop: an alpha channel when the image has one, otherwise a backdrop
 * model fitted to the border, flood-filled inwards, keeping the largest foreground component.
 */
export function segmentForeground(image: RgbaImage, options: SegmentOptions = {}): Segmentation {
  const { width, height, data } = image
  const n = width * height
  let distance: Float32Array = new Float32Array(n)
  let threshold: number | Float32Array
  let backgroundNoise = 0
  let wallColoursCleared = false
  let edgeObjects: EdgeObject[] = []
  /** Pixels the averaging spread the subject by, taken off again after the fill. */
  let spread = 0
  if (hasTransparentBorder(image)) {
    for (let i = 0; i < n; i++) distance[i] = data[i * 4 + 3]
    threshold = 128
  } else if (options.backdrop === 'room') {
    const room = roomBackdropDistance(image, options.wallColours)
    distance = room.distance
    threshold = room.threshold
    backgroundNoise = room.noise
    wallColoursCleared = room.wallCleared
    edgeObjects = room.edgeObjects
  } else {
    const model = fitBackground(image, borderSamples(width, height))
    // Planks or a weave no smooth surface follows, whose colours repeat along the border: a pixel of a colour the
    // border shows somewhere is backdrop.
    const textured = model.noise >= TEXTURED_NOISE ? nearBorderColours(image, TEXTURED_REACH) : undefined
    const surface = textured && textured.repeat >= TEXTURED_REPEAT ? textured : undefined
    const studio = options.smoothRadius && !surface ? smoothedStudioDistance(image, options.smoothRadius) : undefined
    if (surface) {
      distance = surface.distance
      backgroundNoise = model.noise
      threshold = 1
    } else if (studio && studio.contrast < LOW_CONTRAST) {
      distance = studio.distance
      backgroundNoise = studio.noise
      // A faint ring around the subject (a soft edge, JPEG ringing) stays backdrop.
      threshold = Math.max(options.studioThreshold ?? SMOOTH_MIN_THRESHOLD, studio.noise * 2, HALO * studio.contrast)
      spread = options.smoothRadius ?? 0
    } else {
      // A subject that stands out clearly is cut pixel by pixel, along its true edge.
      backgroundNoise = model.noise
      distance = studioDistance(image, model)
      threshold = Math.max(options.studioThreshold ?? STUDIO_MIN_THRESHOLD, model.noise * 3.5)
    }
  }
  const background = floodFromBorder(distance, width, height, threshold)
  const mask = new Uint8Array(n)
  for (let i = 0; i < n; i++) mask[i] = background[i] ? 0 : 1
  if (spread) erode(mask, width, height, spread)
  open(mask, width, height)
  // Where the model blends wall into floor, a subject of the blend's colour reads as backdrop for a row or
  // two: a thin horizontal cut through the figure, closed again when there is subject above and below.
  if (options.backdrop === 'room') closeVertically(mask, width, height, Math.max(2, Math.round(height / 100)))
  for (const object of edgeObjects) detachEdgeObject(mask, width, height, object)
  const figure = options.backdrop === 'room' ? figureComponents(mask, width, height) : undefined
  const kept = figure?.kept ?? largestComponent(mask, width, height)
  let count = 0
  for (let i = 0; i < n; i++) count += kept[i]
  const stacked = figure ? { stacked: { width, height, data: figure.stacked } } : {}
  return { mask: { width, height, data: kept }, coverage: count / n, backgroundNoise, wallColoursCleared, ...stacked }
}

/** Per pixel, the RGB distance from a studio backdrop model (a quadratic surface per channel). */
function studioDistance(image: RgbaImage, model: BackgroundModel): Float32Array {
  const { width, height, data } = image
  const distance = new Float32Array(width * height)
  const [kr, kg, kb] = model.coefficients
  for (let y = 0, i = 0; y < height; y++) {
    // The surface along a row is a quadratic in u: a + b·u + c·u², with its terms fixed by the row.
    const v = y / height - 0.5
    const ar = kr[0] + kr[2] * v + kr[4] * v * v
    const br = kr[1] + kr[5] * v
    const ag = kg[0] + kg[2] * v + kg[4] * v * v
    const bg = kg[1] + kg[5] * v
    const ab = kb[0] + kb[2] * v + kb[4] * v * v
    const bb = kb[1] + kb[5] * v
    for (let x = 0; x < width; x++, i++) {
      const u = x / width - 0.5
      const p = i * 4
      const dr = data[p] - (ar + br * u + kr[3] * u * u)
      const dg = data[p + 1] - (ag + bg * u + kg[3] * u * u)
      const db = data[p + 2] - (ab + bb * u + kb[3] * u * u)
      distance[i] = Math.sqrt(dr * dr + dg * dg + db * db) * (data[p + 3] / 255)
    }
  }
  return distance
}

/** A subject's typical averaged distance from the backdrop below which it is cut on the averaged distance. */
const LOW_CONTRAST = 50
/** Share of a subject's typical distance from the backdrop below which a faint ring around it is taken as backdrop. */
const HALO = 0.12

/** Outside this averaged distance a pixel is surely backdrop, and the backdrop is refitted on such pixels. */
const SURELY_SUBJECT = 6

/**
 * The averaged distance from a studio backdrop fitted twice: to the border, then to every pixel clearly
 * away from the subject. Light falling off towards the frame's edges curves the backdrop more than a
 * surface fitted to the border alone follows; near the subject that difference would read as subject.
 */
function smoothedStudioDistance(image: RgbaImage, radius: number): { distance: Float32Array; noise: number; contrast: number } {
  const { width, height } = image
  let model = fitBackground(image, borderSamples(width, height))
  let smoothed = boxMean(studioDistance(image, model), width, height, radius)
  const subject = new Uint8Array(width * height)
  const background = floodFromBorder(smoothed, width, height, Math.max(SURELY_SUBJECT, model.noise * 3))
  for (let i = 0; i < subject.length; i++) subject[i] = background[i] ? 0 : 1
  const near = dilate(subject, width, height, radius * 3)
  const samples: number[] = []
  const step = Math.max(1, Math.round(Math.min(width, height) / 96))
  for (let y = 0; y < height; y += step) {
    for (let x = 0; x < width; x += step) if (!near[y * width + x]) samples.push(y * width + x, x, y)
  }
  if (samples.length >= 3 * 64) {
    model = fitBackground(image, samples)
    smoothed = boxMean(studioDistance(image, model), width, height, radius)
  }
  const inside: number[] = []
  for (let i = 0; i < subject.length; i += step) if (subject[i]) inside.push(smoothed[i])
  inside.sort((a, b) => a - b)
  return { distance: smoothed, noise: model.noise, contrast: inside[inside.length >> 1] ?? 0 }
}

function borderSamples(width: number, height: number): number[] {
  const samples: number[] = []
  forEachBorderPixel(width, height, (i, x, y) => samples.push(i, x, y))
  return samples
}

function hasTransparentBorder({ width, height, data }: RgbaImage): boolean {
  let transparent = 0
  let total = 0
  forEachBorderPixel(width, height, (i) => {
    total++
    if (data[i * 4 + 3] < 128) transparent++
  })
  return transparent > total * 0.5
}

function forEachBorderPixel(width: number, height: number, visit: (index: number, x: number, y: number) => void): void {
  for (let x = 0; x < width; x++) {
    visit(x, x, 0)
    if (height > 1) visit((height - 1) * width + x, x, height - 1)
  }
  for (let y = 1; y < height - 1; y++) {
    visit(y * width, 0, y)
    if (width > 1) visit(y * width + width - 1, width - 1, y)
  }
}

interface BackgroundModel {
  /** Per channel, the surface 1, u, v, u², v², u·v weights with u = x/width − ½ and v = y/height − ½. */
  coefficients: number[][]
  noise: number
}

/**
 * Least-squares quadratic surface per channel over the samples (index, x, y triples: the border, or the
 * backdrop around a subject), refitted twice without the outliers (the subject).
 */
function fitBackground(image: RgbaImage, samples: number[]): BackgroundModel {
  const { width, height, data } = image
  const count = samples.length / 3
  // The features of each sample (1, u, v, u², v², u·v), computed once: every round and channel reads them.
  const features = new Float64Array(count * 6)
  for (let s = 0; s < count; s++) {
    const u = samples[s * 3 + 1] / width - 0.5
    const v = samples[s * 3 + 2] / height - 0.5
    features.set([1, u, v, u * u, v * v, u * v], s * 6)
  }
  let weights = new Float64Array(count).fill(1)
  let coefficients: number[][] = []
  let noise = 0
  for (let round = 0; round < 3; round++) {
    coefficients = solveWeighted(samples, weights, features, data)
    const residuals = new Float64Array(count)
    for (let s = 0; s < count; s++) {
      const i = samples[s * 3]
      let sq = 0
      for (let c = 0; c < 3; c++) {
        const k = coefficients[c]
        let fit = 0
        for (let j = 0; j < 6; j++) fit += k[j] * features[s * 6 + j]
        const d = data[i * 4 + c] - fit
        sq += d * d
      }
      residuals[s] = Math.sqrt(sq)
    }
    const sorted = Float64Array.from(residuals).sort()
    noise = Math.max(MIN_NOISE, sorted[Math.floor(count * 0.5)] * 1.4826)
    const limit = Math.max(12, noise * 3)
    weights = residuals.map((r) => (r < limit ? 1 : 0))
  }
  return { coefficients, noise }
}

/**
 * The weighted least-squares surface of each RGB channel: the normal equations share their left side (the features'
 * products) across the channels, so it is summed once, and each channel's system solved on its own copy.
 */
function solveWeighted(samples: number[], weights: Float64Array, features: Float64Array, data: Uint8Array): number[][] {
  const size = 6
  const gram = new Float64Array(size * size)
  const rhs = new Float64Array(size * 3)
  for (let s = 0; s < weights.length; s++) {
    if (weights[s] === 0) continue
    const o = s * size
    const p = samples[s * 3] * 4
    for (let r = 0; r < size; r++) {
      const fr = features[o + r]
      for (let c = 0; c < size; c++) gram[r * size + c] += fr * features[o + c]
      rhs[r * 3] += fr * data[p]
      rhs[r * 3 + 1] += fr * data[p + 1]
      rhs[r * 3 + 2] += fr * data[p + 2]
    }
  }
  return [0, 1, 2].map((channel) => {
    const a = Array.from({ length: size }, (_, r) => {
      const row = new Float64Array(size + 1)
      row.set(gram.subarray(r * size, r * size + size))
      row[size] = rhs[r * 3 + channel]
      return row
    })
    // A small ridge keeps the system solvable when the border is mostly subject (then the model degrades to flat).
    for (let r = 0; r < size; r++) a[r][r] += r === 0 ? 1e-6 : 1e-3
    for (let col = 0; col < size; col++) {
      let pivot = col
      for (let r = col + 1; r < size; r++) if (Math.abs(a[r][col]) > Math.abs(a[pivot][col])) pivot = r
      ;[a[col], a[pivot]] = [a[pivot], a[col]]
      const p = a[col][col] || 1e-12
      for (let r = 0; r < size; r++) {
        if (r === col) continue
        const factor = a[r][col] / p
        for (let c = col; c <= size; c++) a[r][c] -= factor * a[col][c]
      }
    }
    return a.map((row, r) => row[size] / (row[r] || 1e-12))
  })
}

/**
 * Marks as background every pixel below the threshold (one for all, or one per row) that is connected to a below-threshold
 * border pixel.
 */
function floodFromBorder(distance: Float32Array, width: number, height: number, limit: number | Float32Array): Uint8Array {
  const rowLimit = typeof limit === 'number' ? new Float32Array(height).fill(limit) : limit
  // Scaled per pixel once, so the fill below compares against one array.
  const over = new Float32Array(width * height)
  for (let y = 0, i = 0; y < height; y++) for (let x = 0; x < width; x++, i++) over[i] = distance[i] - rowLimit[y]
  const threshold = 0
  distance = over
  const background = new Uint8Array(width * height)
  const stack = new Int32Array(width * height)
  let top = 0
  forEachBorderPixel(width, height, (i) => {
    if (distance[i] < threshold && !background[i]) {
      background[i] = 1
      stack[top++] = i
    }
  })
  const lastRow = width * (height - 1)
  while (top > 0) {
    const i = stack[--top]
    const x = i % width
    // Each pixel is pushed once, when it is marked; neighbours inline (a closure per pixel is costly).
    let j = i - 1
    if (x > 0 && !background[j] && distance[j] < threshold) {
      background[j] = 1
      stack[top++] = j
    }
    j = i + 1
    if (x < width - 1 && !background[j] && distance[j] < threshold) {
      background[j] = 1
      stack[top++] = j
    }
    j = i - width
    if (i >= width && !background[j] && distance[j] < threshold) {
      background[j] = 1
      stack[top++] = j
    }
    j = i + width
    if (i < lastRow && !background[j] && distance[j] < threshold) {
      background[j] = 1
      stack[top++] = j
    }
  }
  return background
}

/** Mean of the values over a (2r+1)² square, clipped at the edges: two running sums, one per axis. */
function boxMean(values: Float32Array, width: number, height: number, r: number): Float32Array {
  const rows = new Float32Array(values.length)
  for (let y = 0; y < height; y++) {
    let sum = 0
    let count = 0
    const row = y * width
    for (let x = 0; x < Math.min(width, r); x++, count++) sum += values[row + x]
    for (let x = 0; x < width; x++) {
      if (x + r < width) (sum += values[row + x + r]), count++
      if (x - r - 1 >= 0) (sum -= values[row + x - r - 1]), count--
      rows[row + x] = sum / count
    }
  }
  const out = new Float32Array(values.length)
  for (let x = 0; x < width; x++) {
    let sum = 0
    let count = 0
    for (let y = 0; y < Math.min(height, r); y++, count++) sum += rows[y * width + x]
    for (let y = 0; y < height; y++) {
      if (y + r < height) (sum += rows[(y + r) * width + x]), count++
      if (y - r - 1 >= 0) (sum -= rows[(y - r - 1) * width + x]), count--
      out[y * width + x] = sum / count
    }
  }
  return out
}

/** The mask grown by r pixels (a square), as a new mask. */
function dilate(mask: Uint8Array, width: number, height: number, r: number): Uint8Array {
  const across = new Uint8Array(mask.length)
  for (let y = 0; y < height; y++) {
    const row = y * width
    let last = -Infinity
    for (let x = 0; x < width; x++) {
      if (mask[row + x]) last = x
      if (x - last <= r) across[row + x] = 1
    }
    last = Infinity
    for (let x = width - 1; x >= 0; x--) {
      if (mask[row + x]) last = x
      if (last - x <= r) across[row + x] = 1
    }
  }
  const out = new Uint8Array(mask.length)
  for (let x = 0; x < width; x++) {
    let last = -Infinity
    for (let y = 0; y < height; y++) {
      if (across[y * width + x]) last = y
      if (y - last <= r) out[y * width + x] = 1
    }
    last = Infinity
    for (let y = height - 1; y >= 0; y--) {
      if (across[y * width + x]) last = y
      if (last - y <= r) out[y * width + x] = 1
    }
  }
  return out
}

/** Shrinks the mask by r pixels (a square): what averaging spread past the subject's edge comes off again. */
function erode(mask: Uint8Array, width: number, height: number, r: number): void {
  // Distance to the nearest background pixel along rows, then along columns (a square's Chebyshev distance).
  const across = new Int32Array(mask.length)
  for (let y = 0; y < height; y++) {
    const row = y * width
    let run = 0
    for (let x = 0; x < width; x++) across[row + x] = run = mask[row + x] ? run + 1 : 0
    run = 0
    for (let x = width - 1; x >= 0; x--) {
      run = mask[row + x] ? run + 1 : 0
      across[row + x] = Math.min(across[row + x], run)
    }
  }
  const keep = new Uint8Array(mask.length)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let ok = across[y * width + x] > r
      for (let k = 1; ok && k <= r; k++)
        ok = y - k >= 0 && y + k < height && across[(y - k) * width + x] > r && across[(y + k) * width + x] > r
      keep[y * width + x] = ok ? 1 : 0
    }
  }
  mask.set(keep)
}

/** Morphological opening with a 3×3 cross: drops single-pixel specks and hairline bridges. */
function open(mask: Uint8Array, width: number, height: number): void {
  const eroded = new Uint8Array(mask.length)
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const i = y * width + x
      eroded[i] = mask[i] & mask[i - 1] & mask[i + 1] & mask[i - width] & mask[i + width]
    }
  }
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x
      // Keep subject pixels on the frame edge: a body cut by the bottom edge must stay attached to it.
      const onEdge = x === 0 || y === 0 || x === width - 1 || y === height - 1
      mask[i] = onEdge
        ? mask[i]
        : eroded[i] | (x > 0 ? eroded[i - 1] : 0) | (x < width - 1 ? eroded[i + 1] : 0) | eroded[i - width] | eroded[i + width]
    }
  }
}

/** How much longer than the object's own span a row's run from the frame's side is when it runs on into the figure. */
const JOINED_RUN = 0.03
/** Rows past an object's own the mask may show it on (its outline, spread by the row blur): a corner touching an arm. */
const OBJECT_SPREAD = 2

/**
 * An object at the frame's side (a picture on the wall, a lamp's shade) is no backdrop of the row model, so it is
 * subject, and where the figure's arm overlaps it, one part with the figure: a block out to the frame's side at the
 * shoulders, which no person's outline has. On most of its rows it stands alone, its run from the side (from within
 * the strip the wall's colour was read from) ending where the object does; on the rows where that run goes on into the
 * figure, or that do not reach the side (a corner of its outline), it is cut where the object ends on the nearest rows
 * above and below, and the object, a part of its own at the frame's side, is left out with the rest of the backdrop.
 * An object the figure joins on most of its rows is left as it is: where it ends cannot be told.
 */
function detachEdgeObject(mask: Uint8Array, width: number, height: number, { side, strip, from, to }: EdgeObject): void {
  const at = (y: number, k: number) => y * width + (side === 'left' ? k : width - 1 - k)
  // Per row, how far from the side the object's run ends: it starts within the strip the wall's colour was read from.
  const first = Math.max(0, from - OBJECT_SPREAD)
  const runs: number[] = []
  for (let y = first; y <= Math.min(height - 1, to + OBJECT_SPREAD); y++) {
    let start = 0
    while (start < strip && !mask[at(y, start)]) start++
    let run = start
    while (start < strip && run < width && mask[at(y, run)]) run++
    runs.push(start < strip ? run : 0)
  }
  const present = runs.filter((run) => run > 0).sort((a, b) => a - b)
  if (present.length === 0) return
  const limit = present[present.length >> 1] + Math.max(2, Math.round(JOINED_RUN * width))
  const alone = runs.map((run) => run > 0 && run <= limit)
  if (2 * alone.filter(Boolean).length < present.length) return
  for (let k = 0; k < runs.length; k++) {
    if (alone[k]) continue
    let above = k - 1
    while (above >= 0 && !alone[above]) above--
    let below = k + 1
    while (below < runs.length && !alone[below]) below++
    const cut = Math.max(above >= 0 ? runs[above] : 0, below < runs.length ? runs[below] : 0)
    for (let x = 0; x < cut; x++) mask[at(first + k, x)] = 0
  }
}

/**
 * Fills runs of at most `gap` background rows in a column that have subject directly above and below; returns how many
 * pixels it filled.
 */
export function closeVertically(mask: Uint8Array, width: number, height: number, gap: number): number {
  let filled = 0
  for (let x = 0; x < width; x++) {
    let lastSubject = -1
    for (let y = 0; y < height; y++) {
      if (!mask[y * width + x]) continue
      if (lastSubject >= 0 && y - lastSubject > 1 && y - lastSubject - 1 <= gap) {
        for (let k = lastSubject + 1; k < y; k++) mask[k * width + x] = 1
        filled += y - lastSubject - 1
      }
      lastSubject = y
    }
  }
  return filled
}

interface Component {
  size: number
  x0: number
  y0: number
  x1: number
  y1: number
}

/** Labels the 4-connected components of the mask (1, 2, …; 0 for background) and measures each. */
function components(mask: Uint8Array, width: number, height: number): { labels: Int32Array; parts: Component[] } {
  const labels = new Int32Array(mask.length)
  const stack = new Int32Array(mask.length)
  const parts: Component[] = [{ size: 0, x0: 0, y0: 0, x1: 0, y1: 0 }]
  let next = 0
  for (let start = 0; start < mask.length; start++) {
    if (!mask[start] || labels[start]) continue
    next++
    const part: Component = { size: 0, x0: width, y0: height, x1: 0, y1: 0 }
    let top = 0
    stack[top++] = start
    labels[start] = next
    while (top > 0) {
      const i = stack[--top]
      part.size++
      const x = i % width
      const y = (i - x) / width
      if (x < part.x0) part.x0 = x
      if (x >= part.x1) part.x1 = x + 1
      if (y < part.y0) part.y0 = y
      if (y >= part.y1) part.y1 = y + 1
      for (let k = 0; k < 4; k++) {
        const j =
          k === 0
            ? x > 0
              ? i - 1
              : -1
            : k === 1
              ? x < width - 1
                ? i + 1
                : -1
              : k === 2
                ? i - width
                : i < width * (height - 1)
                  ? i + width
                  : -1
        if (j >= 0 && mask[j] && !labels[j]) {
          labels[j] = next
          stack[top++] = j
        }
      }
    }
    parts.push(part)
  }
  return { labels, parts }
}

function largestComponent(mask: Uint8Array, width: number, height: number): Uint8Array {
  const { labels, parts } = components(mask, width, height)
  let best = 0
  for (let k = 1; k < parts.length; k++) if (parts[k].size > parts[best].size) best = k
  const out = new Uint8Array(mask.length)
  for (let i = 0; i < mask.length; i++) out[i] = labels[i] === best && best > 0 ? 1 : 0
  return out
}

/** Smallest share of the largest part that another part of the same figure has (a leg, a head). */
const FIGURE_PART = 0.02
/** Share of an arm's rows level with a gap between the head and the legs, at least. */
const ARM_IN_GAP = 0.2

/**
 * The standing figure in a room photo: its largest part, and the parts straight above or below it. Clothes
 * or skin of the wall's own colour cut a figure in pieces (white shorts against a white sweep, a face against
 * a beige wall): the legs below them or the head above are still the same person.
 */
function figureComponents(mask: Uint8Array, width: number, height: number): { kept: Uint8Array; stacked: Uint8Array } {
  const { labels, parts } = components(mask, width, height)
  let best = 0
  for (let k = 1; k < parts.length; k++) if (parts[k].size > parts[best].size) best = k
  if (best === 0) {
    const none = new Uint8Array(mask.length)
    return { kept: none, stacked: none }
  }
  const main = parts[best]
  const under = parts.map(() => false)
  const keep = parts.map((part, k) => {
    if (k === best) return true
    if (k === 0 || part.size < FIGURE_PART * main.size) return false
    // A limb or a head is narrower than the figure and clear of the frame's sides; a band of floor is not.
    if (part.x0 === 0 || part.x1 === width) return false
    const cx = (part.x0 + part.x1) / 2
    const cy = (part.y0 + part.y1) / 2
    if (cx <= main.x0 || cx >= main.x1) return false
    if (part.x1 - part.x0 <= main.x1 - main.x0) return cy < main.y0 || cy > main.y1
    // Wider than the figure, below it all: the shoes on the shadow pooled under them, low and flat, kept whole; or the
    // legs standing on their shadow, cut from a figure that lost its hips against the wall (grey trousers on a grey
    // brick wall), tall: only the part's columns under the figure are the legs.
    if (part.y0 <= main.y1) return false
    if (3 * (part.y1 - part.y0) < part.x1 - part.x0) return true
    under[k] = true
    return false
  })
  keepArmsBesideGap(parts, keep, labels, main, width, height)
  const paint = (chosen: boolean[]) => {
    const out = new Uint8Array(mask.length)
    for (let i = 0; i < mask.length; i++) {
      const x = i % width
      out[i] = chosen[labels[i]] || (under[labels[i]] && x >= main.x0 && x < main.x1) ? 1 : 0
    }
    return out
  }
  const kept = paint(keep)
  const withStacked = keep.slice()
  return { kept, stacked: keepStacked(parts, withStacked, main, width) ? paint(withStacked) : kept }
}

/** Rows between a piece and the figure, at most, for it to be stacked on it: a share of the figure's rows. */
const STACKED_GAP = 0.03
/** A stacked piece is no wider than this many times the largest part (a top's bar with its sleeves above the legs). */
const STACKED_WIDTH = 2.5
/** ...nor smaller than this share of it (a sleeve's bar is about 0.005). */
const STACKED_SIZE = 0.002

/** Rounds of stacking, at most: each takes in the pieces next to those already kept (a bar a round). */
const STACKED_ROUNDS = 48

/**
 * A top striped in the backdrop's colour comes out as bars, each a piece of its own and wider than the legs, so that
 * figureComponents leaves them out with everything wider than the figure above it (a shelf, a band of wall). Here a
 * piece centred over the largest part is kept when it lies just above or below a kept piece (within STACKED_GAP of the
 * figure's rows) across at least half of the narrower one's width, clear of the frame's sides: bar after bar, the top
 * and its sleeves come back.
 */
function keepStacked(parts: Component[], keep: boolean[], main: Component, width: number): boolean {
  const kept = parts.filter((_, k) => k > 0 && keep[k])
  let top = main.y0
  let bottom = main.y1
  for (const part of kept) (top = Math.min(top, part.y0)), (bottom = Math.max(bottom, part.y1))
  const gap = Math.max(2, Math.round(STACKED_GAP * (bottom - top)))
  const mainWidth = main.x1 - main.x0
  const candidates: number[] = []
  parts.forEach((part, k) => {
    if (k === 0 || keep[k] || part.size < STACKED_SIZE * main.size || part.x0 === 0 || part.x1 === width) return
    const centre = (part.x0 + part.x1) / 2
    if (part.x1 - part.x0 <= STACKED_WIDTH * mainWidth && centre > main.x0 && centre < main.x1) candidates.push(k)
  })
  const stackedOn = (a: Component, b: Component) => {
    const rows = Math.max(a.y0 - b.y1, b.y0 - a.y1)
    const across = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0)
    return rows >= 0 && rows <= gap && across >= 0.5 * Math.min(a.x1 - a.x0, b.x1 - b.x0)
  }
  const before = kept.length
  for (let round = 0, changed = true; changed && round < STACKED_ROUNDS; round++) {
    changed = false
    for (const k of candidates) {
      if (keep[k]) continue
      if (!kept.some((part) => stackedOn(parts[k], part))) continue
      keep[k] = true
      kept.push(parts[k])
      changed = true
    }
  }
  return kept.length > before
}

/**
 * A torso of the wall's own colour (a white top against a white sweep in a high-key photo, clipped to the same white)
 * leaves a gap of empty rows between the head and the legs, and the arms hanging beside it are parts of their own,
 * wider of the centre than the legs. A narrow upright part clear of the frame's sides, level with that gap and within
 * reach of the figure, is an arm. A figure that came out whole has no such gap, so nothing beside it is taken in.
 */
function keepArmsBesideGap(parts: Component[], keep: boolean[], labels: Int32Array, main: Component, width: number, height: number): void {
  const mainWidth = main.x1 - main.x0
  const centre = (main.x0 + main.x1) / 2
  // Rows with figure in the middle third of the largest part: an arm joined to the legs by its hand is beside the gap.
  const kept = new Uint8Array(height)
  for (let y = 0; y < height; y++) {
    for (let x = Math.round(centre - mainWidth / 6), i = y * width + x; x <= centre + mainWidth / 6; x++, i++) {
      if (labels[i] > 0 && keep[labels[i]]) {
        kept[y] = 1
        break
      }
    }
  }
  const top = kept.indexOf(1)
  const bottom = kept.lastIndexOf(1)
  parts.forEach((part, k) => {
    if (k === 0 || keep[k] || part.size < FIGURE_PART * main.size) return
    const partWidth = part.x1 - part.x0
    if (part.x0 === 0 || part.x1 === width || partWidth > mainWidth || part.y1 - part.y0 < partWidth) return
    if (Math.abs((part.x0 + part.x1) / 2 - centre) > 1.5 * Math.max(mainWidth, partWidth)) return
    let gap = 0
    for (let y = Math.max(part.y0, top); y < Math.min(part.y1, bottom); y++) gap += kept[y] ? 0 : 1
    keep[k] = gap >= Math.max(3, ARM_IN_GAP * (part.y1 - part.y0))
  })
}
