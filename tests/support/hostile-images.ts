/**
 * Files whose headers disagree with each other, as an attacker builds them: a PNG with a second IHDR, a WebP whose
 * VP8X canvas differs from its bitstream's own size, a JPEG with several frame headers or a DNL height. Each is
 * small on the wire and, decoded as its later header says, huge in memory.
 */
import fc from 'fast-check'
import { zlibSync } from 'fflate'
import { chunk as pngChunk, concat } from '../../devstack/samples/png-encoder.ts'
import { encodeJpeg } from '../../shared/engine/local/codecs/jpeg-encoder.ts'
import { encodeWebpLossless } from './webp-encoder.ts'

export interface Size {
  width: number
  height: number
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0))

function ihdr({ width, height }: Size): Uint8Array {
  const body = new Uint8Array(13)
  const view = new DataView(body.buffer)
  view.setUint32(0, width)
  view.setUint32(4, height)
  body.set([1, 0, 0, 0, 0], 8) // 1-bit grayscale: the smallest rows, so a huge image inflates from little data
  return pngChunk('IHDR', body)
}

/**
 * A 1-bit grayscale PNG with one IHDR per entry of `headers`, in order, and image data (all zeros, so it compresses
 * about 1000:1) sized for the header at `dataFor` (default: the last one), so a decoder that believes that header
 * finds exactly the data it expects. At least 1 KB, as the service requires.
 */
export function pngWithHeaders(headers: Size[], options: { dataFor?: number } = {}): Uint8Array {
  const target = headers[options.dataFor ?? headers.length - 1]
  const rowBytes = 1 + Math.ceil(target.width / 8)
  const raw = new Uint8Array(rowBytes * target.height)
  const idat = zlibSync(raw, { level: 9 })
  const parts = [Uint8Array.from(PNG_SIGNATURE), ...headers.map(ihdr), pngChunk('IDAT', idat)]
  const size = parts.reduce((n, p) => n + p.length, 0) + 12
  if (size < 1100) parts.push(pngChunk('tEXt', Uint8Array.from(ascii(`Comment\0${'x'.repeat(1100 - size)}`))))
  parts.push(pngChunk('IEND', new Uint8Array(0)))
  return concat(parts)
}

/**
 * A lossless (VP8L) bitstream of one flat colour at any size up to 16384 × 16384: with one symbol per prefix code the
 * pixels take no bits at all, so the size in its header is all that changes. The chunk payload, without RIFF.
 */
export function vp8lFlat({ width, height }: Size): Uint8Array {
  const one = encodeWebpLossless({ width: 1, height: 1, data: Uint8Array.of(200, 40, 90, 255) })
  const payload = one.slice(20, 20 + new DataView(one.buffer).getUint32(16, true))
  const view = new DataView(payload.buffer)
  const bits = view.getUint32(1, true)
  view.setUint32(1, ((bits & 0xf0000000) | ((width - 1) & 0x3fff) | (((height - 1) & 0x3fff) << 14)) >>> 0, true)
  return payload
}

function riffChunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + data.length + (data.length & 1))
  out.set(ascii(type), 0)
  new DataView(out.buffer).setUint32(4, data.length, true)
  out.set(data, 8)
  return out
}

function riff(chunks: Uint8Array[]): Uint8Array {
  const body = concat([Uint8Array.from(ascii('WEBP')), ...chunks])
  const head = new Uint8Array(8)
  head.set(ascii('RIFF'))
  new DataView(head.buffer).setUint32(4, body.length, true)
  return concat([head, body])
}

/** An extended WebP: a VP8X canvas of one size holding a VP8L bitstream of another, padded past 1 KB. */
export function webpCanvasAndFrame(canvas: Size, frame: Size): Uint8Array {
  const vp8x = new Uint8Array(10)
  const le24 = (at: number, value: number) => vp8x.set([value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff], at)
  le24(4, canvas.width - 1)
  le24(7, canvas.height - 1)
  return riff([riffChunk('VP8X', vp8x), riffChunk('VP8L', vp8lFlat(frame)), riffChunk('XPAD', new Uint8Array(1024))])
}

/** A simple-format lossless WebP of one flat colour (no VP8X), padded past 1 KB. */
export function webpFlat(size: Size): Uint8Array {
  return riff([riffChunk('VP8L', vp8lFlat(size)), riffChunk('XPAD', new Uint8Array(1024))])
}

const SOF_MARKERS = new Set([0xc0, 0xc1, 0xc2])

/** Where a baseline JPEG's frame header (SOF0) segment starts and ends. */
function frameSegment(bytes: Uint8Array): { start: number; end: number } {
  for (let pos = 2; pos + 4 <= bytes.length; ) {
    const marker = bytes[pos + 1]
    const end = pos + 2 + ((bytes[pos + 2] << 8) | bytes[pos + 3])
    if (SOF_MARKERS.has(marker)) return { start: pos, end }
    pos = end
  }
  throw new Error('no frame header')
}

/** A real 64 × 64 JPEG (about 1.5 KB) whose frame header segment is repeated once per entry of `frames`, in order. */
export function jpegWithFrames(frames: Size[], options: { dnlHeight?: number } = {}): Uint8Array {
  const data = new Uint8Array(64 * 64 * 4)
  for (let i = 0; i < data.length; i += 4) data.set([(i >> 2) & 255, (i >> 8) & 255, 128, 255], i)
  const real = encodeJpeg({ width: 64, height: 64, data }, 95)
  const { start, end } = frameSegment(real)
  const segments = frames.map(({ width, height }) => {
    const segment = real.slice(start, end)
    segment.set([(height >> 8) & 255, height & 255, (width >> 8) & 255, width & 255], 5)
    return segment
  })
  const parts = [real.subarray(0, start), ...segments, real.subarray(end)]
  if (options.dnlHeight !== undefined) {
    // A DNL segment right after the first scan's data would define the height of a frame that declared 0.
    const eoi = real.length - 2
    const dnl = Uint8Array.of(0xff, 0xdc, 0, 4, (options.dnlHeight >> 8) & 255, options.dnlHeight & 255)
    parts[parts.length - 1] = concat([real.subarray(end, eoi), dnl, real.subarray(eoi)])
  }
  return concat(parts)
}

export interface HostileFile {
  bytes: Uint8Array
  format: 'png' | 'webp' | 'jpeg'
  /** The sizes its headers give, in file order. */
  sizes: Size[]
}

const side = (max: number) => fc.integer({ min: 1, max })
const sizeArb = (max: number) => fc.record({ width: side(max), height: side(max) })

/**
 * Files whose first header is small and plausible and whose later headers say anything: PNGs with one to four IHDRs
 * (image data sized for any one of them), extended WebPs whose VP8L bitstream may differ from their VP8X canvas, and
 * JPEGs with one to three frame headers. `firstMax` bounds the first header's sides, `laterMax` the others'.
 */
export function hostileImageArbitrary(options: { firstMax?: number; laterMax?: number } = {}): fc.Arbitrary<HostileFile> {
  const first = sizeArb(options.firstMax ?? 256)
  const later = sizeArb(options.laterMax ?? 12_000)
  const png = fc.tuple(first, fc.array(later, { maxLength: 3 }), fc.nat()).map(([head, rest, pick]): HostileFile => {
    const sizes = [head, ...rest]
    return { bytes: pngWithHeaders(sizes, { dataFor: pick % sizes.length }), format: 'png', sizes }
  })
  const webp = fc.tuple(first, fc.oneof(fc.constant(null), sizeArb(Math.min(options.laterMax ?? 16_384, 16_384)))).map(
    ([canvas, frame]): HostileFile => ({
      bytes: webpCanvasAndFrame(canvas, frame ?? canvas),
      format: 'webp',
      sizes: [canvas, frame ?? canvas],
    }),
  )
  const jpeg = fc
    .tuple(first, fc.array(sizeArb(Math.min(options.laterMax ?? 65_535, 65_535)), { maxLength: 2 }))
    .map(([head, rest]): HostileFile => ({ bytes: jpegWithFrames([head, ...rest]), format: 'jpeg', sizes: [head, ...rest] }))
  return fc.oneof(png, webp, jpeg)
}
