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
const block = new Uint8Array(64)

function clamp(v: number): number {
  return v < 0 ? 0 : v > 255 ? 255 : v
}

/** Dequantizes and inverse-transforms one block (natural order) into 8×8 samples. */
export function idctBlock(coefs: Int16Array, off: number, quant: Uint16Array, out: Uint8Array, outOff: number, stride: number): void {
  const ws = workspace
  for (let i = 0; i < 8; i++) {
    const c = off + i
    if (coefs[c + 8] === 0 && coefs[c + 16] === 0 && coefs[c + 24] === 0 && coefs[c + 32] === 0 &&
      coefs[c + 40] === 0 && coefs[c + 48] === 0 && coefs[c + 56] === 0) {
      const dc = coefs[c] * quant[i] * 4
      ws[i] = ws[i + 8] = ws[i + 16] = ws[i + 24] = ws[i + 32] = ws[i + 40] = ws[i + 48] = ws[i + 56] = dc
      continue
    }
    const s0 = coefs[c] * quant[i]
    const s1 = coefs[c + 8] * quant[i + 8]
    const s2 = coefs[c + 16] * quant[i + 16]
    const s3 = coefs[c + 24] * quant[i + 24]
    const s4 = coefs[c + 32] * quant[i + 32]
    const s5 = coefs[c + 40] * quant[i + 40]
    const s6 = coefs[c + 48] * quant[i + 48]
    const s7 = coefs[c + 56] * quant[i + 56]
    idct1d(s0, s1, s2, s3, s4, s5, s6, s7, 512, 10, ws, i, 8)
  }
  for (let r = 0; r < 8; r++) {
    const w = r * 8
    idct1d(ws[w], ws[w + 1], ws[w + 2], ws[w + 3], ws[w + 4], ws[w + 5], ws[w + 6], ws[w + 7], 65536 + (128 << 17), 17, ws, w, 1)
    const o = outOff + r * stride
    for (let x = 0; x < 8; x++) out[o + x] = clamp(ws[w + x])
  }
}

function idct1d(
  s0: number, s1: number, s2: number, s3: number, s4: number, s5: number, s6: number, s7: number,
  bias: number, shift: number, out: Int32Array, at: number, step: number,
): void {
  let p1 = (s2 + s6) * F0541
  let t2 = p1 + s6 * FM1847
  let t3 = p1 + s2 * F0765
  let t0 = (s0 + s4) * 4096
  let t1 = (s0 - s4) * 4096
  const x0 = t0 + t3 + bias
  const x3 = t0 - t3 + bias
  const x1 = t1 + t2 + bias
  const x2 = t1 - t2 + bias
  t0 = s7
  t1 = s5
  t2 = s3
  t3 = s1
  let p3 = t0 + t2
  let p4 = t1 + t3
  p1 = t0 + t3
  let p2 = t1 + t2
  const p5 = (p3 + p4) * F1175
  t0 *= F0298
  t1 *= F2053
  t2 *= F3072
  t3 *= F1501
  p1 = p5 + p1 * FM0899
  p2 = p5 + p2 * FM2562
  p3 *= FM1961
  p4 *= FM0390
  t3 += p1 + p4
  t2 += p2 + p3
  t1 += p2 + p4
  t0 += p1 + p3
  out[at] = (x0 + t3) >> shift
  out[at + 7 * step] = (x0 - t3) >> shift
  out[at + step] = (x1 + t2) >> shift
  out[at + 6 * step] = (x1 - t2) >> shift
  out[at + 2 * step] = (x2 + t1) >> shift
  out[at + 5 * step] = (x2 - t1) >> shift
  out[at + 3 * step] = (x3 + t0) >> shift
  out[at + 4 * step] = (x3 - t0) >> shift
}

/**
 * Writes one block into a component plane at 1/scale resolution (scale 1, 2, 4 or 8):
 * scale 8 needs only the DC term, 2 and 4 average the full transform.
 */
export function outputBlock(
  coefs: Int16Array, off: number, quant: Uint16Array, scale: number,
  plane: Uint8Array, planeWidth: number, blockRow: number, blockCol: number, hasAc = true,
): void {
  const size = 8 / scale
  const base = blockRow * size * planeWidth + blockCol * size
  if (!hasAc) {
    const value = clamp(((coefs[off] * quant[0] + 4) >> 3) + 128)
    for (let y = 0; y < size; y++) plane.fill(value, base + y * planeWidth, base + y * planeWidth + size)
    return
  }
  if (scale === 1) {
    idctBlock(coefs, off, quant, plane, base, planeWidth)
    return
  }
  if (scale === 8) {
    plane[base] = clamp(((coefs[off] * quant[0] + 4) >> 3) + 128)
    return
  }
  idctBlock(coefs, off, quant, block, 0, 8)
  const area = scale * scale
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      let sum = 0
      for (let dy = 0; dy < scale; dy++) {
        const row = (y * scale + dy) * 8 + x * scale
        for (let dx = 0; dx < scale; dx++) sum += block[row + dx]
      }
      plane[base + y * planeWidth + x] = ((sum + (area >> 1)) / area) | 0
    }
  }
}
