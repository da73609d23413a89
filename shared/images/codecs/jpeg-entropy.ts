import { ImageDecodeError } from './raster.ts'

/** Zigzag position → natural (row-major) position inside an 8×8 block. */
export const ZIGZAG = new Uint8Array([
  0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57,
  50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
])

export const LOOKUP_BITS = 9

export interface HuffmanTable {
  /** (length << 8) | symbol for codes up to LOOKUP_BITS long, 0 for longer codes. */
  lookup: Uint16Array
  /**
   * For an AC table, indexed by the next FAST_AC_BITS bits: (value << 8) | (run << 4) | bits, where code and value
   * bits together fit, so one lookup decodes a whole coefficient; 0 otherwise (stb_image's fast AC).
   */
  fastAc: Int32Array
  /** For an AC table, built on first use by acSkipTable. */
  skipAc: Int32Array | null
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
  const table: HuffmanTable = { lookup, fastAc: new Int32Array(0), skipAc: null, maxCode, valueOffset, values }
  table.fastAc = fastAcTable(table)
  return table
}

export const SKIP_BITS = 14
export const SKIP_END_OF_BLOCK = 1 << 12

/**
 * What skipping AC codes takes, for decoding at 1/8 where no AC value is needed: for each SKIP_BITS-bit window, the
 * whole codes (value bits included) it starts with, up to an end of block, as
 * (end of block ? SKIP_END_OF_BLOCK : 0) | (coefficient positions advanced << 5) | bits used.
 * A window whose first code fits but whose value bits run past it skips that one code (up to 25 bits); 0 where the
 * first code is longer, or a run of sixteen zeros, which the caller decodes one by one.
 */
export function acSkipTable(table: HuffmanTable): Int32Array {
  if (table.skipAc) return table.skipAc
  const skip = new Int32Array(1 << SKIP_BITS)
  for (let window = 0; window < skip.length; window++) {
    let used = 0
    let advance = 0
    let entry = 0
    for (;;) {
      const code = codeAt(table, window, SKIP_BITS, used)
      if (code === 0) break
      const run = (code >> 4) & 15
      const size = code & 15
      if (size === 0 && run === 15) break
      const end = used + (code >> 8) + size
      if (end > SKIP_BITS) {
        if (used === 0 && end <= 25) entry = ((run + 1) << 5) | end
        break
      }
      used = end
      if (size === 0) {
        entry = SKIP_END_OF_BLOCK | (advance << 5) | used
        break
      }
      advance += run + 1
      entry = (advance << 5) | used
      if (advance >= 64) break
    }
    skip[window] = entry
  }
  table.skipAc = skip
  return skip
}

/** (length << 8) | symbol of the code starting `from` bits into a window of `bits` bits, or 0 if none ends inside it. */
function codeAt(table: HuffmanTable, window: number, bits: number, from: number): number {
  for (let length = 1; from + length <= bits; length++) {
    const code = (window >> (bits - from - length)) & ((1 << length) - 1)
    if (code <= table.maxCode[length]) return (length << 8) | table.values[table.valueOffset[length] + code]
  }
  return 0
}

export const FAST_AC_BITS = 11

function fastAcTable(table: HuffmanTable): Int32Array {
  const fast = new Int32Array(1 << FAST_AC_BITS)
  for (let window = 0; window < fast.length; window++) {
    const code = codeAt(table, window, FAST_AC_BITS, 0)
    const length = code >> 8
    const run = (code >> 4) & 15
    const size = code & 15
    if (code === 0 || size === 0 || length + size > FAST_AC_BITS) continue
    const bits = (window >> (FAST_AC_BITS - length - size)) & ((1 << size) - 1)
    const value = bits < 1 << (size - 1) ? bits - (1 << size) + 1 : bits
    fast[window] = (value << 8) | (run << 4) | (length + size)
  }
  return fast
}

/**
 * Reads the entropy-coded segment bit by bit, unstuffing 0xFF00 and stopping at markers. Its state is public so the
 * hot loops of jpeg-sequential-scan.ts can keep it in locals and hand it back for the rare long code.
 */
export class BitReader {
  /** The bits not yet consumed are the low `count` bits of `buffer`. */
  buffer = 0
  count = 0
  private markerHit = false
  /** Zero bytes fed after the data ran out, since the last restart; a large number means the file is truncated or corrupt. */
  overrun = 0

  constructor(
    private readonly data: Uint8Array,
    public pos: number,
  ) {}

  /** Tops the buffer up to at least 25 bits. */
  fill(): void {
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
    this.overrun = 0
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
  /** Progressive: the coefficients of every block, kept until the last scan; at 1/8 only each block's DC term. */
  coefficients: Int16Array
  /** Progressive below 1/8: each block's last zigzag position holding a nonzero AC term (0 for none). */
  lastNonzero: Uint8Array
  dcTable: HuffmanTable | null
  acTable: HuffmanTable | null
  /** Baseline: the quantization table, set when the scan starts. */
  quant: Uint16Array | null
  /** Samples at 1/scale resolution; a clamped array, so the inverse DCT's stores clamp for free. */
  plane: Uint8ClampedArray
  planeWidth: number
}

export interface ScanParams {
  components: ScanComponent[]
  mcusPerLine: number
  mcusPerColumn: number
  restartInterval: number
  spectralStart: number
  spectralEnd: number
  approxHigh: number
  approxLow: number
}

/** The MCU count of a scan and the blocks per MCU row: a scan of one component visits its blocks one by one. */
export function scanGeometry(scan: ScanParams): { total: number; perLine: number } {
  const [first] = scan.components
  if (scan.components.length === 1) return { total: first.usedBlocksPerLine * first.usedBlocksPerColumn, perLine: first.usedBlocksPerLine }
  return { total: scan.mcusPerLine * scan.mcusPerColumn, perLine: scan.mcusPerLine }
}

/*
 * The progressive AC scans keep the bit reader's state in locals and top it up in line, as the sequential scans do
 * (jpeg-sequential-scan.ts): a short code costs one table lookup, a long code (rare) goes through BitReader.decode,
 * and the correction bits of a refinement past the buffered ones through BitReader.fill. Reading the reader's
 * properties for every bit cost about a quarter more.
 */
const PEEK_MASK = (1 << LOOKUP_BITS) - 1
/** Bits in the buffer before each code: one the lookup resolves (up to 9 bits), then its value or run (up to 15). */
const READY = 25
const MAX_OVERRUN = 256

function corruptCoefficient(): never {
  throw new ImageDecodeError('the JPEG data is corrupt (coefficient out of range)')
}

function truncated(): never {
  throw new ImageDecodeError('the JPEG data is truncated or corrupt')
}

/** Decodes one progressive AC scan (first pass or refinement); returns the position just after its entropy-coded data. */
export function decodeProgressiveAcScan(data: Uint8Array, start: number, scan: ScanParams): number {
  // AC scans hold one component (T.81 G.1.1.1.1), so an MCU is one block.
  return scan.approxHigh === 0 ? decodeFirstAcScan(data, start, scan) : decodeRefineAcScan(data, start, scan)
}

/** A first pass over a band of AC coefficients, as libjpeg's decode_mcu_AC_first. */
function decodeFirstAcScan(data: Uint8Array, start: number, scan: ScanParams): number {
  const c = scan.components[0]
  const { spectralStart: ss, spectralEnd: se, approxLow: al } = scan
  const coefs = c.coefficients
  const lastNonzero = c.lastNonzero
  const table = c.acTable!
  const lookup = table.lookup
  const blocksPerLine = c.blocksPerLine
  const { total, perLine } = scanGeometry(scan)
  const interval = scan.restartInterval > 0 ? scan.restartInterval : total
  const reader = new BitReader(data, start)
  const length = data.length
  let pos = start
  let buffer = 0
  let count = 0
  let overrun = 0
  let eobrun = 0
  let untilRestart = interval
  for (let mcu = 0; mcu < total; mcu++) {
    if (untilRestart-- === 0) {
      reader.pos = pos
      reader.restart()
      pos = reader.pos
      buffer = count = overrun = 0
      eobrun = 0
      untilRestart = interval - 1
    }
    if (eobrun > 0) {
      // A run of end-of-band blocks has nothing to read: passed over a whole run at once, within the restart interval.
      const run = Math.min(eobrun, untilRestart + 1, total - mcu)
      eobrun -= run
      mcu += run - 1
      untilRestart -= run - 1
      continue
    }
    const row = (mcu / perLine) | 0
    const block = row * blocksPerLine + mcu - row * perLine
    const off = block * 64
    let last = 0
    for (let k = ss; k <= se; ) {
      if (count < READY) {
        do {
          let byte = 0
          if (pos >= length) overrun++
          else if ((byte = data[pos]) !== 0xff) pos++
          else if (data[pos + 1] === 0) pos += 2
          else {
            byte = 0
            overrun++
          }
          buffer = (buffer << 8) | byte
          count += 8
        } while (count < READY)
        if (overrun > MAX_OVERRUN) truncated()
      }
      let rs = lookup[(buffer >>> (count - LOOKUP_BITS)) & PEEK_MASK]
      if (rs !== 0) {
        count -= rs >> 8
        rs &= 255
      } else {
        reader.buffer = buffer
        reader.count = count
        reader.pos = pos
        reader.overrun = overrun
        rs = reader.decode(table)
        reader.fill()
        ;({ buffer, count, pos, overrun } = reader)
      }
      const s = rs & 15
      const r = rs >> 4
      if (s === 0) {
        if (r < 15) {
          count -= r
          eobrun = (1 << r) - 1 + ((buffer >>> count) & ((1 << r) - 1))
          break
        }
        k += 16
        continue
      }
      k += r
      if (k > 63) corruptCoefficient()
      count -= s
      const bits = (buffer >>> count) & ((1 << s) - 1)
      coefs[off + ZIGZAG[k]] = (bits < 1 << (s - 1) ? bits - (1 << s) + 1 : bits) * (1 << al)
      last = k
      k++
    }
    if (last > lastNonzero[block]) lastNonzero[block] = last
  }
  return pos
}

/** Successive-approximation refinement of AC coefficients, as libjpeg's decode_mcu_AC_refine. */
function decodeRefineAcScan(data: Uint8Array, start: number, scan: ScanParams): number {
  const c = scan.components[0]
  const { spectralStart: ss, spectralEnd: se, approxLow: al } = scan
  const p1 = 1 << al
  const m1 = -1 << al
  const coefs = c.coefficients
  const lastNonzero = c.lastNonzero
  const table = c.acTable!
  const lookup = table.lookup
  const blocksPerLine = c.blocksPerLine
  const { total, perLine } = scanGeometry(scan)
  const interval = scan.restartInterval > 0 ? scan.restartInterval : total
  const reader = new BitReader(data, start)
  const length = data.length
  let pos = start
  let buffer = 0
  let count = 0
  let overrun = 0
  let eobrun = 0
  let untilRestart = interval
  for (let mcu = 0; mcu < total; mcu++) {
    if (untilRestart-- === 0) {
      reader.pos = pos
      reader.restart()
      pos = reader.pos
      buffer = count = overrun = 0
      eobrun = 0
      untilRestart = interval - 1
    }
    const row = (mcu / perLine) | 0
    const block = row * blocksPerLine + mcu - row * perLine
    // In a run of end-of-band blocks, one with no coefficient in the band yet has no correction bit to read.
    if (eobrun > 0 && lastNonzero[block] < ss) {
      eobrun--
      continue
    }
    const off = block * 64
    let k = ss
    if (eobrun === 0) {
      for (; k <= se; k++) {
        if (count < READY) {
          do {
            let byte = 0
            if (pos >= length) overrun++
            else if ((byte = data[pos]) !== 0xff) pos++
            else if (data[pos + 1] === 0) pos += 2
            else {
              byte = 0
              overrun++
            }
            buffer = (buffer << 8) | byte
            count += 8
          } while (count < READY)
          if (overrun > MAX_OVERRUN) truncated()
        }
        let rs = lookup[(buffer >>> (count - LOOKUP_BITS)) & PEEK_MASK]
        if (rs !== 0) {
          count -= rs >> 8
          rs &= 255
        } else {
          reader.buffer = buffer
          reader.count = count
          reader.pos = pos
          reader.overrun = overrun
          rs = reader.decode(table)
          reader.fill()
          ;({ buffer, count, pos, overrun } = reader)
        }
        let r = rs >> 4
        let s = rs & 15
        if (s !== 0) {
          count--
          s = (buffer >>> count) & 1 ? p1 : m1
        } else if (r !== 15) {
          count -= r
          eobrun = (1 << r) + ((buffer >>> count) & ((1 << r) - 1))
          break
        }
        do {
          const z = off + ZIGZAG[k]
          const v = coefs[z]
          if (v !== 0) {
            if (count === 0) {
              reader.buffer = buffer
              reader.count = count
              reader.pos = pos
              reader.overrun = overrun
              reader.fill()
              ;({ buffer, count, pos, overrun } = reader)
            }
            count--
            if ((buffer >>> count) & 1 && (v & p1) === 0) coefs[z] = v + (v >= 0 ? p1 : m1)
          } else if (--r < 0) break
          k++
        } while (k <= se)
        if (s !== 0 && k <= 63) {
          coefs[off + ZIGZAG[k]] = s
          if (k > lastNonzero[block]) lastNonzero[block] = k
        }
      }
    }
    if (eobrun > 0) {
      // Past the block's last nonzero term every coefficient is zero and has no correction bit to read.
      const stop = Math.min(se, lastNonzero[block])
      for (; k <= stop; k++) {
        const z = off + ZIGZAG[k]
        const v = coefs[z]
        if (v === 0) continue
        if (count === 0) {
          reader.buffer = buffer
          reader.count = count
          reader.pos = pos
          reader.overrun = overrun
          reader.fill()
          ;({ buffer, count, pos, overrun } = reader)
        }
        count--
        if ((buffer >>> count) & 1 && (v & p1) === 0) coefs[z] = v + (v >= 0 ? p1 : m1)
      }
      eobrun--
    }
  }
  return pos
}
