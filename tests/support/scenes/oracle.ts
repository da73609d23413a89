/**
 * The oracle: judges a delivered try-on image against the ground truth its scene was drawn with (body part masks,
 * the product's category and colours, the framing), never against what the service or its checks measured. Its
 * rules and thresholds are written down in docs/quality-evaluation.md#the-oracle, fixed before any check existed.
 */
import { decodeImage } from '../../../shared/images/codecs/index.ts'
import type { RgbaImage } from '../../../shared/images/codecs/raster.ts'
import { ciede2000, labImage, labOf, type Lab } from '../../../shared/quality/colour.ts'
import { PART, type ProductKind, type Scene } from './types.ts'

export type Issue =
  | 'result_unreadable'
  | 'framing_changed'
  | 'person_changed'
  | 'garment_missing'
  | 'colour_changed'
  | 'garment_wrong_region'
  | 'garment_off_body'

export interface Judgement {
  broken: boolean
  issues: Issue[]
  /** What the rules measured, for reports and contact sheets. */
  measures: Record<string, number>
}

/** The thresholds, as docs/quality-evaluation.md states them. */
export const RULES = {
  /** A result pixel shows the product: within this CIEDE2000 (kL = 2) of one of its colours, drawn or lit. */
  matchesProduct: 12,
  /** A result pixel was changed from the shopper photo: more than this CIEDE2000 apart. */
  changed: 5,
  heightTolerance: 0.01,
  /** Wedding-dress results may have floor added below, up to this share of the photo's height. */
  addedFloor: 0.6,
  backgroundMeanDeltaE: 8,
  headMeanDeltaE: 10,
  headChangedDeltaE: 25,
  headChangedShare: 0.2,
  /** Share of each region the product must cover. */
  cover: { torso: 0.6, hips: 0.5, thighs: 0.5, shins: 0.4, feet: 0.5 },
  /** Share of a region the product must not cover when it does not belong there. */
  wrongRegion: 0.35,
  /** Product pixels outside the body's envelope, as a share of the area it should cover. */
  offBody: 0.25,
  /** The picture moved: the best shift is at least this share of the width, and fits this much better than none. */
  shift: 0.015,
  shiftGain: 0.7,
} as const

type Region = 'torso' | 'hips' | 'thighs' | 'shins' | 'feet'
const REQUIRED: Record<ProductKind, Region[]> = {
  tshirt: ['torso'],
  shirt: ['torso'],
  jacket: ['torso'],
  trousers: ['thighs', 'shins'],
  skirt: ['hips'],
  dress: ['torso', 'hips'],
  gown: ['torso', 'hips', 'thighs', 'shins'],
  'train-gown': ['torso', 'hips', 'thighs', 'shins'],
  shoes: ['feet'],
  bag: [],
}
const FORBIDDEN: Record<ProductKind, Region[]> = {
  tshirt: ['shins'],
  shirt: ['shins'],
  jacket: ['shins'],
  trousers: ['torso'],
  skirt: ['torso'],
  dress: [],
  gown: [],
  'train-gown': [],
  shoes: ['torso', 'thighs'],
  bag: ['torso', 'thighs'],
}
/** A region this small is out of frame: not required. */
const MIN_REGION = 60

const shopperPixels = new WeakMap<Scene, { image: RgbaImage; lab: Float32Array }>()

/** The shopper photo as the service received it (decoded from the bytes sent), in L*a*b*. */
function shopperOf(scene: Scene): { image: RgbaImage; lab: Float32Array } {
  let cached = shopperPixels.get(scene)
  if (!cached) {
    const image = decodeImage(scene.shopper.bytes, scene.shopper.format)
    cached = { image, lab: labImage(image.data, image.width * image.height) }
    shopperPixels.set(scene, cached)
  }
  return cached
}

export function judge(scene: Scene, result: RgbaImage): Judgement {
  const { image: shopper, lab: before } = shopperOf(scene)
  const { parts, figureHeight: H } = scene.truth.shopper
  const product = scene.truth.product
  const { width, height } = shopper
  const wedding = scene.request.productType === 'wedding-dress'
  const issues = new Set<Issue>()
  const measures: Record<string, number> = {}

  // Framing: one scale for both axes; in wedding-dress mode, floor may be added below.
  const scale = result.width / width
  const expected = height * scale
  const extra = result.height - expected
  measures.extraHeight = extra / expected
  const tolerance = Math.max(2, RULES.heightTolerance * expected)
  if (extra < -tolerance || extra > (wedding ? RULES.addedFloor * expected : tolerance)) {
    issues.add('framing_changed')
    return { broken: true, issues: [...issues], measures }
  }
  const after = labImage(resample(result, scale, width, height).data, width * height)
  const colours: Lab[] = [...product.colours.map((c) => labOf(c.rgb)), ...product.coloursInScene.map((c) => labOf(c))]
  const deltaAt = (i: number) => ciede2000(labAt(before, i), labAt(after, i))
  // Per pixel, once: whether the result changed it, and whether it then shows the product. CIEDE2000 is never more
  // than 2.1 times CIE76 (a* grows by at most 1.5, the rotation term adds at most 87%): closer pixels are unchanged.
  const changed = new Uint8Array(width * height)
  const shows = new Uint8Array(width * height)
  const near = (RULES.changed / 2.1) ** 2
  for (let i = 0; i < changed.length; i++) {
    const dL = before[i * 3] - after[i * 3]
    const da = before[i * 3 + 1] - after[i * 3 + 1]
    const db = before[i * 3 + 2] - after[i * 3 + 2]
    if (dL * dL + da * da + db * db <= near || deltaAt(i) <= RULES.changed) continue
    changed[i] = 1
    const lab = labAt(after, i)
    shows[i] = colours.some((c) => ciede2000(lab, c, 2) <= RULES.matchesProduct) ? 1 : 0
  }
  const showsProduct = (i: number) => shows[i] === 1

  // Background far from the body and from anywhere the product may lie: the same picture, not moved or re-cropped.
  const person = chamfer(width, height, (i) => parts[i] !== PART.background)
  const envelope = envelopeOf(scene, person, width, height)
  const far = 0.08 * H
  let backgroundSum = 0
  let backgroundCount = 0
  for (let i = 0; i < width * height; i += 3) {
    if (person[i] > far && !envelope[i]) {
      backgroundSum += deltaAt(i)
      backgroundCount++
    }
  }
  if (backgroundCount >= 500) {
    measures.backgroundDeltaE = backgroundSum / backgroundCount
    if (measures.backgroundDeltaE > RULES.backgroundMeanDeltaE) issues.add('framing_changed')
  }
  // The picture moved: what nothing may change (the head, the background off the envelope) matches better shifted.
  const fixed = (i: number) => !envelope[i] || parts[i] === PART.hair || parts[i] === PART.face
  const shift = bestShift(before, after, width, height, fixed)
  measures.shiftX = shift.dx
  measures.shiftY = shift.dy
  if (shift.moved) issues.add('framing_changed')

  // The head (hair and face, away from its edges) is the shopper's own.
  const notHead = chamfer(width, height, (i) => parts[i] !== PART.hair && parts[i] !== PART.face)
  const inset = Math.max(1, 0.006 * H)
  let headSum = 0
  let headChanged = 0
  let headCount = 0
  for (let i = 0; i < width * height; i++) {
    if (notHead[i] <= inset) continue
    const d = deltaAt(i)
    headSum += d
    if (d > RULES.headChangedDeltaE) headChanged++
    headCount++
  }
  if (headCount >= 30) {
    measures.headDeltaE = headSum / headCount
    measures.headChangedShare = headChanged / headCount
    if (measures.headDeltaE > RULES.headMeanDeltaE || measures.headChangedShare > RULES.headChangedShare) issues.add('person_changed')
  }

  // Coverage of each region by the product (regions one pixel in from their edges).
  const regionOf = regionMasks(scene, width, height)
  const cover: Partial<Record<Region, number>> = {}
  const changedLabs: Lab[] = []
  let targetArea = 0
  let targetChanged = 0
  for (const region of ['torso', 'hips', 'thighs', 'shins', 'feet'] as Region[]) {
    const mask = regionOf[region]
    let count = 0
    let hits = 0
    let alike = 0
    for (let i = 0; i < mask.length; i++) {
      if (!mask[i]) continue
      count++
      if (showsProduct(i)) hits++
      else if (!changed[i] && colours.some((c) => ciede2000(labAt(before, i), c, 2) <= RULES.matchesProduct)) alike++
      if (REQUIRED[product.kind].includes(region) && changed[i]) {
        targetChanged++
        if (changedLabs.length < 4000 && i % 3 === 0) changedLabs.push(labAt(after, i))
      }
    }
    if (count < MIN_REGION) continue
    // The shopper already wore the product's colour there (white on white): nothing can show whether it was put on.
    if (alike / count >= 0.5) {
      measures[`alike.${region}`] = alike / count
      continue
    }
    cover[region] = hits / count
    measures[`cover.${region}`] = hits / count
    if (REQUIRED[product.kind].includes(region)) targetArea += count
  }
  const required = REQUIRED[product.kind]
  const missing = required.filter((r) =>
    cover[r] === undefined ? r === 'feet' && measures[`alike.${r}`] === undefined : cover[r]! < RULES.cover[r],
  )
  if (missing.length > 0) {
    // Something was put there, in another colour: the product's colour changed. Nothing was put there: it is missing.
    const median = medianLab(changedLabs)
    measures.changedShare = targetArea ? targetChanged / targetArea : 0
    if (median) measures.colourDeltaE = Math.min(...colours.map((c) => ciede2000(median, c, 2)))
    if (median && measures.changedShare >= 0.5 && measures.colourDeltaE > RULES.matchesProduct) issues.add('colour_changed')
    else issues.add('garment_missing')
  }
  if (FORBIDDEN[product.kind].some((r) => (cover[r] ?? 0) > RULES.wrongRegion)) issues.add('garment_wrong_region')

  // Product pixels outside the body's envelope, against the area it should cover (for a bag: all its pixels).
  let outside = 0
  let anywhere = 0
  for (let i = 0; i < width * height; i++) {
    if (!showsProduct(i)) continue
    anywhere++
    if (!envelope[i]) outside++
  }
  const area = product.kind === 'bag' ? anywhere : targetArea
  measures.offBody = outside / Math.max(1, area)
  if (area > 0 && measures.offBody > RULES.offBody) issues.add('garment_off_body')
  if (product.kind === 'bag' && anywhere < 0.003 * width * height) {
    // Beside the hands the photo already showed the bag's colour (a white bag on white paper): nothing can tell.
    const hands = besideTheHands(scene, width, height)
    let alike = 0
    let other = 0
    for (let i = 0; i < width * height; i++) {
      if (!hands[i]) continue
      if (changed[i]) other++
      else if (colours.some((c) => ciede2000(labAt(before, i), c, 2) <= RULES.matchesProduct)) alike++
    }
    measures.alikeBesideHands = alike / (width * height)
    if (other >= 0.003 * width * height) issues.add('colour_changed')
    else if (alike < 0.003 * width * height) issues.add('garment_missing')
  }
  return { broken: issues.size > 0, issues: [...issues], measures }
}

/** Judges encoded result bytes; an image that cannot be read is broken. */
export function judgeBytes(scene: Scene, bytes: Uint8Array, format: 'jpeg' | 'png' | 'webp'): Judgement {
  let image: RgbaImage
  try {
    image = decodeImage(bytes, format)
  } catch {
    return { broken: true, issues: ['result_unreadable'], measures: {} }
  }
  return judge(scene, image)
}

const labAt = (lab: Float32Array, i: number): Lab => [lab[i * 3], lab[i * 3 + 1], lab[i * 3 + 2]]

/**
 * The shift (within 15% of the width, 10% of the height) that best lays the result's lightness over the photo's on a
 * grid of about 96 cells across, counting only cells where `fixed` holds; `moved` when it is not (about) none.
 */
function bestShift(
  before: Float32Array,
  after: Float32Array,
  width: number,
  height: number,
  fixed: (i: number) => boolean,
): { dx: number; dy: number; moved: boolean } {
  const cell = Math.max(2, Math.round(width / 96))
  const gw = Math.floor(width / cell)
  const gh = Math.floor(height / cell)
  const grid = (lab: Float32Array) => {
    const out = new Float32Array(gw * gh)
    for (let gy = 0; gy < gh; gy++)
      for (let gx = 0; gx < gw; gx++) {
        let sum = 0
        for (let y = gy * cell; y < (gy + 1) * cell; y++) for (let x = gx * cell; x < (gx + 1) * cell; x++) sum += lab[(y * width + x) * 3]
        out[gy * gw + gx] = sum / (cell * cell)
      }
    return out
  }
  const a = grid(before)
  const b = grid(after)
  const usable = new Uint8Array(gw * gh)
  for (let gy = 0; gy < gh; gy++)
    for (let gx = 0; gx < gw; gx++) usable[gy * gw + gx] = fixed((gy * cell + (cell >> 1)) * width + gx * cell + (cell >> 1)) ? 1 : 0
  const errorAt = (ox: number, oy: number) => {
    let sum = 0
    let count = 0
    for (let gy = Math.max(0, -oy); gy < Math.min(gh, gh - oy); gy++)
      for (let gx = Math.max(0, -ox); gx < Math.min(gw, gw - ox); gx++) {
        const i = gy * gw + gx
        if (!usable[i]) continue
        sum += Math.abs(a[i] - b[i + oy * gw + ox])
        count++
      }
    return count > 20 ? sum / count : Infinity
  }
  const none = errorAt(0, 0)
  let best = { dx: 0, dy: 0, error: none }
  const rx = Math.round(0.15 * gw)
  const ry = Math.round(0.1 * gh)
  for (let oy = -ry; oy <= ry; oy++)
    for (let ox = -rx; ox <= rx; ox++) {
      const error = errorAt(ox, oy)
      if (error < best.error) best = { dx: ox, dy: oy, error }
    }
  const far = Math.hypot(best.dx, best.dy) * cell >= RULES.shift * width
  return { dx: best.dx * cell, dy: best.dy * cell, moved: far && best.error < RULES.shiftGain * none && none - best.error > 1 }
}

/** The result at the shopper photo's size (nearest pixel; rows the result adds below are left out). */
function resample(result: RgbaImage, scale: number, width: number, height: number): RgbaImage {
  const data = new Uint8Array(width * height * 4)
  const to = new Uint32Array(data.buffer)
  const from = new Uint32Array(result.data.buffer, result.data.byteOffset, result.width * result.height)
  for (let y = 0; y < height; y++) {
    const ry = Math.min(result.height - 1, Math.floor((y + 0.5) * scale))
    for (let x = 0; x < width; x++) to[y * width + x] = from[ry * result.width + Math.min(result.width - 1, Math.floor((x + 0.5) * scale))]
  }
  return { width, height, data }
}

/** Chamfer (3-4) distance in pixels from every pixel to the nearest pixel where `inside` holds (0 there). */
export function chamfer(width: number, height: number, inside: (i: number) => boolean): Float32Array {
  const d = new Float32Array(width * height)
  for (let i = 0; i < d.length; i++) d[i] = inside(i) ? 0 : 1e9
  const pass = (i: number, j: number, cost: number) => {
    if (d[j] + cost < d[i]) d[i] = d[j] + cost
  }
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x
      if (x > 0) pass(i, i - 1, 3)
      if (y > 0) {
        pass(i, i - width, 3)
        if (x > 0) pass(i, i - width - 1, 4)
        if (x < width - 1) pass(i, i - width + 1, 4)
      }
    }
  }
  for (let y = height - 1; y >= 0; y--) {
    for (let x = width - 1; x >= 0; x--) {
      const i = y * width + x
      if (x < width - 1) pass(i, i + 1, 3)
      if (y < height - 1) {
        pass(i, i + width, 3)
        if (x < width - 1) pass(i, i + width + 1, 4)
        if (x > 0) pass(i, i + width - 1, 4)
      }
    }
  }
  for (let i = 0; i < d.length; i++) d[i] /= 3
  return d
}

/**
 * Where the product may lie: the person grown by 4% of their height; for skirts, dresses and gowns a skirt
 * widening from the hips to 0.45 H either side at the floor; for a train in wedding-dress mode, the floor around
 * the feet (1 H either side) from the knees down; for a bag, beside and below each hand.
 */
function envelopeOf(scene: Scene, person: Float32Array, width: number, height: number): Uint8Array {
  const { figureHeight: H, centreX, floorY } = scene.truth.shopper
  const product = scene.truth.product
  const top = floorY - H
  const hips = top + 0.4 * H
  const skirted = product.kind === 'skirt' || product.category === 'dress'
  const train = product.hasTrain && scene.request.productType === 'wedding-dress'
  const out = product.kind === 'bag' ? besideTheHands(scene, width, height) : new Uint8Array(width * height)
  for (let y = 0; y < height; y++) {
    const t = (y - hips) / (floorY - hips)
    const skirtHalf = skirted && t >= 0 ? (0.14 + (0.45 - 0.14) * Math.min(1, t)) * H : -1
    for (let x = 0; x < width; x++) {
      const i = y * width + x
      const dx = Math.abs(x - centreX)
      out[i] = out[i] || person[i] <= 0.04 * H || dx <= skirtHalf || (train && y >= top + 0.7 * H && dx <= H) ? 1 : 0
    }
  }
  return out
}

/** A bag is carried: beside and below each hand (0.08 H either side, down to 0.2 H), however the arms are held. */
function besideTheHands(scene: Scene, width: number, height: number): Uint8Array {
  const { figureHeight: H, centreX, parts } = scene.truth.shopper
  const out = new Uint8Array(width * height)
  for (const side of [-1, 1]) {
    let x0 = width
    let x1 = -1
    let y0 = height
    let y1 = -1
    for (let i = 0; i < width * height; i++) {
      const x = i % width
      if (parts[i] !== PART.hand || Math.sign(x - centreX) !== side) continue
      const y = (i - x) / width
      x0 = Math.min(x0, x)
      x1 = Math.max(x1, x)
      y0 = Math.min(y0, y)
      y1 = Math.max(y1, y)
    }
    if (x1 < 0) continue
    for (let y = Math.max(0, Math.floor(y0 - 0.02 * H)); y < Math.min(height, Math.ceil(y1 + 0.2 * H)); y++)
      for (let x = Math.max(0, Math.floor(x0 - 0.08 * H)); x < Math.min(width, Math.ceil(x1 + 0.08 * H)); x++) out[y * width + x] = 1
  }
  return out
}

function regionMasks(scene: Scene, width: number, height: number): Record<Region, Uint8Array> {
  const { parts } = scene.truth.shopper
  const masks = {} as Record<Region, Uint8Array>
  const members: Record<Region, number[]> = {
    torso: [PART.torso],
    hips: [PART.hips],
    thighs: [PART.thigh],
    shins: [PART.shin],
    feet: [PART.foot],
  }
  // The torso below its top 30%: necklines differ (strapless, V), the body under them does not.
  const torsoRows = rowsOf(parts, width, PART.torso)
  const torsoFrom = torsoRows ? torsoRows[0] + 0.3 * (torsoRows[1] - torsoRows[0]) : 0
  for (const [region, ids] of Object.entries(members) as [Region, number[]][]) {
    const mask = new Uint8Array(width * height)
    for (let y = 1; y < height - 1; y++) {
      for (let x = 1; x < width - 1; x++) {
        const i = y * width + x
        if (!ids.includes(parts[i])) continue
        if (region === 'torso' && y < torsoFrom) continue
        const same = (j: number) => ids.includes(parts[j])
        if (same(i - 1) && same(i + 1) && same(i - width) && same(i + width)) mask[i] = 1
      }
    }
    masks[region] = mask
  }
  return masks
}

function rowsOf(parts: Uint8Array, width: number, part: number): [number, number] | null {
  let first = -1
  let last = -1
  for (let i = 0; i < parts.length; i++) {
    if (parts[i] !== part) continue
    const y = Math.floor(i / width)
    if (first < 0) first = y
    last = y
  }
  return first < 0 ? null : [first, last]
}

function medianLab(labs: Lab[]): Lab | null {
  if (labs.length === 0) return null
  const median = (k: number) => {
    const v = labs.map((l) => l[k]).sort((a, b) => a - b)
    return v[v.length >> 1]
  }
  return [median(0), median(1), median(2)]
}
