/**
 * Daylight from a window to one side (the held-out style): a bright window in the wall, cool light falling off
 * across the room, every piece of the figure lit hard on the window side and dark on the other, and the shopper's
 * shadow thrown across the floor away from the window.
 */
import type { Figure } from '../body.ts'
import { fillHair } from '../body.ts'
import { dressedBody } from '../dressed.ts'
import { fabricColour, type Outfit } from '../outfit.ts'
import { ellipse, mix, Picture, polygon, rect, scaled } from '../picture.ts'
import { valueNoise, type Rng } from '../rng.ts'
import type { DrawnShopper, Rgb, Style } from '../types.ts'

interface Daylight {
  /** -1: the window is on the left; +1 on the right. */
  side: number
  /** Light at the window's edge of the frame and at the far edge. */
  near: number
  far: number
  tint: Rgb
}

export const window: Style = (rng, figure) => {
  const day: Daylight = {
    side: rng.chance(0.5) ? -1 : 1,
    near: rng.between(1.02, 1.15),
    far: rng.between(0.45, 0.7),
    tint: [rng.between(0.9, 0.96), rng.between(0.97, 1), 1.04],
  }
  const torso = daylightAt(day, figure.width)(figure.cx)
  return {
    light: (c) => [c[0] * torso * day.tint[0], c[1] * torso * day.tint[1], c[2] * torso * day.tint[2]],
    draw: (outfit) => drawWindow(rng, figure, outfit, day),
  }
}

function daylightAt(day: Daylight, width: number): (x: number) => number {
  return (x) => {
    const fromWindow = day.side < 0 ? x / width : 1 - x / width
    return day.far + (day.near - day.far) * (1 - fromWindow) ** 1.5
  }
}

function drawWindow(rng: Rng, figure: Figure, outfit: Outfit, day: Daylight): DrawnShopper {
  const { width, height, H, at } = figure
  const pic = new Picture(width, height)
  const wall: Rgb = rng.pick([
    [232, 228, 220],
    [214, 206, 196],
    [200, 210, 214],
    [226, 218, 200],
  ] as Rgb[])
  const horizon = at(rng.between(0.72, 0.88))
  const tiles = rng.chance(0.5)
  const floor: Rgb = tiles ? [196, 190, 182] : [164, 124, 88]
  const tile = H * rng.between(0.06, 0.12)
  const texture = valueNoise(rng.fork(1), 4)
  pic.fillAll((x, y) => {
    if (y < horizon) return scaled(wall, 0.97 + 0.03 * texture(x, y))
    if (tiles) return x % tile < 1.5 || (y - horizon) % (tile * 0.5) < 1.2 ? [150, 146, 140] : floor
    return scaled(floor, 0.92 + 0.08 * Math.sin(Math.floor(x / (0.06 * H)) * 5.3) + 0.05 * texture(x * 0.2, y * 3))
  })
  // The window: a bright pane with glazing bars, near the edge of the frame on its side.
  const wx = day.side < 0 ? width * rng.between(0.02, 0.12) : width * rng.between(0.88, 0.98)
  const ww = Math.min(width * 0.16, 0.16 * H)
  const pane = rect(wx - ww / 2, at(0.08), wx + ww / 2, horizon - 0.12 * H)
  pic.fill(rect(wx - ww / 2 - 4, at(0.08) - 4, wx + ww / 2 + 4, horizon - 0.12 * H + 4), [245, 245, 242])
  pic.fill(pane, (_x, y) => mix([200, 226, 250], [245, 248, 252], (y - at(0.08)) / (0.5 * H)))
  pic.fill(rect(wx - 1.5, at(0.08), wx + 1.5, horizon - 0.12 * H), [240, 240, 236])
  // The shopper's shadow across the floor, away from the window.
  const away = -day.side
  const feet = figure.floorY
  pic.fill(
    polygon([
      [figure.cx - 0.08 * H, feet],
      [figure.cx + 0.08 * H, feet],
      [figure.cx + away * 0.7 * H + 0.05 * H, feet + 0.05 * H],
      [figure.cx + away * 0.7 * H - 0.05 * H, feet + 0.05 * H],
    ]),
    [30, 30, 40],
    { opacity: 0.35 },
  )

  const top = fabricColour(outfit.top, H)
  const bottom = fabricColour(outfit.bottom, H)
  for (const piece of dressedBody(figure, outfit)) {
    const own =
      piece.covering === 'top'
        ? top
        : piece.covering === 'bottom'
          ? bottom
          : () => (piece.covering === 'shoes' ? outfit.shoes : piece.covering === 'hair' ? figure.hair : figure.skin)
    const [x0, , x1] = piece.shape.bounds
    const middle = (x0 + x1) / 2
    const half = Math.max(1, (x1 - x0) / 2)
    // Hard side light: the half facing the window bright, the other half in its own shade, a soft terminator between.
    const paint = (x: number, y: number) => {
      const t = ((x - middle) / half) * day.side
      return scaled(own(x, y), 1 + 0.18 * Math.tanh(t * 3))
    }
    if (piece.hair) fillHair(pic, figure, [piece.shape], paint)
    else pic.fill(piece.shape, paint, { part: piece.part, partUnder: piece.partUnder })
  }
  const hx = figure.cx + Math.sin(figure.turn) * 0.02 * H
  for (const s of [-1, 1]) pic.fill(ellipse(hx + s * 0.018 * H, at(0.067), 0.0055 * H, 0.0035 * H), [40, 34, 32])

  const daylight = daylightAt(day, width)
  const noise = rng.between(1, 5)
  const grain = rng.fork(2)
  const [px0, py0, px1, py1] = pane.bounds
  const inPane = (x: number, y: number) => x >= px0 && x < px1 && y >= py0 && y < py1
  pic.adjust((x, y, c) => {
    // The pane is the light source itself: bright whatever the exposure.
    const g = inPane(x, y) ? 1.05 : daylight(x)
    const n = grain.gauss() * noise
    return [c[0] * g * day.tint[0] + n, c[1] * g * day.tint[1] + n, c[2] * g * day.tint[2] + n]
  })
  return {
    image: pic.toRgba(),
    parts: pic.parts,
    encoding: { format: 'jpeg', quality: Math.round(rng.between(70, 92)) },
    description: `window light from the ${day.side < 0 ? 'left' : 'right'} (${day.near.toFixed(2)} to ${day.far.toFixed(2)}), ${tiles ? 'tiled' : 'wooden'} floor`,
  }
}
