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

/** Decodes one progressive AC scan (first pass or refinement); returns the position just after its entropy-coded data. */
export function decodeProgressiveAcScan(data: Uint8Array, start: number, scan: ScanParams): number {
  const reader = new BitReader(data, start)
  const { spectralStart: ss, spectralEnd: se, approxHigh: ah, approxLow: al } = scan
  let eobrun = 0

  const firstAc = (c: ScanComponent, off: number): void => {
    const coefs = c.coefficients
    if (eobrun > 0) {
      eobrun--
      return
    }
    let last = 0
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
      last = k
      k++
    }
    if (last > c.lastNonzero[off >> 6]) c.lastNonzero[off >> 6] = last
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
        if (s !== 0 && k <= 63) {
          coefs[off + ZIGZAG[k]] = s
          if (k > c.lastNonzero[off >> 6]) c.lastNonzero[off >> 6] = k
        }
      }
    }
    if (eobrun > 0) {
      // Past the block's last nonzero term every coefficient is zero and has no correction bit to read.
      const stop = Math.min(se, c.lastNonzero[off >> 6])
      for (; k <= stop; k++) {
        const z = off + ZIGZAG[k]
        if (coefs[z] !== 0 && reader.bit() && (coefs[z] & p1) === 0) coefs[z] += coefs[z] >= 0 ? p1 : m1
      }
      eobrun--
    }
  }

  // AC scans hold one component (T.81 G.1.1.1.1), so an MCU is one block.
  const c = scan.components[0]
  const decodeBlock = ah === 0 ? firstAc : refineAc
  const { total, perLine } = scanGeometry(scan)
  const interval = scan.restartInterval > 0 ? scan.restartInterval : total
  let untilRestart = interval
  for (let mcu = 0; mcu < total; mcu++) {
    if (untilRestart-- === 0) {
      reader.restart()
      eobrun = 0
      untilRestart = interval - 1
    }
    const row = (mcu / perLine) | 0
    const block = row * c.blocksPerLine + mcu - row * perLine
    if (eobrun > 0) {
      // A run of end-of-band blocks has nothing to read in a first pass, nor in a refinement for a block with no
      // coefficient in the band yet: such blocks are passed over, a whole run at once, within the restart interval.
      if (ah === 0) {
        const run = Math.min(eobrun, untilRestart + 1, total - mcu)
        eobrun -= run
        mcu += run - 1
        untilRestart -= run - 1
        continue
      }
      if (c.lastNonzero[block] < ss) {
        eobrun--
        continue
      }
    }
    decodeBlock(c, block * 64)
  }
  return reader.pos
}
