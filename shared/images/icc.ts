/**
 * What turns an image's stored RGB into sRGB, read from its ICC profile (convertToSrgb applies it). Plain data, so it
 * travels with an input image wherever that is copied (a worker thread's structured clone keeps typed arrays, not
 * methods): each channel's linear light for its 256 stored values, and the matrix from linear RGB to linear sRGB, both
 * in steps of 1/16384.
 */
export interface SrgbConversion {
  readonly red: Int32Array
  readonly green: Int32Array
  readonly blue: Int32Array
  readonly matrix: Int32Array
}

/** Larger profiles carry lookup tables (printer and camera profiles), which are not read: the image is taken as sRGB. */
export const MAX_PROFILE_BYTES = 256 * 1024
const HEADER_SIZE = 128
const TAG_ENTRY = 12
/** Linear light is encoded back to 8 bits through a table this fine: a step is under half a code value even near black. */
const ENCODE_STEPS = 1 << 14

/**
 * sRGB's colorants seen from the ICC connection space (D50): the sRGB primaries adapted from D65 by Bradford, as in
 * the ICC's own sRGB profiles (https://www.color.org/srgbprofiles.xalter) and Lindbloom's tables
 * (http://www.brucelindbloom.com/Eqn_RGB_XYZ_Matrix.html, "sRGB, D50").
 */
const SRGB_TO_PCS = [0.4360747, 0.3850649, 0.1430804, 0.2225045, 0.7168786, 0.0606169, 0.0139322, 0.0971045, 0.7141733]
const PCS_TO_SRGB = invert3(SRGB_TO_PCS)

/**
 * The conversion to sRGB an RGB matrix/TRC profile describes (ICC.1:2010 §8.3: rXYZ, gXYZ, bXYZ colorants and rTRC,
 * gTRC, bTRC curves, `curv` or `para`): Display P3, Adobe RGB, ProPhoto and the like. Undefined when there is nothing
 * to convert: a profile that is sRGB by another name (no colour of a 6×6×6 grid moves by more than one step), one
 * this reader does not take (gray, CMYK, Lab connection space, lookup tables only) or a malformed one; the pixels are
 * then taken as sRGB, as browsers take an image whose profile they cannot use. Work is bounded by the profile's size.
 */
export function srgbConversionOf(profile: Uint8Array): SrgbConversion | undefined {
  if (profile.length < HEADER_SIZE + 4 || profile.length > MAX_PROFILE_BYTES) return undefined
  if (text(profile, 36) !== 'acsp' || text(profile, 16) !== 'RGB ' || text(profile, 20) !== 'XYZ ') return undefined
  const count = u32(profile, HEADER_SIZE)
  if (count > (profile.length - HEADER_SIZE - 4) / TAG_ENTRY) return undefined
  const tags = new Map<string, Uint8Array>()
  for (let i = 0, at = HEADER_SIZE + 4; i < count; i++, at += TAG_ENTRY) {
    const signature = text(profile, at)
    const offset = u32(profile, at + 4)
    const size = u32(profile, at + 8)
    if (!tags.has(signature) && offset + size <= profile.length) tags.set(signature, profile.subarray(offset, offset + size))
  }
  const colorants = ['rXYZ', 'gXYZ', 'bXYZ'].map((signature) => readXyz(tags.get(signature)))
  const curves = ['rTRC', 'gTRC', 'bTRC'].map((signature) => linearTable(tags.get(signature)))
  if (colorants.some((c) => !c) || curves.some((c) => !c)) return undefined
  const [r, g, b] = colorants as number[][]
  const toPcs = [r[0], g[0], b[0], r[1], g[1], b[1], r[2], g[2], b[2]]
  const conversion = matrixConversion(multiply3(PCS_TO_SRGB, toPcs), curves as Float32Array[])
  return conversion && movesAnyColour(conversion) ? conversion : undefined
}

function text(bytes: Uint8Array, at: number): string {
  return String.fromCharCode(bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3])
}

function u32(bytes: Uint8Array, at: number): number {
  return ((bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3]) >>> 0
}

const s15Fixed16 = (bytes: Uint8Array, at: number) => (u32(bytes, at) | 0) / 65536

/** An `XYZ ` tag's first value. */
function readXyz(tag: Uint8Array | undefined): number[] | undefined {
  if (!tag || tag.length < 20 || text(tag, 0) !== 'XYZ ') return undefined
  return [s15Fixed16(tag, 8), s15Fixed16(tag, 12), s15Fixed16(tag, 16)]
}

/** Parametric curve parameters by function type (ICC.1:2010 §10.18, Table 65). */
const PARA_PARAMETERS = [1, 3, 4, 5, 7]

/** A tone curve sampled at the 256 stored values: the linear light of each, 0 to 1. */
function linearTable(tag: Uint8Array | undefined): Float32Array | undefined {
  if (!tag || tag.length < 12) return undefined
  let curve: ((x: number) => number) | undefined
  const type = text(tag, 0)
  if (type === 'curv') {
    const n = u32(tag, 8)
    if (tag.length < 12 + 2 * n) return undefined
    const entry = (i: number) => ((tag[12 + 2 * i] << 8) | tag[13 + 2 * i]) / 65535
    if (n === 0) curve = (x) => x
    else if (n === 1) {
      const gamma = ((tag[12] << 8) | tag[13]) / 256
      curve = (x) => x ** gamma
    } else {
      curve = (x) => {
        const at = x * (n - 1)
        const i = Math.min(n - 2, Math.floor(at))
        return entry(i) + (entry(i + 1) - entry(i)) * (at - i)
      }
    }
  } else if (type === 'para') {
    const fn = (tag[8] << 8) | tag[9]
    if (fn >= PARA_PARAMETERS.length || tag.length < 12 + 4 * PARA_PARAMETERS[fn]) return undefined
    const [g, a, b, c, d, e, f] = Array.from({ length: 7 }, (_, i) => (i < PARA_PARAMETERS[fn] ? s15Fixed16(tag, 12 + 4 * i) : 0))
    const power = (x: number) => Math.max(0, a * x + b) ** g
    if (fn === 0) curve = (x) => x ** g
    else if (fn === 1) curve = (x) => (x >= -b / a ? power(x) : 0)
    else if (fn === 2) curve = (x) => (x >= -b / a ? power(x) + c : c)
    else if (fn === 3) curve = (x) => (x >= d ? power(x) : c * x)
    else curve = (x) => (x >= d ? power(x) + e : c * x + f)
  }
  if (!curve) return undefined
  const table = new Float32Array(256)
  for (let v = 0; v < 256; v++) {
    const y = curve(v / 255)
    if (!Number.isFinite(y)) return undefined
    table[v] = Math.min(1, Math.max(0, y))
  }
  return table
}

/** sRGB's transfer function, linear light to 8 bits (IEC 61966-2-1). */
const ENCODE = Uint8Array.from({ length: ENCODE_STEPS + 1 }, (_, i) => {
  const linear = i / ENCODE_STEPS
  const encoded = linear <= 0.0031308 ? 12.92 * linear : 1.055 * linear ** (1 / 2.4) - 0.055
  return Math.round(encoded * 255)
})

/**
 * Colours outside sRGB are clipped channel by channel, as a display without a wider gamut shows them. In integers:
 * linear light and the matrix in steps of 1/ENCODE_STEPS, so a product fits in 32 bits for any matrix with rows
 * summing (in absolute value) under 7, which spaces as wide as ProPhoto stay well within.
 */
function matrixConversion(m: number[], curves: Float32Array[]): SrgbConversion | undefined {
  const rowSums = [0, 3, 6].map((row) => Math.abs(m[row]) + Math.abs(m[row + 1]) + Math.abs(m[row + 2]))
  if (m.some((v) => !Number.isFinite(v)) || rowSums.some((sum) => sum >= 7)) return undefined
  const [red, green, blue] = curves.map((curve) => Int32Array.from(curve, (v) => Math.round(v * ENCODE_STEPS)))
  return { red, green, blue, matrix: Int32Array.from(m, (v) => Math.round(v * ENCODE_STEPS)) }
}

const SHIFT = Math.log2(ENCODE_STEPS)
const HALF = ENCODE_STEPS >> 1

/** Converts the RGB of every pixel of `rgba` to sRGB in place (alpha untouched): one loop for every profile. */
export function convertToSrgb(conversion: SrgbConversion, rgba: Uint8Array): void {
  const { red, green, blue, matrix } = conversion
  const [m0, m1, m2, m3, m4, m5, m6, m7, m8] = matrix
  for (let i = 0; i < rgba.length; i += 4) {
    const r = red[rgba[i]]
    const g = green[rgba[i + 1]]
    const b = blue[rgba[i + 2]]
    rgba[i] = encodeLinear((m0 * r + m1 * g + m2 * b + HALF) >> SHIFT)
    rgba[i + 1] = encodeLinear((m3 * r + m4 * g + m5 * b + HALF) >> SHIFT)
    rgba[i + 2] = encodeLinear((m6 * r + m7 * g + m8 * b + HALF) >> SHIFT)
  }
}

function encodeLinear(v: number): number {
  return ENCODE[v <= 0 ? 0 : v >= ENCODE_STEPS ? ENCODE_STEPS : v]
}

/** Whether converting changes any colour of a 6×6×6 grid by more than one step: if not, the profile is sRGB's. */
function movesAnyColour(conversion: SrgbConversion): boolean {
  const levels = [0, 51, 102, 153, 204, 255]
  const grid = new Uint8Array(levels.length ** 3 * 4)
  let i = 0
  for (const r of levels) for (const g of levels) for (const b of levels) grid.set([r, g, b, 255], i++ * 4)
  const converted = grid.slice()
  convertToSrgb(conversion, converted)
  return converted.some((v, k) => Math.abs(v - grid[k]) > 1)
}

function multiply3(a: number[], b: number[]): number[] {
  const out = new Array<number>(9)
  for (let row = 0; row < 3; row++) {
    for (let col = 0; col < 3; col++) out[row * 3 + col] = a[row * 3] * b[col] + a[row * 3 + 1] * b[3 + col] + a[row * 3 + 2] * b[6 + col]
  }
  return out
}

function invert3(m: number[]): number[] {
  const [a, b, c, d, e, f, g, h, k] = m
  const det = a * (e * k - f * h) - b * (d * k - f * g) + c * (d * h - e * g)
  return [
    (e * k - f * h) / det,
    (c * h - b * k) / det,
    (b * f - c * e) / det,
    (f * g - d * k) / det,
    (a * k - c * g) / det,
    (c * d - a * f) / det,
    (d * h - e * g) / det,
    (b * g - a * h) / det,
    (a * e - b * d) / det,
  ]
}
