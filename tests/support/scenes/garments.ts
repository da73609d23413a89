/**
 * The product: what it is (kind, category, colours, pattern, train), how a request names it, and its outline in
 * body units (H = the wearer's height, 0 at the top of the head, x from the centre line) for the product photo.
 */
import { capsule, ellipse, polygon, rect, subtract, union, type Point, type Shape } from './picture.ts'
import { deltaE } from '../../../shared/quality/colour.ts'
import type { Rng } from './rng.ts'
import type { ProductCategory, ProductColour, ProductConvention, ProductKind, Rgb, SceneRequest } from './types.ts'

export interface ProductSpec {
  kind: ProductKind
  category: ProductCategory
  colours: ProductColour[]
  pattern: 'plain' | 'stripes' | 'print'
  /** Stripe or dot period as a fraction of the garment's length. */
  period: number
  hasTrain: boolean
  convention: ProductConvention
  /** Shape numbers drawn once, so the outline is the same however often it is drawn. */
  p: Record<string, number>
  request: SceneRequest
  description: string
}

const CATEGORY: Record<ProductKind, ProductCategory> = {
  tshirt: 'top',
  shirt: 'top',
  jacket: 'outerwear',
  trousers: 'bottom',
  skirt: 'bottom',
  dress: 'dress',
  gown: 'dress',
  'train-gown': 'dress',
  shoes: 'shoes',
  bag: 'bag',
}

export const BRIDAL_COLOURS: Record<string, Rgb> = {
  white: [248, 247, 243],
  ivory: [240, 232, 212],
  champagne: [230, 210, 178],
  blush: [236, 200, 192],
}
const LIGHT_COLOURS: Record<string, Rgb> = { ...BRIDAL_COLOURS, cream: [242, 234, 210], 'pale grey': [224, 224, 222] }
export const FASHION_COLOURS: Record<string, Rgb> = {
  red: [196, 30, 42],
  navy: [30, 40, 88],
  emerald: [18, 118, 80],
  mustard: [214, 168, 40],
  black: [26, 26, 28],
  white: [245, 245, 242],
  grey: [138, 138, 142],
  pink: [234, 148, 178],
  teal: [28, 128, 138],
  burgundy: [118, 24, 44],
  olive: [108, 114, 48],
  camel: [190, 148, 98],
  sky: [118, 170, 222],
  orange: [234, 118, 38],
  purple: [106, 58, 148],
  denim: [58, 88, 138],
  cream: [240, 230, 204],
  brown: [98, 64, 40],
}

const NAMES: Record<ProductKind, string[]> = {
  tshirt: ['T-shirt', 'Tee', 'Top'],
  shirt: ['Shirt', 'Blouse'],
  jacket: ['Jacket', 'Blazer', 'Coat'],
  trousers: ['Trousers', 'Pants', 'Jeans'],
  skirt: ['Skirt'],
  dress: ['Dress'],
  gown: ['Gown', 'Evening dress', 'Wedding dress'],
  'train-gown': ['Wedding dress', 'Bridal gown'],
  shoes: ['Shoes', 'Sneakers'],
  bag: ['Handbag', 'Bag'],
}

const isLight = (c: Rgb) => c[0] + c[1] + c[2] > 630

function colourNamed(rng: Rng, palette: Record<string, Rgb>, avoid?: Rgb): [string, Rgb] {
  for (;;) {
    const name = rng.pick(Object.keys(palette))
    const c = palette[name]
    if (!avoid || deltaE(c, avoid, 2) > 28) return [name, c.map((v) => Math.max(0, Math.min(255, v + rng.between(-4, 4)))) as Rgb]
  }
}

/** The product for a scene. */
export function chooseProduct(rng: Rng): ProductSpec {
  const kind = rng.weighted<ProductKind>({
    tshirt: 0.11,
    shirt: 0.09,
    jacket: 0.08,
    trousers: 0.1,
    skirt: 0.07,
    dress: 0.12,
    gown: 0.13,
    'train-gown': 0.22,
    shoes: 0.04,
    bag: 0.04,
  })
  const nonGarment = kind === 'shoes' || kind === 'bag'
  const convention: ProductConvention = nonGarment
    ? rng.pick(['flat-lay', 'props', 'white-on-white'] as const)
    : rng.weighted<ProductConvention>({
        'flat-lay': 0.2,
        'ghost-mannequin': 0.2,
        'white-on-white': 0.14,
        hanger: 0.16,
        props: 0.14,
        'on-model': 0.16,
      })
  const gown = kind === 'gown' || kind === 'train-gown'
  const bridal = kind === 'train-gown' || (kind === 'gown' && rng.chance(0.7))
  const palette = convention === 'white-on-white' ? LIGHT_COLOURS : bridal && rng.chance(0.85) ? BRIDAL_COLOURS : FASHION_COLOURS
  const [name, rgb] = colourNamed(rng, palette)
  const patterned = kind === 'tshirt' || kind === 'shirt' || kind === 'skirt' || kind === 'dress'
  const pattern = patterned ? rng.weighted({ plain: 0.66, stripes: 0.19, print: 0.15 }) : 'plain'
  const colours: ProductColour[] = [{ name, rgb, share: 1 }]
  if (pattern !== 'plain') {
    const [name2, rgb2] = colourNamed(rng, FASHION_COLOURS, rgb)
    // Stripes: the second colour's share is its width in each period; print: dots of radius q periods cover pi q^2.
    const share = pattern === 'stripes' ? rng.between(0.3, 0.48) : Math.PI * rng.between(0.2, 0.3) ** 2
    colours[0].share = 1 - share
    colours.push({ name: name2, rgb: rgb2, share })
  }
  const wedding = kind === 'train-gown' || (gown && bridal) || (!nonGarment && !gown && rng.chance(0.12))
  const p: Record<string, number> = {}
  for (const key of ['a', 'b', 'c', 'd', 'e', 'f', 'g']) p[key] = rng.next()
  const request: SceneRequest = { clothingType: rng.pick(NAMES[kind]), ...(wedding && { productType: 'wedding-dress' as const }) }
  const colourText = colours.map((c) => c.name).join('/')
  return {
    kind,
    category: CATEGORY[kind],
    colours,
    pattern,
    period: rng.between(0.04, 0.09),
    hasTrain: kind === 'train-gown',
    convention,
    p,
    request,
    description: `${colourText} ${pattern === 'plain' ? '' : `${pattern} `}${kind} (${convention})`,
  }
}

export function productIsLight(spec: ProductSpec): boolean {
  return isLight(spec.colours[0].rgb)
}

const lerp = (a: number, b: number, t: number) => a + (b - a) * t

/** Extent of the garment in body units: rows [top, bottom] and the widest half-width. */
export function extentOf(spec: ProductSpec): { top: number; bottom: number; half: number } {
  const { p } = spec
  switch (spec.kind) {
    case 'tshirt':
      return { top: 0.16, bottom: lerp(0.5, 0.56, p.a), half: 0.2 }
    case 'shirt':
    case 'jacket':
      return { top: 0.15, bottom: spec.kind === 'shirt' ? lerp(0.54, 0.6, p.a) : lerp(0.56, 0.66, p.a), half: 0.2 }
    case 'trousers':
      return { top: 0.39, bottom: 0.97, half: 0.12 }
    case 'skirt':
      return { top: 0.39, bottom: lerp(0.6, 0.9, p.a), half: lerp(0.12, 0.25, p.b) }
    case 'dress':
      return { top: 0.16, bottom: lerp(0.62, 0.9, p.a), half: lerp(0.14, 0.26, p.b) }
    case 'gown':
    case 'train-gown': {
      const hemHalf = lerp(0.13, 0.38, p.b)
      const train = spec.kind === 'train-gown' ? lerp(0.08, 0.3, p.c) : 0
      return { top: 0.16, bottom: 1.01 + train, half: hemHalf * (spec.kind === 'train-gown' ? lerp(1.3, 2.1, p.d) : 1) }
    }
    default:
      return { top: 0, bottom: 1, half: 0.5 }
  }
}

/**
 * The garment's outline in pixels: body unit f maps to row y0 + f * s, offset u to column cx + u * s. Shoes and
 * bags use the unit box [-0.5, 0.5] x [0, 1] instead.
 */
export function outlineOf(spec: ProductSpec, cx: number, y0: number, s: number): Shape {
  const X = (u: number) => cx + u * s
  const Y = (f: number) => y0 + f * s
  const P = (u: number, f: number): Point => [X(u), Y(f)]
  const mirrored = (points: [number, number][]): Shape =>
    polygon([...points.map(([u, f]) => P(-u, f)), ...points.reverse().map(([u, f]) => P(u, f))])
  const { p } = spec
  const e = extentOf(spec)
  switch (spec.kind) {
    case 'tshirt':
    case 'shirt':
    case 'jacket': {
      const half = spec.kind === 'jacket' ? 0.125 : lerp(0.105, 0.13, p.b)
      const long = spec.kind !== 'tshirt' || p.c < 0.3
      const body = mirrored([
        [0.045, 0.165],
        [0.1, 0.18],
        [half, 0.22],
        [half * 0.96, 0.36],
        [half * 1.02, e.bottom],
      ])
      const sleeves = [-1, 1].map((sd) =>
        long
          ? capsule([X(sd * 0.1), Y(0.2)], 0.036 * s, [X(sd * lerp(0.14, 0.19, p.d)), Y(0.52)], 0.022 * s)
          : capsule([X(sd * 0.1), Y(0.2)], 0.04 * s, [X(sd * 0.155), Y(0.3)], 0.038 * s),
      )
      const neck =
        spec.kind === 'jacket'
          ? polygon([P(-0.05, 0.15), P(0.05, 0.15), P(0, lerp(0.3, 0.38, p.e))])
          : p.e < 0.3
            ? polygon([P(-0.045, 0.15), P(0.045, 0.15), P(0, 0.24)])
            : ellipse(X(0), Y(0.165), 0.045 * s, 0.03 * s)
      const collar =
        spec.kind === 'shirt' ? [-1, 1].map((sd) => polygon([P(sd * 0.02, 0.175), P(sd * 0.07, 0.165), P(sd * 0.05, 0.215)])) : []
      return union(subtract(union(body, ...sleeves), neck), ...collar)
    }
    case 'trousers': {
      const hemHalf = lerp(0.035, 0.06, p.b)
      const gap = lerp(0.006, 0.03, p.c)
      const legs = [-1, 1].map((sd) =>
        polygon([P(sd * 0.003, 0.5), P(sd * 0.1, 0.42), P(sd * (gap + 2 * hemHalf), 0.97), P(sd * gap, 0.97)]),
      )
      return union(rect(X(-0.1), Y(0.39), X(0.1), Y(0.51)), ...legs)
    }
    case 'skirt':
      return mirrored([
        [0.074, 0.39],
        [0.096, 0.48],
        [e.half, e.bottom],
      ])
    case 'dress':
    case 'gown':
    case 'train-gown': {
      const gown = spec.kind !== 'dress'
      const strapless = p.e < 0.3
      const hemHalf = gown ? lerp(0.13, 0.38, p.b) : e.half
      const hem = gown ? 1.01 : e.bottom
      const mermaid = gown && p.f < 0.25
      const body = mirrored([
        [0.085, strapless ? 0.23 : 0.19],
        [0.088, 0.27],
        [0.072, 0.4],
        ...(mermaid
          ? ([
              [0.098, 0.52],
              [0.085, 0.75],
            ] as [number, number][])
          : ([[0.095, 0.48]] as [number, number][])),
        [hemHalf, hem],
      ])
      const pieces: Shape[] = [body]
      if (!strapless)
        for (const sd of [-1, 1]) pieces.push(capsule([X(sd * 0.055), Y(0.165)], 0.012 * s, [X(sd * 0.07), Y(0.21)], 0.012 * s))
      if (spec.kind === 'train-gown') {
        const depth = e.bottom - 1.01
        const spread = e.half
        // The train fans out behind the skirt from below the knees and ends in a rounded edge on the floor.
        pieces.push(ellipse(X(lerp(-0.04, 0.04, p.g)), Y(1.01 + depth * 0.15), spread * s, depth * 0.85 * s + 0.02 * s))
        pieces.push(
          mirrored([
            [hemHalf * 0.5, 0.74],
            [spread * 0.9, 1.01],
          ]),
        )
      }
      return union(...pieces)
    }
    case 'shoes': {
      const shoe = (ox: number): Shape =>
        union(
          polygon([P(ox - 0.2, 0.45), P(ox - 0.02, 0.45), P(ox + 0.2, 0.62), P(ox + 0.22, 0.72), P(ox - 0.22, 0.72)]),
          rect(X(ox - 0.22), Y(0.3), X(ox - 0.08), Y(0.5)),
        )
      return union(shoe(-0.24), shoe(0.26))
    }
    default: {
      const body = polygon([P(-0.36, 0.38), P(0.36, 0.38), P(0.44, 0.9), P(-0.44, 0.9)])
      const handle = subtract(
        ellipse(X(0), Y(0.38), 0.24 * s, 0.26 * s),
        ellipse(X(0), Y(0.38), 0.19 * s, 0.21 * s),
        rect(X(-1), Y(0.38), X(1), Y(2)),
      )
      return union(body, handle)
    }
  }
}

/** The product's own colour at a pixel (before the photo's light): stripes run across, dots on a grid. */
export function productColour(spec: ProductSpec, length: number): (x: number, y: number) => Rgb {
  const [main, second] = spec.colours
  const period = Math.max(4, spec.period * length)
  if (spec.pattern === 'stripes') return (_x, y) => ((y / period) % 1 < main.share ? main.rgb : second.rgb)
  if (spec.pattern === 'print') {
    const radius2 = second.share / Math.PI
    return (x, y) => ((((x / period) % 1) - 0.5) ** 2 + (((y / period) % 1) - 0.5) ** 2 < radius2 ? second.rgb : main.rgb)
  }
  return () => main.rgb
}
