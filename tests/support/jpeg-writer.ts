/**
 * A second JPEG writer, for tests and benches: every layout the decoder reads (grayscale, 4:4:4, 4:2:2, 4:2:0, CMYK
 * and YCCK behind an Adobe marker), restart intervals, and progressive files with successive approximation in
 * libjpeg's default order of scans, with Huffman tables made for each scan. It writes given quantized
 * coefficients, so a baseline and a progressive file of the same coefficients must decode to the same pixels.
 */
import type { RgbaImage } from '../../shared/images/codecs/raster.ts'

/** Zigzag position → natural position, as T.81 figure A.6 (kept apart from the decoder's copy on purpose). */
const ZIGZAG = Uint8Array.from({ length: 64 }, (_, k) => zigzagAt(k))

function zigzagAt(k: number): number {
  let row = 0
  let col = 0
  for (let i = 0; i < k; i++) {
    const up = (row + col) % 2 === 0
    if (up) {
      if (col === 7) row++
      else if (row === 0) col++
      else row--, col++
    } else if (row === 7) col++
    else if (col === 0) row++
    else row++, col--
  }
  return row * 8 + col
}

export type JpegLayout = 'gray' | '4:4:4' | '4:2:2' | '4:2:0' | 'cmyk' | 'ycck'

export interface CoefficientComponent {
  id: number
  h: number
  v: number
  /** Quantization table in natural order. */
  quant: Uint16Array
  blocksPerLine: number
  blocksPerColumn: number
  /** Quantized coefficients, 64 a block in natural order, blocks row by row over whole MCUs. */
  blocks: Int16Array
}

export interface CoefficientImage {
  width: number
  height: number
  components: CoefficientComponent[]
  /** The Adobe APP14 colour transform to write (0: none, 2: YCCK); no Adobe marker when undefined. */
  adobeTransform?: number
}

const SAMPLING: Record<JpegLayout, [number, number][]> = {
  gray: [[1, 1]],
  '4:4:4': [
    [1, 1],
    [1, 1],
    [1, 1],
  ],
  '4:2:2': [
    [2, 1],
    [1, 1],
    [1, 1],
  ],
  '4:2:0': [
    [2, 2],
    [1, 1],
    [1, 1],
  ],
  cmyk: [
    [1, 1],
    [1, 1],
    [1, 1],
    [1, 1],
  ],
  ycck: [
    [2, 2],
    [1, 1],
    [1, 1],
    [2, 2],
  ],
}

const LUMA_QUANT = [
  16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62, 18, 22,
  37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
]
const CHROMA_QUANT = Array.from({ length: 64 }, (_, i) =>
  i >> 3 < 4 && (i & 7) < 4 ? [17, 18, 24, 47, 18, 21, 26, 66, 24, 26, 56, 99, 47, 66, 99, 99][(i >> 3) * 4 + (i & 7)] : 99,
)

export function quantTable(quality: number, chroma: boolean): Uint16Array {
  const factor = quality < 50 ? 5000 / quality : 200 - quality * 2
  return Uint16Array.from(chroma ? CHROMA_QUANT : LUMA_QUANT, (v) => Math.min(255, Math.max(1, Math.floor((v * factor + 50) / 100))))
}

/** An empty coefficient image of the given layout: whole MCUs of zero blocks. */
export function blankCoefficients(width: number, height: number, layout: JpegLayout, quality = 90): CoefficientImage {
  const sampling = SAMPLING[layout]
  const hMax = Math.max(...sampling.map(([h]) => h))
  const vMax = Math.max(...sampling.map(([, v]) => v))
  const mcusPerLine = Math.ceil(width / (8 * hMax))
  const mcusPerColumn = Math.ceil(height / (8 * vMax))
  const components = sampling.map(([h, v], i): CoefficientComponent => {
    const blocksPerLine = mcusPerLine * h
    const blocksPerColumn = mcusPerColumn * v
    const chroma = layout !== 'cmyk' && (i === 1 || i === 2)
    return {
      id: i + 1,
      h,
      v,
      quant: quantTable(quality, chroma),
      blocksPerLine,
      blocksPerColumn,
      blocks: new Int16Array(blocksPerLine * blocksPerColumn * 64),
    }
  })
  const adobeTransform = layout === 'cmyk' ? 0 : layout === 'ycck' ? 2 : undefined
  return { width, height, components, adobeTransform }
}

const COSINES = Float64Array.from({ length: 64 }, (_, i) => {
  const u = i >> 3
  const x = i & 7
  return ((u === 0 ? Math.SQRT1_2 : 1) * Math.cos(((2 * x + 1) * u * Math.PI) / 16)) / 2
})

/** Forward DCT of 8×8 samples (level-shifted), quantized, into blocks[off..off+64]. */
function quantizeBlock(samples: Float64Array, quant: Uint16Array, blocks: Int16Array, off: number, rows: Float64Array): void {
  for (let y = 0; y < 8; y++) {
    for (let u = 0; u < 8; u++) {
      let sum = 0
      for (let x = 0; x < 8; x++) sum += samples[y * 8 + x] * COSINES[u * 8 + x]
      rows[y * 8 + u] = sum
    }
  }
  for (let v = 0; v < 8; v++) {
    for (let u = 0; u < 8; u++) {
      let sum = 0
      for (let y = 0; y < 8; y++) sum += rows[y * 8 + u] * COSINES[v * 8 + y]
      blocks[off + v * 8 + u] = Math.round(sum / quant[v * 8 + u])
    }
  }
}

/** The colour planes a layout stores, at full resolution. */
function planesOf(image: RgbaImage, layout: JpegLayout): Float64Array[] {
  const { width, height, data } = image
  const count = SAMPLING[layout].length
  const planes = Array.from({ length: count }, () => new Float64Array(width * height))
  for (let i = 0, p = 0; i < width * height; i++, p += 4) {
    let r = data[p]
    let g = data[p + 1]
    let b = data[p + 2]
    if (layout === 'cmyk' || layout === 'ycck') {
      // Adobe's inverted CMYK: the decoder multiplies each stored ink by K / 255.
      const k = Math.max(r, g, b, 1)
      planes[3][i] = k
      r = (r * 255) / k
      g = (g * 255) / k
      b = (b * 255) / k
      if (layout === 'cmyk') {
        planes[0][i] = r
        planes[1][i] = g
        planes[2][i] = b
        continue
      }
      r = 255 - r
      g = 255 - g
      b = 255 - b
    }
    planes[0][i] = 0.299 * r + 0.587 * g + 0.114 * b
    if (count === 1) continue
    planes[1][i] = -0.168736 * r - 0.331264 * g + 0.5 * b + 128
    planes[2][i] = 0.5 * r - 0.418688 * g - 0.081312 * b + 128
  }
  return planes
}

/** Pixels to quantized coefficients: colour conversion, box-mean subsampling, edges repeated over whole MCUs. */
export function coefficientsOf(image: RgbaImage, layout: JpegLayout, quality = 90): CoefficientImage {
  const target = blankCoefficients(image.width, image.height, layout, quality)
  const planes = planesOf(image, layout)
  const hMax = Math.max(...target.components.map((c) => c.h))
  const vMax = Math.max(...target.components.map((c) => c.v))
  const samples = new Float64Array(64)
  const rows = new Float64Array(64)
  for (const [index, c] of target.components.entries()) {
    const plane = planes[index]
    const sx = hMax / c.h
    const sy = vMax / c.v
    const componentWidth = Math.ceil(image.width / sx)
    const componentHeight = Math.ceil(image.height / sy)
    const sample = (x: number, y: number): number => {
      const cx = Math.min(x, componentWidth - 1) * sx
      const cy = Math.min(y, componentHeight - 1) * sy
      let sum = 0
      let count = 0
      for (let dy = 0; dy < sy && cy + dy < image.height; dy++) {
        for (let dx = 0; dx < sx && cx + dx < image.width; dx++, count++) sum += plane[(cy + dy) * image.width + cx + dx]
      }
      return sum / count
    }
    for (let row = 0; row < c.blocksPerColumn; row++) {
      for (let col = 0; col < c.blocksPerLine; col++) {
        for (let i = 0; i < 64; i++) samples[i] = sample(col * 8 + (i & 7), row * 8 + (i >> 3)) - 128
        quantizeBlock(samples, c.quant, c.blocks, (row * c.blocksPerLine + col) * 64, rows)
      }
    }
  }
  return target
}

interface Scan {
  components: number[]
  ss: number
  se: number
  ah: number
  al: number
}

/** libjpeg's default progression (jpeg_simple_progression), generalised to any number of components. */
function progressiveScript(count: number): Scan[] {
  const each = (scan: Omit<Scan, 'components'>): Scan[] => Array.from({ length: count }, (_, i) => ({ components: [i], ...scan }))
  const all = Array.from({ length: count }, (_, i) => i)
  return [
    { components: all, ss: 0, se: 0, ah: 0, al: 1 },
    ...each({ ss: 1, se: 5, ah: 0, al: 2 }),
    ...each({ ss: 6, se: 63, ah: 0, al: 2 }),
    ...each({ ss: 1, se: 63, ah: 2, al: 1 }),
    { components: all, ss: 0, se: 0, ah: 1, al: 0 },
    ...each({ ss: 1, se: 63, ah: 1, al: 0 }),
  ]
}

export interface WriteOptions {
  progressive?: boolean
  /** MCUs between restart markers; none when 0. */
  restartInterval?: number
}

export function writeJpeg(image: CoefficientImage, options: WriteOptions = {}): Uint8Array {
  const { components, width, height } = image
  const out = new ByteSink()
  out.bytes(0xff, 0xd8)
  if (image.adobeTransform !== undefined) {
    out.bytes(0xff, 0xee, 0, 14, 0x41, 0x64, 0x6f, 0x62, 0x65, 0, 100, 0, 0, 0, 0, image.adobeTransform)
  }
  for (const [index, c] of components.entries()) {
    const wide = c.quant.some((q) => q > 255)
    out.bytes(0xff, 0xdb, 0, 3 + 64 * (wide ? 2 : 1), (wide ? 0x10 : 0) | index)
    for (let k = 0; k < 64; k++) {
      const q = c.quant[ZIGZAG[k]]
      if (wide) out.bytes(q >> 8, q & 255)
      else out.bytes(q)
    }
  }
  out.bytes(
    0xff,
    options.progressive ? 0xc2 : 0xc0,
    0,
    8 + 3 * components.length,
    8,
    height >> 8,
    height & 255,
    width >> 8,
    width & 255,
    components.length,
  )
  for (const [index, c] of components.entries()) out.bytes(c.id, (c.h << 4) | c.v, index)
  const interval = options.restartInterval ?? 0
  if (interval > 0) out.bytes(0xff, 0xdd, 0, 4, interval >> 8, interval & 255)
  const all = components.map((_, i) => i)
  const script = options.progressive ? progressiveScript(components.length) : [{ components: all, ss: 0, se: 63, ah: 0, al: 0 }]
  for (const scan of script) writeScan(out, image, scan, interval)
  out.bytes(0xff, 0xd9)
  return out.result()
}

/** Symbols go to a counter first (for the scan's Huffman tables), then to the writer. */
interface EntropySink {
  symbol(table: number, symbol: number): void
  bits(value: number, count: number): void
  restart(index: number): void
}

function writeScan(out: ByteSink, image: CoefficientImage, scan: Scan, interval: number): void {
  // Tables 0-3 are DC tables of the scan's components, 4-7 their AC tables.
  const frequencies = Array.from({ length: 8 }, () => new Int32Array(257))
  encodeScan(image, scan, interval, {
    symbol: (table, symbol) => frequencies[table][symbol]++,
    bits: () => undefined,
    restart: () => undefined,
  })
  const codes: { code: Uint16Array; size: Uint8Array }[] = []
  const tableBytes: number[] = []
  for (let table = 0; table < 8; table++) {
    if (!frequencies[table].some((f) => f > 0)) continue
    const { counts, values } = optimalTable(frequencies[table])
    codes[table] = canonicalCodes(counts, values)
    tableBytes.push(((table >> 2) << 4) | (table & 3), ...counts, ...values)
  }
  if (tableBytes.length > 0) out.bytes(0xff, 0xc4, (tableBytes.length + 2) >> 8, (tableBytes.length + 2) & 255, ...tableBytes)
  out.bytes(0xff, 0xda, 0, 6 + 2 * scan.components.length, scan.components.length)
  for (const i of scan.components) out.bytes(image.components[i].id, (i << 4) | i)
  out.bytes(scan.ss, scan.se, (scan.ah << 4) | scan.al)
  encodeScan(image, scan, interval, {
    symbol: (table, symbol) => out.bits(codes[table].code[symbol], codes[table].size[symbol]),
    bits: (value, count) => out.bits(value, count),
    restart: (index) => {
      out.flushBits()
      out.bytes(0xff, 0xd0 + (index & 7))
    },
  })
  out.flushBits()
}

function magnitudeBits(value: number): number {
  const magnitude = value < 0 ? -value : value
  return magnitude === 0 ? 0 : 32 - Math.clz32(magnitude)
}

function encodeScan(image: CoefficientImage, scan: Scan, interval: number, sink: EntropySink): void {
  const { ss, se, ah, al } = scan
  const components = scan.components.map((i) => ({ index: i, c: image.components[i] }))
  const hMax = Math.max(...image.components.map((c) => c.h))
  const vMax = Math.max(...image.components.map((c) => c.v))
  const mcusPerLine = Math.ceil(image.width / (8 * hMax))
  const mcusPerColumn = Math.ceil(image.height / (8 * vMax))
  const predictions = new Int32Array(4)
  let eobrun = 0
  let pendingBits: number[] = []

  const value = (v: number, size: number) => sink.bits((v < 0 ? v - 1 : v) & ((1 << size) - 1), size)
  const flushEobrun = (table: number) => {
    if (eobrun === 0) return
    const n = 31 - Math.clz32(eobrun)
    sink.symbol(table, n << 4)
    if (n > 0) sink.bits(eobrun & ((1 << n) - 1), n)
    for (const bit of pendingBits) sink.bits(bit, 1)
    eobrun = 0
    pendingBits = []
  }

  const encodeBlock = (index: number, blocks: Int16Array, off: number): void => {
    const dcTable = index
    const acTable = 4 + index
    if (ss === 0) {
      if (ah === 0) {
        const dc = blocks[off] >> al
        const diff = dc - predictions[index]
        predictions[index] = dc
        const size = magnitudeBits(diff)
        sink.symbol(dcTable, size)
        if (size > 0) value(diff, size)
      } else sink.bits((blocks[off] >> al) & 1, 1)
      if (se === 0) return
    }
    const first = Math.max(ss, 1)
    if (ah === 0) {
      let run = 0
      for (let k = first; k <= se; k++) {
        const coefficient = blocks[off + ZIGZAG[k]]
        const magnitude = (coefficient < 0 ? -coefficient : coefficient) >> al
        if (magnitude === 0) {
          run++
          continue
        }
        flushEobrun(acTable)
        for (; run > 15; run -= 16) sink.symbol(acTable, 0xf0)
        const size = magnitudeBits(magnitude)
        sink.symbol(acTable, (run << 4) | size)
        value(coefficient < 0 ? -magnitude : magnitude, size)
        run = 0
      }
      if (run === 0) return
      if (se === 63 && ss === 0) sink.symbol(acTable, 0)
      else if (++eobrun === 0x7fff) flushEobrun(acTable)
      return
    }
    // Refinement (T.81 G.1.2.3): new coefficients are ±1 with a run of zero-history coefficients before them;
    // coefficients that were already nonzero send one correction bit each, after the next symbol.
    let lastNew = -1
    for (let k = first; k <= se; k++) {
      const coefficient = blocks[off + ZIGZAG[k]]
      if ((coefficient < 0 ? -coefficient : coefficient) >> al === 1) lastNew = k
    }
    let run = 0
    let corrections: number[] = []
    for (let k = first; k <= se; k++) {
      const coefficient = blocks[off + ZIGZAG[k]]
      const magnitude = (coefficient < 0 ? -coefficient : coefficient) >> al
      if (magnitude === 0) {
        run++
        continue
      }
      for (; run > 15 && k <= lastNew; run -= 16) {
        flushEobrun(acTable)
        sink.symbol(acTable, 0xf0)
        for (const bit of corrections) sink.bits(bit, 1)
        corrections = []
      }
      if (magnitude > 1) {
        corrections.push(magnitude & 1)
        continue
      }
      flushEobrun(acTable)
      sink.symbol(acTable, (run << 4) | 1)
      sink.bits(coefficient < 0 ? 0 : 1, 1)
      for (const bit of corrections) sink.bits(bit, 1)
      corrections = []
      run = 0
    }
    if (run === 0 && corrections.length === 0) return
    eobrun++
    pendingBits.push(...corrections)
    if (eobrun === 0x7fff || pendingBits.length > 900) flushEobrun(acTable)
  }

  const single = components.length === 1
  const only = components[0]
  const componentWidth = Math.ceil((image.width * only.c.h) / hMax)
  const componentHeight = Math.ceil((image.height * only.c.v) / vMax)
  const usedPerLine = Math.ceil(componentWidth / 8)
  const total = single ? usedPerLine * Math.ceil(componentHeight / 8) : mcusPerLine * mcusPerColumn
  const eobTable = 4 + only.index
  for (let mcu = 0, restarts = 0; mcu < total; mcu++) {
    if (interval > 0 && mcu > 0 && mcu % interval === 0) {
      flushEobrun(eobTable)
      sink.restart(restarts++)
      predictions.fill(0)
    }
    if (single) {
      const row = Math.floor(mcu / usedPerLine)
      const col = mcu % usedPerLine
      encodeBlock(only.index, only.c.blocks, (row * only.c.blocksPerLine + col) * 64)
      continue
    }
    const mcuRow = Math.floor(mcu / mcusPerLine)
    const mcuCol = mcu % mcusPerLine
    for (const { index, c } of components) {
      for (let v = 0; v < c.v; v++) {
        for (let h = 0; h < c.h; h++) encodeBlock(index, c.blocks, ((mcuRow * c.v + v) * c.blocksPerLine + mcuCol * c.h + h) * 64)
      }
    }
  }
  flushEobrun(eobTable)
}

/** Code lengths from symbol frequencies, limited to 16 bits, as T.81 annex K.2 describes. */
function optimalTable(frequencies: Int32Array): { counts: number[]; values: number[] } {
  const freq = Float64Array.from(frequencies)
  // One reserved symbol keeps any code from being all ones.
  freq[256] = 1
  const codeSize = new Int32Array(257)
  const others = new Int32Array(257).fill(-1)
  for (;;) {
    let c1 = -1
    let c2 = -1
    for (let i = 0; i <= 256; i++) {
      if (freq[i] > 0 && (c1 < 0 || freq[i] <= freq[c1])) c1 = i
    }
    for (let i = 0; i <= 256; i++) {
      if (freq[i] > 0 && i !== c1 && (c2 < 0 || freq[i] <= freq[c2])) c2 = i
    }
    if (c2 < 0) break
    freq[c1] += freq[c2]
    freq[c2] = 0
    for (codeSize[c1]++; others[c1] >= 0; codeSize[c1]++) c1 = others[c1]
    others[c1] = c2
    for (codeSize[c2]++; others[c2] >= 0; codeSize[c2]++) c2 = others[c2]
  }
  const bits = new Int32Array(300)
  for (let i = 0; i <= 256; i++) if (codeSize[i] > 0) bits[codeSize[i]]++
  for (let i = 299; i > 16; i--) {
    while (bits[i] > 0) {
      let j = i - 2
      while (bits[j] === 0) j--
      bits[i] -= 2
      bits[i - 1]++
      bits[j + 1] += 2
      bits[j]--
    }
  }
  let longest = 16
  while (bits[longest] === 0) longest--
  bits[longest]--
  const values: number[] = []
  for (let length = 1; length < 300; length++) {
    for (let symbol = 0; symbol < 256; symbol++) if (codeSize[symbol] === length) values.push(symbol)
  }
  return { counts: Array.from(bits.subarray(1, 17)), values }
}

function canonicalCodes(counts: number[], values: number[]): { code: Uint16Array; size: Uint8Array } {
  const code = new Uint16Array(256)
  const size = new Uint8Array(256)
  let next = 0
  let k = 0
  for (let length = 1; length <= 16; length++, next <<= 1) {
    for (let i = 0; i < counts[length - 1]; i++, k++, next++) {
      code[values[k]] = next
      size[values[k]] = length
    }
  }
  return { code, size }
}

class ByteSink {
  private data = new Uint8Array(1 << 16)
  private length = 0
  private buffer = 0
  private count = 0

  bytes(...values: number[]): void {
    for (const v of values) this.byte(v)
  }

  private byte(value: number): void {
    if (this.length === this.data.length) {
      const grown = new Uint8Array(this.data.length * 2)
      grown.set(this.data)
      this.data = grown
    }
    this.data[this.length++] = value
  }

  bits(value: number, count: number): void {
    this.buffer = ((this.buffer << count) | value) & 0xffffff
    this.count += count
    while (this.count >= 8) {
      this.count -= 8
      const b = (this.buffer >> this.count) & 255
      this.byte(b)
      if (b === 0xff) this.byte(0)
    }
  }

  /** Pads the last byte with ones, as T.81 F.1.2.3 asks. */
  flushBits(): void {
    if (this.count > 0) this.bits((1 << (8 - this.count)) - 1, 8 - this.count)
  }

  result(): Uint8Array {
    return this.data.slice(0, this.length)
  }
}
