/**
 * Colour difference for judging results: sRGB (IEC 61966-2-1) to CIE L*a*b* under D65, and CIEDE2000 as
 * written by Sharma, Wu and Dalal, "The CIEDE2000 color-difference formula: implementation notes, supplementary test
 * data, and mathematical observations" (Color Research & Application 30(1), 2005), checked against their test pairs in
 * tests/unit/quality/colour.test.ts. The measured quality checks (shared/quality/measure.ts) and the evaluation's oracle
 * (tests/support/scenes/oracle.ts) use this one copy: a formula, not a threshold, so sharing it grades nothing twice.
 */

/** An sRGB colour, 8 bits a component. */
export type Rgb = [number, number, number]

export type Lab = [number, number, number]

/** sRGB 8-bit component to linear light, tabulated: it runs per pixel. */
const LINEAR = Float64Array.from({ length: 256 }, (_, v) => {
  const c = v / 255
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
})

const XN = 0.95047
const ZN = 1.08883
function f(t: number): number {
  return t > 216 / 24389 ? Math.cbrt(t) : ((24389 / 27) * t + 16) / 116
}

export function labOf(rgb: Readonly<Rgb>): Lab {
  const clamp = (v: number) => LINEAR[Math.max(0, Math.min(255, Math.round(v)))]
  const r = clamp(rgb[0])
  const g = clamp(rgb[1])
  const b = clamp(rgb[2])
  const x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / XN
  const y = 0.2126729 * r + 0.7151522 * g + 0.072175 * b
  const z = (0.0193339 * r + 0.119192 * g + 0.9503041 * b) / ZN
  const fy = f(y)
  return [116 * fy - 16, 500 * (f(x) - fy), 200 * (fy - f(z))]
}

export function rgbOf(lab: Readonly<Lab>): Rgb {
  const fy = (lab[0] + 16) / 116
  const fx = fy + lab[1] / 500
  const fz = fy - lab[2] / 200
  const inv = (t: number) => (t ** 3 > 216 / 24389 ? t ** 3 : (116 * t - 16) / (24389 / 27))
  const x = inv(fx) * XN
  const y = inv(fy)
  const z = inv(fz) * ZN
  const lin = [
    3.2404542 * x - 1.5371385 * y - 0.4985314 * z,
    -0.969266 * x + 1.8760108 * y + 0.041556 * z,
    0.0556434 * x - 0.2040259 * y + 1.0572252 * z,
  ]
  return lin.map((c) => {
    const v = c <= 0.0031308 ? 12.92 * c : 1.055 * Math.max(0, c) ** (1 / 2.4) - 0.055
    return Math.max(0, Math.min(255, Math.round(v * 255)))
  }) as Rgb
}

/**
 * CIEDE2000 between two L*a*b* colours. `kL` weighs lightness: 1 is the reference condition; 2 is the textile
 * industry's (as CMC 2:1 in ISO 105-J03), which forgives the light and shade that folds and lighting put on a fabric.
 */
export function ciede2000(lab1: Readonly<Lab>, lab2: Readonly<Lab>, kL = 1): number {
  const [L1, a1, b1] = lab1
  const [L2, a2, b2] = lab2
  const C1 = Math.hypot(a1, b1)
  const C2 = Math.hypot(a2, b2)
  const Cbar7 = ((C1 + C2) / 2) ** 7
  const G = 0.5 * (1 - Math.sqrt(Cbar7 / (Cbar7 + 25 ** 7)))
  const a1p = (1 + G) * a1
  const a2p = (1 + G) * a2
  const C1p = Math.hypot(a1p, b1)
  const C2p = Math.hypot(a2p, b2)
  const h1p = hueAngle(b1, a1p)
  const h2p = hueAngle(b2, a2p)
  const dLp = L2 - L1
  const dCp = C2p - C1p
  let dhp = 0
  if (C1p * C2p !== 0) {
    dhp = h2p - h1p
    if (dhp > 180) dhp -= 360
    else if (dhp < -180) dhp += 360
  }
  const dHp = 2 * Math.sqrt(C1p * C2p) * Math.sin((dhp * Math.PI) / 360)
  const Lbarp = (L1 + L2) / 2
  const Cbarp = (C1p + C2p) / 2
  let hbarp = h1p + h2p
  if (C1p * C2p !== 0) {
    if (Math.abs(h1p - h2p) <= 180) hbarp /= 2
    else hbarp = h1p + h2p < 360 ? (hbarp + 360) / 2 : (hbarp - 360) / 2
  }
  const rad = Math.PI / 180
  const T =
    1 -
    0.17 * Math.cos((hbarp - 30) * rad) +
    0.24 * Math.cos(2 * hbarp * rad) +
    0.32 * Math.cos((3 * hbarp + 6) * rad) -
    0.2 * Math.cos((4 * hbarp - 63) * rad)
  const dTheta = 30 * Math.exp(-(((hbarp - 275) / 25) ** 2))
  const Cbarp7 = Cbarp ** 7
  const RC = 2 * Math.sqrt(Cbarp7 / (Cbarp7 + 25 ** 7))
  const SL = 1 + (0.015 * (Lbarp - 50) ** 2) / Math.sqrt(20 + (Lbarp - 50) ** 2)
  const SC = 1 + 0.045 * Cbarp
  const SH = 1 + 0.015 * Cbarp * T
  const RT = -Math.sin(2 * dTheta * rad) * RC
  const l = dLp / (kL * SL)
  const c = dCp / SC
  const h = dHp / SH
  return Math.sqrt(l * l + c * c + h * h + RT * c * h)
}

function hueAngle(b: number, a: number): number {
  if (a === 0 && b === 0) return 0
  const h = (Math.atan2(b, a) * 180) / Math.PI
  return h < 0 ? h + 360 : h
}

/** CIEDE2000 between two sRGB colours. */
export function deltaE(a: Readonly<Rgb>, b: Readonly<Rgb>, kL = 1): number {
  return ciede2000(labOf(a), labOf(b), kL)
}

/** The L*a*b* of every pixel of an RGBA image, three floats a pixel. */
export function labImage(data: Uint8Array, pixels: number): Float32Array {
  const out = new Float32Array(pixels * 3)
  for (let i = 0; i < pixels; i++) {
    const r = LINEAR[data[i * 4]]
    const g = LINEAR[data[i * 4 + 1]]
    const b = LINEAR[data[i * 4 + 2]]
    const fx = f((0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / XN)
    const fy = f(0.2126729 * r + 0.7151522 * g + 0.072175 * b)
    const fz = f((0.0193339 * r + 0.119192 * g + 0.9503041 * b) / ZN)
    out[i * 3] = 116 * fy - 16
    out[i * 3 + 1] = 500 * (fx - fy)
    out[i * 3 + 2] = 200 * (fy - fz)
  }
  return out
}
