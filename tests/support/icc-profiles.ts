/**
 * ICC v4 matrix/TRC display profiles built from a colour space's primaries, as colour-managed apps embed them
 * (ICC.1:2010: a 128-byte header, the tag table, desc/cprt/wtpt, the colorants adapted to D50 by Bradford, one tone
 * curve shared by the three channels), and the same spaces' conversion to sRGB computed independently, in D65
 * without the profile connection space, for tests to compare against.
 */
import { concat } from '../../devstack/samples/png-encoder.ts'

type Xy = [number, number]

export interface RgbSpace {
  name: string
  red: Xy
  green: Xy
  blue: Xy
  white: Xy
  /** `srgb`: sRGB's piecewise curve (written as a parametric curve); a number: a pure gamma (written as `curv`). */
  curve: 'srgb' | number
}

const D65: Xy = [0.3127, 0.329]
export const SRGB: RgbSpace = { name: 'sRGB', red: [0.64, 0.33], green: [0.3, 0.6], blue: [0.15, 0.06], white: D65, curve: 'srgb' }
export const DISPLAY_P3: RgbSpace = {
  name: 'Display P3',
  red: [0.68, 0.32],
  green: [0.265, 0.69],
  blue: [0.15, 0.06],
  white: D65,
  curve: 'srgb',
}
export const ADOBE_RGB: RgbSpace = {
  name: 'Adobe RGB (1998)',
  red: [0.64, 0.33],
  green: [0.21, 0.71],
  blue: [0.15, 0.06],
  white: D65,
  curve: 563 / 256,
}

type Matrix = number[]

function multiply(a: Matrix, b: Matrix): Matrix {
  return Array.from({ length: 9 }, (_, i) => {
    const row = Math.floor(i / 3)
    const col = i % 3
    return a[row * 3] * b[col] + a[row * 3 + 1] * b[3 + col] + a[row * 3 + 2] * b[6 + col]
  })
}

function invert(m: Matrix): Matrix {
  const [a, b, c, d, e, f, g, h, k] = m
  const det = a * (e * k - f * h) - b * (d * k - f * g) + c * (d * h - e * g)
  return [
    e * k - f * h,
    c * h - b * k,
    b * f - c * e,
    f * g - d * k,
    a * k - c * g,
    c * d - a * f,
    d * h - e * g,
    b * g - a * h,
    a * e - b * d,
  ].map((v) => v / det)
}

const xyz = ([x, y]: Xy) => [x / y, 1, (1 - x - y) / y]

/** Linear RGB → XYZ under the space's own white (the textbook derivation from primaries). */
export function rgbToXyz(space: RgbSpace): Matrix {
  const [r, g, b] = [xyz(space.red), xyz(space.green), xyz(space.blue)]
  const primaries = [r[0], g[0], b[0], r[1], g[1], b[1], r[2], g[2], b[2]]
  const w = xyz(space.white)
  const inv = invert(primaries)
  const s = [0, 1, 2].map((i) => inv[i * 3] * w[0] + inv[i * 3 + 1] * w[1] + inv[i * 3 + 2] * w[2])
  return primaries.map((v, i) => v * s[i % 3])
}

const BRADFORD = [0.8951, 0.2664, -0.1614, -0.7502, 1.7135, 0.0367, 0.0389, -0.0685, 1.0296]
const D50_XYZ = [0.9642, 1, 0.8249]

function adaptToD50(white: Xy): Matrix {
  const source = xyz(white)
  const cone = (v: number[]) => [0, 1, 2].map((i) => BRADFORD[i * 3] * v[0] + BRADFORD[i * 3 + 1] * v[1] + BRADFORD[i * 3 + 2] * v[2])
  const [s, d] = [cone(source), cone(D50_XYZ)]
  const scale = [d[0] / s[0], 0, 0, 0, d[1] / s[1], 0, 0, 0, d[2] / s[2]]
  return multiply(invert(BRADFORD), multiply(scale, BRADFORD))
}

export function decodeCurve(space: RgbSpace, v: number): number {
  if (space.curve !== 'srgb') return v ** space.curve
  return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4
}

function encodeSrgb(linear: number): number {
  const v = Math.min(1, Math.max(0, linear))
  return v <= 0.0031308 ? 12.92 * v : 1.055 * v ** (1 / 2.4) - 0.055
}

/** What a colour-managed viewer shows on an sRGB display for an 8-bit colour of `space`: clipped to sRGB, unrounded 0–255. */
export function toSrgb(space: RgbSpace, rgb: [number, number, number]): [number, number, number] {
  const linear = rgb.map((v) => decodeCurve(space, v / 255))
  const m = multiply(invert(rgbToXyz(SRGB)), rgbToXyz(space))
  return [0, 1, 2].map((i) => encodeSrgb(m[i * 3] * linear[0] + m[i * 3 + 1] * linear[1] + m[i * 3 + 2] * linear[2]) * 255) as [
    number,
    number,
    number,
  ]
}

/** The colour of `space` that shows as the sRGB colour `rgb` (which must lie inside `space`), rounded to 8 bits. */
export function fromSrgb(space: RgbSpace, rgb: [number, number, number]): [number, number, number] {
  const linear = rgb.map((v) => decodeCurve(SRGB, v / 255))
  const m = multiply(invert(rgbToXyz(space)), rgbToXyz(SRGB))
  return [0, 1, 2].map((i) => {
    const l = Math.min(1, Math.max(0, m[i * 3] * linear[0] + m[i * 3 + 1] * linear[1] + m[i * 3 + 2] * linear[2]))
    const encoded = space.curve === 'srgb' ? encodeSrgb(l) : l ** (1 / space.curve)
    return Math.round(encoded * 255)
  }) as [number, number, number]
}

const ascii = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0))
const u32 = (n: number) => Uint8Array.of((n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff)
const s15 = (v: number) => u32(Math.round(v * 65536) >>> 0)

function xyzTag(v: number[]): Uint8Array {
  return concat([ascii('XYZ '), u32(0), ...v.map(s15)])
}

function mlucTag(text: string): Uint8Array {
  const utf16 = new Uint8Array(text.length * 2)
  for (let i = 0; i < text.length; i++) utf16.set([text.charCodeAt(i) >> 8, text.charCodeAt(i) & 0xff], i * 2)
  return concat([ascii('mluc'), u32(0), u32(1), u32(12), ascii('enUS'), u32(utf16.length), u32(28), utf16])
}

function curveTag(space: RgbSpace): Uint8Array {
  if (space.curve !== 'srgb') {
    // One entry: the gamma as u8Fixed8Number.
    const gamma = Math.round(space.curve * 256)
    return concat([ascii('curv'), u32(0), u32(1), Uint8Array.of(gamma >> 8, gamma & 0xff)])
  }
  // Function type 3: Y = (aX + b)^g for X >= d, else cX: sRGB's curve (ICC.1:2010 Table 65).
  const parameters = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
  return concat([ascii('para'), u32(0), Uint8Array.of(0, 3, 0, 0), ...parameters.map(s15)])
}

/** A v4 display profile for `space`, as an editor or a phone embeds one. */
export function iccProfile(space: RgbSpace): Uint8Array {
  const colorants = multiply(adaptToD50(space.white), rgbToXyz(space))
  const column = (i: number) => [colorants[i], colorants[3 + i], colorants[6 + i]]
  const curve = curveTag(space)
  const tags: [string, Uint8Array][] = [
    ['desc', mlucTag(space.name)],
    ['cprt', mlucTag('No copyright, test data')],
    ['wtpt', xyzTag(D50_XYZ)],
    ['rXYZ', xyzTag(column(0))],
    ['gXYZ', xyzTag(column(1))],
    ['bXYZ', xyzTag(column(2))],
    ['rTRC', curve],
    ['gTRC', curve],
    ['bTRC', curve],
  ]
  const tableSize = 4 + tags.length * 12
  let offset = 128 + tableSize
  const table: Uint8Array[] = [u32(tags.length)]
  const data: Uint8Array[] = []
  const placed = new Map<Uint8Array, number>()
  for (const [signature, body] of tags) {
    // The three channels share one curve tag, as Apple's and the ICC's own profiles do.
    let at = placed.get(body)
    if (at === undefined) {
      at = offset
      placed.set(body, at)
      const padded = concat([body, new Uint8Array((4 - (body.length % 4)) % 4)])
      data.push(padded)
      offset += padded.length
    }
    table.push(concat([ascii(signature), u32(at), u32(body.length)]))
  }
  const header = new Uint8Array(128)
  header.set(u32(offset), 0)
  header.set(u32(0x04300000), 8)
  header.set(ascii('mntrRGB XYZ '), 12)
  header.set(Uint8Array.of(0x07, 0xe6, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0), 24)
  header.set(ascii('acsp'), 36)
  header.set(concat(D50_XYZ.map(s15)), 68)
  return concat([header, ...table, ...data])
}
