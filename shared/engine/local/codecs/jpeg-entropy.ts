import { ImageDecodeError } from './raster.ts'

/** Zigzag position → natural (row-major) position inside an 8×8 block. */
export const ZIGZAG = new Uint8Array([
  0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21,
  28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61,
  54, 47, 55, 62, 63,
])

const LOOKUP_BITS = 9

export interface HuffmanTable {
  /** (length << 8) | symbol for codes up to LOOKUP_BITS long, 0 for longer codes. */
  lookup: Uint16Array
  /**
   * For an AC table: (value << 8) | (run << 4) | bits, where code and value bits together fit in LOOKUP_BITS,
   * so one lookup decodes a whole coefficient; 0 otherwise (stb_image's fast AC).
   */
  fastAc: Int32Array
  maxCode: Int32Array
  valueOffset: Int32Array
  values: Uint8Array
}

export function buildHuffmanTable(counts: Uint8Array, values: Uint8Array): HuffmanTable {
  const lookup = new Uint16Array(1 << LOOKUP_BITS)
  const maxCode = new Int32Array(18).fill(-1)
  const valueOffset = new Int32Array(17)
  let code = 0
  let index = 0
  for (let length = 1; length <= 16; length++) {
    const count = counts[length - 1]
    valueOffset[length] = index - code
    for (let i = 0; i < count; i++, index++, code++) {
      if (length <= LOOKUP_BITS) {
        const shift = LOOKUP_BITS - length
        const first = code << shift
        for (let j = 0; j < 1 << shift; j++) lookup[first + j] = (length << 8) | values[index]
      }
    }
    if (count > 0) maxCode[length] = code - 1
    if (code > 1 << length) throw new ImageDecodeError('the JPEG has an invalid Huffman table')
    code <<= 1
  }
  maxCode[17] = 0x7fffffff
  return { lookup, fastAc: fastAcTable(lookup), maxCode, valueOffset, values }
}

function fastAcTable(lookup: Uint16Array): Int32Array {
  const fast = new Int32Array(1 << LOOKUP_BITS)
  for (let i = 0; i < fast.length; i++) {
    const entry = lookup[i]
    if (entry === 0) continue
    const length = entry >> 8
    const run = (entry >> 4) & 15
    const size = entry & 15
    if (size === 0 || length + size > LOOKUP_BITS) continue
    const bits = (i >> (LOOKUP_BITS - length - size)) & ((1 << size) - 1)
    const value = bits < 1 << (size - 1) ? bits - (1 << size) + 1 : bits
    fast[i] = (value << 8) | (run << 4) | (length + size)
  }
  return fast
}

/** Reads the entropy-coded segment bit by bit, unstuffing 0xFF00 and stopping at markers. */
export class BitReader {
  private buffer = 0
  private count = 0
  private markerHit = false
  /** Zero bytes fed after the data ran out; a large number means the file is truncated or corrupt. */
  overrun = 0

  constructor(
    private readonly data: Uint8Array,
    public pos: number,
  ) {}

  private fill(): void {
    const data = this.data
    while (this.count <= 24) {
      let byte = 0
      if (!this.markerHit && this.pos < data.length) {
        byte = data[this.pos]
        if (byte === 0xff) {
          const next = data[this.pos + 1]
          if (next === 0) this.pos += 2
          else {
            this.markerHit = true
            byte = 0
            this.overrun++
          }
        } else this.pos++
      } else this.overrun++
      this.buffer = (this.buffer << 8) | byte
      this.count += 8
    }
    if (this.overrun > 256) throw new ImageDecodeError('the JPEG data is truncated or corrupt')
  }

  bits(n: number): number {
    if (n === 0) return 0
    if (this.count < n) this.fill()
    this.count -= n
    return (this.buffer >>> this.count) & ((1 << n) - 1)
  }

  bit(): number {
    if (this.count < 1) this.fill()
    this.count--
    return (this.buffer >>> this.count) & 1
  }

  /** Reads n bits and sign-extends them as JPEG's EXTEND procedure does. */
  receiveExtend(n: number): number {
    if (n === 0) return 0
    const value = this.bits(n)
    return value < 1 << (n - 1) ? value - (1 << n) + 1 : value
  }

  /** The fast-AC entry for the next bits (nothing consumed); 0 when the slow path must decode. */
  peekFastAc(table: HuffmanTable): number {
    if (this.count < 16) this.fill()
    return table.fastAc[(this.buffer >>> (this.count - LOOKUP_BITS)) & ((1 << LOOKUP_BITS) - 1)]
  }

  skip(n: number): void {
    this.count -= n
  }

  decode(table: HuffmanTable): number {
    if (this.count < 16) this.fill()
    const entry = table.lookup[(this.buffer >>> (this.count - LOOKUP_BITS)) & ((1 << LOOKUP_BITS) - 1)]
    if (entry !== 0) {
      this.count -= entry >> 8
      return entry & 0xff
    }
    let length = LOOKUP_BITS + 1
    let code = (this.buffer >>> (this.count - length)) & ((1 << length) - 1)
    while (code > table.maxCode[length]) {
      length++
      if (length > 16) throw new ImageDecodeError('the JPEG data contains an invalid Huffman code')
      code = (this.buffer >>> (this.count - length)) & ((1 << length) - 1)
    }
    this.count -= length
    return table.values[table.valueOffset[length] + code]
  }

  /** Drops buffered bits and skips the RSTn marker that must follow a restart interval. */
  restart(): void {
    this.buffer = 0
    this.count = 0
    this.markerHit = false
    const data = this.data
    while (this.pos + 1 < data.length) {
      if (data[this.pos] === 0xff && data[this.pos + 1] >= 0xd0 && data[this.pos + 1] <= 0xd7) {
        this.pos += 2
        return
      }
      if (data[this.pos] === 0xff && data[this.pos + 1] !== 0 && data[this.pos + 1] !== 0xff) return
      this.pos++
    }
  }
}

export interface ScanComponent {
  h: number
  v: number
  blocksPerLine: number
  blocksPerColumn: number
  /** Blocks actually covering the image (non-interleaved scans visit only these). */
  usedBlocksPerLine: number
  usedBlocksPerColumn: number
  coefficients: Int16Array
  dcTable: HuffmanTable | null
  acTable: HuffmanTable | null
  pred: number
  /** Baseline: whether the last decoded block had any AC coefficient (lets the IDCT be skipped). */
  hasAc: boolean
}

export interface ScanParams {
  components: ScanComponent[]
  mcusPerLine: number
  mcusPerColumn: number
  restartInterval: number
  progressive: boolean
  spectralStart: number
  spectralEnd: number
  approxHigh: number
  approxLow: number
  /** Baseline: called after each block is decoded into the component's scratch block. */
  onBlock: ((component: ScanComponent, blockRow: number, blockCol: number) => void) | null
}

/** Decodes one scan; returns the position just after its entropy-coded data. */
export function decodeScan(data: Uint8Array, start: number, scan: ScanParams): number {
  const reader = new BitReader(data, start)
  const { progressive, spectralStart: ss, spectralEnd: se, approxHigh: ah, approxLow: al, onBlock } = scan
  let eobrun = 0

  const decodeBlock = (c: ScanComponent, off: number): void => {
    const coefs = c.coefficients
    if (!progressive) {
      const t = reader.decode(c.dcTable!)
      c.pred += reader.receiveExtend(t)
      coefs[off] = c.pred
      const ac = c.acTable!
      c.hasAc = false
      for (let k = 1; k < 64; ) {
        const fast = reader.peekFastAc(ac)
        if (fast !== 0) {
          reader.skip(fast & 15)
          k += (fast >> 4) & 15
          if (k > 63) throw new ImageDecodeError('the JPEG data is corrupt (coefficient out of range)')
          coefs[off + ZIGZAG[k]] = fast >> 8
          c.hasAc = true
          k++
          continue
        }
        const rs = reader.decode(ac)
        const s = rs & 15
        const r = rs >> 4
        if (s === 0) {
          if (r < 15) break
          k += 16
          continue
        }
        k += r
        if (k > 63) throw new ImageDecodeError('the JPEG data is corrupt (coefficient out of range)')
        coefs[off + ZIGZAG[k]] = reader.receiveExtend(s)
        c.hasAc = true
        k++
      }
    } else if (ss === 0) {
      if (ah === 0) {
        const t = reader.decode(c.dcTable!)
        c.pred += reader.receiveExtend(t)
        coefs[off] = c.pred * (1 << al)
      } else if (reader.bit()) coefs[off] |= 1 << al
    } else if (ah === 0) {
      if (eobrun > 0) {
        eobrun--
        return
      }
      for (let k = ss; k <= se; ) {
        const rs = reader.decode(c.acTable!)
        const s = rs & 15
        const r = rs >> 4
        if (s === 0) {
          if (r < 15) {
            eobrun = (1 << r) - 1 + reader.bits(r)
            break
          }
          k += 16
          continue
        }
        k += r
        if (k > 63) throw new ImageDecodeError('the JPEG data is corrupt (coefficient out of range)')
        coefs[off + ZIGZAG[k]] = reader.receiveExtend(s) * (1 << al)
        k++
      }
    } else refineAc(c, off)
  }

  // Successive-approximation refinement of AC coefficients, as libjpeg's decode_mcu_AC_refine.
  const refineAc = (c: ScanComponent, off: number): void => {
    const coefs = c.coefficients
    const p1 = 1 << al
    const m1 = -1 << al
    let k = ss
    if (eobrun === 0) {
      for (; k <= se; k++) {
        const rs = reader.decode(c.acTable!)
        let r = rs >> 4
        let s = rs & 15
        if (s !== 0) s = reader.bit() ? p1 : m1
        else if (r !== 15) {
          eobrun = (1 << r) + reader.bits(r)
          break
        }
        do {
          const z = off + ZIGZAG[k]
          if (coefs[z] !== 0) {
            if (reader.bit() && (coefs[z] & p1) === 0) coefs[z] += coefs[z] >= 0 ? p1 : m1
          } else if (--r < 0) break
          k++
        } while (k <= se)
        if (s !== 0 && k <= 63) coefs[off + ZIGZAG[k]] = s
      }
    }
    if (eobrun > 0) {
      for (; k <= se; k++) {
        const z = off + ZIGZAG[k]
        if (coefs[z] !== 0 && reader.bit() && (coefs[z] & p1) === 0) coefs[z] += coefs[z] >= 0 ? p1 : m1
      }
      eobrun--
    }
  }

  const components = scan.components
  const single = components.length === 1
  const total = single
    ? components[0].usedBlocksPerLine * components[0].usedBlocksPerColumn
    : scan.mcusPerLine * scan.mcusPerColumn
  const interval = scan.restartInterval > 0 ? scan.restartInterval : total
  for (let mcu = 0; mcu < total; mcu++) {
    if (mcu > 0 && mcu % interval === 0) {
      reader.restart()
      for (const c of components) c.pred = 0
      eobrun = 0
    }
    if (single) {
      const c = components[0]
      const row = (mcu / c.usedBlocksPerLine) | 0
      const col = mcu - row * c.usedBlocksPerLine
      decodeAt(c, row, col)
    } else {
      const mcuRow = (mcu / scan.mcusPerLine) | 0
      const mcuCol = mcu - mcuRow * scan.mcusPerLine
      for (const c of components) {
        for (let v = 0; v < c.v; v++) {
          for (let h = 0; h < c.h; h++) decodeAt(c, mcuRow * c.v + v, mcuCol * c.h + h)
        }
      }
    }
  }

  function decodeAt(c: ScanComponent, row: number, col: number): void {
    if (onBlock) {
      c.coefficients.fill(0)
      decodeBlock(c, 0)
      onBlock(c, row, col)
    } else decodeBlock(c, (row * c.blocksPerLine + col) * 64)
  }

  return reader.pos
}
