/**
 * Photo-like: a room with texture everywhere (plaster, brick or papered walls; planks, marble, tiles or carpet in
 * perspective; a skirting board), woven fabric and skin grain, frayed hair, folds, a cast shadow, then a camera's
 * vignette, sensor noise with colour speckle and a low JPEG quality.
 */
import { fillHair } from '../body.ts'
import { dressedBody, type DressedPiece } from '../dressed.ts'
import { fabricColour } from '../outfit.ts'
import { ellipse, mix, Picture, roughen, scaled } from '../picture.ts'
import { valueNoise } from '../rng.ts'
import type { Figure } from '../body.ts'
import type { Outfit } from '../outfit.ts'
import type { Rng } from '../rng.ts'
import type { DrawnShopper, Rgb, Style } from '../types.ts'

const WALLS: Rgb[] = [
  [226, 220, 206],
  [196, 200, 202],
  [212, 190, 168],
  [168, 178, 160],
  [236, 234, 228],
  [140, 120, 108],
]

export const photo: Style = (rng, figure) => {
  const exposure = rng.between(0.88, 1.06)
  const vignette = rng.between(0, 0.3)
  const dx = figure.cx / figure.width - 0.5
  const dy = figure.at(0.3) / figure.height - 0.5
  const atTorso = exposure * (1 - vignette * (dx * dx + dy * dy) * 2)
  return { light: (c) => scaled(c, atTorso), draw: (outfit) => drawPhoto(rng, figure, outfit, exposure, vignette) }
}

function drawPhoto(rng: Rng, figure: Figure, outfit: Outfit, exposure: number, vignette: number): DrawnShopper {
  const { width, height, H, at } = figure
  const pic = new Picture(width, height)
  const wallKind = rng.pick(['plaster', 'brick', 'paper'] as const)
  const floorKind = rng.pick(['planks', 'marble', 'tiles', 'carpet'] as const)
  const wall = rng.pick(WALLS)
  const floor: Rgb = rng.pick([
    [176, 134, 96],
    [120, 86, 62],
    [222, 218, 212],
    [150, 150, 148],
    [96, 88, 84],
  ] as Rgb[])
  const coarse = valueNoise(rng.fork(1), Math.max(6, width / 30))
  const fine = valueNoise(rng.fork(2), 1.6)
  const horizon = at(rng.between(0.68, 0.9))
  const vanishX = figure.cx + rng.between(-0.4, 0.4) * width
  const vanishY = horizon - H * rng.between(0.6, 1.6)
  const brick = H * rng.between(0.025, 0.045)
  const plank = H * rng.between(0.04, 0.08)
  const tile = H * rng.between(0.07, 0.14)
  const skirting = rng.chance(0.6) ? H * rng.between(0.012, 0.03) : 0
  const wallAt = (x: number, y: number): Rgb => {
    if (wallKind === 'brick') {
      const row = Math.floor(y / brick)
      const u = (x / (brick * 2.2) + (row & 1) * 0.5) % 1
      const mortar = (y / brick) % 1 < 0.12 || u < 0.05
      return mortar
        ? scaled(wall, 1.08)
        : scaled(wall, 0.82 + 0.1 * Math.sin(row * 7.3 + Math.floor(x / (brick * 2.2)) * 3.1) + 0.05 * fine(x, y))
    }
    if (wallKind === 'paper') return scaled(wall, 0.96 + 0.05 * Math.sin(x * 0.25) * Math.sin(y * 0.12) + 0.02 * fine(x, y))
    return scaled(wall, 0.95 + 0.05 * coarse(x, y) + 0.02 * fine(x, y))
  }
  const floorAt = (x: number, y: number): Rgb => {
    const depth = Math.max(1, y - vanishY)
    const u = ((x - vanishX) / depth) * (horizon - vanishY)
    const v = Math.log(depth) * 14
    switch (floorKind) {
      case 'planks': {
        const edge = (u / plank) % 1 < 0.04 || (u / plank) % 1 > 0.98 ? 0.72 : 1
        return scaled(floor, edge * (0.9 + 0.08 * Math.sin(Math.floor(u / plank) * 12.7) + 0.06 * coarse(u * 3, v * 8)))
      }
      case 'marble': {
        const vein = Math.abs(Math.sin((x + y * 0.7) * 0.05 + 4 * coarse(x, y)))
        return vein < 0.07 ? scaled([236, 234, 230], 0.7 + vein * 3) : scaled([238, 236, 232], 0.97 + 0.03 * fine(x, y))
      }
      case 'tiles':
        return Math.abs(u / tile - Math.round(u / tile)) < 0.03 || Math.abs(v / 1.4 - Math.round(v / 1.4)) < 0.05
          ? [200, 198, 194]
          : scaled(floor, 0.96 + 0.04 * fine(x, y))
      default:
        return scaled(floor, 0.88 + 0.12 * fine(x, y) + 0.05 * coarse(x, y))
    }
  }
  pic.fillAll((x, y) => (y >= horizon ? floorAt(x, y) : skirting && y >= horizon - skirting ? [240, 238, 234] : wallAt(x, y)))
  // Contact shadow and a longer shadow cast to one side on the floor.
  const castSide = rng.chance(0.5) ? 1 : -1
  const cast = ellipse(figure.cx + castSide * 0.18 * H, figure.floorY - 0.004 * H, 0.24 * H, 0.018 * H)
  pic.fill({ distance: (x, y) => cast.distance(x, y) / (0.02 * H), bounds: cast.bounds }, [20, 20, 24], { opacity: 0.35 })
  const contact = ellipse(figure.cx, figure.floorY, 0.14 * H, 0.016 * H)
  pic.fill({ distance: (x, y) => contact.distance(x, y) / (0.012 * H), bounds: contact.bounds }, [10, 10, 12], { opacity: 0.5 })

  const weave = (x: number, y: number) => 0.04 * Math.sin(x * 2.1) * Math.sin(y * 2.3) + 0.04 * fine(x, y)
  const folds = (x: number, y: number) => 0.07 * Math.sin((x - figure.cx) / (0.02 * H) + 3 * coarse(x, y))
  const top = fabricColour(outfit.top, H)
  const bottom = fabricColour(outfit.bottom, H)
  const surface = (piece: DressedPiece): ((x: number, y: number) => Rgb) => {
    switch (piece.covering) {
      case 'top':
        return (x, y) => scaled(top(x, y), 1 + weave(x, y) + folds(x, y))
      case 'bottom':
        return (x, y) => scaled(bottom(x, y), 1 + weave(x, y) + 0.6 * folds(x, y))
      case 'shoes':
        return (x, y) => scaled(outfit.shoes, 1 + 0.1 * fine(x, y))
      case 'hair':
        return (x, y) => scaled(figure.hair, 0.85 + 0.3 * Math.abs(Math.sin(x * 1.3 + 2 * coarse(x, y))))
      default:
        return (x, y) => scaled(figure.skin, 1 + 0.025 * fine(x, y) + 0.03 * coarse(x, y))
    }
  }
  const side = rng.between(-0.12, 0.12)
  for (const piece of dressedBody(figure, outfit)) {
    const paint = surface(piece)
    const lit = (x: number, y: number) => scaled(paint(x, y), 1 + side * ((x - figure.cx) / (0.2 * H)))
    if (piece.hair) fillHair(pic, figure, [roughen(piece.shape, fine, 1.5)], lit)
    else pic.fill(piece.shape, lit, { part: piece.part, partUnder: piece.partUnder })
  }
  const hx = figure.cx + Math.sin(figure.turn) * 0.02 * H
  for (const s of [-1, 1]) pic.fill(ellipse(hx + s * 0.018 * H, at(0.067), 0.006 * H, 0.0035 * H), [44, 34, 30])
  pic.fill(ellipse(hx, at(0.101), 0.011 * H, 0.0035 * H), mix(figure.skin, [150, 60, 60], 0.5))

  // The camera: exposure, vignetting, sensor noise (luma and a little chroma).
  const noise = rng.between(2, 7)
  const grain = rng.fork(3)
  pic.adjust((x, y, c) => {
    const dx = x / width - 0.5
    const dy = y / height - 0.5
    const gain = exposure * (1 - vignette * (dx * dx + dy * dy) * 2)
    const n = grain.gauss() * noise
    const speckle = (grain.next() - 0.5) * 4
    return [c[0] * gain + n + speckle, c[1] * gain + n, c[2] * gain + n - speckle]
  })
  return {
    image: pic.toRgba(),
    parts: pic.parts,
    encoding: { format: 'jpeg', quality: Math.round(rng.between(55, 85)) },
    description: `photo-like room: ${wallKind} wall, ${floorKind} floor, noise ${noise.toFixed(1)}`,
  }
}
