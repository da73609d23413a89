/**
 * Flat, vector-like illustration: solid fills with hard or lightly smoothed edges, a dark outline round every
 * piece, one flat shadow tone on the side away from the light, a wall and a floor as two flat bands.
 */
import { fillHair } from '../body.ts'
import { dressedBody, type DressedPiece } from '../dressed.ts'
import { fabricColour } from '../outfit.ts'
import { ellipse, Picture, rect, scaled, type Shape } from '../picture.ts'
import type { Rgb, Style } from '../types.ts'

const WALLS: Rgb[] = [
  [250, 232, 208],
  [204, 228, 236],
  [236, 236, 236],
  [214, 204, 236],
  [248, 248, 248],
  [180, 206, 190],
  [70, 80, 104],
]
const FLOORS: Rgb[] = [
  [196, 160, 120],
  [150, 150, 160],
  [230, 222, 206],
  [96, 84, 80],
  [120, 150, 180],
]

const outlined = (shape: Shape, width: number): Shape => ({
  distance: (x, y) => shape.distance(x, y) - width,
  bounds: [shape.bounds[0] - width, shape.bounds[1] - width, shape.bounds[2] + width, shape.bounds[3] + width],
})

export const flat: Style = (rng, figure) => ({
  // Flat colour carries no light: a fabric is its own colour everywhere but in the shadow tone.
  light: (c) => c,

  draw(outfit) {
    const { width, height, H, at } = figure
    const pic = new Picture(width, height)
    const hard = rng.chance(0.5)
    const wall = rng.pick(WALLS)
    const floor = rng.pick(FLOORS)
    const horizon = at(rng.between(0.7, 0.9))
    pic.fillAll((_x, y) => (y < horizon ? wall : floor))
    const decoration = rng.pick(['none', 'rug', 'frame', 'plant'] as const)
    if (decoration === 'rug') pic.fill(ellipse(figure.cx, figure.floorY, 0.32 * H, 0.04 * H), rng.pick(FLOORS), { hard })
    if (decoration === 'frame') {
      const side = figure.cx > width / 2 ? 0.12 : 0.88
      pic.fill(rect(width * side - 0.08 * H, at(0.1), width * side + 0.08 * H, at(0.3)), [60, 60, 64], { hard })
      pic.fill(rect(width * side - 0.07 * H, at(0.11), width * side + 0.07 * H, at(0.29)), rng.pick(WALLS), { hard })
    }
    if (decoration === 'plant') {
      const px = figure.cx > width / 2 ? width * 0.1 : width * 0.9
      pic.fill(rect(px - 0.04 * H, at(0.85), px + 0.04 * H, at(0.98)), [176, 96, 60], { hard })
      for (let i = 0; i < 4; i++)
        pic.fill(ellipse(px + (i - 1.5) * 0.03 * H, at(0.78 - 0.03 * (i % 2)), 0.03 * H, 0.07 * H), [60, 130, 70], { hard })
    }
    // A flat shadow under the feet.
    pic.fill(ellipse(figure.cx, figure.floorY - 0.005 * H, 0.15 * H, 0.014 * H), scaled(floor, 0.8), { hard })

    const ink: Rgb = rng.pick([
      [30, 28, 34],
      [70, 50, 40],
    ] as Rgb[])
    const stroke = rng.chance(0.65) ? Math.max(1, 0.004 * H) : 0
    const lightFromLeft = rng.chance(0.5)
    const shadowTone = rng.between(0.78, 0.88)
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
      const band = (x1 - x0) * 0.22
      // Cel shading: one band of the shadow tone along the side away from the light.
      const paint = (x: number, y: number): Rgb => {
        const away = lightFromLeft ? x > middle + band : x < middle - band
        return away ? scaled(own(x, y), shadowTone) : own(x, y)
      }
      if (stroke) pic.fill(outlined(piece.shape, stroke), ink, { hard })
      if (piece.hair) fillHair(pic, figure, [piece.shape], paint, { hard })
      else pic.fill(piece.shape, paint, { part: piece.part, partUnder: piece.partUnder, hard })
    }
    // Face: two dots and a line.
    const hx = figure.cx + Math.sin(figure.turn) * 0.02 * H
    for (const s of [-1, 1]) pic.fill(ellipse(hx + s * 0.017 * H, at(0.068), 0.005 * H, 0.005 * H), ink, { hard })
    pic.fill(rect(hx - 0.012 * H, at(0.1), hx + 0.012 * H, at(0.1) + Math.max(1, 0.003 * H)), [150, 60, 60], { hard })
    const png = rng.chance(0.6)
    return {
      image: pic.toRgba(),
      parts: pic.parts,
      encoding: { format: png ? 'png' : 'jpeg', quality: png ? 100 : Math.round(rng.between(85, 95)) },
      description: `flat ${hard ? 'hard-edged' : 'smoothed'} illustration${stroke ? ' with outlines' : ''}, ${decoration}`,
    }
  },
})
