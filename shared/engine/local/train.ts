import type { TrainSpec } from '../types.ts'
import type { RgbaImage } from '../../images/codecs/raster.ts'
import type { Placement } from './fit.ts'
import type { GarmentCutout } from './garment.ts'

/** Where the wearer stands in output pixels: the train starts at the ankles and lies on the floor. */
export interface Footing {
  ankleY: number
  floorY: number
  figureHeight: number
}

/** How far above the hem the train starts, so it grows out of the skirt instead of being glued under it. */
const OVERLAP = 0.02
/** Share of the train's length over which its far end rounds off. */
const ROUNDED_END = 0.35
/** The train's half-width at its widest is at least this share of the wearer's height. */
const MIN_FAR_HALF = 0.17

/**
 * Extends a floor-length skirt into a train: from the hem, fabric fans out on the floor past the feet, to
 * `spread` times the hem width and `length` of the wearer's height beyond the floor line. The fabric is the
 * garment's own hem, sampled across the fan, shaded darker towards the edges and the far end as cloth lying
 * on a floor is. A hem that stops above the ankles (a short dress, a top) has nothing to extend: the image is
 * returned as it was. Draws in place.
 */
export function renderTrain(image: RgbaImage, garment: GarmentCutout, placement: Placement, footing: Footing, train: TrainSpec): void {
  const { width, height, data } = image
  const rows = placement.bottom - placement.top
  if (train.length <= 0 || rows < 2) return
  const H = footing.figureHeight
  const hemY = placement.bottom - 1
  if (hemY < footing.ankleY - 0.01 * H) return

  // The widest of the skirt's last rows: a hem drawn rounded (a train photographed spread) narrows at the end.
  let hemLeft = Infinity
  let hemRight = -Infinity
  for (let i = Math.max(0, Math.floor(rows * 0.92)); i < rows; i++) {
    hemLeft = Math.min(hemLeft, placement.outputX[i * 4])
    hemRight = Math.max(hemRight, placement.outputX[i * 4 + 3])
  }
  const hemHalf = (hemRight - hemLeft) / 2
  if (hemHalf < 1) return
  const centre = (hemLeft + hemRight) / 2
  const startY = Math.min(hemY, footing.ankleY) - OVERLAP * H
  const endY = footing.floorY + train.length * H
  const span = endY - startY
  const hemTexture = hemBand(garment)

  // Fabric lying on the floor spreads wider than any hem hangs: even a sheath's train fans out.
  const farHalf = Math.max(hemHalf * Math.max(1, train.spread), MIN_FAR_HALF * H)
  for (let y = Math.max(0, Math.floor(startY)); y < Math.min(height, Math.ceil(endY)); y++) {
    const t = (y + 0.5 - startY) / span
    let half = hemHalf + (farHalf - hemHalf) * Math.sqrt(t)
    if (t > 1 - ROUNDED_END) {
      const u = (t - (1 - ROUNDED_END)) / ROUNDED_END
      half *= Math.sqrt(Math.max(0, 1 - u * u))
    }
    if (half < 0.5) continue
    // Rows inside the skirt blend in gradually so the seam between skirt and train is invisible.
    const fadeIn = Math.min(1, (y + 0.5 - startY) / (OVERLAP * H))
    const depth = 1 - 0.08 * t
    const from = Math.max(0, Math.ceil(centre - half - 0.5))
    const to = Math.min(width, Math.ceil(centre + half - 0.5))
    for (let x = from; x < to; x++) {
      const u = (x + 0.5 - centre) / half
      const edge = Math.min(1, (half - Math.abs(x + 0.5 - centre)) / 1.5)
      const alpha = edge * fadeIn
      if (alpha <= 0) continue
      const folds = 1 + 0.05 * Math.sin(u * Math.PI * 4.5 + t * 3)
      const light = depth * (1 - 0.1 * u * u) * folds
      const colour = hemTexture.at(u, t)
      const o = (y * width + x) * 4
      for (let c = 0; c < 3; c++) {
        const v = data[o + c] * (1 - alpha) + colour[c] * light * alpha
        data[o + c] = v > 255 ? 255 : v
      }
    }
  }
}

/** The garment's lowest rows, as colours across the hem; the fan repeats them down its length for texture. */
function hemBand(garment: GarmentCutout): { at(u: number, t: number): [number, number, number] } {
  const { width, height, data } = garment.image
  const bandRows = Math.max(1, Math.round(height * 0.08))
  const samples = 64
  const band = new Float32Array(bandRows * samples * 3)
  const opaque = new Uint8Array(bandRows * samples)
  const mean = [0, 0, 0]
  let count = 0
  for (let r = 0; r < bandRows; r++) {
    const y = Math.max(0, height - 1 - Math.round(height * 0.02) - r)
    for (let s = 0; s < samples; s++) {
      const gx = Math.min(
        width - 1,
        Math.max(0, Math.round(garment.left[y] + ((s + 0.5) / samples) * (garment.right[y] - garment.left[y]))),
      )
      const p = (y * width + gx) * 4
      const i = r * samples + s
      band.set([data[p], data[p + 1], data[p + 2]], i * 3)
      if (data[p + 3] < 128) continue
      opaque[i] = 1
      for (let c = 0; c < 3; c++) mean[c] += data[p + c]
      count++
    }
  }
  // Transparent samples (a ragged hem edge) take the band's mean colour instead of the backdrop's.
  for (let i = 0; i < opaque.length; i++) {
    if (!opaque[i]) for (let c = 0; c < 3; c++) band[i * 3 + c] = count ? mean[c] / count : 128
  }
  return {
    at(u, t) {
      const s = Math.min(samples - 1, Math.max(0, Math.floor(((u + 1) / 2) * samples)))
      const r = Math.floor(t * 3 * bandRows) % bandRows
      const i = (r * samples + s) * 3
      return [band[i], band[i + 1], band[i + 2]]
    },
  }
}
