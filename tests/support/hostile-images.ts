/**
 * Files whose headers disagree with each other, as an attacker builds them: a PNG with a second IHDR, a WebP whose
 * VP8X canvas differs from its bitstream's own size, a JPEG with several frame headers or a DNL height. Each is
 * small on the wire and, decoded as its later header says, huge in memory.
 */
import fc from 'fast-check'
import { zlibSync } from 'fflate'
import { chunk as pngChunk, concat } from '../../devstack/samples/png-encoder.ts'
import { encodeJpeg } from '../../shared/images/codecs/jpeg-encoder.ts'
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

export interface ManyScanJpegOptions extends Size {
  /** AC scans after the DC scan, each one end-of-band run over every block of its component. */
  scans: number
  /** 1 (greyscale) or 3 (three full-resolution components, the AC scans taking them in turn). */
  components?: 1 | 3
  /** The band of every AC scan (default 1–63). */
  band?: [number, number]
  /** Refinement scans (successive approximation, Ah = 1) instead of first passes. */
  refine?: boolean
}

/**
 * A progressive JPEG as the attack is built: one DC scan, then `scans` AC scans that are nothing but end-of-band runs
 * (about 15 bits per 32767 blocks), so a 40 MP file of a thousand scans weighs about 150 KB while a decoder walks
 * every block of the image once per scan.
 */
export function manyScanJpeg(options: ManyScanJpegOptions): Uint8Array {
  const { width, height, scans } = options
  const count = options.components ?? 1
  const [ss, se] = options.band ?? [1, 63]
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8)
  const out: number[] = [0xff, 0xd8]
  out.push(0xff, 0xdb, 0, 67, 0, ...new Array(64).fill(1))
  out.push(0xff, 0xc2, 0, 8 + 3 * count, 8, height >> 8, height & 255, width >> 8, width & 255, count)
  for (let i = 1; i <= count; i++) out.push(i, 0x11, 0)
  // DC: one symbol (size 0) of one bit. AC: the end-of-band runs EOB0–EOB14, four bits each.
  const acSymbols = Array.from({ length: 15 }, (_, r) => r << 4)
  out.push(0xff, 0xc4, 0, 2 + 17 + 1, 0x00, 1, ...new Array(15).fill(0), 0)
  out.push(0xff, 0xc4, 0, 2 + 17 + 15, 0x10, 0, 0, 0, 15, ...new Array(12).fill(0), ...acSymbols)
  out.push(0xff, 0xda, 0, 6 + 2 * count, count)
  for (let i = 1; i <= count; i++) out.push(i, 0x00)
  out.push(0, 0, 0x00)
  const dc = new ScanBits()
  for (let i = 0; i < blocks * count; i++) dc.put(0, 1)
  out.push(...dc.finish())
  const runs = new ScanBits()
  for (let left = blocks; left > 0; ) {
    const run = Math.min(left, 32767)
    const r = 31 - Math.clz32(run)
    runs.put(r, 4)
    if (r > 0) runs.put(run - (1 << r), r)
    left -= run
  }
  const entropy = runs.finish()
  for (let scan = 0; scan < scans; scan++) {
    out.push(0xff, 0xda, 0, 8, 1, 1 + (scan % count), 0x00, ss, se, options.refine ? 0x10 : 0x00)
    for (const byte of entropy) out.push(byte)
  }
  // A comment segment brings a small file over the service's 1 KB minimum.
  if (out.length < 1100) out.splice(2, 0, 0xff, 0xfe, 0x04, 0x4e, ...new Array(0x44c).fill(0x20))
  out.push(0xff, 0xd9)
  return Uint8Array.from(out)
}

/** Entropy-coded bits, most significant first, 0xFF stuffed and the last byte padded with ones (T.81 F.1.2.3). */
class ScanBits {
  private bytes: number[] = []
  private buffer = 0
  private count = 0

  put(value: number, bits: number): void {
    for (let bit = bits - 1; bit >= 0; bit--) {
      this.buffer = (this.buffer << 1) | ((value >> bit) & 1)
      if (++this.count === 8) this.flush()
    }
  }

  private flush(): void {
    this.bytes.push(this.buffer)
    if (this.buffer === 0xff) this.bytes.push(0)
    this.buffer = 0
    this.count = 0
  }

  finish(): number[] {
    if (this.count > 0) {
      this.buffer = (this.buffer << (8 - this.count)) | ((1 << (8 - this.count)) - 1)
      this.flush()
    }
    return this.bytes
  }
}

/** Many-scan progressive JPEGs of any size up to `maxSide`, one to `maxScans` scans, any band, first passes or refinements. */
export function manyScanJpegArbitrary(options: { maxSide?: number; maxScans?: number } = {}): fc.Arbitrary<ManyScanJpegOptions> {
  const band = fc
    .tuple(fc.integer({ min: 1, max: 63 }), fc.integer({ min: 1, max: 63 }))
    .map(([a, b]): [number, number] => [Math.min(a, b), Math.max(a, b)])
  return fc.record({
    width: fc.integer({ min: 16, max: options.maxSide ?? 2000 }),
    height: fc.integer({ min: 16, max: options.maxSide ?? 2000 }),
    scans: fc.integer({ min: 1, max: options.maxScans ?? 300 }),
    components: fc.constantFrom<1 | 3>(1, 3),
    band,
    refine: fc.boolean(),
  })
}
