import { Unzlib } from 'fflate'
import { checkAllocation, ImageDecodeError, type AllocationLimits, type RgbaImage } from './raster.ts'
import { crc32 } from '../../encoding/crc32.ts'

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }
const ALLOWED_DEPTHS: Record<number, number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] }
// Adam7 passes: x start, y start, x step, y step.
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
]

interface Header {
  width: number
  height: number
  depth: number
  colorType: number
  interlaced: boolean
}

/** Every PNG colour type and bit depth, palette with tRNS, Adam7; 16-bit samples keep their high byte. */
export function decodePng(bytes: Uint8Array, limits: AllocationLimits = {}): RgbaImage {
  for (let i = 0; i < 8; i++) if (bytes[i] !== SIGNATURE[i]) throw new ImageDecodeError('not a PNG file')
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let header: Header | null = null
  let palette: Uint8Array | null = null
  let transparency: Uint8Array | null = null
  const idat: Uint8Array[] = []
  let pos = 8
  while (pos + 12 <= bytes.length) {
    const length = view.getUint32(pos)
    const type = String.fromCharCode(bytes[pos + 4], bytes[pos + 5], bytes[pos + 6], bytes[pos + 7])
    const start = pos + 8
    const end = start + length
    if (end + 4 > bytes.length) throw new ImageDecodeError(`the PNG is truncated (in its ${type} chunk)`)
    if (crc32(bytes, pos + 4, end) !== view.getUint32(end))
      throw new ImageDecodeError(`the PNG is corrupt (bad checksum on its ${type} chunk)`)
    const body = bytes.subarray(start, end)
    // IHDR must come first and only once: a second one would size the buffers after the first was checked.
    if ((type === 'IHDR') !== (pos === 8))
      throw new ImageDecodeError(type === 'IHDR' ? 'the PNG has more than one IHDR header' : 'the PNG does not start with its IHDR header')
    if (type === 'IHDR') header = readHeader(body)
    else if (type === 'PLTE') palette = body
    else if (type === 'tRNS') transparency = body
    else if (type === 'IDAT') idat.push(body)
    else if (type === 'IEND') break
    else if ((bytes[pos + 4] & 0x20) === 0) throw new ImageDecodeError(`the PNG uses an unknown critical chunk ${type}`)
    pos = end + 4
  }
  if (!header) throw new ImageDecodeError('the PNG has no IHDR header')
  if (idat.length === 0) throw new ImageDecodeError('the PNG has no image data')
  if (header.colorType === 3 && !palette) throw new ImageDecodeError('the PNG palette is missing')
  checkAllocation('PNG', header.width, header.height, limits)

  const bitsPerPixel = CHANNELS[header.colorType] * header.depth
  const passes = header.interlaced ? ADAM7 : [[0, 0, 1, 1]]
  let expected = 0
  for (const [x0, y0, dx, dy] of passes) {
    const w = Math.ceil((header.width - x0) / dx)
    const h = Math.ceil((header.height - y0) / dy)
    if (w > 0 && h > 0) expected += h * (1 + Math.ceil((w * bitsPerPixel) / 8))
  }
  const raw = inflateImageData(idat, expected)

  const out = new Uint8Array(header.width * header.height * 4)
  const toRgba = pixelReader(header, palette, transparency)
  const fastRgba = header.depth === 8 && header.colorType === 6
  const fastRgb = header.depth === 8 && header.colorType === 2 && !transparency
  let offset = 0
  for (const [x0, y0, dx, dy] of passes) {
    const w = Math.ceil((header.width - x0) / dx)
    const h = Math.ceil((header.height - y0) / dy)
    if (w <= 0 || h <= 0) continue
    const stride = Math.ceil((w * bitsPerPixel) / 8)
    unfilter(raw, offset, stride, h, Math.max(1, bitsPerPixel >> 3))
    for (let y = 0; y < h; y++) {
      const row = offset + y * (stride + 1) + 1
      const outRow = (y0 + y * dy) * header.width
      if (fastRgba && dx === 1) out.set(raw.subarray(row, row + w * 4), outRow * 4)
      else if (fastRgb && dx === 1) {
        for (let x = 0, i = row, o = outRow * 4; x < w; x++, i += 3, o += 4) {
          out[o] = raw[i]
          out[o + 1] = raw[i + 1]
          out[o + 2] = raw[i + 2]
          out[o + 3] = 255
        }
      } else for (let x = 0; x < w; x++) toRgba(raw, row, x, out, (outRow + x0 + x * dx) * 4)
    }
    offset += h * (stride + 1)
  }
  return { width: header.width, height: header.height, data: out }
}

/** Compressed bytes handed to the inflater at once: a bomb inflates at most about 1032 times this before we stop it. */
const INFLATE_SLICE = 8 * 1024

/**
 * Inflates the IDAT stream into exactly the bytes the header promises, and stops there: data past them is never
 * inflated, so a small file whose stream inflates to gigabytes (a decompression bomb) costs no more than the
 * image it claims to be. (A one-shot inflate into a fixed buffer drops the excess but still decodes all of it.)
 */
function inflateImageData(idat: Uint8Array[], expected: number): Uint8Array {
  const raw = new Uint8Array(expected)
  let filled = 0
  const inflater = new Unzlib((chunk) => {
    const take = Math.min(chunk.length, expected - filled)
    raw.set(take === chunk.length ? chunk : chunk.subarray(0, take), filled)
    filled += take
  })
  try {
    for (let i = 0; i < idat.length && filled < expected; i++) {
      const body = idat[i]
      for (let at = 0; at < body.length && filled < expected; at += INFLATE_SLICE) {
        const end = Math.min(at + INFLATE_SLICE, body.length)
        inflater.push(body.subarray(at, end), i === idat.length - 1 && end === body.length)
      }
    }
  } catch {
    throw new ImageDecodeError('the PNG image data is corrupt (it does not inflate)')
  }
  if (filled < expected) throw new ImageDecodeError('the PNG image data is truncated')
  return raw
}

function readHeader(body: Uint8Array): Header {
  if (body.length < 13) throw new ImageDecodeError('the PNG header is too short')
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength)
  const header = {
    width: view.getUint32(0),
    height: view.getUint32(4),
    depth: body[8],
    colorType: body[9],
    interlaced: body[12] === 1,
  }
  if (header.width === 0 || header.height === 0) throw new ImageDecodeError('the PNG has no pixels')
  if (!ALLOWED_DEPTHS[header.colorType]?.includes(header.depth)) {
    throw new ImageDecodeError(`the PNG has an invalid colour type ${header.colorType} with bit depth ${header.depth}`)
  }
  if (body[10] !== 0 || body[11] !== 0 || body[12] > 1)
    throw new ImageDecodeError('the PNG uses an unknown compression, filter or interlace method')
  return header
}

function unfilter(raw: Uint8Array, offset: number, stride: number, rows: number, bpp: number): void {
  for (let y = 0; y < rows; y++) {
    const filterAt = offset + y * (stride + 1)
    const row = filterAt + 1
    const prev = y > 0 ? row - stride - 1 : -1
    const filter = raw[filterAt]
    if (filter === 0) continue
    if (filter === 1) {
      for (let i = bpp; i < stride; i++) raw[row + i] = (raw[row + i] + raw[row + i - bpp]) & 255
    } else if (filter === 2) {
      if (prev >= 0) for (let i = 0; i < stride; i++) raw[row + i] = (raw[row + i] + raw[prev + i]) & 255
    } else if (filter === 3) {
      for (let i = 0; i < stride; i++) {
        const left = i >= bpp ? raw[row + i - bpp] : 0
        const up = prev >= 0 ? raw[prev + i] : 0
        raw[row + i] = (raw[row + i] + ((left + up) >> 1)) & 255
      }
    } else if (filter === 4) {
      for (let i = 0; i < stride; i++) {
        const a = i >= bpp ? raw[row + i - bpp] : 0
        const b = prev >= 0 ? raw[prev + i] : 0
        const c = i >= bpp && prev >= 0 ? raw[prev + i - bpp] : 0
        const p = a + b - c
        const pa = Math.abs(p - a)
        const pb = Math.abs(p - b)
        const pc = Math.abs(p - c)
        raw[row + i] = (raw[row + i] + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c)) & 255
      }
    } else throw new ImageDecodeError(`the PNG uses an unknown row filter ${filter}`)
  }
}

type PixelReader = (raw: Uint8Array, row: number, x: number, out: Uint8Array, o: number) => void

function pixelReader(header: Header, palette: Uint8Array | null, trns: Uint8Array | null): PixelReader {
  const { depth, colorType } = header
  const sample =
    depth === 16
      ? (raw: Uint8Array, row: number, index: number) => raw[row + index * 2]
      : depth === 8
        ? (raw: Uint8Array, row: number, index: number) => raw[row + index]
        : (raw: Uint8Array, row: number, index: number) => {
            const bit = index * depth
            return (raw[row + (bit >> 3)] >> (8 - depth - (bit & 7))) & ((1 << depth) - 1)
          }
  // A tRNS colour key is compared at full precision, before 16-bit samples lose their low byte.
  const fullSample =
    depth === 16 ? (raw: Uint8Array, row: number, index: number) => (raw[row + index * 2] << 8) | raw[row + index * 2 + 1] : sample
  const key = (i: number) => (trns ? (trns[i * 2] << 8) | trns[i * 2 + 1] : -1)
  if (colorType === 3) {
    const entries = palette!.length / 3
    return (raw, row, x, out, o) => {
      const i = sample(raw, row, x)
      if (i >= entries) throw new ImageDecodeError('the PNG refers to a colour outside its palette')
      out[o] = palette![i * 3]
      out[o + 1] = palette![i * 3 + 1]
      out[o + 2] = palette![i * 3 + 2]
      out[o + 3] = trns && i < trns.length ? trns[i] : 255
    }
  }
  if (colorType === 0) {
    const scale = depth < 8 ? 255 / ((1 << depth) - 1) : 1
    const grayKey = key(0)
    return (raw, row, x, out, o) => {
      const g = sample(raw, row, x) * scale
      out[o] = out[o + 1] = out[o + 2] = g
      out[o + 3] = fullSample(raw, row, x) === grayKey ? 0 : 255
    }
  }
  if (colorType === 2) {
    const [kr, kg, kb] = [key(0), key(1), key(2)]
    return (raw, row, x, out, o) => {
      out[o] = sample(raw, row, x * 3)
      out[o + 1] = sample(raw, row, x * 3 + 1)
      out[o + 2] = sample(raw, row, x * 3 + 2)
      const keyed =
        trns !== null &&
        fullSample(raw, row, x * 3) === kr &&
        fullSample(raw, row, x * 3 + 1) === kg &&
        fullSample(raw, row, x * 3 + 2) === kb
      out[o + 3] = keyed ? 0 : 255
    }
  }
  const channels = CHANNELS[colorType]
  return (raw, row, x, out, o) => {
    const base = x * channels
    const g = sample(raw, row, base)
    out[o] = g
    out[o + 1] = channels === 4 ? sample(raw, row, base + 1) : g
    out[o + 2] = channels === 4 ? sample(raw, row, base + 2) : g
    out[o + 3] = sample(raw, row, base + channels - 1)
  }
}
