import type { DecodedImageInfo } from './types.ts'

/**
 * What decoding an image would cost, read from its headers before any pixel is decoded, so an image whose decoding
 * work is out of proportion to its size is refused for the price of a header walk (docs/decisions.md, "CPU budget").
 *
 * A progressive JPEG spreads its coefficients over scans, and each scan walks every block of its components, however
 * few bytes it holds: a 144 KB file of a thousand end-of-band scans cost seconds. libjpeg-turbo bounds the scans for
 * callers that ask (TJPARAM_SCANLIMIT in its turbojpeg.h: "guard against an exploit of the progressive JPEG format";
 * its fuzz targets set 500). Ours is lower, and the scans' combined work is bounded too, per block of the image.
 */

/** libjpeg's default progression writes 10 scans for a colour image and 6 for greyscale; optimisers write a few more. */
export const JPEG_MAX_SCANS = 100

/** The work of walking one block in a scan, in coefficient steps: its bookkeeping and bits cost about this many steps. */
export const JPEG_BLOCK_STEP = 16

/**
 * Work allowed per block of the image, in coefficient steps: a baseline scan takes 16 + 64 = 80, libjpeg's default
 * progression 255 to 290 (every coefficient visited about three times), so 512 leaves room for any encoder's script.
 */
export const JPEG_WORK_PER_BLOCK = 512

/** The work of one scan: every block it visits, plus each coefficient of its band in every one of them. */
export function jpegScanWork(blocks: number, spectralStart: number, spectralEnd: number): number {
  return blocks * (JPEG_BLOCK_STEP + spectralEnd - spectralStart + 1)
}

/** A lossy WebP (VP8) cannot be decoded at a reduced size: at most this many pixels (2048 × 2048) are decoded. */
export const LOSSY_WEBP_MAX_PIXELS = 2048 * 2048

/**
 * A PNG or a lossless WebP is decoded whole (no reduced-size decode): at most this many pixels (12 MP, 4000 × 3000).
 * At 40 MP one took 1.1–1.4 s of CPU on Deno and a peak of 420–620 MB, at 16 MP 0.8 s and 305 MB, at 12 MP 0.57 s and
 * 280 MB for the whole process, against Supabase's 256 MB
 * (docs/decisions.md, "A CPU budget for decoding").
 */
export const WHOLE_DECODE_MAX_PIXELS = 12_000_000

export interface DecodingWork {
  /** What the decoder would do, in the unit of `limit`. */
  work: number
  limit: number
  /** Why it is over the limit, for the caller; undefined when it is within. */
  refusal?: string
}

/**
 * The decoding work of an image whose header intake has read (`info`): for a JPEG its scans and coefficient steps, for a
 * WebP or a PNG its pixels (decoded whole, a PNG or lossless WebP in time and memory proportional to them).
 */
export function decodingWork(bytes: Uint8Array, info: DecodedImageInfo): DecodingWork | null {
  if (info.format === 'jpeg') return jpegWork(bytes)
  if (info.format === 'webp' && isLossyWebp(bytes)) {
    const pixels = info.width * info.height
    const refusal =
      pixels > LOSSY_WEBP_MAX_PIXELS
        ? `a lossy WebP of ${info.width}×${info.height} (${(pixels / 1e6).toFixed(1)} megapixels) cannot be decoded at a reduced ` +
          `size, and at full size it takes more time than a request has; send a lossy WebP of at most ` +
          `${(LOSSY_WEBP_MAX_PIXELS / 1e6).toFixed(1)} megapixels (2048×2048), or a JPEG or PNG`
        : undefined
    return { work: pixels, limit: LOSSY_WEBP_MAX_PIXELS, refusal }
  }
  if (info.format === 'png' || info.format === 'webp') {
    const pixels = info.width * info.height
    const kind = info.format === 'png' ? 'PNG' : 'lossless WebP'
    const refusal =
      pixels > WHOLE_DECODE_MAX_PIXELS
        ? `a ${kind} of ${info.width}×${info.height} (${(pixels / 1e6).toFixed(1)} megapixels) is decoded whole, and above ` +
          `${WHOLE_DECODE_MAX_PIXELS / 1e6} megapixels that takes more memory and time than a request has; send a ${kind} of at ` +
          `most ${WHOLE_DECODE_MAX_PIXELS / 1e6} megapixels, or a JPEG`
        : undefined
    return { work: pixels, limit: WHOLE_DECODE_MAX_PIXELS, refusal }
  }
  return null
}

/** A simple lossy file ('VP8 ' first) or an extended one holding a 'VP8 ' bitstream. */
function isLossyWebp(bytes: Uint8Array): boolean {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const end = Math.min(bytes.length, 8 + view.getUint32(4, true))
  for (let pos = 12; pos + 8 <= end; ) {
    const type = String.fromCharCode(bytes[pos], bytes[pos + 1], bytes[pos + 2], bytes[pos + 3])
    if (type === 'VP8 ') return true
    if (type === 'VP8L') return false
    const size = view.getUint32(pos + 4, true)
    pos += 8 + size + (size & 1)
  }
  return false
}

interface JpegComponent {
  id: number
  h: number
  v: number
}

/** What a frame header says about the blocks a scan visits. */
export interface JpegFrameGeometry {
  width: number
  height: number
  hMax: number
  vMax: number
  components: JpegComponent[]
}

/** The blocks a scan of these components visits: one component's are those covering the image, several go by MCU. */
export function jpegScanBlocks(frame: JpegFrameGeometry, componentIds: number[]): number {
  const mcusPerLine = Math.ceil(frame.width / (8 * frame.hMax))
  const mcusPerColumn = Math.ceil(frame.height / (8 * frame.vMax))
  const components = componentIds.map((id) => frame.components.find((c) => c.id === id))
  if (components.some((c) => c === undefined)) return 0
  if (components.length === 1) {
    const c = components[0]!
    return Math.ceil(Math.ceil((frame.width * c.h) / frame.hMax) / 8) * Math.ceil(Math.ceil((frame.height * c.v) / frame.vMax) / 8)
  }
  return mcusPerLine * mcusPerColumn * components.reduce((n, c) => n + c!.h * c!.v, 0)
}

/** Every block of the image, all components, over whole MCUs: what the work limit is proportional to. */
export function jpegBlocks(frame: JpegFrameGeometry): number {
  const mcus = Math.ceil(frame.width / (8 * frame.hMax)) * Math.ceil(frame.height / (8 * frame.vMax))
  return mcus * frame.components.reduce((n, c) => n + c.h * c.v, 0)
}

/** The scans and their work, read from the markers alone (the entropy-coded data between them is skipped, not decoded). */
function jpegWork(bytes: Uint8Array): DecodingWork | null {
  let frame: JpegFrameGeometry | null = null
  let progressive = false
  let scans = 0
  let work = 0
  const u16 = (at: number) => (bytes[at] << 8) | bytes[at + 1]
  for (let pos = 2; pos + 4 <= bytes.length; ) {
    if (bytes[pos] !== 0xff) {
      pos = bytes.indexOf(0xff, pos)
      if (pos < 0) break
      continue
    }
    const marker = bytes[pos + 1]
    if (marker === 0xff || marker === 0x00 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) {
      pos += marker === 0xff ? 1 : 2
      continue
    }
    if (marker === 0xd9) break
    const end = pos + 2 + u16(pos + 2)
    if (marker === 0xc0 || marker === 0xc1 || marker === 0xc2) {
      frame ??= readFrame(bytes, pos + 4)
      progressive = marker === 0xc2
    } else if (marker === 0xda && frame && !progressive) {
      // A baseline file holds a scan per component at most: its work is the decoder's to count, the walk stops here.
      return { work: jpegScanWork(jpegBlocks(frame), 0, 63), limit: JPEG_WORK_PER_BLOCK * jpegBlocks(frame) }
    } else if (marker === 0xda && frame) {
      const count = bytes[pos + 4]
      const ids = Array.from({ length: count }, (_, i) => bytes[pos + 5 + 2 * i])
      const band = pos + 5 + 2 * count
      const [start, stop] = progressive ? [bytes[band], bytes[band + 1]] : [0, 63]
      work += jpegScanWork(jpegScanBlocks(frame, ids), start, Math.max(start, stop))
      // Past the limit the verdict is known: the rest of the file is not walked.
      if (++scans > JPEG_MAX_SCANS) break
      pos = skipEntropyData(bytes, end)
      continue
    }
    pos = end
  }
  if (!frame) return null
  const limit = JPEG_WORK_PER_BLOCK * jpegBlocks(frame)
  let refusal: string | undefined
  if (scans > JPEG_MAX_SCANS) {
    refusal = `it has more than the ${JPEG_MAX_SCANS} progressive scans a JPEG may have; re-save it as a baseline JPEG`
  } else if (work > limit) {
    refusal =
      `its progressive scans would take ${(work / limit).toFixed(1)} times the decoding work a JPEG of its size may take; ` +
      're-save it as a baseline JPEG'
  }
  return { work, limit, refusal }
}

function readFrame(bytes: Uint8Array, at: number): JpegFrameGeometry {
  const height = (bytes[at + 1] << 8) | bytes[at + 2]
  const width = (bytes[at + 3] << 8) | bytes[at + 4]
  const components: JpegComponent[] = []
  for (let i = 0, p = at + 6; i < bytes[at + 5]; i++, p += 3) {
    components.push({ id: bytes[p], h: Math.max(1, bytes[p + 1] >> 4), v: Math.max(1, bytes[p + 1] & 15) })
  }
  const hMax = Math.max(1, ...components.map((c) => c.h))
  const vMax = Math.max(1, ...components.map((c) => c.v))
  return { width, height, hMax, vMax, components }
}

/** The first marker after entropy-coded data (stuffed zeros, fill bytes and restart markers belong to the data). */
function skipEntropyData(bytes: Uint8Array, pos: number): number {
  for (pos = bytes.indexOf(0xff, pos); pos >= 0 && pos + 1 < bytes.length; pos = bytes.indexOf(0xff, pos + 1)) {
    const next = bytes[pos + 1]
    if (next !== 0 && next !== 0xff && (next < 0xd0 || next > 0xd7)) return pos
  }
  return bytes.length
}
