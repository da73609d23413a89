/**
 * The name of an image format the service does not take, recognised from the first bytes so a refusal can say what
 * was sent: HEIC, HEIF and AVIF by the brands of their ISO BMFF `ftyp` box (ISO/IEC 23008-12 Annex B, and AV1 Image
 * File Format §6.2), GIF, BMP, TIFF and JPEG XL by their signatures. Undefined for anything else. Why these are
 * refused rather than converted: docs/decisions.md.
 */
export function refusedFormatOf(bytes: Uint8Array): string | undefined {
  if (bytes.length >= 16 && text(bytes, 4) === 'ftyp') return isoBrandFormat(bytes)
  if (text(bytes, 0) === 'GIF8') return 'GIF'
  if (bytes[0] === 0x42 && bytes[1] === 0x4d && BMP_INFO_SIZES.has(bytes[14] | (bytes[15] << 8)) && bytes[16] === 0) return 'BMP'
  if (startsWith(bytes, [0x49, 0x49, 0x2a, 0x00]) || startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2a])) return 'TIFF'
  if (startsWith(bytes, [0xff, 0x0a]) || startsWith(bytes, [0, 0, 0, 0x0c, 0x4a, 0x58, 0x4c, 0x20])) return 'JPEG XL'
  return undefined
}

/** The sizes of the BMP info headers (BITMAPCOREHEADER to BITMAPV5HEADER), after "BM" and 12 bytes of file header. */
const BMP_INFO_SIZES = new Set([12, 40, 52, 56, 64, 108, 124])
const AVIF_BRANDS = new Set(['avif', 'avis'])
const HEIC_BRANDS = new Set(['heic', 'heix', 'heim', 'heis', 'hevc', 'hevx', 'hevm', 'hevs'])
const HEIF_BRANDS = new Set(['mif1', 'msf1', 'mif2'])
/** An ftyp box lists a handful of brands; a longer list is not read further. */
const MAX_BRANDS = 64

/** The major brand, then the compatible brands the box lists (within its size and the bytes); AVIF before HEIC before HEIF. */
function isoBrandFormat(bytes: Uint8Array): string | undefined {
  const boxSize = ((bytes[0] << 24) | (bytes[1] << 16) | (bytes[2] << 8) | bytes[3]) >>> 0
  const end = Math.min(bytes.length, boxSize, 16 + 4 * MAX_BRANDS)
  const brands = [text(bytes, 8)]
  for (let at = 16; at + 4 <= end; at += 4) brands.push(text(bytes, at))
  if (brands.some((brand) => AVIF_BRANDS.has(brand))) return 'AVIF'
  if (brands.some((brand) => HEIC_BRANDS.has(brand))) return 'HEIC'
  if (brands.some((brand) => HEIF_BRANDS.has(brand))) return 'HEIF'
  return undefined
}

function text(bytes: Uint8Array, at: number): string {
  return at + 4 <= bytes.length ? String.fromCharCode(bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]) : ''
}

function startsWith(bytes: Uint8Array, prefix: number[]): boolean {
  return bytes.length >= prefix.length && prefix.every((value, i) => bytes[i] === value)
}
