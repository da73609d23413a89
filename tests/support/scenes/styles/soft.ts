/**
 * Shaded figures in soft light: every piece is lit as a cylinder (bright towards the key light, falling off to
 * its edges), a radial backdrop glow, a graded floor and a blurred contact shadow. Smooth, noiseless, JPEG.
 */
import { fillHair } from '../body.ts'
import { dressedBody, type DressedPiece } from '../dressed.ts'
import { fabricColour } from '../outfit.ts'
import { ellipse, mix, Picture, scaled, type Shape } from '../picture.ts'
import type { Figure } from '../body.ts'
import type { Outfit } from '../outfit.ts'
import type { Rng } from '../rng.ts'
import type { DrawnShopper, Light, Rgb, Style } from '../types.ts'

const BACKDROPS: [Rgb, Rgb][] = [
  [
    [236, 226, 214],
    [180, 166, 150],
  ],
  [
    [214, 226, 238],
    [130, 146, 170],
  ],
  [
    [240, 240, 236],
    [190, 190, 186],
  ],
  [
    [232, 214, 220],
    [160, 130, 140],
  ],
  [
    [110, 116, 126],
    [40, 44, 52],
  ],
]

export const soft: Style = (rng, figure) => {
  const ambient = rng.between(0.94, 1.04)
  const light = (c: Rgb) => scaled(c, ambient)
  return { light, draw: (outfit) => drawSoft(rng, figure, outfit, light) }
}

function drawSoft(rng: Rng, figure: Figure, outfit: Outfit, light: Light): DrawnShopper {
  const { width, height, H, at } = figure
  const pic = new Picture(width, height)
  const [inner, outer] = rng.pick(BACKDROPS)
  const glowX = figure.cx + rng.between(-0.3, 0.3) * H
  const glowY = at(rng.between(0.2, 0.5))
  const reach = Math.hypot(width, height) * rng.between(0.5, 0.8)
  const horizon = at(rng.between(0.78, 0.92))
  const floorTone = rng.between(0.82, 0.95)
  pic.fillAll((x, y) => {
    const t = Math.min(1, Math.hypot(x - glowX, y - glowY) / reach)
    const wall = mix(inner, outer, t * t)
    if (y < horizon) return wall
    // The floor darkens towards the camera and meets the wall in a soft line.
    const depth = (y - horizon) / Math.max(1, height - horizon)
    return scaled(wall, floorTone - 0.12 * depth + 0.05 * Math.exp(-((y - horizon) ** 2) / 20))
  })
  const shadow: Shape = { ...ellipse(figure.cx, figure.floorY, 0.2 * H, 0.03 * H) }
  pic.fill({ distance: (x, y) => shadow.distance(x, y) / (0.03 * H), bounds: shadow.bounds }, [30, 30, 30], { opacity: 0.4 })

  const keyLeft = rng.chance(0.5) ? 1 : -1
  const key = rng.between(0.08, 0.16)
  const falloff = rng.between(0.15, 0.28)
  const toLight = (c: Rgb) => light(c)
  const top = fabricColour(outfit.top, H)
  const bottom = fabricColour(outfit.bottom, H)
  const own = (piece: DressedPiece): ((x: number, y: number) => Rgb) => {
    switch (piece.covering) {
      case 'top':
        return top
      case 'bottom':
        return bottom
      case 'shoes':
        return () => outfit.shoes
      case 'hair':
        return () => figure.hair
      default:
        return () => figure.skin
    }
  }
  for (const piece of dressedBody(figure, outfit)) {
    const colour = own(piece)
    const [x0, , x1] = piece.shape.bounds
    const middle = (x0 + x1) / 2
    const half = Math.max(1, (x1 - x0) / 2)
    // A cylinder's light: the key side brighter, both edges falling off; 1 at the piece's middle.
    const paint = (x: number, y: number): Rgb => {
      const t = Math.max(-1, Math.min(1, (x - middle) / half))
      return scaled(toLight(colour(x, y)), 1 - key * keyLeft * t - falloff * t * t)
    }
    if (piece.hair) fillHair(pic, figure, [piece.shape], (x, y) => scaled(paint(x, y), 1 + 0.08 * Math.sin(x * 0.9 + y * 0.2)))
    else pic.fill(piece.shape, paint, { part: piece.part, partUnder: piece.partUnder })
  }
  const hx = figure.cx + Math.sin(figure.turn) * 0.02 * H
  for (const s of [-1, 1]) {
    pic.fill(ellipse(hx + s * 0.018 * H, at(0.066), 0.006 * H, 0.004 * H), [40, 30, 30])
    pic.fill(ellipse(hx + s * 0.026 * H, at(0.088), 0.01 * H, 0.006 * H), [220, 120, 120], { opacity: 0.25 })
  }
  pic.fill(ellipse(hx, at(0.102), 0.012 * H, 0.004 * H), scaled(figure.skin, 0.7))
  return {
    image: pic.toRgba(),
    parts: pic.parts,
    encoding: { format: 'jpeg', quality: Math.round(rng.between(85, 96)) },
    description: `soft-lit figure, key light from the ${keyLeft > 0 ? 'left' : 'right'}, radial backdrop`,
  }
}
