import { JPEG_MAX_SCANS, JPEG_WORK_PER_BLOCK, jpegScanWork } from '../decoding-work.ts'
import {
  buildHuffmanTable,
  decodeProgressiveAcScan,
  scanGeometry,
  ZIGZAG,
  type HuffmanTable,
  type ScanComponent,
  type ScanParams,
} from './jpeg-entropy.ts'
import { outputBlock } from './jpeg-idct.ts'
import { decodeBaselineScan, decodeBaselineScanAtEighth, decodeProgressiveDcScan } from './jpeg-sequential-scan.ts'
import { checkAllocation, ImageDecodeError, ImageTooComplexError, type AllocationLimits, type RgbaImage, type RowSource } from './raster.ts'

export interface JpegDecodeOptions extends AllocationLimits {
  /** The smallest long side the caller needs: lets the decoder drop resolution in the DCT domain (1/2, 1/4, 1/8). */
  minLongSide?: number
  /**
   * A progressive JPEG of more pixels than this is decoded at 1/8 whatever `minLongSide` asks: at any finer scale every
   * coefficient of every scan is read (about a second for 40 MP), at 1/8 only the DC scans.
   */
  progressiveEighthAbovePixels?: number
}

interface FrameComponent extends ScanComponent {
  id: number
  quantIndex: number
}

interface Frame {
  width: number
  height: number
  progressive: boolean
  hMax: number
  vMax: number
  mcusPerLine: number
  mcusPerColumn: number
  scale: number
  components: FrameComponent[]
  /** The coefficient steps its scans may take in all (JPEG_WORK_PER_BLOCK a block), and those taken so far. */
  workLimit: number
  work: number
}

const UNSUPPORTED_SOF: Record<number, string> = {
  0xc3: 'lossless JPEG',
  0xc5: 'hierarchical JPEG',
  0xc6: 'hierarchical JPEG',
  0xc7: 'hierarchical JPEG',
  0xc9: 'arithmetic-coded JPEG',
  0xca: 'arithmetic-coded JPEG',
  0xcb: 'arithmetic-coded JPEG',
  0xcd: 'arithmetic-coded JPEG',
  0xce: 'arithmetic-coded JPEG',
  0xcf: 'arithmetic-coded JPEG',
}

/** Baseline and progressive Huffman JPEG, 8-bit, any subsampling; grayscale, YCbCr, RGB, CMYK/YCCK. */
export function decodeJpeg(bytes: Uint8Array, options: JpegDecodeOptions = {}): RgbaImage {
  const { frame, adobeTransform } = decodePlanes(bytes, options)
  const width = Math.ceil(frame.width / frame.scale)
  const height = Math.ceil(frame.height / frame.scale)
  const data = new Uint8Array(width * height * 4)
  rowConverter(frame, adobeTransform)(0, height, data)
  return { width, height, data }
}

/**
 * The JPEG decoded to its planes only (a third to half the size of RGBA at 4:2:0), its RGBA rows converted on
 * request: what a re-encode reads strip by strip.
 */
export function decodeJpegRows(bytes: Uint8Array, options: JpegDecodeOptions = {}): RowSource {
  const { frame, adobeTransform } = decodePlanes(bytes, options)
  const width = Math.ceil(frame.width / frame.scale)
  const height = Math.ceil(frame.height / frame.scale)
  const stride = width * 4
  const convertRows = rowConverter(frame, adobeTransform)
  let strip = new Uint8Array(0)
  return {
    width,
    height,
    rows(y, count) {
      // Conversion starts on an even row: 4:2:0 rows are converted in pairs that share their chroma.
      const from = y & ~1
      const to = Math.min(height, y + count)
      if (strip.length < (to - from) * stride) strip = new Uint8Array((to - from + 1) * stride)
      convertRows(from, to, strip)
      return strip.subarray((y - from) * stride, (to - from) * stride)
    },
  }
}

function decodePlanes(bytes: Uint8Array, options: JpegDecodeOptions): { frame: Frame; adobeTransform: number } {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) throw new ImageDecodeError('not a JPEG file')
  const quantTables: (Uint16Array | null)[] = [null, null, null, null]
  const dcTables: (HuffmanTable | null)[] = [null, null, null, null]
  const acTables: (HuffmanTable | null)[] = [null, null, null, null]
  let frame: Frame | null = null
  let adobeTransform = -1
  let restartInterval = 0
  let scans = 0
  let pos = 2

  const u16 = (at: number): number => (bytes[at] << 8) | bytes[at + 1]

  while (pos < bytes.length) {
    pos = nextMarker(bytes, pos)
    if (pos + 1 >= bytes.length) break
    const marker = bytes[pos + 1]
    pos += 2
    if (marker === 0xd9) break
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue
    if (pos + 2 > bytes.length) throw new ImageDecodeError('the JPEG data is truncated')
    const end = pos + u16(pos)
    if (end > bytes.length || end < pos + 2) throw new ImageDecodeError('the JPEG data is truncated or corrupt')
    let p = pos + 2
    if (marker === 0xdb) {
      while (p < end) {
        const wide = bytes[p] >> 4
        const table = new Uint16Array(64)
        const index = bytes[p++] & 15
        for (let k = 0; k < 64; k++, p += wide ? 2 : 1) table[ZIGZAG[k]] = wide ? u16(p) : bytes[p]
        if (index > 3) throw new ImageDecodeError('the JPEG has an invalid quantization table')
        quantTables[index] = table
      }
    } else if (marker === 0xc4) {
      while (p < end) {
        const tableClass = bytes[p] >> 4
        const index = bytes[p++] & 15
        const counts = bytes.subarray(p, p + 16)
        let total = 0
        for (let i = 0; i < 16; i++) total += counts[i]
        p += 16
        if (index > 3 || p + total > end) throw new ImageDecodeError('the JPEG has an invalid Huffman table')
        const table = buildHuffmanTable(counts, bytes.slice(p, p + total))
        p += total
        if (tableClass === 0) dcTables[index] = table
        else acTables[index] = table
      }
    } else if (marker === 0xdd) {
      restartInterval = u16(p)
    } else if (marker === 0xee) {
      if (bytes[p] === 0x41 && bytes[p + 1] === 0x64 && bytes[p + 2] === 0x6f && bytes[p + 3] === 0x62 && bytes[p + 4] === 0x65) {
        adobeTransform = bytes[p + 11]
      }
    } else if (marker === 0xc0 || marker === 0xc1 || marker === 0xc2) {
      if (frame) throw new ImageDecodeError('the JPEG has more than one frame')
      frame = readFrame(bytes, p, marker === 0xc2, options)
    } else if (UNSUPPORTED_SOF[marker]) {
      throw new ImageDecodeError(`${UNSUPPORTED_SOF[marker]} is not supported`)
    } else if (marker === 0xda) {
      if (!frame) throw new ImageDecodeError('the JPEG has a scan before its frame header')
      if (++scans > JPEG_MAX_SCANS) {
        throw new ImageTooComplexError(`it has more than the ${JPEG_MAX_SCANS} progressive scans a JPEG may have`)
      }
      pos = readScan(bytes, p, end, frame, quantTables, dcTables, acTables, restartInterval, options)
      continue
    }
    pos = end
  }
  if (!frame || scans === 0) throw new ImageDecodeError('the JPEG contains no image data')
  if (frame.progressive) {
    for (const c of frame.components) outputProgressive(c, requireQuant(quantTables, c.quantIndex), frame.scale)
  }
  return { frame, adobeTransform }
}

/** Once every scan is in, each block of a progressive component goes to its plane (at 1/8, its DC term alone). */
function outputProgressive(c: FrameComponent, quant: Uint16Array, scale: number): void {
  const { coefficients, lastNonzero, plane, planeWidth, blocksPerLine, blocksPerColumn } = c
  if (scale === 8) {
    for (let row = 0, i = 0; row < blocksPerColumn; row++) {
      for (let col = 0; col < blocksPerLine; col++, i++) plane[row * planeWidth + col] = ((coefficients[i] * quant[0] + 4) >> 3) + 128
    }
    return
  }
  for (let row = 0, block = 0; row < blocksPerColumn; row++) {
    for (let col = 0; col < blocksPerLine; col++, block++) {
      // A block without AC terms takes the same flat path as in a baseline scan, so both give the same pixels.
      outputBlock(coefficients, block * 64, quant, scale, plane, planeWidth, row, col, lastNonzero[block] > 0)
    }
  }
}

/** The position of the next marker at or after pos (fill bytes 0xFF 0xFF and stuffed zeros are not markers). */
function nextMarker(bytes: Uint8Array, pos: number): number {
  for (pos = bytes.indexOf(0xff, pos); pos >= 0 && pos + 1 < bytes.length; pos = bytes.indexOf(0xff, pos + 1)) {
    if (bytes[pos + 1] !== 0 && bytes[pos + 1] !== 0xff) return pos
  }
  return bytes.length
}

/** The position of the first marker after entropy-coded data (stuffed zeros and restart markers belong to the data). */
function skipEntropyData(bytes: Uint8Array, pos: number): number {
  for (pos = bytes.indexOf(0xff, pos); pos >= 0 && pos + 1 < bytes.length; pos = bytes.indexOf(0xff, pos + 1)) {
    const next = bytes[pos + 1]
    if (next !== 0 && next !== 0xff && (next < 0xd0 || next > 0xd7)) return pos
  }
  return bytes.length
}

function requireQuant(tables: (Uint16Array | null)[], index: number): Uint16Array {
  const table = tables[index]
  if (!table) throw new ImageDecodeError('the JPEG is missing a quantization table')
  return table
}

function readFrame(bytes: Uint8Array, p: number, progressive: boolean, options: JpegDecodeOptions): Frame {
  const minLongSide = options.minLongSide ?? 0
  const precision = bytes[p]
  if (precision !== 8) throw new ImageDecodeError(`${precision}-bit JPEG is not supported`)
  const height = (bytes[p + 1] << 8) | bytes[p + 2]
  const width = (bytes[p + 3] << 8) | bytes[p + 4]
  const count = bytes[p + 5]
  if (width === 0 || height === 0) throw new ImageDecodeError('the JPEG has no dimensions in its frame header')
  if (count !== 1 && count !== 3 && count !== 4) throw new ImageDecodeError(`a JPEG with ${count} components is not supported`)
  let scale = 8
  const wanted = minLongSide > 0 ? minLongSide : Infinity
  while (scale > 1 && Math.ceil(Math.max(width, height) / scale) < wanted) scale >>= 1
  if (progressive && width * height > (options.progressiveEighthAbovePixels ?? Infinity)) scale = 8
  const specs = []
  let hMax = 1
  let vMax = 1
  for (let i = 0; i < count; i++) {
    const at = p + 6 + i * 3
    const h = bytes[at + 1] >> 4
    const v = bytes[at + 1] & 15
    if (h < 1 || h > 4 || v < 1 || v > 4) throw new ImageDecodeError('the JPEG has invalid sampling factors')
    hMax = Math.max(hMax, h)
    vMax = Math.max(vMax, v)
    specs.push({ id: bytes[at], h, v, quantIndex: bytes[at + 2] & 3 })
  }
  // Planes at 1/scale, plus the coefficients a progressive image keeps until its last scan (its DC terms alone at 1/8).
  const scaledPixels = Math.ceil(width / scale) * Math.ceil(height / scale)
  const keptCoefficients = progressive ? (scale === 8 ? Math.ceil((width * height) / 64) : width * height) : 0
  checkAllocation('JPEG', width, height, options, scaledPixels + keptCoefficients)
  const mcusPerLine = Math.ceil(width / (8 * hMax))
  const mcusPerColumn = Math.ceil(height / (8 * vMax))
  const size = 8 / scale
  const components = specs.map((s): FrameComponent => {
    const blocksPerLine = mcusPerLine * s.h
    const blocksPerColumn = mcusPerColumn * s.v
    const planeWidth = blocksPerLine * size
    return {
      ...s,
      blocksPerLine,
      blocksPerColumn,
      usedBlocksPerLine: Math.ceil(Math.ceil((width * s.h) / hMax) / 8),
      usedBlocksPerColumn: Math.ceil(Math.ceil((height * s.v) / vMax) / 8),
      coefficients: new Int16Array(progressive ? blocksPerLine * blocksPerColumn * (scale === 8 ? 1 : 64) : 0),
      lastNonzero: new Uint8Array(progressive && scale < 8 ? blocksPerLine * blocksPerColumn : 0),
      dcTable: null,
      acTable: null,
      quant: null,
      plane: new Uint8ClampedArray(planeWidth * blocksPerColumn * size),
      planeWidth,
    }
  })
  const blocks = components.reduce((n, c) => n + c.blocksPerLine * c.blocksPerColumn, 0)
  return {
    width,
    height,
    progressive,
    hMax,
    vMax,
    mcusPerLine,
    mcusPerColumn,
    scale,
    components,
    workLimit: JPEG_WORK_PER_BLOCK * blocks,
    work: 0,
  }
}

function readScan(
  bytes: Uint8Array,
  p: number,
  end: number,
  frame: Frame,
  quantTables: (Uint16Array | null)[],
  dcTables: (HuffmanTable | null)[],
  acTables: (HuffmanTable | null)[],
  restartInterval: number,
  limits: AllocationLimits,
): number {
  const count = bytes[p++]
  const components: FrameComponent[] = []
  for (let i = 0; i < count; i++, p += 2) {
    const c = frame.components.find((x) => x.id === bytes[p])
    if (!c) throw new ImageDecodeError('the JPEG scan names an unknown component')
    c.dcTable = dcTables[bytes[p + 1] >> 4]
    c.acTable = acTables[bytes[p + 1] & 15]
    components.push(c)
  }
  const spectralStart = bytes[p]
  const spectralEnd = bytes[p + 1]
  const approxHigh = bytes[p + 2] >> 4
  const approxLow = bytes[p + 2] & 15
  const needsDc = !frame.progressive || (spectralStart === 0 && approxHigh === 0)
  const needsAc = !frame.progressive || spectralStart > 0
  for (const c of components) {
    if ((needsDc && !c.dcTable) || (needsAc && !c.acTable)) throw new ImageDecodeError('the JPEG is missing a Huffman table')
  }
  if (frame.progressive && (spectralEnd > 63 || spectralStart > spectralEnd || (spectralStart > 0 && count !== 1))) {
    throw new ImageDecodeError('the JPEG has an invalid progressive scan')
  }
  const scan = {
    components,
    mcusPerLine: frame.mcusPerLine,
    mcusPerColumn: frame.mcusPerColumn,
    restartInterval,
    spectralStart,
    spectralEnd,
    approxHigh,
    approxLow,
  }
  chargeScan(frame, scan, limits)
  // At 1/8 a block is its DC term alone: a progressive image's AC scans need not even be decoded.
  if (frame.progressive && frame.scale === 8 && spectralStart > 0) return skipEntropyData(bytes, end)
  if (frame.progressive && spectralStart > 0) return decodeProgressiveAcScan(bytes, end, scan)
  if (frame.progressive) return decodeProgressiveDcScan(bytes, end, scan, frame.scale)
  for (const c of components) c.quant = requireQuant(quantTables, c.quantIndex)
  if (frame.scale === 8) return decodeBaselineScanAtEighth(bytes, end, scan)
  return decodeBaselineScan(bytes, end, scan, frame.scale)
}

/**
 * Counts a scan's work before it is decoded, as intake counted it from the markers (shared/images/decoding-work.ts):
 * past the image's allowance, or the request's budget, the decode stops there.
 */
function chargeScan(frame: Frame, scan: ScanParams, limits: AllocationLimits): void {
  const { total } = scanGeometry(scan)
  const blocks = scan.components.length === 1 ? total : total * scan.components.reduce((n, c) => n + c.h * c.v, 0)
  const steps = frame.progressive ? jpegScanWork(blocks, scan.spectralStart, scan.spectralEnd) : jpegScanWork(blocks, 0, 63)
  if (frame.work + steps > frame.workLimit) {
    throw new ImageTooComplexError('its progressive scans take more decoding work than a JPEG of its size may take')
  }
  limits.budget?.spendWork(steps)
  frame.work += steps
}

const CR_R = new Int32Array(256)
const CB_B = new Int32Array(256)
const CR_G = new Int32Array(256)
const CB_G = new Int32Array(256)
for (let i = 0; i < 256; i++) {
  const d = i - 128
  CR_R[i] = Math.round(1.402 * d)
  CB_B[i] = Math.round(1.772 * d)
  CR_G[i] = Math.round(-0.714136 * 65536 * d)
  CB_G[i] = Math.round(-0.344136 * 65536 * d) + 32768
}

interface Sampler {
  plane: Uint8ClampedArray
  columns: Int32Array
  h: number
  v: number
  planeWidth: number
}

/** What colour-converts rows [y0, y1) of the planes into `data`, row y0 first; its samplers are made once. */
function rowConverter(frame: Frame, adobeTransform: number): (y0: number, y1: number, data: Uint8Array) => void {
  const width = Math.ceil(frame.width / frame.scale)
  const samplers = frame.components.map((c): Sampler => {
    const columns = new Int32Array(width)
    for (let x = 0; x < width; x++) columns[x] = ((x * c.h) / frame.hMax) | 0
    return { plane: c.plane, columns, h: c.h, v: c.v, planeWidth: c.planeWidth }
  })
  const rowStart = (s: Sampler, y: number) => (((y * s.v) / frame.vMax) | 0) * s.planeWidth
  const ids = frame.components.map((c) => c.id)
  const rgb = adobeTransform === 0 || (adobeTransform < 0 && ids[0] === 82 && ids[1] === 71 && ids[2] === 66)
  const subsampled420 = samplers.length === 3 && isSubsampled420(frame)
  return (y0, y1, data) => {
    // Stores through a clamped view clamp the colour conversion's results without a branch per channel.
    const out = new Uint8ClampedArray(data.buffer, data.byteOffset, (y1 - y0) * width * 4)
    const rows: Rows = { width, y0, y1 }
    if (samplers.length === 1) grayRows(samplers[0], rowStart, out, rows)
    else if (samplers.length === 3) {
      if (rgb) rgbRows(samplers, rowStart, out, rows)
      else if (subsampled420 && y0 % 2 === 0) ycbcr420Rows(samplers, out, rows)
      else ycbcrRows(samplers, rowStart, out, rows)
    } else {
      if (adobeTransform === 2) ycbcrRows(samplers, rowStart, out, rows)
      else rgbRows(samplers, rowStart, out, rows)
      applyInk(samplers[3], rowStart, out, rows, adobeTransform === 2)
    }
  }
}

/** Which rows a conversion writes: [y0, y1) of an image `width` wide, into an output that starts at row y0. */
interface Rows {
  width: number
  y0: number
  y1: number
}

type RowStart = (s: Sampler, y: number) => number

/** 2×2 luma samples per chroma sample, the layout of most camera and web JPEGs (and of ours). */
function isSubsampled420(frame: Frame): boolean {
  const [y, cb, cr] = frame.components
  return y.h === 2 && y.v === 2 && cb.h === 1 && cb.v === 1 && cr.h === 1 && cr.v === 1
}

function grayRows(s: Sampler, rowStart: RowStart, out: Uint8ClampedArray, { width, y0, y1 }: Rows): void {
  const { plane, columns } = s
  for (let y = y0, o = 0; y < y1; y++) {
    const row = rowStart(s, y)
    for (let x = 0; x < width; x++, o += 4) {
      const g = plane[row + columns[x]]
      out[o] = g
      out[o + 1] = g
      out[o + 2] = g
      out[o + 3] = 255
    }
  }
}

function rgbRows(s: Sampler[], rowStart: RowStart, out: Uint8ClampedArray, { width, y0, y1 }: Rows): void {
  const [a, b, c] = s
  for (let y = y0, o = 0; y < y1; y++) {
    const ra = rowStart(a, y)
    const rb = rowStart(b, y)
    const rc = rowStart(c, y)
    for (let x = 0; x < width; x++, o += 4) {
      out[o] = a.plane[ra + a.columns[x]]
      out[o + 1] = b.plane[rb + b.columns[x]]
      out[o + 2] = c.plane[rc + c.columns[x]]
      out[o + 3] = 255
    }
  }
}

function ycbcrRows(s: Sampler[], rowStart: RowStart, out: Uint8ClampedArray, { width, y0, y1 }: Rows): void {
  const [ys, bs, rs] = s
  const yp = ys.plane
  const bp = bs.plane
  const rp = rs.plane
  const yc = ys.columns
  const bc = bs.columns
  const rc = rs.columns
  for (let y = y0, o = 0; y < y1; y++) {
    const ry = rowStart(ys, y)
    const rb = rowStart(bs, y)
    const rr = rowStart(rs, y)
    for (let x = 0; x < width; x++, o += 4) {
      const l = yp[ry + yc[x]]
      const cb = bp[rb + bc[x]]
      const cr = rp[rr + rc[x]]
      out[o] = l + CR_R[cr]
      out[o + 1] = l + ((CB_G[cb] + CR_G[cr]) >> 16)
      out[o + 2] = l + CB_B[cb]
      out[o + 3] = 255
    }
  }
}

/** Clamps -384..639 to a byte with one lookup: CLAMP[v + 384]. */
const CLAMP = Uint8Array.from({ length: 1024 }, (_, i) => Math.min(255, Math.max(0, i - 384)))
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1

/**
 * ycbcrRows for 4:2:0: each chroma sample's terms serve a 2×2 group, two rows at a time (from an even y0),
 * written as whole RGBA words (byte order and alignment permitting).
 */
function ycbcr420Rows(samplers: Sampler[], out: Uint8ClampedArray, rows: Rows): void {
  const { width, y0, y1 } = rows
  const [ys, bs, rs] = samplers
  if (!LITTLE_ENDIAN || out.byteOffset % 4 !== 0) {
    ycbcrRows(samplers, (s, y) => (((y * s.v) / 2) | 0) * s.planeWidth, out, rows)
    return
  }
  const words = new Uint32Array(out.buffer, out.byteOffset, width * (y1 - y0))
  const yp = ys.plane
  const bp = bs.plane
  const rp = rs.plane
  const even = width & ~1
  for (let y = y0; y < y1; y += 2) {
    const ry = y * ys.planeWidth
    const ry1 = ry + ys.planeWidth
    const rc = (y >> 1) * bs.planeWidth
    const second = y + 1 < y1
    let o = (y - y0) * width
    let o1 = o + width
    for (let x = 0; x < even; x += 2, o += 2, o1 += 2) {
      const cb = bp[rc + (x >> 1)]
      const cr = rp[rc + (x >> 1)]
      const red = CR_R[cr] + 384
      const green = ((CB_G[cb] + CR_G[cr]) >> 16) + 384
      const blue = CB_B[cb] + 384
      let l = yp[ry + x]
      words[o] = CLAMP[l + red] | (CLAMP[l + green] << 8) | (CLAMP[l + blue] << 16) | 0xff000000
      l = yp[ry + x + 1]
      words[o + 1] = CLAMP[l + red] | (CLAMP[l + green] << 8) | (CLAMP[l + blue] << 16) | 0xff000000
      if (!second) continue
      l = yp[ry1 + x]
      words[o1] = CLAMP[l + red] | (CLAMP[l + green] << 8) | (CLAMP[l + blue] << 16) | 0xff000000
      l = yp[ry1 + x + 1]
      words[o1 + 1] = CLAMP[l + red] | (CLAMP[l + green] << 8) | (CLAMP[l + blue] << 16) | 0xff000000
    }
    if (even === width) continue
    // An odd width leaves one column: its pixels alone.
    const cb = bp[rc + (even >> 1)]
    const cr = rp[rc + (even >> 1)]
    let l = yp[ry + even]
    words[o] =
      CLAMP[l + CR_R[cr] + 384] | (CLAMP[l + ((CB_G[cb] + CR_G[cr]) >> 16) + 384] << 8) | (CLAMP[l + CB_B[cb] + 384] << 16) | 0xff000000
    if (!second) continue
    l = yp[ry1 + even]
    words[o1] =
      CLAMP[l + CR_R[cr] + 384] | (CLAMP[l + ((CB_G[cb] + CR_G[cr]) >> 16) + 384] << 8) | (CLAMP[l + CB_B[cb] + 384] << 16) | 0xff000000
  }
}

/** Adobe stores CMYK inverted, so each ink channel times K gives the RGB channel directly. */
function applyInk(k: Sampler, rowStart: RowStart, out: Uint8ClampedArray, { width, y0, y1 }: Rows, invert: boolean): void {
  for (let y = y0, o = 0; y < y1; y++) {
    const row = rowStart(k, y)
    for (let x = 0; x < width; x++, o += 4) {
      const black = k.plane[row + k.columns[x]]
      for (let i = 0; i < 3; i++) {
        const v = invert ? 255 - out[o + i] : out[o + i]
        out[o + i] = ((v * black + 127) / 255) | 0
      }
    }
  }
}
