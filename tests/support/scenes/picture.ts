/**
 * A canvas that remembers, for every pixel, which body part it shows: shapes as signed distances, filled with
 * anti-aliased or hard edges, each fill optionally naming the part it paints so the ground truth comes from the
 * drawing itself.
 */
import type { RgbaImage } from '../../../shared/images/codecs/raster.ts'
import { PART, type Part, type Rgb } from './types.ts'

export type Point = [number, number]

/** Signed distance in pixels (negative inside) and a bounding box. */
export interface Shape {
  distance(x: number, y: number): number
  bounds: [number, number, number, number]
}

export type Paint = (x: number, y: number) => Rgb

export function ellipse(cx: number, cy: number, rx: number, ry: number): Shape {
  const r = Math.min(rx, ry)
  return { distance: (x, y) => (Math.hypot((x - cx) / rx, (y - cy) / ry) - 1) * r, bounds: [cx - rx, cy - ry, cx + rx, cy + ry] }
}

/** A segment with a radius changing from ra at a to rb at b: limbs. */
export function capsule(a: Point, ra: number, b: Point, rb: number): Shape {
  const dx = b[0] - a[0]
  const dy = b[1] - a[1]
  const len2 = dx * dx + dy * dy || 1
  const r = Math.max(ra, rb)
  return {
    distance: (x, y) => {
      const t = Math.min(1, Math.max(0, ((x - a[0]) * dx + (y - a[1]) * dy) / len2))
      return Math.hypot(x - a[0] - t * dx, y - a[1] - t * dy) - (ra + (rb - ra) * t)
    },
    bounds: [Math.min(a[0], b[0]) - r, Math.min(a[1], b[1]) - r, Math.max(a[0], b[0]) + r, Math.max(a[1], b[1]) + r],
  }
}

/** Any simple polygon (convex or not): distance to the nearest edge, negative inside (even-odd rule). */
export function polygon(points: Point[]): Shape {
  const n = points.length
  const edges = new Float64Array(n * 5)
  for (let i = 0, j = n - 1; i < n; j = i++) {
    const ex = points[j][0] - points[i][0]
    const ey = points[j][1] - points[i][1]
    edges.set([points[i][0], points[i][1], ex, ey, 1 / (ex * ex + ey * ey || 1)], i * 5)
  }
  const xs = points.map((p) => p[0])
  const ys = points.map((p) => p[1])
  return {
    distance: (x, y) => {
      let best = Infinity
      let inside = false
      for (let k = 0; k < n * 5; k += 5) {
        const xi = edges[k]
        const yi = edges[k + 1]
        const ex = edges[k + 2]
        const ey = edges[k + 3]
        if (yi > y !== yi + ey > y && x < (ex * (y - yi)) / ey + xi) inside = !inside
        const t = Math.min(1, Math.max(0, ((x - xi) * ex + (y - yi) * ey) * edges[k + 4]))
        const dx = x - xi - t * ex
        const dy = y - yi - t * ey
        best = Math.min(best, dx * dx + dy * dy)
      }
      return inside ? -Math.sqrt(best) : Math.sqrt(best)
    },
    bounds: [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)],
  }
}

/** An axis-aligned rectangle. */
export function rect(x0: number, y0: number, x1: number, y1: number): Shape {
  const cx = (x0 + x1) / 2
  const cy = (y0 + y1) / 2
  const hx = Math.abs(x1 - x0) / 2
  const hy = Math.abs(y1 - y0) / 2
  return {
    distance: (x, y) => {
      const dx = Math.abs(x - cx) - hx
      const dy = Math.abs(y - cy) - hy
      return dx > 0 || dy > 0 ? Math.hypot(Math.max(dx, 0), Math.max(dy, 0)) : Math.max(dx, dy)
    },
    bounds: [cx - hx, cy - hy, cx + hx, cy + hy],
  }
}

export function union(...shapes: Shape[]): Shape {
  return {
    distance: (x, y) => {
      let d = Infinity
      for (const s of shapes) {
        const b = s.bounds
        // Far outside a piece's box, the distance to the box is close enough (and never more than the true one).
        const bx = Math.max(b[0] - x, 0, x - b[2])
        const by = Math.max(b[1] - y, 0, y - b[3])
        d = Math.min(d, bx > 32 || by > 32 ? Math.hypot(bx, by) : s.distance(x, y))
      }
      return d
    },
    bounds: [
      Math.min(...shapes.map((s) => s.bounds[0])),
      Math.min(...shapes.map((s) => s.bounds[1])),
      Math.max(...shapes.map((s) => s.bounds[2])),
      Math.max(...shapes.map((s) => s.bounds[3])),
    ],
  }
}

export function subtract(shape: Shape, ...holes: Shape[]): Shape {
  return {
    distance: (x, y) => {
      let d = shape.distance(x, y)
      for (const h of holes) d = Math.max(d, -h.distance(x, y))
      return d
    },
    bounds: shape.bounds,
  }
}

/** Only the part of `shape` between two rows. */
export function clipRows(shape: Shape, top: number, bottom: number): Shape {
  const [x0, y0, x1, y1] = shape.bounds
  return {
    distance: (x, y) => Math.max(shape.distance(x, y), top - y, y - bottom),
    bounds: [x0, Math.max(y0, top), x1, Math.min(y1, bottom)],
  }
}

/** The shape's edge pushed in and out by up to `amount` pixels of noise: frayed fabric, hair, camera blur. */
export function roughen(shape: Shape, noise: (x: number, y: number) => number, amount: number): Shape {
  const [x0, y0, x1, y1] = shape.bounds
  return {
    distance: (x, y) => shape.distance(x, y) + amount * noise(x, y),
    bounds: [x0 - amount, y0 - amount, x1 + amount, y1 + amount],
  }
}

export const mix = (a: Rgb, b: Rgb, t: number): Rgb => [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t]
export const scaled = (c: Rgb, f: number): Rgb => [c[0] * f, c[1] * f, c[2] * f]
export const clampRgb = (c: Rgb): Rgb => [
  Math.max(0, Math.min(255, c[0])),
  Math.max(0, Math.min(255, c[1])),
  Math.max(0, Math.min(255, c[2])),
]

export interface FillOptions {
  /** The body part the fill paints; pixels at least half covered take it. */
  part?: Part
  /** Take the part only where no part was painted yet (clothing beyond the body). */
  partUnder?: boolean
  /** No anti-aliasing: a pixel is in or out (vector art exported without smoothing). */
  hard?: boolean
  /** How much of the colour lands (0..1): glass, tulle, shadows. */
  opacity?: number
}

export class Picture {
  readonly rgb: Float32Array
  readonly parts: Uint8Array

  constructor(
    readonly width: number,
    readonly height: number,
  ) {
    this.rgb = new Float32Array(width * height * 3)
    this.parts = new Uint8Array(width * height)
  }

  fillAll(paint: Paint): void {
    for (let y = 0, i = 0; y < this.height; y++) {
      for (let x = 0; x < this.width; x++, i += 3) {
        const c = paint(x, y)
        this.rgb[i] = c[0]
        this.rgb[i + 1] = c[1]
        this.rgb[i + 2] = c[2]
      }
    }
  }

  fill(shape: Shape, paint: Paint | Rgb, options: FillOptions = {}): void {
    const [bx0, by0, bx1, by1] = shape.bounds
    const x0 = Math.max(0, Math.floor(bx0) - 1)
    const x1 = Math.min(this.width - 1, Math.ceil(bx1) + 1)
    const y0 = Math.max(0, Math.floor(by0) - 1)
    const y1 = Math.min(this.height - 1, Math.ceil(by1) + 1)
    const colourAt: Paint = typeof paint === 'function' ? paint : () => paint
    const opacity = options.opacity ?? 1
    for (let y = y0; y <= y1; y++) {
      for (let x = x0; x <= x1; x++) {
        const d = shape.distance(x + 0.5, y + 0.5)
        // Distances here never overstate, and change by at most 2 a pixel (roughened edges): skip what cannot be reached.
        if (d >= 1.5) {
          x += Math.floor((d - 1.5) / 2)
          continue
        }
        const coverage = options.hard ? (d < 0 ? 1 : 0) : Math.min(1, Math.max(0, 0.5 - d))
        if (coverage <= 0) continue
        const i = y * this.width + x
        const c = colourAt(x, y)
        const a = coverage * opacity
        this.rgb[i * 3] += (c[0] - this.rgb[i * 3]) * a
        this.rgb[i * 3 + 1] += (c[1] - this.rgb[i * 3 + 1]) * a
        this.rgb[i * 3 + 2] += (c[2] - this.rgb[i * 3 + 2]) * a
        if (options.part !== undefined && coverage >= 0.5 && (!options.partUnder || this.parts[i] === PART.background)) {
          this.parts[i] = options.part
        }
      }
    }
  }

  /** Changes every pixel's colour in place: light, noise, lens. */
  adjust(change: (x: number, y: number, colour: Rgb) => Rgb): void {
    const c: Rgb = [0, 0, 0]
    for (let y = 0, i = 0; y < this.height; y++) {
      for (let x = 0; x < this.width; x++, i += 3) {
        c[0] = this.rgb[i]
        c[1] = this.rgb[i + 1]
        c[2] = this.rgb[i + 2]
        const out = change(x, y, c)
        this.rgb[i] = out[0]
        this.rgb[i + 1] = out[1]
        this.rgb[i + 2] = out[2]
      }
    }
  }

  toRgba(): RgbaImage {
    const data = new Uint8Array(this.width * this.height * 4)
    for (let i = 0; i < this.width * this.height; i++) {
      data[i * 4] = Math.max(0, Math.min(255, Math.round(this.rgb[i * 3])))
      data[i * 4 + 1] = Math.max(0, Math.min(255, Math.round(this.rgb[i * 3 + 1])))
      data[i * 4 + 2] = Math.max(0, Math.min(255, Math.round(this.rgb[i * 3 + 2])))
      data[i * 4 + 3] = 255
    }
    return { width: this.width, height: this.height, data }
  }
}
