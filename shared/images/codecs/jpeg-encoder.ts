import { ZIGZAG } from './jpeg-entropy.ts'
import { rgbaRows, type RgbaImage, type RowSource } from './raster.ts'

// Annex K example tables of ITU T.81, as every baseline encoder ships them.
const LUMA_QUANT = [
  16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62, 18, 22,
  37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
]
const CHROMA_QUANT = [
  17,
  18,
  24,
  47,
  99,
  99,
  99,
  99,
  18,
  21,
  26,
  66,
  99,
  99,
  99,
  99,
  24,
  26,
  56,
  99,
  99,
  99,
  99,
  99,
  47,
  66,
  99,
  99,
  99,
  99,
  99,
  99,
  ...new Array<number>(32).fill(99),
]
const DC_LUMA_COUNTS = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]
const DC_CHROMA_COUNTS = [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0]
const DC_VALUES = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
const AC_LUMA_COUNTS = [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d]
const AC_LUMA_VALUES = [
  0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07, 0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xa1,
  0x08, 0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0, 0x24, 0x33, 0x62, 0x72, 0x82, 0x09, 0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x25, 0x26,
  0x27, 0x28, 0x29, 0x2a, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55, 0x56,
  0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x83, 0x84, 0x85,
  0x86, 0x87, 0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa,
  0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6,
  0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9,
  0xfa,
]
const AC_CHROMA_COUNTS = [0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77]
const AC_CHROMA_VALUES = [
  0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71, 0x13, 0x22, 0x32, 0x81, 0x08, 0x14, 0x42,
  0x91, 0xa1, 0xb1, 0xc1, 0x09, 0x23, 0x33, 0x52, 0xf0, 0x15, 0x62, 0x72, 0xd1, 0x0a, 0x16, 0x24, 0x34, 0xe1, 0x25, 0xf1, 0x17, 0x18, 0x19,
  0x1a, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55,
  0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x82, 0x83,
  0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8,
  0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4,
  0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9,
  0xfa,
]
const AAN_SCALE = [1, 1.387039845, 1.306562965, 1.175875602, 1, 0.785694958, 0.5411961, 0.275899379]

interface HuffmanCodes {
  code: Uint16Array
  size: Uint8Array
}

function huffmanCodes(counts: number[], values: number[]): HuffmanCodes {
  const code = new Uint16Array(256)
  const size = new Uint8Array(256)
  let next = 0
  let k = 0
  for (let length = 1; length <= 16; length++) {
    for (let i = 0; i < counts[length - 1]; i++, k++, next++) {
      code[values[k]] = next
      size[values[k]] = length
    }
    next <<= 1
  }
  return { code, size }
}

const DC_LUMA = huffmanCodes(DC_LUMA_COUNTS, DC_VALUES)
const DC_CHROMA = huffmanCodes(DC_CHROMA_COUNTS, DC_VALUES)
const AC_LUMA = huffmanCodes(AC_LUMA_COUNTS, AC_LUMA_VALUES)
const AC_CHROMA = huffmanCodes(AC_CHROMA_COUNTS, AC_CHROMA_VALUES)

function scaledQuant(base: number[], quality: number): Uint8Array {
  const q = Math.min(100, Math.max(1, Math.round(quality)))
  const factor = q < 50 ? 5000 / q : 200 - q * 2
  return Uint8Array.from(base, (v) => Math.min(255, Math.max(1, Math.floor((v * factor + 50) / 100))))
}

/** Per-coefficient multipliers folding the AAN output scaling and the quantizer (and, for chroma, the 2×2 mean). */
function divisors(quant: Uint8Array, sampleCount = 1): Float64Array {
  const d = new Float64Array(64)
  for (let i = 0; i < 64; i++) d[i] = 1 / (quant[i] * AAN_SCALE[i >> 3] * AAN_SCALE[i & 7] * 8 * sampleCount)
  return d
}

/**
 * The encoded bytes, in chunks: a full chunk is kept and a new one begun, never grown and copied, so encoding
 * allocates about twice the output (the chunks, then the bytes joined once) whatever the first guess of its size.
 */
class ByteWriter {
  bytes: Uint8Array
  length = 0
  private readonly full: Uint8Array[] = []
  private fullLength = 0
  private bitBuffer = 0
  private bitCount = 0

  constructor(private chunkSize: number) {
    this.bytes = new Uint8Array(chunkSize)
  }

  /** Room for `extra` bytes in the current chunk. */
  reserve(extra: number): void {
    if (this.length + extra <= this.bytes.length) return
    this.full.push(this.bytes.subarray(0, this.length))
    this.fullLength += this.length
    this.chunkSize = Math.min(MAX_CHUNK, this.chunkSize * 2)
    this.bytes = new Uint8Array(Math.max(this.chunkSize, extra))
    this.length = 0
  }

  byte(b: number): void {
    this.bytes[this.length++] = b
  }

  u16(v: number): void {
    this.byte(v >> 8)
    this.byte(v & 255)
  }

  array(values: ArrayLike<number>): void {
    for (let i = 0; i < values.length; i++) this.byte(values[i])
  }

  bits(code: number, size: number): void {
    this.bitBuffer = ((this.bitBuffer << size) | code) & 0xffffff
    this.bitCount += size
    while (this.bitCount >= 8) {
      this.bitCount -= 8
      const b = (this.bitBuffer >> this.bitCount) & 255
      this.bytes[this.length++] = b
      if (b === 0xff) this.bytes[this.length++] = 0
    }
  }

  flushBits(): void {
    if (this.bitCount > 0) this.bits((1 << (8 - this.bitCount)) - 1, 8 - this.bitCount)
  }

  /** Every byte written, in one array of exactly their length. */
  joined(): Uint8Array {
    const out = new Uint8Array(this.fullLength + this.length)
    let at = 0
    for (const chunk of [...this.full, this.bytes.subarray(0, this.length)]) {
      out.set(chunk, at)
      at += chunk.length
    }
    return out
  }
}

const MAX_CHUNK = 1024 * 1024

/** One block's coefficients: transformed, quantized and Huffman-coded; returns its DC for the next prediction. */
function encodeBlock(
  out: ByteWriter,
  block: Float64Array,
  div: Float64Array,
  dc: HuffmanCodes,
  ac: HuffmanCodes,
  previousDc: number,
): number {
  forwardDct(block)
  const first = block[0] * div[0]
  const dcValue = first > 0 ? (first + 0.5) | 0 : (first - 0.5) | 0
  writeValue(out, dcValue - previousDc, dc, 0)
  let run = 0
  for (let k = 1; k < 64; k++) {
    const z = ZIGZAG[k]
    const scaled = block[z] * div[z]
    // Most high-frequency terms quantize to 0; the rest round half away from zero.
    if (scaled < 0.5 && scaled > -0.5) {
      run++
      continue
    }
    const v = scaled > 0 ? (scaled + 0.5) | 0 : (scaled - 0.5) | 0
    while (run > 15) {
      out.bits(ac.code[0xf0], ac.size[0xf0])
      run -= 16
    }
    writeValue(out, v, ac, run << 4)
    run = 0
  }
  if (run > 0) out.bits(ac.code[0], ac.size[0])
  return dcValue
}

/** Baseline JPEG, 4:2:0, standard tables; alpha is ignored. Pure arithmetic, so identical input gives identical bytes. */
export function encodeJpeg(image: RgbaImage, quality = 88): Uint8Array {
  return encodeJpegRows(rgbaRows(image), quality)
}

/** encodeJpeg reading its source one 16-row strip (a row of MCUs) at a time. */
export function encodeJpegRows(source: RowSource, quality = 88): Uint8Array {
  const { width, height } = source
  const lumaQuant = scaledQuant(LUMA_QUANT, quality)
  const chromaQuant = scaledQuant(CHROMA_QUANT, quality)
  // A first guess of a tenth of the RGBA size: most photos at the usual qualities take less.
  const out = new ByteWriter(Math.min(MAX_CHUNK, Math.max(65536, Math.ceil((width * height * 4) / 10))))
  writeHeaders(out, width, height, lumaQuant, chromaQuant)

  const lumaDiv = divisors(lumaQuant)
  // Chroma blocks hold sums of 2×2 pixels; the mean's 1/4 is folded into the divisors.
  const chromaDiv = divisors(chromaQuant, 4)
  const luma = [new Float64Array(64), new Float64Array(64), new Float64Array(64), new Float64Array(64)]
  const cb = new Float64Array(64)
  const cr = new Float64Array(64)
  let yDc = 0
  let cbDc = 0
  let crDc = 0

  // Whole MCUs: past the right and bottom edges the last column and row repeat.
  const paddedWidth = Math.ceil(width / 16) * 16
  const paddedHeight = Math.ceil(height / 16) * 16
  const columnOffset = new Int32Array(paddedWidth)
  for (let x = 0; x < paddedWidth; x++) columnOffset[x] = Math.min(x, width - 1) * 4
  // Offsets of the strip's 16 rows in the strip; the image's last row repeats past its bottom edge.
  const rowOffset = new Int32Array(16)

  for (let my = 0; my < paddedHeight; my += 16) {
    const rows = Math.min(16, height - my)
    const data = source.rows(my, rows)
    for (let r = 0; r < 16; r++) rowOffset[r] = Math.min(r, rows - 1) * width * 4
    for (let mx = 0; mx < paddedWidth; mx += 16) {
      out.reserve(8192)
      // One 2×2 group per chroma sample: four luma samples, and the group's colour sums for Cb and Cr.
      for (let cy = 0; cy < 8; cy++) {
        const top = rowOffset[2 * cy]
        const bottom = rowOffset[2 * cy + 1]
        const block = luma[(cy >> 2) << 1]
        const right = luma[((cy >> 2) << 1) + 1]
        const lumaRow = ((2 * cy) & 7) << 3
        for (let cx = 0; cx < 8; cx++) {
          const left = columnOffset[mx + 2 * cx]
          const next = columnOffset[mx + 2 * cx + 1]
          const target = cx < 4 ? block : right
          const at = lumaRow + ((2 * cx) & 7)
          let p = top + left
          let r = data[p],
            g = data[p + 1],
            b = data[p + 2]
          target[at] = 0.299 * r + 0.587 * g + 0.114 * b - 128
          let sr = r,
            sg = g,
            sb = b
          p = top + next
          ;(r = data[p]), (g = data[p + 1]), (b = data[p + 2])
          target[at + 1] = 0.299 * r + 0.587 * g + 0.114 * b - 128
          ;(sr += r), (sg += g), (sb += b)
          p = bottom + left
          ;(r = data[p]), (g = data[p + 1]), (b = data[p + 2])
          target[at + 8] = 0.299 * r + 0.587 * g + 0.114 * b - 128
          ;(sr += r), (sg += g), (sb += b)
          p = bottom + next
          ;(r = data[p]), (g = data[p + 1]), (b = data[p + 2])
          target[at + 9] = 0.299 * r + 0.587 * g + 0.114 * b - 128
          ;(sr += r), (sg += g), (sb += b)
          const c = (cy << 3) | cx
          cb[c] = -0.168736 * sr - 0.331264 * sg + 0.5 * sb
          cr[c] = 0.5 * sr - 0.418688 * sg - 0.081312 * sb
        }
      }
      for (let b = 0; b < 4; b++) yDc = encodeBlock(out, luma[b], lumaDiv, DC_LUMA, AC_LUMA, yDc)
      cbDc = encodeBlock(out, cb, chromaDiv, DC_CHROMA, AC_CHROMA, cbDc)
      crDc = encodeBlock(out, cr, chromaDiv, DC_CHROMA, AC_CHROMA, crDc)
    }
  }
  out.flushBits()
  out.reserve(2)
  out.u16(0xffd9)
  return out.joined()
}

function writeValue(out: ByteWriter, value: number, table: HuffmanCodes, runBits: number): void {
  const magnitude = value < 0 ? -value : value
  const size = magnitude === 0 ? 0 : 32 - Math.clz32(magnitude)
  out.bits(table.code[runBits | size], table.size[runBits | size])
  if (size > 0) out.bits((value < 0 ? value - 1 : value) & ((1 << size) - 1), size)
}

function writeHeaders(out: ByteWriter, width: number, height: number, lumaQuant: Uint8Array, chromaQuant: Uint8Array): void {
  out.u16(0xffd8)
  out.array([0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0])
  out.u16(0xffdb)
  out.u16(2 + 2 * 65)
  for (const [index, table] of [lumaQuant, chromaQuant].entries()) {
    out.byte(index)
    for (let k = 0; k < 64; k++) out.byte(table[ZIGZAG[k]])
  }
  out.array([0xff, 0xc0, 0, 17, 8, height >> 8, height & 255, width >> 8, width & 255, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1])
  const tables: [number, number[], number[]][] = [
    [0x00, DC_LUMA_COUNTS, DC_VALUES],
    [0x10, AC_LUMA_COUNTS, AC_LUMA_VALUES],
    [0x01, DC_CHROMA_COUNTS, DC_VALUES],
    [0x11, AC_CHROMA_COUNTS, AC_CHROMA_VALUES],
  ]
  out.u16(0xffc4)
  out.u16(2 + tables.reduce((n, [, , values]) => n + 17 + values.length, 0))
  for (const [id, counts, values] of tables) {
    out.byte(id)
    out.array(counts)
    out.array(values)
  }
  out.array([0xff, 0xda, 0, 12, 3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0])
}

/** Floating-point AAN forward DCT (IJG jfdctflt), in place on a row-major 8×8 block: rows, then columns. */
function forwardDct(d: Float64Array): void {
  for (let o = 0; o < 64; o += 8) dct8(d, o, 1)
  for (let o = 0; o < 8; o++) dct8(d, o, 8)
}

function dct8(d: Float64Array, o: number, step: number): void {
  const i1 = o + step
  const i2 = o + 2 * step
  const i3 = o + 3 * step
  const i4 = o + 4 * step
  const i5 = o + 5 * step
  const i6 = o + 6 * step
  const i7 = o + 7 * step
  const t0 = d[o] + d[i7]
  const t7 = d[o] - d[i7]
  const t1 = d[i1] + d[i6]
  const t6 = d[i1] - d[i6]
  const t2 = d[i2] + d[i5]
  const t5 = d[i2] - d[i5]
  const t3 = d[i3] + d[i4]
  const t4 = d[i3] - d[i4]
  let t10 = t0 + t3
  const t13 = t0 - t3
  let t11 = t1 + t2
  let t12 = t1 - t2
  d[o] = t10 + t11
  d[i4] = t10 - t11
  const z1 = (t12 + t13) * 0.707106781
  d[i2] = t13 + z1
  d[i6] = t13 - z1
  t10 = t4 + t5
  t11 = t5 + t6
  t12 = t6 + t7
  const z5 = (t10 - t12) * 0.382683433
  const z2 = 0.5411961 * t10 + z5
  const z4 = 1.306562965 * t12 + z5
  const z3 = t11 * 0.707106781
  const z11 = t7 + z3
  const z13 = t7 - z3
  d[i5] = z13 + z2
  d[i3] = z13 - z2
  d[i1] = z11 + z4
  d[i7] = z11 - z4
}
