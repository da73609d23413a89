/**
 * Hand-made results for testing the oracle: a perfect composite (the product's colours, as the scene's light shows
 * them, painted exactly over the body regions its category covers) and ways of breaking one.
 */
import { decodeImage } from '../../../shared/images/codecs/index.ts'
import type { RgbaImage } from '../../../shared/images/codecs/raster.ts'
import { deltaE } from '../../../shared/quality/colour.ts'
import { PART, type Part, type Rgb, type Scene } from './types.ts'

const COVERS: Record<Scene['truth']['product']['kind'], Part[]> = {
  tshirt: [PART.torso],
  shirt: [PART.torso],
  jacket: [PART.torso],
  trousers: [PART.thigh, PART.shin, PART.hips],
  skirt: [PART.hips],
  dress: [PART.torso, PART.hips],
  gown: [PART.torso, PART.hips, PART.thigh, PART.shin],
  'train-gown': [PART.torso, PART.hips, PART.thigh, PART.shin],
  shoes: [PART.foot],
  bag: [],
}

/** The shopper photo as the service received it. */
export function received(scene: Scene): RgbaImage {
  return decodeImage(scene.shopper.bytes, scene.shopper.format)
}

/** The shopper photo with `parts` (default: what the product covers) painted in `colours` (default: the product's, lit). */
export function paintedComposite(scene: Scene, options: { colours?: Rgb[]; parts?: Part[]; offsetX?: number } = {}): RgbaImage {
  const image = received(scene)
  const { width, height } = image
  const truth = scene.truth
  const colours = options.colours ?? truth.product.coloursInScene
  const covered = new Set(options.parts ?? COVERS[truth.product.kind])
  const period = Math.max(4, Math.round(0.03 * truth.shopper.figureHeight))
  const share = truth.product.colours[0].share
  const colourAt = (x: number, y: number): Rgb => {
    if (colours.length < 2 || truth.product.pattern === 'plain') return colours[0]
    if (truth.product.pattern === 'stripes') return (y / period) % 1 < share ? colours[0] : colours[1]
    const r2 = truth.product.colours[1].share / Math.PI
    return (((x / period) % 1) - 0.5) ** 2 + (((y / period) % 1) - 0.5) ** 2 < r2 ? colours[1] : colours[0]
  }
  const dx = Math.round(options.offsetX ?? 0)
  const paint = (x: number, y: number) => {
    if (x < 0 || x >= width) return
    const c = colourAt(x, y)
    image.data.set([c[0], c[1], c[2], 255], (y * width + x) * 4)
  }
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) if (covered.has(truth.shopper.parts[y * width + x] as Part)) paint(x + dx, y)
  }
  if (truth.product.kind === 'bag' && !options.parts) {
    // A bag held at the side: a block beside the hand.
    const hand = truth.shopper.parts.indexOf(PART.hand)
    if (hand >= 0) {
      const H = truth.shopper.figureHeight
      const hx = hand % width
      const hy = Math.floor(hand / width)
      for (let y = Math.round(hy + 0.02 * H); y < Math.min(height, hy + 0.12 * H); y++)
        for (let x = Math.round(hx - 0.05 * H); x < hx + 0.05 * H; x++) paint(x + dx, y)
    }
  }
  return image
}

/** A colour far from the product's and from everything the shopper shows: what a wrong-coloured result wears. */
export function farColour(scene: Scene): Rgb {
  const candidates: Rgb[] = [
    [230, 30, 30],
    [30, 180, 40],
    [40, 60, 220],
    [250, 220, 20],
    [200, 40, 200],
    [20, 200, 210],
    [250, 130, 20],
  ]
  const avoid = [...scene.truth.product.colours.map((c) => c.rgb), ...scene.truth.product.coloursInScene, ...scene.truth.shopper.colours]
  const spread = (c: Rgb) => Math.min(...avoid.map((a) => deltaE(c, a, 2)))
  return candidates.reduce((a, b) => (spread(a) >= spread(b) ? a : b))
}

/** The whole image moved sideways by `dx` pixels, the edge it leaves filled with the edge column. */
export function shifted(image: RgbaImage, dx: number): RgbaImage {
  const { width, height } = image
  const data = new Uint8Array(image.data.length)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const sx = Math.min(width - 1, Math.max(0, x - dx))
      data.set(image.data.subarray((y * width + sx) * 4, (y * width + sx) * 4 + 4), (y * width + x) * 4)
    }
  }
  return { width, height, data }
}

/** Nearest-pixel resize. */
export function resized(image: RgbaImage, width: number, height: number): RgbaImage {
  const data = new Uint8Array(width * height * 4)
  for (let y = 0; y < height; y++) {
    const sy = Math.min(image.height - 1, Math.floor(((y + 0.5) * image.height) / height))
    for (let x = 0; x < width; x++) {
      const sx = Math.min(image.width - 1, Math.floor(((x + 0.5) * image.width) / width))
      data.set(image.data.subarray((sy * image.width + sx) * 4, (sy * image.width + sx) * 4 + 4), (y * width + x) * 4)
    }
  }
  return { width, height, data }
}

/** `rows` rows of the bottom row's colours added below: floor room, as the wedding-dress pre-treatment adds it. */
export function withFloorBelow(image: RgbaImage, rows: number): RgbaImage {
  const { width, height } = image
  const data = new Uint8Array(width * (height + rows) * 4)
  data.set(image.data)
  const last = image.data.subarray((height - 1) * width * 4, height * width * 4)
  for (let y = height; y < height + rows; y++) data.set(last, y * width * 4)
  return { width, height: height + rows, data }
}

/** Every pixel of the listed parts painted one colour: a face replaced, a body erased. */
export function paintedParts(image: RgbaImage, scene: Scene, parts: Part[], colour: Rgb): RgbaImage {
  const out = { ...image, data: image.data.slice() }
  const wanted = new Set<number>(parts)
  for (let i = 0; i < image.width * image.height; i++) {
    if (wanted.has(scene.truth.shopper.parts[i])) out.data.set([colour[0], colour[1], colour[2], 255], i * 4)
  }
  return out
}
