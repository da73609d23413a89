/**
 * The EXIF Orientation tag (TIFF 6.0 tag 274): how the stored rows and columns are turned to be seen upright.
 * 1 upright, 2 mirrored left-right, 3 turned half round, 4 mirrored top-bottom, 5 mirrored along the main diagonal,
 * 6 to be turned a quarter clockwise, 7 mirrored along the other diagonal, 8 to be turned a quarter anticlockwise.
 */
export type Orientation = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8

const ORIENTATION_TAG = 0x0112
const SHORT = 3
const ENTRY_SIZE = 12
const EXIF_HEADER = [0x45, 0x78, 0x69, 0x66, 0x00] // "Exif\0", then a fill byte

/**
 * The orientation in a TIFF block (what an EXIF segment or chunk holds), read as Chromium's JPEG decoder reads it
 * (third_party/blink/renderer/platform/image-decoders/jpeg/jpeg_image_decoder.cc, ReadImageOrientation): the byte
 * order from its header, then the entries of IFD0 (the primary image's; IFD1 describes the thumbnail) that fit in
 * the block, up to the first Orientation that is one SHORT. Undefined when the block holds none, so a caller may look
 * in the next one; a value outside 1–8 is 1. Only IFD0 is read: no offset chain is followed, so none can loop, and the
 * work is at most one pass over the block.
 */
export function orientationInTiff(tiff: Uint8Array): Orientation | undefined {
  if (tiff.length < 8) return undefined
  const little = tiff[0] === 0x49 && tiff[1] === 0x49
  const big = tiff[0] === 0x4d && tiff[1] === 0x4d
  if (!little && !big) return undefined
  const u16 = (at: number) => (little ? tiff[at] | (tiff[at + 1] << 8) : (tiff[at] << 8) | tiff[at + 1])
  const u32 = (at: number) => (little ? (u16(at + 2) << 16) | u16(at) : (u16(at) << 16) | u16(at + 2)) >>> 0
  if (u16(2) !== 42) return undefined
  const ifd = u32(4)
  if (ifd + 2 > tiff.length) return undefined
  // A count larger than the block can hold is read as far as whole entries go, never further.
  const entries = Math.min(u16(ifd), Math.floor((tiff.length - ifd - 2) / ENTRY_SIZE))
  for (let i = 0, at = ifd + 2; i < entries; i++, at += ENTRY_SIZE) {
    if (u16(at) !== ORIENTATION_TAG || u16(at + 2) !== SHORT || u32(at + 4) !== 1) continue
    const value = u16(at + 8)
    return value >= 1 && value <= 8 ? (value as Orientation) : 1
  }
  return undefined
}

/** The TIFF block of an EXIF payload: after "Exif\0\0" in a JPEG APP1 segment; some writers add it in PNG and WebP too. */
export function tiffOfExif(payload: Uint8Array): Uint8Array | undefined {
  if (payload.length < 6) return undefined
  for (let i = 0; i < EXIF_HEADER.length; i++) if (payload[i] !== EXIF_HEADER[i]) return undefined
  return payload.subarray(6)
}
