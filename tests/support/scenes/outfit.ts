/**
 * What the shopper wears under the try-on: a top (plain, striped, checked, dotted; sleeveless, short or long
 * sleeves), trousers, jeans, a skirt, shorts or leggings, and shoes, in colours kept clearly apart from the
 * product's, so a pixel of the product's colour on the body is the product and not the shopper's own clothes.
 */
import { deltaE } from '../../../shared/quality/colour.ts'
import type { Rng } from './rng.ts'
import type { Rgb } from './types.ts'

export type Pattern = 'plain' | 'stripes' | 'check' | 'dots'

export interface Fabric {
  base: Rgb
  second: Rgb
  pattern: Pattern
  /** Pattern period in H units. */
  period: number
}

export interface Outfit {
  top: Fabric
  sleeves: 'none' | 'short' | 'long'
  bottom: Fabric
  bottomKind: 'trousers' | 'jeans' | 'skirt' | 'shorts' | 'leggings'
  /** Hem of a skirt, in H units. */
  skirtHem: number
  shoes: Rgb
  /** The light-on-light case: a light top under a light product. */
  lightOnLight: boolean
}

export const CLOTHES: Rgb[] = [
  [28, 30, 36],
  [44, 62, 120],
  [130, 28, 38],
  [52, 104, 70],
  [204, 182, 150],
  [96, 96, 102],
  [158, 158, 162],
  [222, 222, 218],
  [84, 56, 40],
  [196, 88, 60],
  [36, 118, 146],
  [232, 196, 70],
  [112, 60, 124],
  [246, 246, 244],
  [170, 128, 96],
  [70, 96, 150],
  [236, 160, 176],
  [150, 190, 120],
]
/** Light pastels: what a light top under a white gown is (the hard case for telling the two apart). */
const LIGHTS: Rgb[] = [
  [250, 236, 168],
  [190, 226, 236],
  [246, 200, 214],
  [196, 236, 200],
  [220, 206, 244],
  [248, 214, 176],
  [214, 220, 230],
]

/** The least CIEDE2000 (lightness weighed by 2) from a colour to any of `others`. */
export function separation(colour: Rgb, others: readonly Rgb[]): number {
  let least = Infinity
  for (const other of others) least = Math.min(least, deltaE(colour, other, 2))
  return least
}

/** How far every colour the shopper shows must stay from the product's (CIEDE2000, kL = 2), lit or not. */
export const MIN_SEPARATION = 20

function fabric(rng: Rng, palette: readonly Rgb[], fits: (c: Rgb) => boolean, patterned: number): Fabric {
  const choose = (): Rgb => {
    for (let i = 0; i < 40; i++) {
      const c = rng.pick(palette)
      if (fits(c)) return c
    }
    for (let i = 0; i < 40; i++) {
      const c = rng.pick(CLOTHES)
      if (fits(c)) return c
    }
    // Nothing in the palettes fits a product this odd: any colour far from it.
    for (;;) {
      const c: Rgb = [rng.int(0, 255), rng.int(0, 255), rng.int(0, 255)]
      if (fits(c)) return c
    }
  }
  const base = choose()
  const pattern: Pattern = rng.chance(patterned) ? rng.pick(['stripes', 'check', 'dots'] as const) : 'plain'
  let second = base
  if (pattern !== 'plain') {
    for (let i = 0; i < 20 && deltaE(second, base, 2) < 15; i++) second = choose()
  }
  return { base, second, pattern, period: rng.between(0.018, 0.05) }
}

/**
 * An outfit whose every colour, as the scene's `light` shows it, stays MIN_SEPARATION from the product's colours
 * (`avoid`: drawn and lit, the two a result may show).
 */
export function makeOutfit(rng: Rng, avoid: readonly Rgb[], light: (c: Rgb) => Rgb, productIsLight: boolean): Outfit {
  const fits = (c: Rgb) => separation(light(c), avoid) >= MIN_SEPARATION
  const lightOnLight = productIsLight && rng.chance(0.35)
  const top = fabric(rng, lightOnLight ? LIGHTS : CLOTHES, fits, 0.4)
  const bottom = fabric(rng, CLOTHES, fits, 0.12)
  const bottomKind = rng.weighted({ trousers: 0.34, jeans: 0.2, skirt: 0.18, shorts: 0.1, leggings: 0.18 })
  return {
    top,
    sleeves: rng.weighted({ none: 0.2, short: 0.45, long: 0.35 }),
    bottom,
    bottomKind,
    skirtHem: rng.between(0.62, 0.9),
    shoes: fabric(rng, CLOTHES, fits, 0).base,
    lightOnLight,
  }
}

/** A fabric's flat colour at a pixel (no light): stripes run across, checks and dots on a square grid. */
export function fabricColour(f: Fabric, H: number): (x: number, y: number) => Rgb {
  const p = Math.max(3, f.period * H)
  switch (f.pattern) {
    case 'stripes':
      return (_x, y) => ((y / p) % 1 < 0.5 ? f.base : f.second)
    case 'check':
      return (x, y) => ((Math.floor(x / p) + Math.floor(y / p)) & 1 ? f.second : f.base)
    case 'dots':
      return (x, y) => {
        const u = (x / p) % 1
        const v = (y / p) % 1
        return (u - 0.5) ** 2 + (v - 0.5) ** 2 < 0.07 ? f.second : f.base
      }
    default:
      return () => f.base
  }
}

/** Every colour an outfit shows. */
export function outfitColours(o: Outfit): Rgb[] {
  return [o.top.base, o.top.second, o.bottom.base, o.bottom.second, o.shoes]
}
