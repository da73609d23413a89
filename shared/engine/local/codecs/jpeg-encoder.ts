import { ZIGZAG } from './jpeg-entropy.ts'
import type { RgbaImage } from './raster.ts'

// Annex K example tables of ITU T.81, as every baseline encoder ships them.
const LUMA_QUANT = [
  16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51,
  87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101,
  72, 92, 95, 98, 112, 100, 103, 99,
]
const CHROMA_QUANT = [
  17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99, 99, 99, 47, 66, 99, 99, 99,
  99, 99, 99, ...new Array<number>(32).fill(99),
]
const DC_LUMA_COUNTS = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]
const DC_CHROMA_COUNTS = [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0]
const DC_VALUES = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
const AC_LUMA_COUNTS = [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d]
const AC_LUMA_VALUES = [
  0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07, 0x22, 0x71, 0x14,
  0x32, 0x81, 0x91, 0xa1, 0x08, 0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0, 0x24, 0x33, 0x62, 0x72, 0x82, 0x09,
  0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a,
  0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65,
  0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88,
  0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9,
  0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca,
  0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea,
  0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa,
]
const AC_CHROMA_COUNTS = [0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77]
const AC_CHROMA_VALUES = [
  0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71, 0x13, 0x22, 0x32,
  0x81, 0x08, 0x14, 0x42, 0x91, 0xa1, 0xb1, 0xc1, 0x09, 0x23, 0x33, 0x52, 0xf0, 0x15, 0x62, 0x72, 0xd1, 0x0a, 0x16,
  0x24, 0x34, 0xe1, 0x25, 0xf1, 0x17, 0x18, 0x19, 0x1a, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x35, 0x36, 0x37, 0x38, 0x39,
  0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64,
  0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x82, 0x83, 0x84, 0x85, 0x86,
  0x87, 0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
  0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8,
  0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9,
  0xea, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa,
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

function divisors(quant: Uint8Array): Float32Array {
  const d = new Float32Array(64)
  for (let i = 0; i < 64; i++) d[i] = 1 / (quant[i] * AAN_SCALE[i >> 3] * AAN_SCALE[i & 7] * 8)
  return d
}

class ByteWriter {
  bytes: Uint8Array
  length = 0
  private bitBuffer = 0
  private bitCount = 0

  constructor(capacity: number) {
    this.bytes = new Uint8Array(capacity)
  }

  reserve(extra: number): void {
    if (this.length + extra <= this.bytes.length) return
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + extra))
    grown.set(this.bytes.subarray(0, this.length))
    this.bytes = grown
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
}

/** Baseline JPEG, 4:2:0, standard tables; alpha is ignored. Pure arithmetic, so identical input gives identical bytes. */
export function encodeJpeg(image: RgbaImage, quality = 88): Uint8Array {
  const { width, height, data } = image
  const lumaQuant = scaledQuant(LUMA_QUANT, quality)
  const chromaQuant = scaledQuant(CHROMA_QUANT, quality)
  const out = new ByteWriter(Math.max(65536, (width * height) >> 1))
  writeHeaders(out, width, height, lumaQuant, chromaQuant)

  const lumaDiv = divisors(lumaQuant)
  const chromaDiv = divisors(chromaQuant)
  const yBlocks = [new Float32Array(64), new Float32Array(64), new Float32Array(64), new Float32Array(64)]
  const cb = new Float32Array(64)
  const cr = new Float32Array(64)
  const quantized = new Int32Array(64)
  const pred = [0, 0, 0]

  const encodeBlock = (block: Float32Array, div: Float32Array, dc: HuffmanCodes, ac: HuffmanCodes, channel: number): void => {
    forwardDct(block)
    for (let i = 0; i < 64; i++) {
      const v = block[i] * div[i]
      quantized[i] = v > 0 ? (v + 0.5) | 0 : (v - 0.5) | 0
    }
    const diff = quantized[0] - pred[channel]
    pred[channel] = quantized[0]
    writeValue(out, diff, dc, 0)
    let run = 0
    for (let k = 1; k < 64; k++) {
      const v = quantized[ZIGZAG[k]]
      if (v === 0) {
        run++
        continue
      }
      while (run > 15) {
        out.bits(ac.code[0xf0], ac.size[0xf0])
        run -= 16
      }
      writeValue(out, v, ac, run << 4)
      run = 0
    }
    if (run > 0) out.bits(ac.code[0], ac.size[0])
  }

  const { luma, cbPlane, crPlane, paddedWidth, paddedHeight } = toYcbcrPlanes(image)
  const chromaWidth = paddedWidth >> 1
  for (let my = 0; my < paddedHeight; my += 16) {
    for (let mx = 0; mx < paddedWidth; mx += 16) {
      out.reserve(8192)
      for (let b = 0; b < 4; b++) {
        const block = yBlocks[b]
        const origin = (my + ((b >> 1) << 3)) * paddedWidth + mx + ((b & 1) << 3)
        for (let y = 0; y < 8; y++) {
          const row = origin + y * paddedWidth
          for (let x = 0; x < 8; x++) block[(y << 3) | x] = luma[row + x]
        }
        encodeBlock(block, lumaDiv, DC_LUMA, AC_LUMA, 0)
      }
      const chromaOrigin = (my >> 1) * chromaWidth + (mx >> 1)
      for (let y = 0; y < 8; y++) {
        const row = chromaOrigin + y * chromaWidth
        for (let x = 0; x < 8; x++) {
          cb[(y << 3) | x] = cbPlane[row + x]
          cr[(y << 3) | x] = crPlane[row + x]
        }
      }
      encodeBlock(cb, chromaDiv, DC_CHROMA, AC_CHROMA, 1)
      encodeBlock(cr, chromaDiv, DC_CHROMA, AC_CHROMA, 2)
    }
  }
  out.flushBits()
  out.reserve(2)
  out.u16(0xffd9)
  return out.bytes.slice(0, out.length)
}

/** Level-shifted Y and 2×2-averaged Cb/Cr planes, padded to whole MCUs by repeating the last row and column. */
function toYcbcrPlanes({ width, height, data }: RgbaImage) {
  const paddedWidth = Math.ceil(width / 16) * 16
  const paddedHeight = Math.ceil(height / 16) * 16
  const luma = new Float32Array(paddedWidth * paddedHeight)
  const cbPlane = new Float32Array((paddedWidth * paddedHeight) >> 2)
  const crPlane = new Float32Array((paddedWidth * paddedHeight) >> 2)
  const chromaWidth = paddedWidth >> 1
  for (let y = 0; y < paddedHeight; y++) {
    const source = Math.min(y, height - 1) * width * 4
    const row = y * paddedWidth
    const chromaRow = (y >> 1) * chromaWidth
    for (let x = 0; x < paddedWidth; x++) {
      const p = source + (x < width ? x : width - 1) * 4
      const r = data[p]
      const g = data[p + 1]
      const b = data[p + 2]
      luma[row + x] = 0.299 * r + 0.587 * g + 0.114 * b - 128
      const c = chromaRow + (x >> 1)
      cbPlane[c] += 0.25 * (-0.168736 * r - 0.331264 * g + 0.5 * b)
      crPlane[c] += 0.25 * (0.5 * r - 0.418688 * g - 0.081312 * b)
    }
  }
  return { luma, cbPlane, crPlane, paddedWidth, paddedHeight }
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
  out.u16(2 + tables.reduce((n, [, counts, values]) => n + 17 + values.length, 0))
  for (const [id, counts, values] of tables) {
    out.byte(id)
    out.array(counts)
    out.array(values)
  }
  out.array([0xff, 0xda, 0, 12, 3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0])
}

/** Floating-point AAN forward DCT (IJG jfdctflt), in place on a row-major 8×8 block. */
function forwardDct(d: Float32Array): void {
  for (let pass = 0; pass < 2; pass++) {
    const step = pass === 0 ? 1 : 8
    const stride = pass === 0 ? 8 : 1
    for (let i = 0; i < 8; i++) {
      const o = i * stride
      const t0 = d[o] + d[o + 7 * step]
      const t7 = d[o] - d[o + 7 * step]
      const t1 = d[o + step] + d[o + 6 * step]
      const t6 = d[o + step] - d[o + 6 * step]
      const t2 = d[o + 2 * step] + d[o + 5 * step]
      const t5 = d[o + 2 * step] - d[o + 5 * step]
      const t3 = d[o + 3 * step] + d[o + 4 * step]
      const t4 = d[o + 3 * step] - d[o + 4 * step]
      let t10 = t0 + t3
      const t13 = t0 - t3
      let t11 = t1 + t2
      let t12 = t1 - t2
      d[o] = t10 + t11
      d[o + 4 * step] = t10 - t11
      const z1 = (t12 + t13) * 0.707106781
      d[o + 2 * step] = t13 + z1
      d[o + 6 * step] = t13 - z1
      t10 = t4 + t5
      t11 = t5 + t6
      t12 = t6 + t7
      const z5 = (t10 - t12) * 0.382683433
      const z2 = 0.5411961 * t10 + z5
      const z4 = 1.306562965 * t12 + z5
      const z3 = t11 * 0.707106781
      const z11 = t7 + z3
      const z13 = t7 - z3
      d[o + 5 * step] = z13 + z2
      d[o + 3 * step] = z13 - z2
      d[o + step] = z11 + z4
      d[o + 7 * step] = z11 - z4
    }
  }
}
