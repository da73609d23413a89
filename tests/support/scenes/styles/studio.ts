/**
 * High-key studio: a white seamless sweep lit almost to clipping, a big soft key and fill so shadows are faint,
 * the whole frame pushed bright (highlights clip to white), a soft shadow pooled under the feet. Light clothes
 * on a white background are the hard case here.
 */
import type { Figure } from '../body.ts'
import { fillHair } from '../body.ts'
import { dressedBody, type DressedPiece } from '../dressed.ts'
import { fabricColour, type Outfit } from '../outfit.ts'
import { ellipse, mix, Picture, scaled } from '../picture.ts'
import type { Rng } from '../rng.ts'
import type { DrawnShopper, Rgb, Style } from '../types.ts'

export const studio: Style = (rng, figure) => {
  // The exposure push: a gain and a lift, clipped at white.
  const gain = rng.between(1.04, 1.16)
  const lift = rng.between(4, 16)
  const push = (c: Rgb): Rgb => [Math.min(255, c[0] * gain + lift), Math.min(255, c[1] * gain + lift), Math.min(255, c[2] * gain + lift)]
  return { light: push, draw: (outfit) => drawStudio(rng, figure, outfit, push) }
}

function drawStudio(rng: Rng, figure: Figure, outfit: Outfit, push: (c: Rgb) => Rgb): DrawnShopper {
  const { width, height, H, at } = figure
  const pic = new Picture(width, height)
  const paper = rng.between(238, 250)
  const tint = rng.pick([
    [0, 0, 0],
    [2, 0, -3],
    [-2, 0, 3],
  ] as Rgb[])
  // The sweep: flat paper behind, curving into the floor, a little darker where it turns.
  const curve = at(rng.between(0.8, 0.95))
  pic.fillAll((x, y) => {
    const bend = Math.exp(-(((y - curve) / (0.08 * H)) ** 2)) * 0.05
    const side = 0.03 * ((x - figure.cx) / width) ** 2
    const v = paper * (1 - bend - side)
    return [v + tint[0], v + tint[1], v + tint[2]]
  })
  const pool = ellipse(figure.cx, figure.floorY, 0.26 * H, 0.035 * H)
  pic.fill({ distance: (x, y) => pool.distance(x, y) / (0.035 * H), bounds: pool.bounds }, [paper * 0.7, paper * 0.7, paper * 0.72], {
    opacity: rng.between(0.35, 0.7),
  })
  const wrap = rng.between(0.04, 0.1)
  const top = fabricColour(outfit.top, H)
  const bottom = fabricColour(outfit.bottom, H)
  const colourOf = (piece: DressedPiece): ((x: number, y: number) => Rgb) => {
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
    const own = colourOf(piece)
    const [x0, , x1] = piece.shape.bounds
    const middle = (x0 + x1) / 2
    const half = Math.max(1, (x1 - x0) / 2)
    // Light wraps round from both sides: only the very edges darken.
    const paint = (x: number, y: number): Rgb => scaled(own(x, y), 1 - wrap * Math.max(0, Math.abs((x - middle) / half) - 0.6) * 2.5)
    if (piece.hair) fillHair(pic, figure, [piece.shape], paint)
    else pic.fill(piece.shape, paint, { part: piece.part, partUnder: piece.partUnder })
  }
  const hx = figure.cx + Math.sin(figure.turn) * 0.02 * H
  for (const s of [-1, 1]) pic.fill(ellipse(hx + s * 0.018 * H, at(0.066), 0.0055 * H, 0.0035 * H), [60, 50, 46])
  pic.fill(ellipse(hx, at(0.101), 0.012 * H, 0.0035 * H), mix(figure.skin, [190, 90, 100], 0.5))
  // The figure is pushed bright like everything else; the paper clips to white where it was already near it.
  pic.adjust((_x, _y, c) => push(c))
  const png = rng.chance(0.2)
  return {
    image: pic.toRgba(),
    parts: pic.parts,
    encoding: { format: png ? 'png' : 'jpeg', quality: png ? 100 : Math.round(rng.between(86, 96)) },
    description: `high-key studio, paper ${paper.toFixed(0)}, exposure pushed`,
  }
}
