import type { RgbaImage } from '../../shared/images/codecs/raster.ts'

export type Rgb = [number, number, number]
export type Point = [number, number]

/** Signed distance (pixels, negative inside) of a shape, plus its bounding box for cheap rasterisation. */
export interface Shape {
  distance(x: number, y: number): number
  bounds: [number, number, number, number]
}

export function ellipse(cx: number, cy: number, rx: number, ry: number): Shape {
  return {
    distance: (x, y) => (Math.hypot((x - cx) / rx, (y - cy) / ry) - 1) * Math.min(rx, ry),
    bounds: [cx - rx - 1, cy - ry - 1, cx + rx + 1, cy + ry + 1],
  }
}

/** A limb: a segment whose radius changes linearly from ra at a to rb at b. */
export function capsule(a: Point, ra: number, b: Point, rb: number): Shape {
  const [ax, ay] = a
  const dx = b[0] - ax
  const dy = b[1] - ay
  const lengthSq = dx * dx + dy * dy || 1
  const r = Math.max(ra, rb)
  return {
    distance: (x, y) => {
      const t = Math.min(1, Math.max(0, ((x - ax) * dx + (y - ay) * dy) / lengthSq))
      return Math.hypot(x - ax - t * dx, y - ay - t * dy) - (ra + (rb - ra) * t)
    },
    bounds: [Math.min(ax, b[0]) - r - 1, Math.min(ay, b[1]) - r - 1, Math.max(ax, b[0]) + r + 1, Math.max(ay, b[1]) + r + 1],
  }
}

/** A convex polygon, points in either winding. */
export function polygon(points: Point[]): Shape {
  const mx = points.reduce((n, p) => n + p[0], 0) / points.length
  const my = points.reduce((n, p) => n + p[1], 0) / points.length
  // Outward unit normals: the centroid of a convex polygon lies on the inner side of every edge.
  const edges = points.map(([x1, y1], i) => {
    const [x2, y2] = points[(i + 1) % points.length]
    const length = Math.hypot(x2 - x1, y2 - y1) || 1
    let nx = (y2 - y1) / length
    let ny = -(x2 - x1) / length
    if ((mx - x1) * nx + (my - y1) * ny > 0) {
      nx = -nx
      ny = -ny
    }
    return { x1, y1, nx, ny }
  })
  const xs = points.map((p) => p[0])
  const ys = points.map((p) => p[1])
  return {
    distance: (x, y) => {
      let d = -Infinity
      for (const e of edges) d = Math.max(d, (x - e.x1) * e.nx + (y - e.y1) * e.ny)
      return d
    },
    bounds: [Math.min(...xs) - 1, Math.min(...ys) - 1, Math.max(...xs) + 1, Math.max(...ys) + 1],
  }
}

/** Points inside `shape` but not inside any of `holes`. */
export function subtract(shape: Shape, ...holes: Shape[]): Shape {
  return {
    distance: (x, y) => Math.max(shape.distance(x, y), ...holes.map((h) => -h.distance(x, y))),
    bounds: shape.bounds,
  }
}

export function union(...shapes: Shape[]): Shape {
  return {
    distance: (x, y) => Math.min(...shapes.map((s) => s.distance(x, y))),
    bounds: [
      Math.min(...shapes.map((s) => s.bounds[0])),
      Math.min(...shapes.map((s) => s.bounds[1])),
      Math.max(...shapes.map((s) => s.bounds[2])),
      Math.max(...shapes.map((s) => s.bounds[3])),
    ],
  }
}

/** Colour of a shape at a pixel: lets a fill carry shading or texture. */
export type Paint = (x: number, y: number) => Rgb

/** Float RGBA canvas with anti-aliased painter's-order filling. */
export class Canvas {
  readonly rgb: Float32Array
  readonly alpha: Float32Array

  constructor(
    readonly width: number,
    readonly height: number,
  ) {
    this.rgb = new Float32Array(width * height * 3)
    this.alpha = new Float32Array(width * height)
  }

  fillAll(paint: Paint): void {
    for (let y = 0; y < this.height; y++) {
      for (let x = 0; x < this.width; x++) this.blend(x, y, paint(x, y), 1)
    }
  }

  fill(shape: Shape, paint: Paint | Rgb): void {
    const [x0, y0, x1, y1] = shape.bounds
    const fromX = Math.max(0, Math.floor(x0))
    const toX = Math.min(this.width - 1, Math.ceil(x1))
    const fromY = Math.max(0, Math.floor(y0))
    const toY = Math.min(this.height - 1, Math.ceil(y1))
    const colourAt: Paint = typeof paint === 'function' ? paint : () => paint
    for (let y = fromY; y <= toY; y++) {
      for (let x = fromX; x <= toX; x++) {
        const coverage = Math.min(1, Math.max(0, 0.5 - shape.distance(x + 0.5, y + 0.5)))
        if (coverage > 0) this.blend(x, y, colourAt(x, y), coverage)
      }
    }
  }

  private blend(x: number, y: number, colour: Rgb, coverage: number): void {
    const i = y * this.width + x
    const a = this.alpha[i]
    const outAlpha = coverage + a * (1 - coverage)
    for (let c = 0; c < 3; c++) {
      const under = this.rgb[i * 3 + c] * a * (1 - coverage)
      this.rgb[i * 3 + c] = (colour[c] * coverage + under) / outAlpha
    }
    this.alpha[i] = outAlpha
  }

  toRgba(): RgbaImage {
    const data = new Uint8Array(this.width * this.height * 4)
    for (let i = 0; i < this.width * this.height; i++) {
      for (let c = 0; c < 3; c++) data[i * 4 + c] = Math.min(255, Math.max(0, Math.round(this.rgb[i * 3 + c])))
      data[i * 4 + 3] = Math.round(this.alpha[i] * 255)
    }
    return { width: this.width, height: this.height, data }
  }
}

/** Deterministic PRNG (mulberry32). */
export function random(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Smooth value noise in [-1, 1] on a grid of `cell` pixels (no allocation per sample: it runs per pixel). */
export function valueNoise(seed: number, cell: number): (x: number, y: number) => number {
  const next = random(seed)
  const grid = Float32Array.from({ length: 64 * 64 }, () => next() * 2 - 1)
  return (x, y) => {
    const gx = x / cell
    const gy = y / cell
    const ix = Math.floor(gx)
    const iy = Math.floor(gy)
    const fx = gx - ix
    const fy = gy - iy
    const i0 = (iy & 63) << 6
    const i1 = ((iy + 1) & 63) << 6
    const top = grid[i0 | (ix & 63)] * (1 - fx) + grid[i0 | ((ix + 1) & 63)] * fx
    const bottom = grid[i1 | (ix & 63)] * (1 - fx) + grid[i1 | ((ix + 1) & 63)] * fx
    return top * (1 - fy) + bottom * fy
  }
}

export function shade(colour: Rgb, factor: number): Rgb {
  return [colour[0] * factor, colour[1] * factor, colour[2] * factor]
}
