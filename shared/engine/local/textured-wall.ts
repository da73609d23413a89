import type { RgbaImage } from '../../images/codecs/raster.ts'
import { coloursNear } from './textured-backdrop.ts'

/** RGB levels within which a pixel is of a tone the wall shows along the frame's top and sides. */
const WALL_REACH = 12
/** Share of the wall's rows (above the floor) whose texture a row model cannot follow, for the wall to be textured. */
const TEXTURED_ROWS = 0.5
/**
 * Share of the tones down the frame's sides that the top rows show too. Brick walls of the tuning scenes: 0.72 to 1;
 * a close crop whose figure reaches both sides (a checked shirt on a plain backdrop): 0.16 to 0.62.
 */
const SIDES_ON_TOP = 0.6
/**
 * Typical spread of luma (its standard deviation over a square 4 radii wide) along the top and sides, for the wall to
 * be textured. Brick walls of the tuning scenes: 9.7 to 18 levels; papered walls about 4; plain backdrops under 1.
 */
const WALL_TEXTURE = 8
/** Share of the wall's typical luma spread a pixel must have around it to be taken for wall: a smooth garment is not. */
const TEXTURE_SHARE = 0.5

/**
 * Clears, as wall, the pixels of a wall no row model follows (bricks of different tones with mortar between them),
 * and tells whether it did. Every tone such a wall has shows along the frame's top and sides above the floor, while a
 * figure standing in front of it shows there nowhere; a pixel of one of those tones, with the wall's texture around
 * it, is wall. Colours are averaged over a square of `radius` first, so mortar lines thinner than it, blended into the
 * bricks, do not stand for white. `blurred` is the photo's RGB blurred along rows by `radius`; `textured` marks the rows
 * whose texture passed the row model's cap; `distance` is set to 0 where a pixel is wall.
 */
export function clearWallColours(
  image: RgbaImage,
  blurred: Float32Array,
  radius: number,
  strip: number,
  floorFrom: number,
  textured: Uint8Array,
  distance: Float32Array,
): boolean {
  const { width, height } = image
  let texturedRows = 0
  for (let y = 0; y < floorFrom; y++) texturedRows += textured[y]
  if (texturedRows < TEXTURED_ROWS * floorFrom) return false
  const square = columnMean(blurred, width, height, 3, radius)
  const topRows = Math.max(2, Math.round(height * 0.03))
  const edge = (x: number, y: number) => y < topRows || x < strip || x >= width - strip
  const top: number[] = []
  const sides: number[] = []
  for (let y = 0; y < floorFrom; y++) {
    for (let x = 0; x < width; x++) {
      if (!edge(x, y)) continue
      const i = (y * width + x) * 3
      ;(y < topRows ? top : sides).push(square[i], square[i + 1], square[i + 2])
    }
  }
  const onTop = coloursNear(top, WALL_REACH)
  let agree = 0
  for (let k = 0; k < sides.length; k += 3) agree += onTop(sides[k], sides[k + 1], sides[k + 2]) ? 1 : 0
  if (3 * agree < SIDES_ON_TOP * sides.length) return false

  const texture = lumaSpread(image, 2 * radius)
  const edgeTexture: number[] = []
  for (let y = 0; y < floorFrom; y++) for (let x = 0; x < width; x++) if (edge(x, y)) edgeTexture.push(texture[y * width + x])
  edgeTexture.sort((a, b) => a - b)
  const typical = edgeTexture[edgeTexture.length >> 1] ?? 0
  if (typical < WALL_TEXTURE) return false
  const isWall = coloursNear(top.concat(sides), WALL_REACH)
  for (let i = 0; i < floorFrom * width; i++)
    if (texture[i] >= TEXTURE_SHARE * typical && isWall(square[i * 3], square[i * 3 + 1], square[i * 3 + 2])) distance[i] = 0
  return true
}

/** Per pixel, the standard deviation of luma over a (2r+1)² square: how much texture surrounds it. */
function lumaSpread({ width, height, data }: RgbaImage, r: number): Float32Array {
  const n = width * height
  const moments = new Float32Array(n * 2)
  for (let i = 0; i < n; i++) {
    const l = 0.299 * data[i * 4] + 0.587 * data[i * 4 + 1] + 0.114 * data[i * 4 + 2]
    moments[i * 2] = l
    moments[i * 2 + 1] = l * l
  }
  const mean = columnMean(rowMean(moments, width, height, 2, r), width, height, 2, r)
  const out = new Float32Array(n)
  for (let i = 0; i < n; i++) out[i] = Math.sqrt(Math.max(0, mean[i * 2 + 1] - mean[i * 2] * mean[i * 2]))
  return out
}

/** Mean of interleaved channels over a run of 2r+1 along rows, clipped at the edges. */
function rowMean(values: Float32Array, width: number, height: number, channels: number, r: number): Float32Array {
  const out = new Float32Array(values.length)
  for (let y = 0; y < height; y++) runMean(values, out, y * width * channels, channels, width, channels, r)
  return out
}

/** Mean of interleaved channels over a run of 2r+1 along columns, clipped at the edges. */
function columnMean(values: Float32Array, width: number, height: number, channels: number, r: number): Float32Array {
  const out = new Float32Array(values.length)
  for (let x = 0; x < width; x++) runMean(values, out, x * channels, width * channels, height, channels, r)
  return out
}

/** The running mean of `length` samples `stride` apart from `start`, each channel on its own. */
function runMean(values: Float32Array, out: Float32Array, start: number, stride: number, length: number, channels: number, r: number) {
  for (let c = 0; c < channels; c++) {
    const at = (k: number) => start + k * stride + c
    let sum = 0
    let count = 0
    for (let k = 0; k < Math.min(length, r); k++, count++) sum += values[at(k)]
    for (let k = 0; k < length; k++) {
      if (k + r < length) (sum += values[at(k + r)]), count++
      if (k - r - 1 >= 0) (sum -= values[at(k - r - 1)]), count--
      out[at(k)] = sum / count
    }
  }
}
