import type { DecodedImageInfo, ImageFormat } from './types.ts'

/**
 * Format and dimensions from the first bytes of an image, trusting nothing but the
 * bytes. Returns null for any other format and for truncated or zero-size headers.
 */
export function readImageHeader(bytes: Uint8Array): DecodedImageInfo | null {
  if (startsWith(bytes, PNG_SIGNATURE)) return readPng(bytes)
  if (startsWith(bytes, JPEG_SOI)) return readJpeg(bytes)
  if (startsWith(bytes, RIFF) && startsWith(bytes, WEBP, 8)) return readWebp(bytes)
  return null
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
const IHDR = [0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52]
const JPEG_SOI = [0xff, 0xd8, 0xff]
const RIFF = [0x52, 0x49, 0x46, 0x46]
const WEBP = [0x57, 0x45, 0x42, 0x50]
const VP8_START_CODE = [0x9d, 0x01, 0x2a]
const VP8L_SIGNATURE = 0x2f
const PNG_MAX_DIMENSION = 0x7fffffff

function startsWith(bytes: Uint8Array, prefix: readonly number[], offset = 0): boolean {
  if (bytes.length < offset + prefix.length) return false
  for (let i = 0; i < prefix.length; i++) {
    if (bytes[offset + i] !== prefix[i]) return false
  }
  return true
}

function fourCC(bytes: Uint8Array, offset: number): string {
  return String.fromCharCode(bytes[offset], bytes[offset + 1], bytes[offset + 2], bytes[offset + 3])
}

const uint16BE = (b: Uint8Array, at: number) => (b[at] << 8) | b[at + 1]
const uint16LE = (b: Uint8Array, at: number) => b[at] | (b[at + 1] << 8)
const uint24LE = (b: Uint8Array, at: number) => b[at] | (b[at + 1] << 8) | (b[at + 2] << 16)
const uint32BE = (b: Uint8Array, at: number) => ((b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]) >>> 0
const uint32LE = (b: Uint8Array, at: number) => (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0

function info(format: ImageFormat, width: number, height: number): DecodedImageInfo | null {
  return width > 0 && height > 0 ? { format, width, height } : null
}

function readPng(bytes: Uint8Array): DecodedImageInfo | null {
  // The first chunk must be IHDR: length 13, then width and height as big-endian uint32.
  if (bytes.length < 24 || !startsWith(bytes, IHDR, 8)) return null
  const width = uint32BE(bytes, 16)
  const height = uint32BE(bytes, 20)
  if (width > PNG_MAX_DIMENSION || height > PNG_MAX_DIMENSION) return null
  // A second IHDR would give the decoder another size than the one checked here: such a file is refused.
  for (let pos = 33; pos + 8 <= bytes.length; ) {
    const type = fourCC(bytes, pos + 4)
    if (type === 'IHDR') return null
    if (type === 'IEND') break
    pos += 12 + uint32BE(bytes, pos)
  }
  return info('png', width, height)
}

function isStartOfFrame(marker: number): boolean {
  // SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC), which share the range.
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc
}

function isStandalone(marker: number): boolean {
  return marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)
}

function readJpeg(bytes: Uint8Array): DecodedImageInfo | null {
  let offset = 2
  while (offset < bytes.length) {
    if (bytes[offset] !== 0xff) return null
    while (offset < bytes.length && bytes[offset] === 0xff) offset++
    if (offset >= bytes.length) return null
    const marker = bytes[offset++]
    if (isStandalone(marker)) continue
    // A stuffed zero, end of image or start of scan before any frame header: not a usable JPEG.
    if (marker === 0x00 || marker === 0xd9 || marker === 0xda) return null
    if (offset + 2 > bytes.length) return null
    const segmentLength = uint16BE(bytes, offset)
    if (segmentLength < 2) return null
    if (isStartOfFrame(marker)) {
      // length (2), sample precision (1), height (2), width (2)
      if (segmentLength < 7 || offset + 7 > bytes.length) return null
      const frame = info('jpeg', uint16BE(bytes, offset + 5), uint16BE(bytes, offset + 3))
      return frame && soleFrame(bytes, offset + segmentLength) ? frame : null
    }
    offset += segmentLength
  }
  return null
}

/** No second frame header between the first and the first scan: a decoder could take its size instead. */
function soleFrame(bytes: Uint8Array, offset: number): boolean {
  while (offset + 4 <= bytes.length && bytes[offset] === 0xff) {
    while (offset < bytes.length && bytes[offset] === 0xff) offset++
    const marker = bytes[offset++]
    if (isStartOfFrame(marker) || marker === 0xdc) return false
    if (marker === 0xda || marker === 0xd9) return true
    if (isStandalone(marker)) continue
    offset += uint16BE(bytes, offset)
  }
  return true
}

function readWebp(bytes: Uint8Array): DecodedImageInfo | null {
  if (bytes.length < 20) return null
  const chunk = fourCC(bytes, 12)
  if (chunk === 'VP8 ') {
    // Frame tag (3 bytes, key frame when bit 0 is clear), start code, then 14-bit dimensions.
    if (bytes.length < 30 || (bytes[20] & 1) !== 0 || !startsWith(bytes, VP8_START_CODE, 23)) return null
    return info('webp', uint16LE(bytes, 26) & 0x3fff, uint16LE(bytes, 28) & 0x3fff)
  }
  if (chunk === 'VP8L') {
    if (bytes.length < 25 || bytes[20] !== VP8L_SIGNATURE) return null
    const bits = uint32LE(bytes, 21)
    if (bits >>> 29 !== 0) return null
    return info('webp', (bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1)
  }
  if (chunk === 'VP8X') {
    if (bytes.length < 30) return null
    const canvas = info('webp', uint24LE(bytes, 24) + 1, uint24LE(bytes, 27) + 1)
    return canvas && stillFrameFits(bytes, canvas) ? canvas : null
  }
  return null
}

/** A still extended WebP's bitstream must be the size of its canvas; the decoder would allocate for the bitstream's. */
function stillFrameFits(bytes: Uint8Array, canvas: DecodedImageInfo): boolean {
  if ((bytes[20] & 0x02) !== 0) return true // animated: the decoder checks each frame against the canvas
  for (let pos = 30; pos + 8 <= bytes.length; pos += 8 + uint32LE(bytes, pos + 4) + (uint32LE(bytes, pos + 4) & 1)) {
    const chunk = fourCC(bytes, pos)
    if (chunk !== 'VP8 ' && chunk !== 'VP8L') continue
    const frame = readWebp(Uint8Array.of(...bytes.subarray(0, 12), ...bytes.subarray(pos, pos + 18)))
    return frame !== null && frame.width === canvas.width && frame.height === canvas.height
  }
  return true
}
