/**
 * The product photo in one of the conventions shops use: flat-lay on a surface, ghost mannequin (the garment's
 * inside showing at the neck, sometimes cut out), white-on-white, on a hanger against a wall, styled with props and
 * hard shadows, or worn by a model. Returns the photo and which of its pixels show the product.
 */
import { encodeJpeg } from '../../../shared/images/codecs/jpeg-encoder.ts'
import { encodePng } from '../../../devstack/samples/png-encoder.ts'
import type { EncodedPhoto } from '../images.ts'
import { extentOf, outlineOf, productColour, type ProductSpec } from './garments.ts'
import { capsule, ellipse, mix, Picture, polygon, rect, scaled, union, type Shape } from './picture.ts'
import { valueNoise, type Rng } from './rng.ts'
import type { Rgb } from './types.ts'

const GARMENT = 1
const NOT_GARMENT = 0

const SURFACES: Record<string, (rng: Rng) => (x: number, y: number) => Rgb> = {
  linen: (rng) => {
    const n = valueNoise(rng, 2)
    const base: Rgb = [rng.between(214, 232), rng.between(204, 222), rng.between(184, 204)]
    return (x, y) => scaled(base, 1 + 0.035 * n(x, y) + 0.02 * Math.sin(x * 1.9))
  },
  wood: (rng) => {
    const n = valueNoise(rng, 6)
    const base: Rgb = rng.pick([
      [186, 142, 100],
      [124, 86, 60],
      [214, 186, 150],
    ] as Rgb[])
    const plank = rng.between(50, 110)
    return (x, y) => {
      const edge = (x / plank) % 1 < 0.02 ? 0.75 : 1
      return scaled(base, edge * (0.92 + 0.08 * Math.sin(Math.floor(x / plank) * 9.1) + 0.06 * n(x * 0.3, y * 3)))
    }
  },
  concrete: (rng) => {
    const n = valueNoise(rng, 9)
    const g = rng.between(150, 200)
    return (x, y) => scaled([g, g, g - 3], 1 + 0.06 * n(x, y) + 0.03 * n(x * 4, y * 4))
  },
  white: (rng) => {
    const g = rng.between(244, 252)
    return () => [g, g, g]
  },
}

/** The product photo for a spec. */
export function drawProductPhoto(rng: Rng, spec: ProductSpec): { photo: EncodedPhoto; mask: Uint8Array; description: string } {
  const [aw, ah] = rng.pick([
    [1, 1],
    [4, 5],
    [3, 4],
    [2, 3],
  ] as [number, number][])
  const width = Math.round(rng.between(360, 720) / 8) * 8
  const height = Math.round((width * ah) / aw / 8) * 8
  const pic = new Picture(width, height)
  const e = extentOf(spec)
  const hanging = spec.convention === 'hanger'
  const modelled = spec.convention === 'on-model'
  // A model is drawn whole (head to feet); a hanger needs room above the garment for its hook.
  const top = modelled ? -0.02 : e.top - (hanging ? 0.12 : 0)
  const bottom = modelled ? Math.max(1.02, e.bottom) : e.bottom
  const half = modelled ? Math.max(e.half, 0.2) : e.half
  const fill = rng.between(0.7, 0.9)
  const s = Math.min((height * fill) / (bottom - top), (width * fill) / (2 * half))
  const cx = width / 2 + rng.between(-0.04, 0.04) * width
  const y0 = (height - (bottom - top) * s) / 2 - top * s
  const length = (e.bottom - e.top) * s
  const shape = outlineOf(spec, cx, y0, s)
  const own = productColour(spec, length)
  const folds = valueNoise(rng, Math.max(4, length / 14))
  let light: (x: number, y: number) => number
  let background = 'white'
  switch (spec.convention) {
    case 'flat-lay': {
      background = rng.pick(['linen', 'wood', 'concrete', 'white'])
      pic.fillAll(SURFACES[background](rng))
      castShadow(pic, shape, rng.between(2, 8), rng.between(3, 10), 0.35)
      light = (x, y) => 1 + 0.05 * folds(x, y)
      break
    }
    case 'ghost-mannequin':
    case 'white-on-white': {
      const g = spec.convention === 'white-on-white' ? rng.between(248, 255) : rng.between(236, 252)
      pic.fillAll(() => [g, g, g])
      if (rng.chance(0.6)) pic.fill(ellipse(cx, y0 + e.bottom * s, half * s * 0.8, 0.02 * s), scaled([g, g, g], 0.92), { opacity: 0.6 })
      // Studio light on a round form: brightest down the middle, falling off to the sides.
      light = (x, y) => 1.02 - 0.12 * ((x - cx) / (half * s)) ** 2 + 0.03 * folds(x, y)
      break
    }
    case 'hanger': {
      const wall: Rgb = rng.pick([
        [236, 232, 226],
        [210, 214, 218],
        [226, 210, 196],
        [190, 196, 186],
      ] as Rgb[])
      background = 'wall'
      pic.fillAll((_x, y) => scaled(wall, 1 - 0.06 * (y / height)))
      castShadow(pic, shape, rng.between(4, 12), rng.between(4, 12), 0.25)
      light = (x, y) => 1 + 0.06 * folds(x, y) - 0.04 * ((y - y0) / length)
      break
    }
    case 'props': {
      background = rng.pick(['linen', 'concrete', 'wood'])
      pic.fillAll(SURFACES[background](rng))
      const dx = rng.between(-16, 16)
      const dy = rng.between(6, 18)
      castShadow(pic, shape, dx, dy, 0.5)
      for (const prop of props(rng, width, height, shape)) {
        castShadow(pic, prop.shape, dx, dy, 0.5)
        pic.fill(prop.shape, prop.colour)
      }
      light = (x, y) => 1 + 0.04 * folds(x, y)
      break
    }
    default: {
      const g = rng.between(200, 245)
      pic.fillAll((_x, y) => [g - 10 * (y / height), g - 10 * (y / height), g - 8 * (y / height)])
      drawModel(rng, pic, cx, y0, s)
      light = (x, y) => 1 + 0.05 * folds(x, y) + 0.06 * ((cx - x) / (half * s))
    }
  }
  pic.fill(shape, (x, y) => scaled(own(x, y), light(x, y)), { part: GARMENT })
  if (spec.convention === 'ghost-mannequin' && (spec.category === 'top' || spec.category === 'outerwear')) {
    // The inside of the back of the neck, seen through the neckline: the same fabric in shade.
    pic.fill(ellipse(cx, y0 + 0.172 * s, 0.04 * s, 0.016 * s), (x, y) => scaled(own(x, y), 0.72), { part: GARMENT })
  }
  if (hanging) drawHanger(rng, pic, spec, cx, y0, s)
  const image = pic.toRgba()
  const mask = new Uint8Array(pic.parts.length)
  for (let i = 0; i < mask.length; i++) mask[i] = pic.parts[i] === GARMENT ? 1 : 0
  const cutOut = spec.convention === 'ghost-mannequin' && rng.chance(0.3)
  if (cutOut) for (let i = 0; i < mask.length; i++) if (!mask[i]) image.data[i * 4 + 3] = 0
  const png = cutOut || rng.chance(0.25)
  const quality = Math.round(rng.between(72, 95))
  const bytes = png ? encodePng(image) : encodeJpeg(image, quality)
  return {
    photo: { bytes, format: png ? 'png' : 'jpeg', width, height, pixels: image },
    mask,
    description: `${width}x${height} ${spec.convention}${cutOut ? ' cut out' : ''} on ${background}, ${png ? 'PNG' : `JPEG q${quality}`}`,
  }
}

/** A soft shadow of a shape, offset by (dx, dy), darkening what is under it by up to `strength`. */
function castShadow(pic: Picture, shape: Shape, dx: number, dy: number, strength: number): void {
  const blur = 2 + Math.hypot(dx, dy) * 0.4
  const moved: Shape = {
    distance: (x, y) => shape.distance(x - dx, y - dy),
    bounds: [shape.bounds[0] + dx - blur, shape.bounds[1] + dy - blur, shape.bounds[2] + dx + blur, shape.bounds[3] + dy + blur],
  }
  const soft: Shape = { distance: (x, y) => moved.distance(x, y) / blur, bounds: moved.bounds }
  pic.fill(soft, [0, 0, 0], { opacity: strength * 0.5 })
}

function props(rng: Rng, width: number, height: number, garment: Shape): { shape: Shape; colour: Rgb }[] {
  const out: { shape: Shape; colour: Rgb }[] = []
  const corners: [number, number][] = [
    [0.1, 0.1],
    [0.9, 0.1],
    [0.1, 0.9],
    [0.9, 0.9],
  ]
  for (const [fx, fy] of corners) {
    if (!rng.chance(0.55)) continue
    const x = fx * width
    const y = fy * height
    const r = Math.min(width, height) * rng.between(0.05, 0.09)
    // Only where the garment is not: a prop never covers the product.
    if (garment.distance(x, y) < r * 1.3) continue
    const kind = rng.pick(['plant', 'box', 'glasses', 'cup'] as const)
    if (kind === 'plant')
      for (let i = 0; i < 5; i++) {
        const a = (i / 5) * Math.PI * 2 + rng.next()
        out.push({ shape: ellipse(x + Math.cos(a) * r * 0.6, y + Math.sin(a) * r * 0.6, r * 0.5, r * 0.28), colour: [54, 112, 58] })
      }
    else if (kind === 'box')
      out.push({
        shape: rect(x - r, y - r * 0.7, x + r, y + r * 0.7),
        colour: rng.pick([
          [200, 170, 120],
          [40, 40, 44],
          [230, 226, 220],
        ] as Rgb[]),
      })
    else if (kind === 'glasses')
      out.push({ shape: union(ellipse(x - r * 0.5, y, r * 0.4, r * 0.3), ellipse(x + r * 0.5, y, r * 0.4, r * 0.3)), colour: [24, 24, 26] })
    else out.push({ shape: ellipse(x, y, r * 0.7, r * 0.7), colour: [244, 244, 240] })
  }
  return out
}

/** A hook and a bar at the shoulders, or a clip hanger at a waistband. */
function drawHanger(rng: Rng, pic: Picture, spec: ProductSpec, cx: number, y0: number, s: number): void {
  const colour: Rgb = rng.pick([
    [150, 104, 64],
    [40, 40, 42],
    [196, 196, 200],
  ] as Rgb[])
  const waist = spec.category === 'bottom'
  const barY = y0 + (waist ? 0.39 : 0.19) * s
  const half = (waist ? 0.11 : 0.13) * s
  const hook = union(
    capsule([cx, barY - 0.1 * s], 0.005 * s, [cx, barY - 0.03 * s], 0.005 * s),
    polygon([
      [cx - half, barY + 0.005 * s],
      [cx, barY - 0.035 * s],
      [cx + half, barY + 0.005 * s],
      [cx + half, barY + 0.015 * s],
      [cx - half, barY + 0.015 * s],
    ]),
  )
  pic.fill(hook, colour, { part: NOT_GARMENT })
}

/** A model wearing the product: skin, head, hair, limbs, drawn before the garment goes over them. */
function drawModel(rng: Rng, pic: Picture, cx: number, y0: number, s: number): void {
  const skin: Rgb = rng.pick([
    [236, 196, 170],
    [198, 142, 104],
    [120, 80, 56],
    [226, 180, 146],
  ] as Rgb[])
  const hair: Rgb = rng.pick([
    [30, 24, 20],
    [120, 80, 44],
    [200, 168, 110],
  ] as Rgb[])
  const X = (u: number) => cx + u * s
  const Y = (f: number) => y0 + f * s
  const shade = (c: Rgb) => (x: number) => mix(c, scaled(c, 0.8), Math.min(1, Math.abs(x - cx) / (0.2 * s)))
  for (const sd of [-1, 1]) {
    pic.fill(capsule([X(sd * 0.05), Y(0.5)], 0.05 * s, [X(sd * 0.05), Y(0.96)], 0.024 * s), shade(skin))
    pic.fill(ellipse(X(sd * 0.06), Y(0.98), 0.034 * s, 0.02 * s), [30, 30, 32])
    pic.fill(capsule([X(sd * 0.095), Y(0.2)], 0.028 * s, [X(sd * 0.13), Y(0.5)], 0.018 * s), shade(skin))
  }
  pic.fill(
    polygon([
      [X(-0.1), Y(0.19)],
      [X(0.1), Y(0.19)],
      [X(0.09), Y(0.52)],
      [X(-0.09), Y(0.52)],
    ]),
    shade(skin),
  )
  pic.fill(capsule([X(0), Y(0.11)], 0.024 * s, [X(0), Y(0.19)], 0.027 * s), shade(skin))
  pic.fill(ellipse(X(0), Y(0.066), 0.046 * s, 0.061 * s), shade(skin))
  pic.fill(ellipse(X(0), Y(0.03), 0.05 * s, 0.033 * s), hair)
}
