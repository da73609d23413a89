import type { RgbaImage } from '../../images/codecs/raster.ts'

/** Width of a cell of the colour grid (RGB levels): 64 cells a channel. */
const CELL = 4
const CELLS = 256 / CELL

export interface BorderColours {
  /** Per pixel, 0 where its colour lies within reach of a colour the border shows, Infinity where it does not. */
  distance: Float32Array
  /** Share of every other border pixel within reach of the colours of the rest: near 1 when the border's colours repeat. */
  repeat: number
}

/**
 * Which pixels are of a colour the photo's border shows, within `reach` RGB levels (cell to cell on a 4-level grid).
 * A textured surface (planks of wood, a coarse weave) is no smooth surface a fitted model follows, but every colour it
 * has shows somewhere along the border, while a garment of another colour lying on it shows there nowhere. `repeat`
 * tells such a surface, whose colours repeat along the border, from noise or a busy scene, where they do not.
 */
export function nearBorderColours(image: RgbaImage, reach: number): BorderColours {
  const { width, height, data } = image
  const cellOf = (p: number) => ((data[p] / CELL) | 0) * CELLS * CELLS + ((data[p + 1] / CELL) | 0) * CELLS + ((data[p + 2] / CELL) | 0)
  const depth = Math.max(1, Math.round(Math.min(width, height) * 0.01))
  const border: number[] = []
  for (let y = 0; y < height; y++) {
    const edgeRow = y < depth || y >= height - depth
    for (let x = 0; x < width; x++) if (edgeRow || x < depth || x >= width - depth) border.push(cellOf((y * width + x) * 4))
  }
  const ball = ballOffsets(reach / CELL)
  const half = cellsNear(
    border.filter((_, k) => k % 2 === 0),
    ball,
  )
  let repeated = 0
  for (let k = 1; k < border.length; k += 2) repeated += half[border[k]]
  const near = cellsNear(border, ball)
  const distance = new Float32Array(width * height)
  for (let i = 0; i < distance.length; i++) distance[i] = near[cellOf(i * 4)] ? 0 : Number.POSITIVE_INFINITY
  return { distance, repeat: repeated / Math.max(1, border.length >> 1) }
}

/**
 * A lookup of the colours within `reach` RGB levels of the given ones (RGB triples, any scale of 0..255 floats):
 * whether a colour is one a surface shows, on the same 4-level grid as nearBorderColours.
 */
export function coloursNear(rgb: ArrayLike<number>, reach: number): (r: number, g: number, b: number) => boolean {
  const cells: number[] = []
  for (let k = 0; k + 2 < rgb.length; k += 3) cells.push(cellOfRgb(rgb[k], rgb[k + 1], rgb[k + 2]))
  const near = cellsNear(cells, ballOffsets(reach / CELL))
  return (r, g, b) => near[cellOfRgb(r, g, b)] === 1
}

function cellOfRgb(r: number, g: number, b: number): number {
  const cell = (v: number) => Math.min(CELLS - 1, Math.max(0, (v / CELL) | 0))
  return cell(r) * CELLS * CELLS + cell(g) * CELLS + cell(b)
}

/** The grid offsets (r, g, b cells) within `radius` cells of a cell, as [dr, dg, db] triples. */
function ballOffsets(radius: number): number[] {
  const r = Math.floor(radius)
  const offsets: number[] = []
  for (let a = -r; a <= r; a++)
    for (let b = -r; b <= r; b++) for (let c = -r; c <= r; c++) if (a * a + b * b + c * c < radius * radius) offsets.push(a, b, c)
  return offsets
}

/** Marks every cell of the colour grid within the ball of one of the given cells. */
function cellsNear(cells: number[], ball: number[]): Uint8Array {
  const near = new Uint8Array(CELLS * CELLS * CELLS)
  const seen = new Uint8Array(CELLS * CELLS * CELLS)
  for (const cell of cells) {
    if (seen[cell]) continue
    seen[cell] = 1
    const r = Math.floor(cell / (CELLS * CELLS))
    const g = Math.floor(cell / CELLS) % CELLS
    const b = cell % CELLS
    for (let k = 0; k < ball.length; k += 3) {
      const nr = r + ball[k]
      const ng = g + ball[k + 1]
      const nb = b + ball[k + 2]
      if (nr < 0 || ng < 0 || nb < 0 || nr >= CELLS || ng >= CELLS || nb >= CELLS) continue
      near[nr * CELLS * CELLS + ng * CELLS + nb] = 1
    }
  }
  return near
}
