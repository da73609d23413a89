/** A seeded random source (SplitMix32 steps): the same seed always gives the same numbers. */
export class Rng {
  private state: number

  constructor(...seeds: number[]) {
    let s = 0x9e3779b9
    for (const seed of seeds) s = Math.imul(s ^ (seed >>> 0), 0x85ebca6b) ^ (Math.imul(seed >>> 16, 0xc2b2ae35) >>> 0)
    this.state = s >>> 0
  }

  next(): number {
    this.state = (this.state + 0x9e3779b9) >>> 0
    let z = this.state
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b)
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35)
    return ((z ^ (z >>> 16)) >>> 0) / 4294967296
  }

  between(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next()
  }

  int(lo: number, hi: number): number {
    return Math.floor(this.between(lo, hi + 1))
  }

  chance(p: number): boolean {
    return this.next() < p
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]
  }

  /** One of the keys, with odds proportional to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as [K, number][]
    let r = this.next() * entries.reduce((sum, [, w]) => sum + w, 0)
    for (const [key, w] of entries) {
      r -= w
      if (r < 0) return key
    }
    return entries[entries.length - 1][0]
  }

  /** Roughly normal, mean 0 and deviation 1 (sum of four uniforms). */
  gauss(): number {
    return (this.next() + this.next() + this.next() + this.next() - 2) * 1.732
  }

  /** A child source for one part of a drawing, so adding a draw to one part leaves the others' numbers alone. */
  fork(label: number): Rng {
    return new Rng(Math.floor(this.next() * 4294967296), label)
  }
}

/** Smooth value noise in [-1, 1] on a grid of `cell` pixels. */
export function valueNoise(rng: Rng, cell: number): (x: number, y: number) => number {
  const grid = Float32Array.from({ length: 64 * 64 }, () => rng.next() * 2 - 1)
  return (x, y) => {
    const gx = x / cell
    const gy = y / cell
    const ix = Math.floor(gx)
    const iy = Math.floor(gy)
    const fx = gx - ix
    const fy = gy - iy
    const sx = fx * fx * (3 - 2 * fx)
    const sy = fy * fy * (3 - 2 * fy)
    const i0 = (iy & 63) << 6
    const i1 = ((iy + 1) & 63) << 6
    const top = grid[i0 | (ix & 63)] * (1 - sx) + grid[i0 | ((ix + 1) & 63)] * sx
    const bottom = grid[i1 | (ix & 63)] * (1 - sx) + grid[i1 | ((ix + 1) & 63)] * sx
    return top * (1 - sy) + bottom * sy
  }
}
