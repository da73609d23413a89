/**
 * Seeded photos with nobody in them, for the person detector: what a shopper may send by mistake as `userPhoto`.
 * Empty rooms (wall and floor, furniture, a door, a floor lamp, a plant, a coat on a stand), objects alone on a
 * studio backdrop (a bottle, a vase, a lamp, a dress form), product photos (the garments the service tries on,
 * the bridal products with their dress forms) and textures (noise, stripes, checks, bricks, marble, gradients).
 * Written apart from the figures of devstack/samples and bridal-scenes.ts, so nothing is tuned on its own inputs.
 */
import { encodeJpeg } from '../../shared/images/codecs/jpeg-encoder.ts'
import type { RgbaImage } from '../../shared/images/codecs/raster.ts'
import {
  Canvas,
  capsule,
  ellipse,
  polygon,
  random,
  shade,
  union,
  valueNoise,
  type Rgb,
  type Shape,
} from '../../devstack/samples/drawing.ts'
import { makeBridalScene } from './bridal-scenes.ts'
import { garmentKinds, makeGarmentPhoto, type EncodedPhoto } from './images.ts'

export type EmptySceneKind = 'room' | 'object' | 'product' | 'texture'

export interface EmptyScene {
  seed: number
  kind: EmptySceneKind
  photo: EncodedPhoto
  /** What was drawn, for failure listings. */
  description: string
}

type Random = () => number

const KINDS: EmptySceneKind[] = ['room', 'room', 'object', 'object', 'product', 'texture']

/** The scene for a seed: the same seed always draws the same photo. */
export function makeEmptyScene(seed: number, kind?: EmptySceneKind): EmptyScene {
  const rnd = random(seed * 104_729 + 11)
  const chosen = kind ?? KINDS[Math.floor(rnd() * KINDS.length)]
  switch (chosen) {
    case 'room':
      return { seed, kind: chosen, ...jpeg(rnd, drawEmptyRoom(rnd)) }
    case 'object':
      return { seed, kind: chosen, ...jpeg(rnd, drawObjectAlone(rnd)) }
    case 'texture':
      return { seed, kind: chosen, ...jpeg(rnd, drawTexture(rnd)) }
    case 'product': {
      if (rnd() < 0.5) {
        const scene = makeBridalScene(seed)
        return { seed, kind: chosen, photo: scene.product, description: `bridal product: ${scene.description.split(' on ')[0]}` }
      }
      const garment = garmentKinds[Math.floor(rnd() * garmentKinds.length)]
      const colour: Rgb = [Math.floor(rnd() * 256), Math.floor(rnd() * 256), Math.floor(rnd() * 256)]
      const side = 240 + Math.floor(rnd() * 200)
      const transparent = rnd() < 0.3
      const photo = makeGarmentPhoto({ kind: garment, color: colour, width: side, height: side, transparentBackground: transparent })
      return { seed, kind: chosen, photo, description: `${garment} product photo (${transparent ? 'cut out' : 'studio'})` }
    }
  }
}

function jpeg(rnd: Random, drawn: { image: RgbaImage; description: string }): { photo: EncodedPhoto; description: string } {
  const quality = Math.round(60 + rnd() * 35)
  const { image } = drawn
  return {
    photo: { bytes: encodeJpeg(image, quality), format: 'jpeg', width: image.width, height: image.height, pixels: image },
    description: `${drawn.description}, ${image.width}x${image.height}, JPEG q${quality}`,
  }
}

const between = (rnd: Random, lo: number, hi: number) => lo + (hi - lo) * rnd()
const pickFrom = <T>(rnd: Random, items: readonly T[]): T => items[Math.floor(rnd() * items.length)]
const colourNear = (rnd: Random, base: Rgb, spread: number): Rgb =>
  base.map((v) => Math.max(0, Math.min(255, v + between(rnd, -spread, spread)))) as Rgb

const WALLS: Rgb[] = [
  [238, 234, 226],
  [214, 208, 196],
  [190, 200, 206],
  [226, 214, 190],
  [150, 160, 150],
  [88, 96, 110],
  [245, 245, 242],
  [200, 180, 170],
]
const FLOORS: Rgb[] = [
  [180, 150, 116],
  [120, 90, 66],
  [210, 206, 198],
  [96, 96, 100],
  [226, 220, 210],
  [70, 60, 54],
]
const THINGS: Rgb[] = [
  [60, 60, 64],
  [140, 100, 70],
  [30, 70, 120],
  [170, 40, 40],
  [230, 230, 226],
  [90, 120, 70],
  [200, 170, 120],
  [20, 20, 22],
]

/** A portrait or landscape frame of a photo a phone takes. */
function frame(rnd: Random): { width: number; height: number } {
  const width = Math.round(between(rnd, 280, 560) / 4) * 4
  const ratio = pickFrom(rnd, [4 / 3, 3 / 2, 16 / 9, 5 / 4, 1, 3 / 4])
  return { width, height: Math.round((width * ratio) / 4) * 4 }
}

/** Light falling off, a vignette and sensor noise. */
function camera(canvas: Canvas, rnd: Random): RgbaImage {
  const image = canvas.toRgba()
  const { width, height, data } = image
  const slope = between(rnd, -0.15, 0.15)
  const vignette = between(rnd, 0, 0.3)
  const noise = between(rnd, 0, 6)
  const grain = random(Math.floor(rnd() * 1e9))
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const dx = x / width - 0.5
      const dy = y / height - 0.5
      const light = (1 + slope * dx * 2) * (1 - vignette * (dx * dx + dy * dy) * 2)
      const o = (y * width + x) * 4
      const n = (grain() + grain() - 1) * noise
      for (let c = 0; c < 3; c++) data[o + c] = Math.min(255, Math.max(0, Math.round(data[o + c] * light + n)))
      data[o + 3] = 255
    }
  }
  return image
}

/** A piece of furniture or a fixture, standing on the floor line at `x`, sized against the frame's height `h`. */
function furniture(rnd: Random, x: number, floorY: number, h: number): { shapes: Shape[]; colour: Rgb; name: string } {
  const colour = pickFrom(rnd, THINGS)
  const s = between(rnd, 0.8, 1.2)
  switch (pickFrom(rnd, ['chair', 'sofa', 'table', 'lamp', 'plant', 'door', 'coat-stand', 'shelf', 'mirror'] as const)) {
    case 'chair': {
      const w = 0.12 * h * s
      const seat = floorY - 0.2 * h * s
      return {
        name: 'chair',
        colour,
        shapes: [
          polygon([
            [x - w / 2, seat - 0.02 * h],
            [x + w / 2, seat - 0.02 * h],
            [x + w / 2, seat],
            [x - w / 2, seat],
          ]),
          polygon([
            [x - w / 2, seat - 0.25 * h * s],
            [x - w / 2 + 0.015 * h, seat - 0.25 * h * s],
            [x - w / 2 + 0.015 * h, seat],
            [x - w / 2, seat],
          ]),
          capsule([x - w / 2 + 3, seat], 2, [x - w / 2 + 3, floorY], 2),
          capsule([x + w / 2 - 3, seat], 2, [x + w / 2 - 3, floorY], 2),
        ],
      }
    }
    case 'sofa': {
      const w = 0.45 * h * s
      return {
        name: 'sofa',
        colour,
        shapes: [
          polygon([
            [x - w / 2, floorY - 0.3 * h * s],
            [x + w / 2, floorY - 0.3 * h * s],
            [x + w / 2, floorY - 0.03 * h],
            [x - w / 2, floorY - 0.03 * h],
          ]),
          ellipse(x - w / 2, floorY - 0.2 * h * s, 0.04 * h, 0.1 * h * s),
          ellipse(x + w / 2, floorY - 0.2 * h * s, 0.04 * h, 0.1 * h * s),
        ],
      }
    }
    case 'table': {
      const w = 0.3 * h * s
      const top = floorY - 0.3 * h * s
      return {
        name: 'table',
        colour,
        shapes: [
          polygon([
            [x - w / 2, top],
            [x + w / 2, top],
            [x + w / 2, top + 0.025 * h],
            [x - w / 2, top + 0.025 * h],
          ]),
          capsule([x - w / 2 + 4, top], 3, [x - w / 2 + 4, floorY], 3),
          capsule([x + w / 2 - 4, top], 3, [x + w / 2 - 4, floorY], 3),
        ],
      }
    }
    case 'lamp': {
      // A floor lamp: a thin pole as tall as a person, a shade on top, a round base.
      const tall = 0.75 * h * s
      return {
        name: 'floor lamp',
        colour,
        shapes: [
          capsule([x, floorY - tall], 2.5, [x, floorY], 2.5),
          polygon([
            [x - 0.035 * h, floorY - tall - 0.09 * h],
            [x + 0.035 * h, floorY - tall - 0.09 * h],
            [x + 0.06 * h, floorY - tall],
            [x - 0.06 * h, floorY - tall],
          ]),
          ellipse(x, floorY - 0.01 * h, 0.05 * h, 0.012 * h),
        ],
      }
    }
    case 'plant': {
      const pot = 0.1 * h * s
      return {
        name: 'plant',
        colour: [50, 110, 60],
        shapes: [
          polygon([
            [x - pot / 2, floorY - pot],
            [x + pot / 2, floorY - pot],
            [x + pot * 0.4, floorY],
            [x - pot * 0.4, floorY],
          ]),
          ellipse(x, floorY - pot - 0.15 * h * s, 0.1 * h * s, 0.17 * h * s),
          ellipse(x - 0.06 * h, floorY - pot - 0.25 * h * s, 0.05 * h, 0.1 * h),
        ],
      }
    }
    case 'door': {
      const w = 0.22 * h * s
      const top = floorY - 0.8 * h * s
      return {
        name: 'door',
        colour: shade(colour, 0.9),
        shapes: [
          polygon([
            [x - w / 2, top],
            [x + w / 2, top],
            [x + w / 2, floorY],
            [x - w / 2, floorY],
          ]),
        ],
      }
    }
    case 'coat-stand': {
      // A coat hung on a stand: shoulders, sleeves and a hood over a pole, the hardest look-alike in a hallway.
      const tall = 0.85 * h * s
      const top = floorY - tall
      const sh = 0.1 * h * s
      return {
        name: 'coat on a stand',
        colour,
        shapes: [
          capsule([x, top], 3, [x, floorY], 3),
          ellipse(x, top + 0.03 * h, 0.035 * h, 0.04 * h),
          polygon([
            [x - sh, top + 0.08 * h],
            [x + sh, top + 0.08 * h],
            [x + sh * 0.9, top + 0.5 * h * s],
            [x - sh * 0.9, top + 0.5 * h * s],
          ]),
          capsule([x - sh, top + 0.09 * h], 0.025 * h, [x - sh * 1.1, top + 0.4 * h * s], 0.02 * h),
          capsule([x + sh, top + 0.09 * h], 0.025 * h, [x + sh * 1.1, top + 0.4 * h * s], 0.02 * h),
          ellipse(x, floorY - 0.01 * h, 0.08 * h, 0.015 * h),
        ],
      }
    }
    case 'shelf': {
      const w = 0.25 * h * s
      const top = floorY - 0.7 * h * s
      return {
        name: 'shelf',
        colour,
        shapes: [
          polygon([
            [x - w / 2, top],
            [x + w / 2, top],
            [x + w / 2, floorY],
            [x - w / 2, floorY],
          ]),
        ],
      }
    }
    case 'mirror': {
      return {
        name: 'mirror',
        colour: [200, 210, 215],
        shapes: [ellipse(x, floorY - 0.45 * h * s, 0.1 * h * s, 0.22 * h * s)],
      }
    }
  }
}

function drawEmptyRoom(rnd: Random): { image: RgbaImage; description: string } {
  const { width, height } = frame(rnd)
  const wall = pickFrom(rnd, WALLS)
  const floor = pickFrom(rnd, FLOORS)
  const horizon = height * between(rnd, 0.55, 0.85)
  const texture = valueNoise(Math.floor(rnd() * 1e6), Math.max(3, width / 30))
  const planks = rnd() < 0.4 ? height * between(rnd, 0.03, 0.06) : 0
  const canvas = new Canvas(width, height)
  canvas.fillAll((x, y) => {
    if (y < horizon) return shade(wall, 0.97 + 0.03 * texture(x, y) - 0.05 * (y / height))
    const board = planks ? (Math.abs(((x + (y - horizon) * 0.3) / planks) % 1) < 0.05 ? 0.75 : 1) : 1
    return shade(floor, (0.9 + 0.12 * ((y - horizon) / (height - horizon)) + 0.04 * texture(x, y)) * board)
  })
  const names: string[] = []
  const count = Math.floor(between(rnd, 0, 4))
  for (let i = 0; i < count; i++) {
    const x = width * between(rnd, 0.1, 0.9)
    const floorY = horizon + (height - horizon) * between(rnd, 0.1, 0.7)
    const piece = furniture(rnd, x, floorY, height)
    for (const shape of piece.shapes) canvas.fill(shape, colourNear(rnd, piece.colour, 12))
    names.push(piece.name)
  }
  if (rnd() < 0.3) {
    // A window or a picture on the wall.
    const w = width * between(rnd, 0.15, 0.35)
    const x = width * between(rnd, 0.15, 0.85)
    const y = horizon * between(rnd, 0.15, 0.5)
    canvas.fill(
      polygon([
        [x - w / 2, y - w / 2],
        [x + w / 2, y - w / 2],
        [x + w / 2, y + w / 2],
        [x - w / 2, y + w / 2],
      ]),
      pickFrom(rnd, THINGS),
    )
    names.push('a frame on the wall')
  }
  return { image: camera(canvas, rnd), description: `empty room (${names.join(', ') || 'bare'})` }
}

function drawObjectAlone(rnd: Random): { image: RgbaImage; description: string } {
  const { width, height } = frame(rnd)
  const backdrop = colourNear(
    rnd,
    pickFrom(rnd, [
      [240, 240, 238],
      [225, 222, 215],
      [200, 205, 210],
      [60, 60, 64],
    ] as Rgb[]),
    8,
  )
  const canvas = new Canvas(width, height)
  canvas.fillAll((_x, y) => shade(backdrop, 1 - 0.06 * Math.abs(y / height - 0.4)))
  const x = width * between(rnd, 0.35, 0.65)
  const h = height * between(rnd, 0.5, 0.9)
  const bottom = height * between(rnd, 0.8, 0.97)
  const top = bottom - h
  const colour = colourNear(rnd, pickFrom(rnd, THINGS), 15)
  const kind = pickFrom(rnd, ['bottle', 'vase', 'lamp', 'dress form', 'stool', 'ladder'] as const)
  let shape: Shape
  switch (kind) {
    case 'bottle': {
      const r = h * 0.16
      shape = union(
        polygon([
          [x - r, top + 0.4 * h],
          [x + r, top + 0.4 * h],
          [x + r, bottom],
          [x - r, bottom],
        ]),
        ellipse(x, top + 0.4 * h, r, 0.1 * h),
        polygon([
          [x - r * 0.3, top + 0.05 * h],
          [x + r * 0.3, top + 0.05 * h],
          [x + r * 0.35, top + 0.35 * h],
          [x - r * 0.35, top + 0.35 * h],
        ]),
        ellipse(x, top + 0.04 * h, r * 0.36, 0.04 * h),
      )
      break
    }
    case 'vase':
      shape = union(ellipse(x, top + 0.6 * h, 0.25 * h, 0.4 * h), ellipse(x, top + 0.1 * h, 0.1 * h, 0.1 * h))
      break
    case 'lamp':
      shape = union(
        polygon([
          [x - 0.12 * h, top],
          [x + 0.12 * h, top],
          [x + 0.2 * h, top + 0.25 * h],
          [x - 0.2 * h, top + 0.25 * h],
        ]),
        capsule([x, top + 0.25 * h], 0.02 * h, [x, bottom - 0.05 * h], 0.02 * h),
        ellipse(x, bottom - 0.03 * h, 0.15 * h, 0.03 * h),
      )
      break
    case 'dress form':
      // A tailor's dummy: a knob for a neck, shoulders, a waist, hips, on a pole and three feet.
      shape = union(
        ellipse(x, top + 0.03 * h, 0.03 * h, 0.03 * h),
        capsule([x, top + 0.03 * h], 0.035 * h, [x, top + 0.09 * h], 0.04 * h),
        polygon([
          [x - 0.13 * h, top + 0.1 * h],
          [x + 0.13 * h, top + 0.1 * h],
          [x + 0.08 * h, top + 0.3 * h],
          [x - 0.08 * h, top + 0.3 * h],
        ]),
        polygon([
          [x - 0.08 * h, top + 0.3 * h],
          [x + 0.08 * h, top + 0.3 * h],
          [x + 0.11 * h, top + 0.45 * h],
          [x - 0.11 * h, top + 0.45 * h],
        ]),
        capsule([x, top + 0.45 * h], 0.012 * h, [x, bottom - 0.04 * h], 0.012 * h),
        capsule([x, bottom - 0.04 * h], 0.01 * h, [x - 0.12 * h, bottom], 0.01 * h),
        capsule([x, bottom - 0.04 * h], 0.01 * h, [x + 0.12 * h, bottom], 0.01 * h),
      )
      break
    case 'stool':
      shape = union(
        ellipse(x, top + 0.5 * h, 0.2 * h, 0.04 * h),
        capsule([x - 0.15 * h, top + 0.5 * h], 0.015 * h, [x - 0.18 * h, bottom], 0.015 * h),
        capsule([x + 0.15 * h, top + 0.5 * h], 0.015 * h, [x + 0.18 * h, bottom], 0.015 * h),
      )
      break
    case 'ladder': {
      const rails = [-1, 1].map((s) => capsule([x + s * 0.1 * h, top], 0.012 * h, [x + s * 0.14 * h, bottom], 0.012 * h))
      const rungs = [0.2, 0.4, 0.6, 0.8].map((f) => capsule([x - 0.11 * h, top + f * h], 0.008 * h, [x + 0.11 * h, top + f * h], 0.008 * h))
      shape = union(...rails, ...rungs)
      break
    }
  }
  const noise = valueNoise(Math.floor(rnd() * 1e6), 6)
  canvas.fill(shape, (px, py) => shade(colour, 1 + 0.12 * ((x - px) / h) + 0.04 * noise(px, py)))
  return { image: camera(canvas, rnd), description: `${kind} alone` }
}

function drawTexture(rnd: Random): { image: RgbaImage; description: string } {
  const { width, height } = frame(rnd)
  const a = pickFrom(rnd, [...WALLS, ...THINGS])
  const b = pickFrom(rnd, [...FLOORS, ...THINGS])
  const cell = between(rnd, 6, 60)
  const noise = valueNoise(Math.floor(rnd() * 1e6), cell)
  const grain = random(Math.floor(rnd() * 1e9))
  const kind = pickFrom(rnd, ['noise', 'stripes', 'checks', 'bricks', 'marble', 'gradient', 'clouds'] as const)
  const canvas = new Canvas(width, height)
  canvas.fillAll((x, y) => {
    switch (kind) {
      case 'noise':
        return [grain() * 255, grain() * 255, grain() * 255]
      case 'stripes':
        return Math.floor((x + y * 0.3) / cell) % 2 ? a : b
      case 'checks':
        return (Math.floor(x / cell) + Math.floor(y / cell)) % 2 ? a : b
      case 'bricks': {
        const row = Math.floor(y / (cell * 0.5))
        const offset = row % 2 ? cell : 0
        const mortar = y % (cell * 0.5) < 2 || (x + offset) % (cell * 2) < 2
        return mortar ? [200, 200, 195] : shade(b, 0.9 + 0.1 * noise(x, y))
      }
      case 'marble':
        return Math.abs(Math.sin((x + y) / cell + 4 * noise(x, y))) < 0.1 ? shade(a, 0.6) : a
      case 'gradient':
        return [a[0] + ((b[0] - a[0]) * y) / height, a[1] + ((b[1] - a[1]) * y) / height, a[2] + ((b[2] - a[2]) * x) / width]
      case 'clouds':
        return shade(a, 0.75 + 0.25 * noise(x, y))
    }
  })
  return { image: camera(canvas, rnd), description: `${kind} texture` }
}
