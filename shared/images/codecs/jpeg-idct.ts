// Integer inverse DCT after stb_image (jidctint-style, 12-bit fixed-point constants).
const F0541 = 2217 // 0.5411961
const FM1847 = -7567 // -1.847759065
const F0765 = 3135 // 0.765366865
const F1175 = 4816 // 1.175875602
const F0298 = 1223 // 0.298631336
const F2053 = 8410 // 2.053119869
const F3072 = 12586 // 3.072711026
const F1501 = 6149 // 1.50132111
const FM0899 = -3685 // -0.899976223
const FM2562 = -10497 // -2.562915447
const FM1961 = -8034 // -1.96157056
const FM0390 = -1597 // -0.390180644

const workspace = new Int32Array(64)

function clamp(v: number): number {
  return v < 0 ? 0 : v > 255 ? 255 : v
}

/** Dequantizes and inverse-transforms one block (natural order) into 8×8 samples; the clamped array clamps them. */
export function idctBlock(
  coefs: Int16Array,
  off: number,
  quant: Uint16Array,
  out: Uint8ClampedArray,
  outOff: number,
  stride: number,
): void {
  const ws = workspace
  // Columns: a column with no AC term is flat.
  for (let i = 0; i < 8; i++) {
    const c = off + i
    const s0 = coefs[c] * quant[i]
    if (
      coefs[c + 8] === 0 &&
      coefs[c + 16] === 0 &&
      coefs[c + 24] === 0 &&
      coefs[c + 32] === 0 &&
      coefs[c + 40] === 0 &&
      coefs[c + 48] === 0 &&
      coefs[c + 56] === 0
    ) {
      const dc = s0 * 4
      ws[i] = ws[i + 8] = ws[i + 16] = ws[i + 24] = ws[i + 32] = ws[i + 40] = ws[i + 48] = ws[i + 56] = dc
      continue
    }
    const s1 = coefs[c + 8] * quant[i + 8]
    const s2 = coefs[c + 16] * quant[i + 16]
    const s3 = coefs[c + 24] * quant[i + 24]
    const s4 = coefs[c + 32] * quant[i + 32]
    const s5 = coefs[c + 40] * quant[i + 40]
    const s6 = coefs[c + 48] * quant[i + 48]
    const s7 = coefs[c + 56] * quant[i + 56]
    let p1 = (s2 + s6) * F0541
    let t2 = p1 + s6 * FM1847
    let t3 = p1 + s2 * F0765
    let t0 = (s0 + s4) * 4096
    let t1 = (s0 - s4) * 4096
    const x0 = t0 + t3 + 512
    const x3 = t0 - t3 + 512
    const x1 = t1 + t2 + 512
    const x2 = t1 - t2 + 512
    let p3 = s7 + s3
    let p4 = s5 + s1
    p1 = s7 + s1
    let p2 = s5 + s3
    const p5 = (p3 + p4) * F1175
    t0 = s7 * F0298
    t1 = s5 * F2053
    t2 = s3 * F3072
    t3 = s1 * F1501
    p1 = p5 + p1 * FM0899
    p2 = p5 + p2 * FM2562
    p3 *= FM1961
    p4 *= FM0390
    t3 += p1 + p4
    t2 += p2 + p3
    t1 += p2 + p4
    t0 += p1 + p3
    ws[i] = (x0 + t3) >> 10
    ws[i + 56] = (x0 - t3) >> 10
    ws[i + 8] = (x1 + t2) >> 10
    ws[i + 48] = (x1 - t2) >> 10
    ws[i + 16] = (x2 + t1) >> 10
    ws[i + 40] = (x2 - t1) >> 10
    ws[i + 24] = (x3 + t0) >> 10
    ws[i + 32] = (x3 - t0) >> 10
  }
  // Rows, straight into the output with the level shift (128 << 17) and rounding folded into the bias.
  for (let r = 0, w = 0, o = outOff; r < 8; r++, w += 8, o += stride) {
    const s0 = ws[w]
    const s1 = ws[w + 1]
    const s2 = ws[w + 2]
    const s3 = ws[w + 3]
    const s4 = ws[w + 4]
    const s5 = ws[w + 5]
    const s6 = ws[w + 6]
    const s7 = ws[w + 7]
    if ((s1 | s2 | s3 | s4 | s5 | s6 | s7) === 0) {
      const v = (s0 * 4096 + 65536 + (128 << 17)) >> 17
      out[o] = out[o + 1] = out[o + 2] = out[o + 3] = out[o + 4] = out[o + 5] = out[o + 6] = out[o + 7] = v
      continue
    }
    let p1 = (s2 + s6) * F0541
    let t2 = p1 + s6 * FM1847
    let t3 = p1 + s2 * F0765
    let t0 = (s0 + s4) * 4096
    let t1 = (s0 - s4) * 4096
    const bias = 65536 + (128 << 17)
    const x0 = t0 + t3 + bias
    const x3 = t0 - t3 + bias
    const x1 = t1 + t2 + bias
    const x2 = t1 - t2 + bias
    let p3 = s7 + s3
    let p4 = s5 + s1
    p1 = s7 + s1
    let p2 = s5 + s3
    const p5 = (p3 + p4) * F1175
    t0 = s7 * F0298
    t1 = s5 * F2053
    t2 = s3 * F3072
    t3 = s1 * F1501
    p1 = p5 + p1 * FM0899
    p2 = p5 + p2 * FM2562
    p3 *= FM1961
    p4 *= FM0390
    t3 += p1 + p4
    t2 += p2 + p3
    t1 += p2 + p4
    t0 += p1 + p3
    out[o] = (x0 + t3) >> 17
    out[o + 7] = (x0 - t3) >> 17
    out[o + 1] = (x1 + t2) >> 17
    out[o + 6] = (x1 - t2) >> 17
    out[o + 2] = (x2 + t1) >> 17
    out[o + 5] = (x2 - t1) >> 17
    out[o + 3] = (x3 + t0) >> 17
    out[o + 4] = (x3 - t0) >> 17
  }
}

/**
 * Half-scale weights: the mean of each 2×2 pixel pair of the 8-point IDCT is a 4-point IDCT of folded
 * coefficients, since (cos((4X+1)uπ/16) + cos((4X+3)uπ/16)) / 2 = cos(uπ/16)·cos((2X+1)uπ/8): frequency 4
 * drops out and 5, 6, 7 fold onto 3, 2, 1 with their sign flipped. HALF_WEIGHT[u] is C(u)·cos(uπ/16)·(±1)/2.
 */
const HALF_WEIGHT = Array.from({ length: 8 }, (_, u) => {
  if (u === 4) return 0
  const c = u === 0 ? Math.SQRT1_2 : 1
  return ((u < 4 ? 1 : -1) * c * Math.cos((u * Math.PI) / 16)) / 2
})
const COS_PI_4 = Math.cos(Math.PI / 4)
const COS_PI_8 = Math.cos(Math.PI / 8)
const COS_3PI_8 = Math.cos((3 * Math.PI) / 8)
const halfScaleTables = new WeakMap<Uint16Array, Float64Array>()
const halfWorkspace = new Float64Array(32)

let lastQuant: Uint16Array | null = null
let lastTable: Float64Array = new Float64Array(64)

function halfScaleTable(quant: Uint16Array): Float64Array {
  // Blocks come in runs of the same component: one comparison instead of a WeakMap lookup per block.
  if (quant === lastQuant) return lastTable
  let table = halfScaleTables.get(quant)
  lastQuant = quant
  if (!table) {
    table = new Float64Array(64)
    for (let i = 0; i < 64; i++) table[i] = quant[i] * HALF_WEIGHT[i >> 3] * HALF_WEIGHT[i & 7]
    halfScaleTables.set(quant, table)
  }
  lastTable = table
  return table
}

/** One block at half resolution (4×4): the 2×2 means of the full inverse DCT, computed directly. */
function idctHalf(coefs: Int16Array, off: number, quant: Uint16Array, out: Uint8ClampedArray, outOff: number, stride: number): void {
  const q = halfScaleTable(quant)
  const ws = halfWorkspace
  // Columns (vertical frequencies) of each horizontal frequency u: rows Y 0..3 into ws[Y * 8 + u].
  for (let u = 0; u < 8; u++) {
    if (u === 4) continue
    const c = off + u
    const g0 = coefs[c] * q[u]
    const g1 = coefs[c + 8] * q[u + 8] + coefs[c + 56] * q[u + 56]
    const g2 = coefs[c + 16] * q[u + 16] + coefs[c + 48] * q[u + 48]
    const g3 = coefs[c + 24] * q[u + 24] + coefs[c + 40] * q[u + 40]
    const e0 = g0 + g2 * COS_PI_4
    const e1 = g0 - g2 * COS_PI_4
    const o0 = g1 * COS_PI_8 + g3 * COS_3PI_8
    const o1 = g1 * COS_3PI_8 - g3 * COS_PI_8
    ws[u] = e0 + o0
    ws[8 + u] = e1 + o1
    ws[16 + u] = e1 - o1
    ws[24 + u] = e0 - o0
  }
  for (let y = 0, w = 0, o = outOff; y < 4; y++, w += 8, o += stride) {
    const g0 = ws[w]
    const g1 = ws[w + 1] + ws[w + 7]
    const g2 = ws[w + 2] + ws[w + 6]
    const g3 = ws[w + 3] + ws[w + 5]
    const e0 = g0 + g2 * COS_PI_4 + 128
    const e1 = g0 - g2 * COS_PI_4 + 128
    const o0 = g1 * COS_PI_8 + g3 * COS_3PI_8
    const o1 = g1 * COS_3PI_8 - g3 * COS_PI_8
    // The clamped array rounds to the nearest integer as it stores.
    out[o] = e0 + o0
    out[o + 1] = e1 + o1
    out[o + 2] = e1 - o1
    out[o + 3] = e0 - o0
  }
}

const QUARTER_A = (COS_PI_8 + COS_3PI_8) / 2
const QUARTER_B = (COS_3PI_8 - COS_PI_8) / 2

/**
 * One block at quarter resolution (2×2): folding the half-scale transform once more, the mean of each pair of its
 * outputs is g0 ± (g1·A + g3·B), so frequency 2 drops out as 4 did. A quarter of the work of idctHalf.
 */
function idctQuarter(coefs: Int16Array, off: number, quant: Uint16Array, out: Uint8ClampedArray, outOff: number, stride: number): void {
  const q = halfScaleTable(quant)
  const ws = halfWorkspace
  // The rows below read horizontal frequencies 0, 1, 3, 5 and 7 only.
  for (let u = 0; u < 8; u++) {
    if ((u & 1) === 0 && u !== 0) continue
    const c = off + u
    const g0 = coefs[c] * q[u]
    const g1 = coefs[c + 8] * q[u + 8] + coefs[c + 56] * q[u + 56]
    const g3 = coefs[c + 24] * q[u + 24] + coefs[c + 40] * q[u + 40]
    const d = g1 * QUARTER_A + g3 * QUARTER_B
    ws[u] = g0 + d
    ws[8 + u] = g0 - d
  }
  for (let y = 0, w = 0, o = outOff; y < 2; y++, w += 8, o += stride) {
    const g0 = ws[w] + 128
    const d = (ws[w + 1] + ws[w + 7]) * QUARTER_A + (ws[w + 3] + ws[w + 5]) * QUARTER_B
    out[o] = g0 + d
    out[o + 1] = g0 - d
  }
}

/**
 * Writes one block into a component plane at 1/scale resolution (scale 1, 2, 4 or 8):
 * scale 8 needs only the DC term, 2 folds the transform to 4×4 and 4 to 2×2.
 */
export function outputBlock(
  coefs: Int16Array,
  off: number,
  quant: Uint16Array,
  scale: number,
  plane: Uint8ClampedArray,
  planeWidth: number,
  blockRow: number,
  blockCol: number,
  hasAc = true,
): void {
  const size = 8 / scale
  const base = blockRow * size * planeWidth + blockCol * size
  if (!hasAc) {
    const value = clamp(((coefs[off] * quant[0] + 4) >> 3) + 128)
    // Plain stores: a TypedArray fill call costs more than the two to eight samples of a row.
    for (let y = 0, row = base; y < size; y++, row += planeWidth) {
      for (let x = 0; x < size; x++) plane[row + x] = value
    }
    return
  }
  if (scale === 1) {
    idctBlock(coefs, off, quant, plane, base, planeWidth)
    return
  }
  if (scale === 2) {
    idctHalf(coefs, off, quant, plane, base, planeWidth)
    return
  }
  if (scale === 8) {
    plane[base] = clamp(((coefs[off] * quant[0] + 4) >> 3) + 128)
    return
  }
  idctQuarter(coefs, off, quant, plane, base, planeWidth)
}
