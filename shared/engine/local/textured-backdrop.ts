import type { RgbaImage } from '../../images/codecs/raster.ts'

/** Width of a cell of the colour grid (RGB levels): 64 cells a channel. */
const CELL = 4
const CELLS = 256 / CELL

/**
 * Per pixel, the RGB distance from the nearest colour the photo's border shows. A textured surface (planks of wood,
 * woven linen) is no smooth surface a fitted model follows, but every colour it has shows somewhere along the border,
 * while a garment of another colour lying on it shows there nowhere. Distances are in RGB levels, to the nearest
 * cell of a 4-level grid (an exact distance transform over the grid of border colours). `spread`: how far every
 * other border pixel lies from the colours of the rest (95th percentile): small when the border's colours repeat,
 * as a surface's do, large when they do not (noise, a busy scene), where the distance tells nothing.
 */
export function borderColourDistance(image: RgbaImage): { distance: Float32Array; spread: number } {
  const { width, height, data } = image
  const cellOf = (p: number) => ((data[p] / CELL) | 0) * CELLS * CELLS + ((data[p + 1] / CELL) | 0) * CELLS + ((data[p + 2] / CELL) | 0)
  const depth = Math.max(1, Math.round(Math.min(width, height) * 0.01))
  const border: number[] = []
  for (let y = 0; y < height; y++) {
    const edgeRow = y < depth || y >= height - depth
    for (let x = 0; x < width; x++) if (edgeRow || x < depth || x >= width - depth) border.push(cellOf((y * width + x) * 4))
  }
  const half = distanceGrid(border.filter((_, k) => k % 2 === 0))
  const rest = border.filter((_, k) => k % 2 === 1).map((cell) => half[cell])
  rest.sort((a, b) => a - b)
  const spread = Math.sqrt(rest[Math.floor(rest.length * 0.95)] ?? 0) * CELL
  const grid = distanceGrid(border)
  const distance = new Float32Array(width * height)
  for (let i = 0; i < distance.length; i++) distance[i] = Math.sqrt(grid[cellOf(i * 4)]) * CELL
  return { distance, spread }
}

/** Squared distance (in cells) from every cell of the colour grid to the nearest of the given cells. */
function distanceGrid(cells: number[]): Float32Array {
  const grid = new Float32Array(CELLS * CELLS * CELLS).fill(3 * CELLS * CELLS)
  for (const cell of cells) grid[cell] = 0
  for (let axis = 0; axis < 3; axis++) transformLines(grid, axis)
  return grid
}

/** One pass of the squared Euclidean distance transform (Felzenszwalb and Huttenlocher) along every line of one axis. */
function transformLines(grid: Float32Array, axis: number): void {
  const stride = axis === 0 ? CELLS * CELLS : axis === 1 ? CELLS : 1
  const f = new Float32Array(CELLS)
  const d = new Float32Array(CELLS)
  const v = new Int32Array(CELLS)
  const z = new Float32Array(CELLS + 1)
  for (let a = 0; a < CELLS; a++) {
    for (let b = 0; b < CELLS; b++) {
      // The line's first cell: the two other axes fixed at a and b.
      const base = axis === 0 ? a * CELLS + b : axis === 1 ? a * CELLS * CELLS + b : a * CELLS * CELLS + b * CELLS
      for (let q = 0; q < CELLS; q++) f[q] = grid[base + q * stride]
      let k = 0
      v[0] = 0
      z[0] = -Infinity
      z[1] = Infinity
      for (let q = 1; q < CELLS; q++) {
        let s = (f[q] + q * q - (f[v[k]] + v[k] * v[k])) / (2 * q - 2 * v[k])
        while (s <= z[k]) {
          k--
          s = (f[q] + q * q - (f[v[k]] + v[k] * v[k])) / (2 * q - 2 * v[k])
        }
        k++
        v[k] = q
        z[k] = s
        z[k + 1] = Infinity
      }
      k = 0
      for (let q = 0; q < CELLS; q++) {
        while (z[k + 1] < q) k++
        d[q] = (q - v[k]) ** 2 + f[v[k]]
      }
      for (let q = 0; q < CELLS; q++) grid[base + q * stride] = d[q]
    }
  }
}
