/**
 * Seeded wedding-dress scenes for measuring the bridal pipeline on photos it was not tuned on
 * (`npm run bench:bridal`, and tests that need inputs nobody designed the rules around).
 *
 * Written independently of devstack/samples/: its own figure, poses, clothes, rooms, floors, light and
 * camera noise, and its own product photos (cut-out, white and grey studio backdrops, dress forms) of
 * gowns with trains, floor-length gowns without one, short dresses, T-shirts and trousers. Every scene
 * comes with its ground truth (where the body is, whether the product has a train) so a result can be
 * judged without trusting the pipeline's own analysis.
 */
import { encodeJpeg } from '../../shared/images/codecs/jpeg-encoder.ts'
import type { RgbaImage } from '../../shared/images/codecs/raster.ts'
import { Canvas, capsule, ellipse, polygon, random, valueNoise, type Rgb, type Shape } from '../../devstack/samples/drawing.ts'
import { encodePng } from '../../devstack/samples/png-encoder.ts'
import type { EncodedPhoto } from './images.ts'

export type ProductKind = 'train-gown' | 'floor-gown' | 'short-dress' | 'tshirt' | 'trousers'
export type ProductStyle = 'cut-out' | 'white' | 'grey' | 'mannequin'
export type Box = [number, number, number, number]

/** Where the drawn body is, in pixels of the shopper photo. */
export interface BodyTruth {
  centreX: number
  figureHeight: number
  headTop: number
  /** Bottom of the soles: the floor line under the feet. */
  floorY: number
  ankleY: number
  shoulderY: number
  hipY: number
  kneeY: number
  shoulderHalfWidth: number
  head: Box
  /** Inside the torso, clear of the arms in every pose. */
  torso: Box
  /** Inside the thighs (between the hips and the knees). */
  thighs: Box[]
  /** The clothes the shopper wears there, to tell a covered torso from an unchanged one. */
  topColour: Rgb
  bottomColour: Rgb
}

export interface BridalScene {
  seed: number
  person: EncodedPhoto
  product: EncodedPhoto
  kind: ProductKind
  hasTrain: boolean
  style: ProductStyle
  /** The product's base colour as drawn (before shading). */
  colour: Rgb
  body: BodyTruth
  /** One line saying what was drawn, for reports and failure listings. */
  description: string
}

type Random = () => number

const PRODUCT_COLOURS: Record<string, Rgb> = {
  ivory: [240, 233, 216],
  white: [248, 247, 243],
  champagne: [232, 214, 184],
  blush: [236, 203, 196],
}

/** The scene for a seed: the same seed always draws the same scene, byte for byte. */
export function makeBridalScene(seed: number, kind?: ProductKind): BridalScene {
  const rnd = random(seed * 7919 + 17)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)]
  const between = (lo: number, hi: number) => lo + (hi - lo) * rnd()
  const productKind: ProductKind =
    kind ??
    pick([
      'train-gown',
      'train-gown',
      'train-gown',
      'train-gown',
      'floor-gown',
      'floor-gown',
      'short-dress',
      'short-dress',
      'tshirt',
      'trousers',
    ] as const)
  const colourName = pick(Object.keys(PRODUCT_COLOURS))
  const base = PRODUCT_COLOURS[colourName]
  const colour: Rgb = [base[0] + between(-5, 5), base[1] + between(-5, 5), base[2] + between(-5, 5)].map((v) => Math.min(252, v)) as Rgb
  const style: ProductStyle =
    productKind === 'trousers' ? pick(['cut-out', 'white', 'grey'] as const) : pick(['cut-out', 'white', 'grey', 'mannequin'] as const)
  const product = drawProduct(rnd, productKind, style, colour)
  const shopper = drawShopperScene(rnd, colour)
  const quality = Math.round(between(55, 95))
  return {
    seed,
    person: {
      bytes: encodeJpeg(shopper.image, quality),
      format: 'jpeg',
      width: shopper.image.width,
      height: shopper.image.height,
      pixels: shopper.image,
    },
    product: product.encoded,
    kind: productKind,
    hasTrain: productKind === 'train-gown',
    style,
    colour,
    body: shopper.body,
    description: `${productKind} (${product.description}, ${colourName}, ${style}) on ${shopper.description}, JPEG q${quality}`,
  }
}

// ---------------------------------------------------------------- shapes

/** A shape bounded left and right by functions of y, between two rows: garments, torsos, fans of fabric. */
function profile(top: number, bottom: number, left: (y: number) => number, right: (y: number) => number): Shape {
  let minX = Infinity
  let maxX = -Infinity
  for (let i = 0; i <= 64; i++) {
    const y = top + ((bottom - top) * i) / 64
    minX = Math.min(minX, left(y))
    maxX = Math.max(maxX, right(y))
  }
  return {
    distance: (x, y) => Math.max(top - y, y - bottom, left(y) - x, x - right(y)),
    bounds: [minX - 2, top - 2, maxX + 2, bottom + 2],
  }
}

function symmetric(top: number, bottom: number, centre: number, half: (y: number) => number): Shape {
  return profile(
    top,
    bottom,
    (y) => centre - half(y),
    (y) => centre + half(y),
  )
}

function unionOf(...shapes: Shape[]): Shape {
  return {
    distance: (x, y) => {
      let d = Infinity
      for (const s of shapes) {
        const b = s.bounds
        if (x < b[0] - 2 || x > b[2] + 2 || y < b[1] - 2 || y > b[3] + 2) continue
        d = Math.min(d, s.distance(x, y))
      }
      return d === Infinity ? 10 : d
    },
    bounds: [
      Math.min(...shapes.map((s) => s.bounds[0])),
      Math.min(...shapes.map((s) => s.bounds[1])),
      Math.max(...shapes.map((s) => s.bounds[2])),
      Math.max(...shapes.map((s) => s.bounds[3])),
    ],
  }
}

function minus(shape: Shape, ...holes: Shape[]): Shape {
  return {
    distance: (x, y) => {
      let d = shape.distance(x, y)
      if (d > 2) return d
      for (const hole of holes) d = Math.max(d, -hole.distance(x, y))
      return d
    },
    bounds: shape.bounds,
  }
}

/** The shape leaning sideways by `lean` pixels per pixel above `pivotY` (a slight tilt of a standing figure). */
function leaning(shape: Shape, lean: number, pivotY: number): Shape {
  if (lean === 0) return shape
  const [x0, y0, x1, y1] = shape.bounds
  const shifts = [lean * (pivotY - y0), lean * (pivotY - y1)]
  return {
    distance: (x, y) => shape.distance(x - lean * (pivotY - y), y),
    bounds: [x0 + Math.min(...shifts) - 2, y0, x1 + Math.max(...shifts) + 2, y1],
  }
}

const lerp = (a: number, b: number, t: number) => a + (b - a) * Math.min(1, Math.max(0, t))
/** Piecewise-linear through (y, value) knots, flat beyond the ends. */
function knots(points: [number, number][]): (y: number) => number {
  return (y) => {
    if (y <= points[0][0]) return points[0][1]
    for (let i = 1; i < points.length; i++) {
      if (y <= points[i][0]) return lerp(points[i - 1][1], points[i][1], (y - points[i - 1][0]) / (points[i][0] - points[i - 1][0] || 1))
    }
    return points[points.length - 1][1]
  }
}

const mix = (a: Rgb, b: Rgb, t: number): Rgb => [lerp(a[0], b[0], t), lerp(a[1], b[1], t), lerp(a[2], b[2], t)]
const scale = (c: Rgb, f: number): Rgb => [c[0] * f, c[1] * f, c[2] * f]
const distance = (a: Rgb, b: Rgb) => Math.abs(a[0] - b[0]) + Math.abs(a[1] - b[1]) + Math.abs(a[2] - b[2])

// ---------------------------------------------------------------- the shopper's photo

const SKIN: Rgb[] = [
  [250, 221, 200],
  [238, 198, 170],
  [224, 172, 138],
  [198, 142, 105],
  [168, 112, 78],
  [132, 86, 58],
  [98, 64, 44],
  [72, 48, 34],
]
const HAIR: Rgb[] = [
  [24, 20, 18],
  [58, 38, 26],
  [104, 70, 42],
  [196, 160, 104],
  [150, 72, 40],
  [170, 168, 164],
]
const CLOTHES: Rgb[] = [
  [30, 34, 44],
  [46, 70, 130],
  [120, 30, 40],
  [60, 100, 70],
  [200, 180, 150],
  [90, 90, 96],
  [150, 150, 155],
  [220, 220, 216],
  [70, 50, 40],
  [180, 80, 60],
  [40, 110, 140],
  [230, 200, 80],
  [110, 60, 120],
  [20, 20, 22],
  [160, 120, 90],
  [245, 245, 245],
]
const WALLS: Rgb[] = [
  [244, 242, 238],
  [236, 230, 220],
  [214, 214, 210],
  [196, 200, 204],
  [188, 198, 184],
  [170, 180, 196],
  [120, 124, 130],
  [222, 206, 190],
  [90, 86, 84],
  [250, 250, 250],
]

interface Room {
  image: RgbaImage
  description: string
}

function drawShopperScene(rnd: Random, productColour: Rgb): { image: RgbaImage; body: BodyTruth; description: string } {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)]
  const between = (lo: number, hi: number) => lo + (hi - lo) * rnd()
  const [aw, ah] = pick([
    [2, 3],
    [3, 4],
    [9, 16],
    [4, 5],
  ] as const)
  const width = Math.round(between(360, 640) / 4) * 4
  const height = Math.round((width * ah) / aw)
  const figureHeight = height * between(0.66, 0.88)
  const floorY = height - height * between(0.03, 0.2)
  const top = floorY - figureHeight
  if (top < height * 0.02) return drawShopperScene(rnd, productColour)
  const centreX = width * between(0.38, 0.62)
  const H = figureHeight
  const at = (f: number) => top + f * H
  const size = between(0.86, 1.22)
  const lean = between(-0.03, 0.03)
  const skin = pick(SKIN)
  const hair = pick(HAIR)
  // The shopper's own clothes are never the product's colour, so a covered torso can be told from an unchanged one.
  const clothe = (): Rgb => {
    for (;;) {
      const c = pick(CLOTHES)
      if (distance(c, productColour) > 90) return c
    }
  }
  const topColour = clothe()
  const bottomColour = clothe()
  const shoes: Rgb = pick([
    [20, 20, 22],
    [240, 236, 230],
    [200, 160, 130],
    [140, 30, 40],
    [90, 60, 40],
  ])
  const outfit = pick(['trousers', 'trousers', 'jeans', 'skirt', 'long-skirt', 'shorts', 'dress'] as const)
  const sleeves = pick(['short', 'long', 'none'] as const)
  const arms = pick(['down', 'down', 'out', 'hip', 'hips', 'front'] as const)
  const stance = pick(['together', 'apart', 'contrapposto'] as const)
  const hairStyle = pick(['short', 'long', 'bun', 'shoulder'] as const)

  const room = drawRoom(rnd, width, height, floorY, centreX, H)
  const canvas = new Canvas(width, height)
  for (let i = 0; i < width * height; i++) {
    canvas.rgb[i * 3] = room.image.data[i * 4]
    canvas.rgb[i * 3 + 1] = room.image.data[i * 4 + 1]
    canvas.rgb[i * 3 + 2] = room.image.data[i * 4 + 2]
  }
  canvas.alpha.fill(1)

  // Body measures in pixels.
  const sh = H * between(0.1, 0.118) * size
  const waist = H * between(0.066, 0.082) * size
  const hip = H * between(0.088, 0.108) * size
  const thigh = H * 0.05 * Math.sqrt(size)
  const upperArm = H * 0.024 * Math.sqrt(size)
  const side = (s: number, dx: number) => centreX + s * dx
  const kneeX = stance === 'apart' ? 0.062 : 0.046
  const ankleX = stance === 'apart' ? 0.09 : stance === 'together' ? 0.036 : 0.05
  const leg = (s: number, widen = 1, to = 0.955): Shape => {
    const bent = stance === 'contrapposto' && s > 0 ? -0.012 : 0
    const kneeY = Math.min(to, 0.72)
    return unionOf(
      capsule([side(s, hip * 0.5), at(0.5)], thigh * widen, [side(s, (kneeX + bent) * H), at(kneeY)], thigh * 0.7 * widen),
      ...(to > 0.72
        ? [capsule([side(s, (kneeX + bent) * H), at(0.72)], thigh * 0.7 * widen, [side(s, ankleX * H), at(to)], thigh * 0.48 * widen)]
        : []),
    )
  }
  const armPath = (s: number): [number, number][] => {
    const shoulder: [number, number] = [side(s, sh - upperArm * 0.8), at(0.2)]
    switch (arms === 'hip' && s < 0 ? 'down' : arms === 'hips' ? 'hip' : arms) {
      case 'out':
        return [shoulder, [side(s, sh + 0.035 * H), at(0.34)], [side(s, sh + 0.085 * H), at(0.47)]]
      case 'hip':
        return [shoulder, [side(s, sh + 0.075 * H), at(0.32)], [side(s, waist + 0.02 * H), at(0.43)]]
      case 'front':
        return [shoulder, [side(s, sh + 0.004 * H), at(0.35)], [side(s, 0.03 * H), at(0.47)]]
      default:
        return [shoulder, [side(s, sh + 0.006 * H), at(0.36)], [side(s, sh + 0.012 * H), at(0.5)]]
    }
  }
  const arm = (s: number, from = 0, to = 1): Shape => {
    const [a, b, c] = armPath(s)
    const point = (t: number): [number, number] =>
      t <= 0.5 ? [lerp(a[0], b[0], t * 2), lerp(a[1], b[1], t * 2)] : [lerp(b[0], c[0], t * 2 - 1), lerp(b[1], c[1], t * 2 - 1)]
    const radius = (t: number) => upperArm * (1 - 0.3 * t)
    const pieces: Shape[] = []
    const steps = [0, 0.5, 1].filter((t) => t > from && t < to)
    const ts = [from, ...steps, to]
    for (let i = 1; i < ts.length; i++) pieces.push(capsule(point(ts[i - 1]), radius(ts[i - 1]), point(ts[i]), radius(ts[i])))
    return unionOf(...pieces)
  }
  const hand = (s: number): Shape => {
    const c = armPath(s)[2]
    return ellipse(c[0], c[1] + 0.018 * H, 0.017 * H, 0.03 * H)
  }
  const torsoHalf = knots(
    [
      [0.165, sh * 0.7],
      [0.19, sh],
      [0.3, sh * 0.9],
      [0.4, waist],
      [0.5, hip],
    ].map(([f, v]) => [at(f), v] as [number, number]),
  )
  const torso = symmetric(at(0.165), at(0.52), centreX, torsoHalf)
  const tilt = (s: Shape) => leaning(s, lean, floorY)
  const lit = (c: Rgb, amount = 0.1) => {
    const n = valueNoise(Math.floor(rnd() * 1e6), Math.max(2, H / 60))
    return (x: number, y: number): Rgb => scale(c, 1 + amount * ((centreX - x) / (0.3 * H)) * 0.5 + 0.04 * n(x, y))
  }

  // Long hair falls behind the shoulders; then legs and feet, then the torso, arms and head over them.
  if (hairStyle === 'long' || hairStyle === 'shoulder') {
    const end = hairStyle === 'long' ? 0.3 : 0.2
    canvas.fill(
      tilt(
        symmetric(
          at(0.02),
          at(end),
          centreX,
          knots([
            [at(0.02), 0.04 * H],
            [at(0.07), 0.058 * H],
            [at(end), 0.06 * H],
          ]),
        ),
      ),
      hair,
    )
  }
  const feet = [-1, 1].map((s) => ellipse(side(s, (ankleX + 0.012) * H), at(0.978), 0.034 * H, 0.022 * H))
  for (const foot of feet) canvas.fill(tilt(foot), shoes)
  const skinPaint = lit(skin)
  const bottomPaint = lit(bottomColour)
  for (const s of [-1, 1]) {
    if (outfit === 'trousers' || outfit === 'jeans') canvas.fill(tilt(leg(s, 1.12)), bottomPaint)
    else canvas.fill(tilt(leg(s)), skinPaint)
  }
  if (outfit === 'shorts') for (const s of [-1, 1]) canvas.fill(tilt(leg(s, 1.15, 0.62)), bottomPaint)
  if (outfit === 'skirt' || outfit === 'long-skirt' || outfit === 'dress') {
    const hem = outfit === 'long-skirt' ? between(0.86, 0.93) : between(0.62, 0.74)
    const flare = between(1.05, 1.5)
    canvas.fill(
      tilt(
        symmetric(
          at(0.4),
          at(hem),
          centreX,
          knots([
            [at(0.4), waist * 1.02],
            [at(0.5), hip * 1.05],
            [at(hem), hip * flare],
          ]),
        ),
      ),
      outfit === 'dress' ? lit(topColour) : bottomPaint,
    )
  }
  const topPaint = lit(topColour)
  if (outfit !== 'dress') canvas.fill(tilt(torso), topPaint)
  else canvas.fill(tilt(symmetric(at(0.165), at(0.42), centreX, torsoHalf)), topPaint)
  for (const s of [-1, 1]) {
    const sleeveEnd = sleeves === 'long' ? 0.93 : sleeves === 'short' ? 0.3 : 0
    canvas.fill(tilt(arm(s)), skinPaint)
    if (sleeveEnd > 0) canvas.fill(tilt(arm(s, 0, sleeveEnd)), topPaint)
    canvas.fill(tilt(hand(s)), skinPaint)
  }
  // Neck, head and hair.
  canvas.fill(tilt(capsule([centreX, at(0.1)], 0.024 * H, [centreX, at(0.175)], 0.027 * H)), scale(skin, 0.93))
  canvas.fill(tilt(ellipse(centreX, at(0.066), 0.049 * H, 0.064 * H)), lit(skin, 0.05))
  canvas.fill(tilt(ellipse(centreX, at(0.028), 0.053 * H, 0.032 * H)), hair)
  if (hairStyle === 'bun') canvas.fill(tilt(ellipse(centreX, at(0.0), 0.028 * H, 0.02 * H)), hair)
  for (const s of [-1, 1]) canvas.fill(tilt(ellipse(side(s, 0.018 * H), at(0.068), 0.006 * H, 0.004 * H)), [50, 36, 30])

  const image = finishPhoto(canvas, rnd, centreX, H)
  const shift = (y: number) => lean * (floorY - y)
  const box = (x0: number, y0: number, x1: number, y1: number): Box => {
    const s = shift((y0 + y1) / 2)
    return [Math.round(x0 + s), Math.round(y0), Math.round(x1 + s), Math.round(y1)]
  }
  const innerTorso = Math.min(waist, sh) * 0.55
  const body: BodyTruth = {
    centreX: centreX + shift(at(0.3)),
    figureHeight: H,
    headTop: at(0),
    floorY,
    ankleY: at(0.955),
    shoulderY: at(0.19),
    hipY: at(0.5),
    kneeY: at(0.72),
    shoulderHalfWidth: sh,
    head: box(centreX - 0.03 * H, at(0.03), centreX + 0.03 * H, at(0.1)),
    // Below any neckline (a V or a scoop opens down to 0.26 H) and above the waist, narrower than both;
    // arms held in front cross below it.
    torso: box(centreX - innerTorso, at(0.27), centreX + innerTorso, at(arms === 'front' ? 0.33 : 0.38)),
    thighs: [-1, 1].map((s) => box(side(s, hip * 0.5) - thigh * 0.4, at(0.56), side(s, hip * 0.5) + thigh * 0.4, at(0.66))),
    topColour,
    bottomColour:
      outfit === 'dress'
        ? topColour
        : outfit === 'shorts'
          ? skin
          : outfit === 'trousers' || outfit === 'jeans' || outfit === 'long-skirt' || outfit === 'skirt'
            ? bottomColour
            : skin,
  }
  const description = `${width}x${height} shopper (${outfit}, ${sleeves} sleeves, arms ${arms}, feet ${stance}, hair ${hairStyle}, size ${size.toFixed(2)}) in ${room.description}`
  return { image, body, description }
}

/** Wall, floor, skirting, shadows: the room the shopper stands in. */
function drawRoom(rnd: Random, width: number, height: number, floorY: number, centreX: number, H: number): Room {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)]
  const between = (lo: number, hi: number) => lo + (hi - lo) * rnd()
  const wallKind = pick(['plain', 'plain', 'gradient', 'plaster', 'panelled'] as const)
  const floorKind = pick(['plain', 'gradient', 'planks', 'planks-across', 'tiles', 'marble', 'near-white', 'carpet', 'sweep'] as const)
  const wall = pick(WALLS)
  const wall2 = mix(wall, pick(WALLS), 0.5)
  const floorColour: Rgb =
    floorKind === 'near-white'
      ? [between(238, 250), between(236, 248), between(232, 246)]
      : pick([
          [196, 170, 140],
          [150, 110, 80],
          [110, 80, 60],
          [220, 214, 204],
          [170, 170, 168],
          [90, 92, 96],
          [232, 226, 218],
          [60, 50, 46],
        ] as Rgb[])
  const horizon = floorKind === 'sweep' ? -1 : floorY - H * between(0.04, 0.3)
  const skirting = floorKind !== 'sweep' && rnd() < 0.5 ? H * between(0.012, 0.03) : 0
  const skirtingColour: Rgb = pick([[246, 246, 244], [120, 90, 70], scale(wall, 0.85)])
  const noise = valueNoise(Math.floor(rnd() * 1e6), Math.max(3, width / 40))
  const fine = valueNoise(Math.floor(rnd() * 1e6), 3)
  const vanishX = centreX + between(-0.2, 0.2) * width
  const vanishY = horizon - H * between(0.8, 2)
  const plank = H * between(0.035, 0.07)
  const tile = H * between(0.06, 0.14)
  const grout = pick([
    [250, 250, 250],
    [90, 90, 90],
    [180, 176, 170],
  ] as Rgb[])
  const veins = between(0.02, 0.06)
  const floorAt = (x: number, y: number): Rgb => {
    // Depth below the horizon: rows further down are nearer the camera.
    const depth = Math.max(1, y - vanishY)
    const u = ((x - vanishX) / depth) * (horizon - vanishY)
    switch (floorKind) {
      case 'gradient':
        return scale(floorColour, 0.85 + 0.25 * ((y - horizon) / Math.max(1, height - horizon)))
      case 'planks': {
        const board = Math.floor(u / plank)
        const edge = Math.abs(u / plank - Math.round(u / plank)) < 0.04 ? 0.7 : 1
        const tone = 0.9 + 0.12 * Math.sin(board * 12.9898) + 0.05 * noise(u * 4, y * 0.3)
        return scale(floorColour, tone * edge)
      }
      case 'planks-across': {
        const v = Math.log(depth) * 18
        const edge = Math.abs(v - Math.round(v)) < 0.06 ? 0.72 : 1
        return scale(floorColour, (0.92 + 0.08 * Math.sin(Math.round(v) * 7.1) + 0.05 * noise(x * 0.2, v * 20)) * edge)
      }
      case 'tiles': {
        const v = Math.log(depth) * 10
        const onGrout = Math.abs(u / tile - Math.round(u / tile)) < 0.03 || Math.abs(v - Math.round(v)) < 0.05
        return onGrout ? grout : scale(floorColour, 0.96 + 0.04 * fine(x, y))
      }
      case 'marble': {
        const vein = Math.abs(Math.sin((x + y * 0.6) * veins + 5 * noise(x, y)))
        const base: Rgb = [236, 234, 230]
        return vein < 0.08 ? scale(base, 0.72 + vein * 2) : scale(base, 0.98 + 0.02 * fine(x, y))
      }
      case 'carpet':
        return scale(floorColour, 0.9 + 0.12 * fine(x, y) + 0.05 * noise(x, y))
      default:
        return scale(floorColour, 0.97 + 0.03 * noise(x, y))
    }
  }
  const wallAt = (x: number, y: number): Rgb => {
    switch (wallKind) {
      case 'gradient':
        return mix(wall, wall2, y / height)
      case 'plaster':
        return scale(wall, 0.96 + 0.05 * noise(x, y) + 0.015 * fine(x, y))
      case 'panelled': {
        const panel = Math.abs(((x / (width * 0.28)) % 1) - 0.5) > 0.47 ? 0.86 : 1
        return scale(wall, y > horizon - H * 0.35 ? panel : 1)
      }
      default:
        return wall
    }
  }
  const data = new Uint8Array(width * height * 4)
  const sweepWall = floorKind === 'sweep' ? wall : undefined
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let c: Rgb
      if (sweepWall) c = scale(sweepWall, 0.9 + 0.1 * (1 - Math.abs(y / height - 0.6)))
      else if (y >= horizon) c = floorAt(x, y)
      else if (skirting && y >= horizon - skirting) c = skirtingColour
      else c = wallAt(x, y)
      const o = (y * width + x) * 4
      data[o] = c[0]
      data[o + 1] = c[1]
      data[o + 2] = c[2]
      data[o + 3] = 255
    }
  }
  // Contact shadow under the feet, and a soft shadow on the floor or wall to one side.
  const shadowSide = rnd() < 0.5 ? -1 : 1
  const castLength = between(0, 0.35) * H
  for (let y = Math.max(0, Math.floor(floorY - 0.05 * H)); y < Math.min(height, floorY + 0.05 * H); y++) {
    for (let x = 0; x < width; x++) {
      const d = Math.hypot((x - centreX) / (0.16 * H), (y - floorY) / (0.025 * H))
      const cast =
        castLength > 0
          ? Math.hypot((x - (centreX + shadowSide * castLength * 0.6)) / (castLength * 0.6), (y - floorY + 0.01 * H) / (0.02 * H))
          : 9
      const dark = Math.max(0, 1 - d) * 0.35 + Math.max(0, 1 - cast) * 0.2
      if (dark <= 0) continue
      const o = (y * width + x) * 4
      for (let c = 0; c < 3; c++) data[o + c] = Math.round(data[o + c] * (1 - dark))
    }
  }
  return { image: { width, height, data }, description: `${wallKind} wall, ${floorKind} floor${skirting ? ' with skirting' : ''}` }
}

/** Light falling off across the frame, a vignette and sensor noise: what a real camera adds. */
function finishPhoto(canvas: Canvas, rnd: Random, centreX: number, H: number): RgbaImage {
  const image = canvas.toRgba()
  const { width, height, data } = image
  const slope = (rnd() - 0.5) * 0.25
  const vignette = rnd() * 0.25
  const noise = rnd() * 7
  const grain = random(Math.floor(rnd() * 1e9))
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const dx = x / width - 0.5
      const dy = y / height - 0.5
      const light = (1 + slope * ((x - centreX) / H)) * (1 - vignette * (dx * dx + dy * dy) * 2)
      const o = (y * width + x) * 4
      const n = (grain() + grain() - 1) * noise
      for (let c = 0; c < 3; c++) data[o + c] = Math.min(255, Math.max(0, Math.round(data[o + c] * light + n)))
    }
  }
  return image
}

// ---------------------------------------------------------------- the product photo

interface GarmentDrawing {
  /** The garment's outline in photo pixels. */
  shape: Shape
  /** Pieces drawn first that are not the garment (a dress form's neck, its stand). */
  props: { shape: Shape; colour: Rgb }[]
  paint: (x: number, y: number) => Rgb
  /** Lace and tulle: how opaque the fabric is at a pixel (1 elsewhere). */
  opacity: (x: number, y: number) => number
  description: string
}

function drawProduct(rnd: Random, kind: ProductKind, style: ProductStyle, colour: Rgb): { encoded: EncodedPhoto; description: string } {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)]
  const between = (lo: number, hi: number) => lo + (hi - lo) * rnd()
  const [aw, ah] = pick([
    [1, 1],
    [4, 5],
    [3, 4],
    [2, 3],
  ] as const)
  const width = Math.round(between(320, 640) / 4) * 4
  const height = Math.round((width * ah) / aw)
  const garment =
    kind === 'tshirt'
      ? drawTshirt(rnd, width, height, colour, style)
      : kind === 'trousers'
        ? drawTrousers(rnd, width, height, colour)
        : drawDress(rnd, kind, width, height, colour, style)
  const canvas = new Canvas(width, height)
  const backdrop: Rgb | undefined =
    style === 'cut-out' ? undefined : style === 'grey' ? [between(120, 205), 0, 0] : [between(246, 255), 0, 0]
  if (backdrop) {
    const grey = backdrop[0]
    const tint = between(-3, 3)
    const falloff = between(0, 0.12)
    const grain = random(Math.floor(rnd() * 1e9))
    canvas.fillAll((x, y) => {
      const v = grey * (1 - falloff * Math.hypot(x / width - 0.5, y / height - 0.45)) + (grain() - 0.5) * 2
      return [v, v, v + tint]
    })
    // A soft shadow where the garment meets the floor of the studio.
    const [bx0, , bx1, by1] = garment.shape.bounds
    if (rnd() < 0.6)
      canvas.fill(ellipse((bx0 + bx1) / 2, Math.min(height - 2, by1 - 2), (bx1 - bx0) * 0.45, Math.max(3, height * 0.015)), () =>
        scale([grey, grey, grey + tint], 0.86),
      )
  }
  for (const prop of garment.props) canvas.fill(prop.shape, prop.colour)
  // Fabric that lets the backdrop through (lace, tulle) is blended by hand after an opaque fill.
  const before = canvas.rgb.slice()
  const alphaBefore = canvas.alpha.slice()
  canvas.fill(garment.shape, garment.paint)
  for (let i = 0; i < width * height; i++) {
    const x = i % width
    const y = Math.floor(i / width)
    const o = garment.opacity(x, y)
    if (o >= 1 || canvas.alpha[i] === alphaBefore[i]) continue
    const covered = canvas.alpha[i] - alphaBefore[i]
    if (backdrop || garment.props.length) {
      for (let c = 0; c < 3; c++) canvas.rgb[i * 3 + c] = lerp(before[i * 3 + c], canvas.rgb[i * 3 + c], o)
    } else {
      canvas.alpha[i] = alphaBefore[i] + covered * o
    }
  }
  const image = canvas.toRgba()
  const png = style === 'cut-out' || rnd() < 0.25
  const bytes = png ? encodePng(image) : encodeJpeg(image, Math.round(between(70, 95)))
  return { encoded: { bytes, format: png ? 'png' : 'jpeg', width, height, pixels: image }, description: garment.description }
}

/** Fabric paint: satin folds and sheen, lace motifs or beading, darker towards the hem. */
function fabricPaint(
  rnd: Random,
  colour: Rgb,
  centreX: number,
  top: number,
  length: number,
  texture: 'satin' | 'lace' | 'crepe' | 'beaded' | 'cotton',
) {
  const folds = 3 + rnd() * 6
  const n = valueNoise(Math.floor(rnd() * 1e6), Math.max(2, length / 50))
  const fine = valueNoise(Math.floor(rnd() * 1e6), 2)
  const motif = Math.max(3, length * (0.012 + rnd() * 0.012))
  const sparkle = random(Math.floor(rnd() * 1e9))
  const lightSide = rnd() - 0.5
  return (x: number, y: number): Rgb => {
    const t = (y - top) / length
    const u = (x - centreX) / length
    let f = 1 + 0.05 * Math.sin(u * Math.PI * 2 * folds + 2 * n(x, y)) * Math.min(1, t * 3) - 0.06 * t + 0.06 * lightSide * u * 3
    if (texture === 'satin') f += 0.05 * Math.max(0, Math.sin(u * Math.PI * 2 * folds + 1)) ** 8
    if (texture === 'lace') {
      const mx = ((x / motif) % 1) - 0.5
      const my = ((y / motif) % 1) - 0.5
      const ring = Math.abs(Math.hypot(mx, my) - 0.3)
      if (ring < 0.07) f -= 0.09
      f += 0.02 * fine(x, y)
    }
    if (texture === 'crepe' || texture === 'cotton') f += 0.025 * fine(x, y)
    if (texture === 'beaded' && sparkle() < 0.01) f += 0.12
    return scale(colour, Math.min(1.04, f))
  }
}

function laceOpacity(rnd: Random, top: number, bottom: number, enabled: boolean): (x: number, y: number) => number {
  if (!enabled) return () => 1
  const cell = 4 + rnd() * 4
  return (x, y) =>
    y > top && y < bottom && ((Math.floor(x / cell) + Math.floor(y / cell)) & 1) === 0 && (x * 13 + y * 7) % 5 === 0 ? 0.55 : 1
}

/**
 * A dress or gown as it hangs on a body: measures are fractions of the wearer's height H, from the top of the
 * head, mapped onto the product photo so the garment's extent fills most of the frame.
 */
function drawDress(rnd: Random, kind: ProductKind, width: number, height: number, colour: Rgb, style: ProductStyle): GarmentDrawing {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)]
  const between = (lo: number, hi: number) => lo + (hi - lo) * rnd()
  const silhouette =
    kind === 'short-dress'
      ? pick(['a-line', 'sheath', 'skater', 'shift'] as const)
      : pick(['a-line', 'ball', 'mermaid', 'sheath', 'empire'] as const)
  const neckline = pick(['straps', 'straps', 'strapless', 'sweetheart', 'v-neck', 'halter', 'off-shoulder', 'high-neck'] as const)
  const sleeves = neckline === 'strapless' || neckline === 'halter' ? 'none' : pick(['none', 'none', 'cap', 'long', 'short'] as const)
  const texture = pick(['satin', 'lace', 'crepe', 'beaded'] as const)
  const hem = kind === 'short-dress' ? between(0.6, 0.86) : between(0.99, 1.02)
  const train =
    kind === 'train-gown'
      ? { depth: between(0.06, 0.3), spread: between(1.25, 2.2), swept: rnd() < 0.25 ? between(-0.12, 0.12) : 0 }
      : undefined
  const waistF = silhouette === 'empire' ? 0.31 : between(0.37, 0.44)
  const sh = between(0.105, 0.12)
  const waist = between(0.062, 0.078)
  const hip = between(0.088, 0.105)
  const hemHalf =
    silhouette === 'ball'
      ? between(0.3, 0.42)
      : silhouette === 'a-line' || silhouette === 'empire'
        ? between(0.17, 0.27)
        : silhouette === 'mermaid'
          ? between(0.17, 0.26)
          : silhouette === 'skater'
            ? between(0.2, 0.3)
            : between(0.1, 0.13)
  const topF =
    neckline === 'strapless' || neckline === 'sweetheart'
      ? 0.235
      : neckline === 'off-shoulder'
        ? 0.205
        : neckline === 'high-neck'
          ? 0.13
          : 0.17
  // Extent in H units: from the straps (or collar) to the end of the hem or train.
  const first = neckline === 'straps' || neckline === 'halter' || neckline === 'v-neck' ? 0.15 : topF
  const trainEnd = train ? hem + train.depth : hem
  const extent = trainEnd + 0.01 - first
  const fill = between(0.72, 0.92)
  const H = (height * fill) / extent
  const maxWidthUnits =
    Math.max(train ? hemHalf * train.spread + Math.abs(train.swept) : hemHalf, sleeves === 'long' ? sh + 0.07 : sh + 0.02) * 2
  const scaleH = Math.min(H, (width * 0.94) / maxWidthUnits)
  const cx = width / 2 + between(-0.03, 0.03) * width
  const y0 = (height - extent * scaleH) / 2 - first * scaleH + between(-0.02, 0.02) * height
  const Y = (f: number) => y0 + f * scaleH
  const X = (u: number) => u * scaleH

  const skirtHalf =
    silhouette === 'ball'
      ? (f: number) => (f < waistF ? waist : lerp(waist, hemHalf, Math.sqrt((f - waistF) / (hem - waistF))))
      : silhouette === 'mermaid'
        ? knots([
            [waistF, waist],
            [0.5, hip],
            [0.72, hip * 0.92],
            [hem, hemHalf],
          ])
        : silhouette === 'sheath' || silhouette === 'shift'
          ? knots([
              [waistF, waist * (silhouette === 'shift' ? 1.2 : 1)],
              [0.5, hip],
              [hem, hemHalf],
            ])
          : silhouette === 'empire'
            ? knots([
                [waistF, waist],
                [hem, hemHalf],
              ])
            : knots([
                [waistF, waist],
                [0.5, Math.max(hip, lerp(waist, hemHalf, (0.5 - waistF) / (hem - waistF)))],
                [hem, hemHalf],
              ])
  const bodiceHalf = knots([
    [topF, neckline === 'off-shoulder' ? sh * 1.05 : neckline === 'halter' ? sh * 0.75 : sh * 0.86],
    [0.2, sh * 0.9],
    [0.27, 0.088],
    [waistF, waist],
  ])
  const half = (f: number) => (f <= waistF ? bodiceHalf(f) : skirtHalf(f))
  // The hem is seen from a little above: its centre hangs lower than its sides.
  const hemCurve = between(0.003, silhouette === 'ball' ? 0.035 : 0.015)
  // The hem is rounded: its sides rise by hemCurve, as a skirt seen from a little above.
  const hemY = Y(hem)
  const hemDepth = X(hemCurve)
  const bodyAndSkirt = profile(
    Y(topF),
    hemY + hemDepth,
    (y) => cx - X(half((y - y0) / scaleH)),
    (y) => cx + X(half((y - y0) / scaleH)),
  )
  const skirt: Shape = {
    bounds: bodyAndSkirt.bounds,
    distance: (x, y) => {
      const d = bodyAndSkirt.distance(x, y)
      const u = (x - cx) / Math.max(1, X(hemHalf))
      return Math.max(d, y - (hemY + hemDepth * (1 - Math.min(1, u * u))))
    },
  }
  const pieces: Shape[] = [skirt]
  const holes: Shape[] = []
  if (train) {
    const depth = X(train.depth)
    const spreadHalf = X(hemHalf * train.spread)
    const centre = cx + X(train.swept)
    // Fabric on the floor behind and around the hem: it fans out from the knees and ends in a rounded edge.
    pieces.push(
      profile(
        Y(0.74),
        hemY + depth,
        (y) => centre - fan(y),
        (y) => centre + fan(y),
      ),
    )
    function fan(y: number): number {
      const start = Y(0.74)
      const t = Math.min(1, Math.max(0, (y - start) / (hemY + depth - start)))
      const grow = lerp(X(skirtHalf(0.74)), spreadHalf, Math.min(1, t / 0.7) ** 1.4)
      const end = t > 0.7 ? Math.sqrt(Math.max(0, 1 - ((t - 0.7) / 0.3) ** 2)) : 1
      return grow * end
    }
  }
  // Straps, sleeves and the collar.
  if (neckline === 'straps' || neckline === 'v-neck') {
    const strap = X(between(0.006, 0.02))
    for (const s of [-1, 1]) pieces.push(capsule([cx + s * X(sh * 0.62), Y(0.15)], strap, [cx + s * X(sh * 0.72), Y(topF + 0.01)], strap))
  }
  if (neckline === 'halter')
    pieces.push(
      polygon([
        [cx - X(0.03), Y(0.15)],
        [cx + X(0.03), Y(0.15)],
        [cx + X(sh * 0.7), Y(0.2)],
        [cx - X(sh * 0.7), Y(0.2)],
      ]),
    )
  if (neckline === 'v-neck')
    holes.push(
      polygon([
        [cx - X(0.05), Y(topF - 0.01)],
        [cx + X(0.05), Y(topF - 0.01)],
        [cx, Y(0.26)],
      ]),
    )
  if (neckline === 'straps') holes.push(ellipse(cx, Y(topF), X(sh * 0.45), X(0.03)))
  if (neckline === 'sweetheart')
    holes.push(
      polygon([
        [cx - X(0.015), Y(topF - 0.02)],
        [cx + X(0.015), Y(topF - 0.02)],
        [cx, Y(topF + 0.025)],
      ]),
    )
  if (neckline === 'high-neck') pieces.push(capsule([cx, Y(0.13)], X(0.03), [cx, Y(0.17)], X(0.035)))
  if (sleeves !== 'none') {
    const end = sleeves === 'long' ? 0.5 : sleeves === 'short' ? 0.3 : 0.23
    const sleeveTop = Math.max(topF, 0.175)
    for (const s of [-1, 1]) {
      const shoulder: [number, number] = [cx + s * X(sh * 0.92), Y(sleeveTop + 0.01)]
      const wrist: [number, number] = [cx + s * X(sh + (sleeves === 'long' ? between(0.02, 0.07) : 0.03)), Y(end)]
      pieces.push(capsule(shoulder, X(sleeves === 'cap' ? 0.035 : 0.03), wrist, X(sleeves === 'long' ? 0.02 : 0.032)))
    }
  }
  const shape = minus(unionOf(...pieces), ...holes)
  const props: GarmentDrawing['props'] = []
  if (style === 'mannequin') {
    const form: Rgb = pick([
      [236, 232, 224],
      [40, 40, 42],
      [190, 186, 180],
      [214, 196, 170],
    ] as Rgb[])
    // A dress form: a neck stump, shoulders where the garment leaves them bare, a pole and a base below the hem.
    props.push({ shape: capsule([cx, Y(0.1)], X(0.034), [cx, Y(0.2)], X(0.04)), colour: form })
    props.push({
      shape: symmetric(Y(0.17), Y(0.45), cx, (y) =>
        X(
          knots([
            [0.17, sh * 0.85],
            [0.2, sh * 0.9],
            [0.3, 0.09],
            [0.42, 0.07],
          ])((y - y0) / scaleH),
        ),
      ),
      colour: form,
    })
    props.push({ shape: capsule([cx, Y(0.45)], X(0.009), [cx, Y(Math.max(hem, 0.99))], X(0.009)), colour: scale(form, 0.7) })
    props.push({ shape: ellipse(cx, Y(Math.max(hem, 0.99)), X(0.12), X(0.018)), colour: scale(form, 0.6) })
  }
  const paint = fabricPaint(rnd, colour, cx, Y(first), extent * scaleH, texture)
  const opacity = laceOpacity(rnd, Y(topF), Y(waistF), texture === 'lace' && rnd() < 0.6)
  const description = `${silhouette}${train ? ` with a ${train.depth.toFixed(2)}H train spread ${train.spread.toFixed(1)}x${train.swept ? ' swept' : ''}` : ''}, hem ${hem.toFixed(2)}H, ${neckline}, ${sleeves} sleeves, ${texture}`
  return { shape, props, paint, opacity, description }
}

function drawTshirt(rnd: Random, width: number, height: number, colour: Rgb, style: ProductStyle): GarmentDrawing {
  const between = (lo: number, hi: number) => lo + (hi - lo) * rnd()
  const long = rnd() < 0.35
  const vNeck = rnd() < 0.3
  const length = between(0.3, 0.4)
  const bodyHalf = between(0.12, 0.16)
  const extentW = (bodyHalf + (long ? 0.2 : 0.12)) * 2
  const s = Math.min((height * between(0.6, 0.85)) / length, (width * between(0.78, 0.92)) / extentW)
  const cx = width / 2
  const y0 = (height - length * s) / 2
  const X = (u: number) => u * s
  const Y = (f: number) => y0 + f * s
  const body = symmetric(
    Y(0),
    Y(length),
    cx,
    knots([
      [Y(0), X(bodyHalf * 0.9)],
      [Y(0.05), X(bodyHalf)],
      [Y(length), X(bodyHalf * 1.02)],
    ]),
  )
  const sleeveEnd = long ? 0.34 : 0.12
  const sleeves = [-1, 1].map((d) =>
    capsule(
      [cx + d * X(bodyHalf * 0.8), Y(0.05)],
      X(0.05),
      [cx + d * X(bodyHalf + (long ? 0.16 : 0.08)), Y(sleeveEnd)],
      X(long ? 0.03 : 0.045),
    ),
  )
  const neck = vNeck
    ? polygon([
        [cx - X(0.06), Y(-0.01)],
        [cx + X(0.06), Y(-0.01)],
        [cx, Y(0.09)],
      ])
    : ellipse(cx, Y(0), X(0.06), X(0.035))
  const props: GarmentDrawing['props'] = []
  if (style === 'mannequin') {
    props.push({ shape: capsule([cx, Y(-0.08)], X(0.03), [cx, Y(0.02)], X(0.035)), colour: [40, 40, 42] })
    props.push({ shape: symmetric(Y(length - 0.02), Y(length + 0.06), cx, () => X(bodyHalf * 0.8)), colour: [40, 40, 42] })
  }
  return {
    shape: minus(unionOf(body, ...sleeves), neck),
    props,
    paint: fabricPaint(rnd, colour, cx, Y(0), length * s, 'cotton'),
    opacity: () => 1,
    description: `${long ? 'long' : 'short'}-sleeved ${vNeck ? 'V-neck' : 'crew-neck'} T-shirt`,
  }
}

function drawTrousers(rnd: Random, width: number, height: number, colour: Rgb): GarmentDrawing {
  const between = (lo: number, hi: number) => lo + (hi - lo) * rnd()
  const length = between(0.42, 0.5)
  const waist = between(0.08, 0.1)
  const hemHalf = between(0.035, 0.07)
  const s = Math.min((height * between(0.7, 0.9)) / length, (width * 0.85) / ((waist + 0.03) * 2))
  const cx = width / 2
  const y0 = (height - length * s) / 2
  const X = (u: number) => u * s
  const Y = (f: number) => y0 + f * s
  const gap = between(0.01, 0.04)
  const at = (y: number) => (y - Y(0.1)) / (Y(length) - Y(0.1))
  const outer = (y: number) => X(lerp(waist, gap + 2 * hemHalf, at(y)))
  const inner = (y: number) => X(lerp(0.003, gap, at(y)))
  const legs = [
    profile(
      Y(0.1),
      Y(length),
      (y) => cx - outer(y),
      (y) => cx - inner(y),
    ),
    profile(
      Y(0.1),
      Y(length),
      (y) => cx + inner(y),
      (y) => cx + outer(y),
    ),
  ]
  const seat = symmetric(Y(0), Y(0.12), cx, () => X(waist))
  return {
    shape: unionOf(seat, ...legs),
    props: [],
    paint: fabricPaint(rnd, colour, cx, Y(0), length * s, 'cotton'),
    opacity: () => 1,
    description: 'trousers',
  }
}

// ---------------------------------------------------------------- judging a result against the truth

export interface ResultTruth {
  /** Share of the torso box that shows the product's fabric. */
  torso: number
  /** Share of the thigh boxes that shows it. */
  thighs: number
  /** Share of the head box changed by the try-on. */
  headChanged: number
  /** The product is worn where it belongs: on the torso (tops, dresses), the legs (trousers, dresses), the head left alone. */
  onBody: boolean
}

/**
 * Whether a delivered image shows the product on the body, judged from the scene's truth rather than the
 * pipeline's analysis: a pixel shows the fabric when its colour is the product's, allowing for shading, and
 * the shopper's own clothes there were a clearly different colour (the generator sees to that).
 */
export function judgeResult(scene: BridalScene, result: RgbaImage): ResultTruth {
  const original = scene.person.pixels
  // A result may be taller than the photo (floor added below it for the train): one scale for both axes.
  const sx = result.width / original.width
  const sy = sx
  const fabric = scene.colour
  const fabricLuma = luma(fabric)
  const share = (box: Box, test: (r: Rgb, o: Rgb) => boolean) => {
    let hits = 0
    let count = 0
    for (let y = Math.max(0, box[1]); y < Math.min(original.height, box[3]); y++) {
      for (let x = Math.max(0, box[0]); x < Math.min(original.width, box[2]); x++) {
        const o = (y * original.width + x) * 4
        const rx = Math.min(result.width - 1, Math.floor((x + 0.5) * sx))
        const ry = Math.min(result.height - 1, Math.floor((y + 0.5) * sy))
        const r = (ry * result.width + rx) * 4
        count++
        if (test([result.data[r], result.data[r + 1], result.data[r + 2]], [original.data[o], original.data[o + 1], original.data[o + 2]]))
          hits++
      }
    }
    return count ? hits / count : 0
  }
  const isFabric = (c: Rgb) => {
    const l = luma(c)
    if (l < fabricLuma * 0.55 || l > Math.min(255, fabricLuma * 1.12 + 4)) return false
    const k = fabricLuma / Math.max(1, l)
    return distance(scale(c, k), fabric) < 42
  }
  const torso = share(scene.body.torso, (r) => isFabric(r))
  const thighs = scene.body.thighs.reduce((sum, box) => sum + share(box, (r) => isFabric(r)), 0) / scene.body.thighs.length
  const headChanged = share(scene.body.head, (r, o) => distance(r, o) > 60)
  const needsTorso = scene.kind !== 'trousers'
  const needsLegs = scene.kind === 'trousers' || scene.kind === 'train-gown' || scene.kind === 'floor-gown'
  const onBody = (!needsTorso || torso >= 0.6) && (!needsLegs || thighs >= 0.5) && headChanged <= 0.2
  return { torso, thighs, headChanged, onBody }
}

function luma(c: Rgb): number {
  return 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]
}
