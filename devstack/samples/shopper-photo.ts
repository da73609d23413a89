import type { RgbaImage } from '../../shared/images/codecs/raster.ts'
import { Canvas, capsule, ellipse, polygon, random, shade, union, valueNoise, type Rgb, type Shape } from './drawing.ts'

/** An axis-aligned box in pixels: [x0, y0, x1, y1), used by tests to sample regions of the drawn figure. */
export type Box = [number, number, number, number]

/** Where the drawn figure's body parts are, in pixels of the generated photo. */
export interface ShopperGeometry {
  width: number
  height: number
  fullLength: boolean
  centreX: number
  /** Figure height from the top of the head to the floor (may extend past the bottom edge). */
  figureHeight: number
  headTop: number
  chinY: number
  shoulderY: number
  shoulderHalfWidth: number
  waistY: number
  hipY: number
  crotchY: number
  kneeY: number
  ankleY: number
  floorY: number
  /** Inside the face, away from hair and edges. */
  face: Box
  /** Inside the torso between the arms, from just below the shoulders to the waist. */
  torso: Box
  /** Inside the thighs, between crotch and knee (clipped to the image). */
  thighs: Box[]
  /** Inside the shins, between knee and ankle (clipped; empty when cut off). */
  shins: Box[]
  /** Background patches well away from the figure. */
  background: Box[]
}

export interface ShopperPhotoOptions {
  width: number
  height: number
  fullLength?: boolean
  background?: Rgb | 'gradient'
  skinTone?: Rgb
  shirtColor?: Rgb
  trouserColor?: Rgb
  seed?: number
}

export function shopperGeometry(width: number, height: number, fullLength = true): ShopperGeometry {
  const figureHeight = fullLength ? 0.9 * height : 1.25 * height
  const headTop = (fullLength ? 0.05 : 0.06) * height
  const at = (f: number) => headTop + f * figureHeight
  const H = figureHeight
  const cx = width / 2
  const clip = (b: Box): Box => [Math.max(0, b[0]), Math.max(0, b[1]), Math.min(width, b[2]), Math.min(height, b[3])]
  const legBoxes = (from: number, to: number, halfWidth: number, offset: number): Box[] =>
    [-1, 1].map((side) => clip([cx + side * offset - halfWidth, at(from), cx + side * offset + halfWidth, at(to)]))
  return {
    width,
    height,
    fullLength,
    centreX: cx,
    figureHeight: H,
    headTop,
    chinY: at(0.125),
    shoulderY: at(0.175),
    shoulderHalfWidth: 0.115 * H,
    waistY: at(0.4),
    hipY: at(0.5),
    crotchY: at(0.525),
    kneeY: at(0.72),
    ankleY: at(0.955),
    floorY: at(1),
    face: [cx - 0.028 * H, at(0.07), cx + 0.028 * H, at(0.115)],
    torso: [cx - 0.055 * H, at(0.21), cx + 0.055 * H, at(0.4)],
    thighs: legBoxes(0.56, 0.68, 0.022 * H, 0.052 * H),
    shins: legBoxes(0.76, 0.92, 0.014 * H, 0.055 * H).filter((b) => b[3] - b[1] > 2),
    background: [
      [0, 0, 0.14 * width, 0.2 * height],
      [0.86 * width, 0, width, 0.2 * height],
      [0, 0.45 * height, 0.1 * width, 0.6 * height],
      [0.9 * width, 0.45 * height, width, 0.6 * height],
    ],
  }
}

/** A front-facing standing figure (head, neck, torso, arms, legs, feet) on a plain or gently graded backdrop. */
export function drawShopper(options: ShopperPhotoOptions): { image: RgbaImage; geometry: ShopperGeometry } {
  const { width, height } = options
  const g = shopperGeometry(width, height, options.fullLength ?? true)
  const seed = options.seed ?? 1
  const skin = options.skinTone ?? [222, 170, 138]
  const shirt = options.shirtColor ?? [44, 92, 160]
  const trousers = options.trouserColor ?? [52, 54, 66]
  const hair: Rgb = [46, 32, 24]
  const shoes: Rgb = [28, 28, 30]
  const H = g.figureHeight
  const cx = g.centreX
  const at = (f: number) => g.headTop + f * H
  const noise = valueNoise(seed, Math.max(2, H / 90))
  const grain = random(seed * 7 + 3)
  // Soft light from the upper left, so the engine has real shading to carry through.
  const lit =
    (colour: Rgb, strength = 1) =>
    (x: number, y: number): Rgb =>
      shade(colour, 1 + strength * (0.09 * ((cx - x) / (0.2 * H)) + 0.035 * noise(x, y) - 0.04 * ((y - g.headTop) / H)))

  const canvas = new Canvas(width, height)
  const backdrop = options.background ?? [236, 233, 228]
  canvas.fillAll((x, y) => {
    const base: Rgb =
      backdrop === 'gradient' ? [246 - 30 * (y / height), 242 - 28 * (y / height), 236 - 20 * (y / height) + 8 * (x / width)] : backdrop
    const jitter = (grain() - 0.5) * 4
    return [base[0] + jitter, base[1] + jitter, base[2] + jitter]
  })
  if (g.fullLength)
    canvas.fill(ellipse(cx, g.floorY, 0.16 * H, 0.012 * H), shade(backdrop === 'gradient' ? [216, 214, 214] : backdrop, 0.88))

  const side = (s: number, f: number) => cx + s * f * H
  const limb = (s: number, points: [number, number, number][]): Shape =>
    union(
      ...points
        .slice(1)
        .map((p, i) => capsule([side(s, points[i][0]), at(points[i][1])], points[i][2] * H, [side(s, p[0]), at(p[1])], p[2] * H)),
    )
  for (const s of [-1, 1]) {
    canvas.fill(
      limb(s, [
        [0.052, 0.5, 0.052],
        [0.056, 0.72, 0.036],
        [0.055, 0.955, 0.026],
      ]),
      lit(trousers),
    )
    canvas.fill(ellipse(side(s, 0.065), at(0.975), 0.038 * H, 0.022 * H), shoes)
    canvas.fill(
      limb(s, [
        [0.155, 0.36, 0.024],
        [0.165, 0.47, 0.019],
      ]),
      lit(skin),
    )
    canvas.fill(ellipse(side(s, 0.167), at(0.5), 0.02 * H, 0.034 * H), lit(skin))
  }
  canvas.fill(
    polygon([
      [side(-1, 0.1), at(0.44)],
      [side(1, 0.1), at(0.44)],
      [side(1, 0.1), at(0.51)],
      [cx, at(0.545)],
      [side(-1, 0.1), at(0.51)],
    ]),
    lit(trousers),
  )
  canvas.fill(capsule([cx, at(0.1)], 0.026 * H, [cx, at(0.18)], 0.028 * H), lit(skin, 0.6))
  const torso = union(
    polygon([
      [side(-1, 0.105), at(0.17)],
      [side(1, 0.105), at(0.17)],
      [side(1, 0.118), at(0.19)],
      [side(1, 0.094), at(0.3)],
      [side(-1, 0.094), at(0.3)],
      [side(-1, 0.118), at(0.19)],
    ]),
    polygon([
      [side(-1, 0.094), at(0.3)],
      [side(1, 0.094), at(0.3)],
      [side(1, 0.086), at(0.4)],
      [side(-1, 0.086), at(0.4)],
    ]),
    polygon([
      [side(-1, 0.086), at(0.4)],
      [side(1, 0.086), at(0.4)],
      [side(1, 0.1), at(0.47)],
      [side(-1, 0.1), at(0.47)],
    ]),
  )
  const sleeves = [-1, 1].map((s) =>
    limb(s, [
      [0.112, 0.19, 0.034],
      [0.15, 0.3, 0.03],
    ]),
  )
  const folds = (x: number, y: number) => 0.06 * Math.sin((x - cx) / (0.018 * H) + 2 * noise(x, y))
  canvas.fill(union(torso, ...sleeves), (x, y) => shade(lit(shirt)(x, y), 1 + folds(x, y)))
  canvas.fill(ellipse(cx, at(0.176), 0.03 * H, 0.014 * H), lit(skin, 0.6))
  canvas.fill(ellipse(cx, at(0.065), 0.05 * H, 0.065 * H), lit(skin))
  canvas.fill(ellipse(cx, at(0.03), 0.054 * H, 0.034 * H), hair)
  for (const s of [-1, 1]) canvas.fill(ellipse(side(s, 0.018), at(0.07), 0.006 * H, 0.004 * H), [60, 44, 40])
  canvas.fill(ellipse(cx, at(0.1), 0.014 * H, 0.004 * H), [170, 90, 90])
  return { image: canvas.toRgba(), geometry: g }
}
