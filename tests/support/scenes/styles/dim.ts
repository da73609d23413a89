/**
 * Dim indoor light: a living room at night lit by one warm lamp, dark walls and a dark wooden floor, a sofa or a
 * cabinet behind, the lamp's pool of light on the wall, the image underexposed, warm, and noisy from a high ISO.
 */
import type { Figure } from '../body.ts'
import { fillHair } from '../body.ts'
import { dressedBody } from '../dressed.ts'
import { fabricColour, type Outfit } from '../outfit.ts'
import { capsule, ellipse, Picture, rect, scaled, union } from '../picture.ts'
import { valueNoise, type Rng } from '../rng.ts'
import type { DrawnShopper, Rgb, Style } from '../types.ts'

interface Lamp {
  x: number
  y: number
  reach: number
  gain: number
  tint: Rgb
}

export const dim: Style = (rng, figure) => {
  const side = rng.chance(0.5) ? -1 : 1
  const lamp: Lamp = {
    x: figure.cx + side * figure.H * rng.between(0.25, 0.5),
    y: figure.at(rng.between(0.2, 0.4)),
    reach: figure.H * rng.between(0.5, 0.9),
    gain: rng.between(0.38, 0.62),
    tint: [1, rng.between(0.8, 0.9), rng.between(0.58, 0.72)],
  }
  const at = lightAt(lamp)
  const torso = at(figure.cx, figure.at(0.3))
  return {
    light: (c) => [c[0] * torso * lamp.tint[0], c[1] * torso * lamp.tint[1], c[2] * torso * lamp.tint[2]],
    draw: (outfit) => drawDim(rng, figure, outfit, lamp),
  }
}

/** How much of the scene's light reaches a point: a floor of ambient light, more near the lamp. */
function lightAt(lamp: Lamp): (x: number, y: number) => number {
  return (x, y) => lamp.gain * (0.7 + 0.5 * Math.exp(-((x - lamp.x) ** 2 + (y - lamp.y) ** 2) / (2 * lamp.reach ** 2)))
}

function drawDim(rng: Rng, figure: Figure, outfit: Outfit, lamp: Lamp): DrawnShopper {
  const { width, height, H, at } = figure
  const pic = new Picture(width, height)
  const wall: Rgb = rng.pick([
    [150, 120, 96],
    [110, 110, 118],
    [170, 150, 120],
    [96, 104, 90],
  ] as Rgb[])
  const floor: Rgb = rng.pick([
    [96, 62, 40],
    [70, 50, 40],
    [120, 96, 70],
  ] as Rgb[])
  const grainOf = valueNoise(rng.fork(1), 5)
  const horizon = at(rng.between(0.74, 0.9))
  pic.fillAll((x, y) => (y < horizon ? scaled(wall, 0.96 + 0.04 * grainOf(x, y)) : scaled(floor, 0.9 + 0.15 * grainOf(x * 0.3, y * 4))))
  // Furniture behind the shopper, on the side away from the lamp.
  const away = lamp.x < figure.cx ? 1 : -1
  const fx = figure.cx + away * H * rng.between(0.2, 0.45)
  const furniture = rng.pick(['sofa', 'cabinet', 'none'] as const)
  const wood: Rgb = [80, 56, 40]
  if (furniture === 'sofa') {
    const fabric: Rgb = rng.pick([
      [90, 70, 60],
      [60, 70, 90],
      [120, 110, 100],
    ] as Rgb[])
    pic.fill(
      union(
        rect(fx - 0.35 * H, at(0.62), fx + 0.35 * H, horizon + 0.02 * H),
        capsule([fx - 0.35 * H, at(0.66)], 0.05 * H, [fx + 0.35 * H, at(0.66)], 0.05 * H),
      ),
      fabric,
    )
  } else if (furniture === 'cabinet') {
    pic.fill(rect(fx - 0.16 * H, at(0.5), fx + 0.16 * H, horizon + 0.01 * H), wood)
    pic.fill(rect(fx - 0.15 * H, at(0.6), fx + 0.15 * H, at(0.605)), scaled(wood, 0.6))
  }
  // The lamp itself: a stand and a glowing shade.
  pic.fill(capsule([lamp.x, lamp.y], 0.005 * H, [lamp.x, horizon + 0.03 * H], 0.005 * H), [40, 36, 32])
  pic.fill(ellipse(lamp.x, lamp.y - 0.02 * H, 0.05 * H, 0.035 * H), [255, 240, 200])

  const top = fabricColour(outfit.top, H)
  const bottom = fabricColour(outfit.bottom, H)
  const towardsLamp = Math.sign(lamp.x - figure.cx)
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
    // The side facing the lamp catches it; the far side falls into shadow. The middle is as lit as the room there.
    const paint = (x: number, y: number) => scaled(own(x, y), 1 + 0.16 * towardsLamp * ((x - middle) / half))
    if (piece.hair) fillHair(pic, figure, [piece.shape], paint)
    else pic.fill(piece.shape, paint, { part: piece.part, partUnder: piece.partUnder })
  }
  const hx = figure.cx + Math.sin(figure.turn) * 0.02 * H
  for (const s of [-1, 1]) pic.fill(ellipse(hx + s * 0.018 * H, at(0.067), 0.006 * H, 0.004 * H), [30, 24, 22])

  // Everything under the lamp's warm light, underexposed, then the high-ISO noise of a phone in a dark room.
  const light = lightAt(lamp)
  const noise = rng.between(4, 10)
  const grain = rng.fork(2)
  pic.adjust((x, y, c) => {
    const g = light(x, y)
    const n = grain.gauss() * noise
    return [
      c[0] * g * lamp.tint[0] + n + grain.gauss() * 2,
      c[1] * g * lamp.tint[1] + n + grain.gauss() * 2,
      c[2] * g * lamp.tint[2] + n + grain.gauss() * 2,
    ]
  })
  // The lamp's shade glows whatever the exposure.
  pic.fill(ellipse(lamp.x, lamp.y - 0.02 * H, 0.045 * H, 0.03 * H), [255, 236, 190])
  return {
    image: pic.toRgba(),
    parts: pic.parts,
    encoding: { format: 'jpeg', quality: Math.round(rng.between(60, 82)) },
    description: `dim room lit by a lamp (gain ${lamp.gain.toFixed(2)}), ${furniture}, noise ${noise.toFixed(1)}`,
  }
}
