/**
 * Metadata as phones and editors write it, added to images our encoders made: EXIF orientation as a TIFF block (in a
 * JPEG APP1 segment, a PNG eXIf chunk or a WebP EXIF chunk), well formed or hostile, and ICC profiles (JPEG APP2
 * chunks, PNG iCCP, WebP ICCP). The stored pixels for each orientation come from ./jpeg-exif.ts (storedPixels).
 */
import { zlibSync } from 'fflate'
import { chunk, concat } from '../../devstack/samples/png-encoder.ts'

export const ORIENTATIONS = [1, 2, 3, 4, 5, 6, 7, 8] as const

/** One IFD entry: tag, TIFF type (3 SHORT, 4 LONG), count, and the value or offset field as a number. */
export interface TiffEntry {
  tag: number
  type: number
  count: number
  value: number
}

export const ORIENTATION_TAG = 0x0112

/** A TIFF block: header, then IFD0 at `ifdOffset` (8 by default) with these entries, then the next-IFD offset. */
export function tiffBlock(
  entries: TiffEntry[],
  options: { bigEndian?: boolean; ifdOffset?: number; nextIfd?: number; declaredCount?: number; length?: number } = {},
): Uint8Array {
  const ifd = options.ifdOffset ?? 8
  const size = options.length ?? Math.max(ifd + 2 + entries.length * 12 + 4, 8)
  const out = new Uint8Array(size)
  const view = new DataView(out.buffer)
  const little = !options.bigEndian
  out.set(little ? [0x49, 0x49] : [0x4d, 0x4d], 0)
  view.setUint16(2, 42, little)
  view.setUint32(4, ifd, little)
  const put16 = (at: number, v: number) => at + 2 <= size && view.setUint16(at, v, little)
  const put32 = (at: number, v: number) => at + 4 <= size && view.setUint32(at, v, little)
  put16(ifd, options.declaredCount ?? entries.length)
  entries.forEach((entry, i) => {
    const at = ifd + 2 + i * 12
    put16(at, entry.tag)
    put16(at + 2, entry.type)
    put32(at + 4, entry.count)
    // A SHORT value sits in the first two bytes of the value field, in the block's byte order.
    if (entry.type === 3 && entry.count === 1) put16(at + 8, entry.value)
    else put32(at + 8, entry.value)
  })
  put32(ifd + 2 + entries.length * 12, options.nextIfd ?? 0)
  return out
}

/** The TIFF block a camera writes: a few tags (width, height, make) around the orientation. */
export function exifWithOrientation(orientation: number, options: { bigEndian?: boolean } = {}): Uint8Array {
  return tiffBlock(
    [
      { tag: 0x0100, type: 4, count: 1, value: 4032 },
      { tag: 0x0101, type: 4, count: 1, value: 3024 },
      { tag: ORIENTATION_TAG, type: 3, count: 1, value: orientation },
      { tag: 0x0128, type: 3, count: 1, value: 2 },
    ],
    options,
  )
}

/** A JPEG segment: marker, big-endian length, payload. */
export function jpegSegment(marker: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + payload.length)
  out.set([0xff, marker, (payload.length + 2) >> 8, (payload.length + 2) & 0xff])
  out.set(payload, 4)
  return out
}

const ascii = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0))

/** An APP1 segment holding an EXIF TIFF block ("Exif\0\0" first). */
export function exifSegment(tiff: Uint8Array): Uint8Array {
  return jpegSegment(0xe1, concat([ascii('Exif\0\0'), tiff]))
}

/** APP2 segments carrying an ICC profile in numbered chunks (ICC.1:2010 Annex B.4). */
export function iccSegments(profile: Uint8Array, chunkSize = 65519 - 14): Uint8Array[] {
  const count = Math.max(1, Math.ceil(profile.length / chunkSize))
  return Array.from({ length: count }, (_, i) =>
    jpegSegment(0xe2, concat([ascii('ICC_PROFILE\0'), Uint8Array.of(i + 1, count), profile.subarray(i * chunkSize, (i + 1) * chunkSize)])),
  )
}

/** A JPEG with segments added right after its start-of-image marker, where cameras write APP1. */
export function withJpegSegments(jpeg: Uint8Array, segments: Uint8Array[]): Uint8Array {
  return concat([jpeg.subarray(0, 2), ...segments, jpeg.subarray(2)])
}

/** A PNG with chunks added right after IHDR (before PLTE and IDAT, where eXIf and iCCP go). */
export function withPngChunks(png: Uint8Array, chunks: { type: string; body: Uint8Array }[]): Uint8Array {
  const afterHeader = 8 + 25
  return concat([png.subarray(0, afterHeader), ...chunks.map((c) => chunk(c.type, c.body)), png.subarray(afterHeader)])
}

/** An iCCP chunk's body: profile name, NUL, compression method 0, the zlib-compressed profile. */
export function iccpBody(profile: Uint8Array, name = 'Display P3'): Uint8Array {
  return concat([ascii(name), Uint8Array.of(0, 0), zlibSync(profile)])
}

/**
 * A simple (VP8 or VP8L) WebP made extended: a VP8X header with the EXIF and ICC flags it needs, an ICCP chunk
 * before the bitstream and an EXIF chunk after it (WebP container specification, "Extended File Format").
 */
export function withWebpChunks(webp: Uint8Array, extra: { exif?: Uint8Array; icc?: Uint8Array }, size: { width: number; height: number }) {
  const le32 = (n: number) => Uint8Array.of(n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff)
  const riffChunk = (type: string, body: Uint8Array) => concat([ascii(type), le32(body.length), body, new Uint8Array(body.length & 1)])
  const flags = (extra.icc ? 0x20 : 0) | (extra.exif ? 0x08 : 0)
  const w = size.width - 1
  const h = size.height - 1
  const vp8x = Uint8Array.of(flags, 0, 0, 0, w & 0xff, (w >> 8) & 0xff, w >> 16, h & 0xff, (h >> 8) & 0xff, h >> 16)
  const bitstream = webp.subarray(12)
  const body = concat([
    ascii('WEBP'),
    riffChunk('VP8X', vp8x),
    ...(extra.icc ? [riffChunk('ICCP', extra.icc)] : []),
    bitstream,
    ...(extra.exif ? [riffChunk('EXIF', extra.exif)] : []),
  ])
  return concat([ascii('RIFF'), le32(body.length), body])
}
