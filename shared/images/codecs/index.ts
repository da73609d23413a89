import type { ImageFormat } from '../types.ts'
import { decodeJpeg, decodeJpegRows } from './jpeg-decoder.ts'
import { decodePng } from './png-decoder.ts'
import { ImageDecodeError, rgbaRows, type AllocationLimits, type RgbaImage, type RowSource } from './raster.ts'
import { decodeWebp } from './webp-decoder.ts'

export { encodeJpeg, encodeJpegRows } from './jpeg-encoder.ts'
export {
  createDecodeBudget,
  ImageDecodeError,
  ImageTooComplexError,
  ImageTooLargeError,
  createRgba,
  MAX_IMAGE_PIXELS,
  type DecodeBudget,
  type RgbaImage,
  type RowSource,
} from './raster.ts'

export interface DecodeOptions extends AllocationLimits {
  /** The smallest long side the caller needs; JPEG uses it to decode at a reduced scale. */
  minLongSide?: number
  /** A progressive JPEG of more pixels is decoded at 1/8, its DC terms alone (jpeg-decoder.ts). */
  progressiveEighthAbovePixels?: number
}

/**
 * Decodes JPEG, PNG or WebP bytes to RGBA; throws ImageDecodeError for data it cannot read, and ImageTooLargeError
 * (one of them) when the size it would allocate is over the limits, checked before allocating.
 */
export function decodeImage(bytes: Uint8Array, format: ImageFormat, options: DecodeOptions = {}): RgbaImage {
  try {
    if (format === 'jpeg') return decodeJpeg(bytes, options)
    if (format === 'png') return decodePng(bytes, options)
    return decodeWebp(bytes, options)
  } catch (error) {
    if (error instanceof ImageDecodeError) throw error
    // Out-of-range reads in malformed data surface as TypeErrors/RangeErrors: still a bad image, not a bug of ours.
    throw new ImageDecodeError(`the ${format.toUpperCase()} data is corrupt`)
  }
}

/**
 * decodeImage as rows: a JPEG is decoded to its planes and colour-converted strip by strip as the rows are read;
 * PNG and WebP are decoded whole. Errors as decodeImage's.
 */
export function decodeImageRows(bytes: Uint8Array, format: ImageFormat, options: DecodeOptions = {}): RowSource {
  if (format !== 'jpeg') return rgbaRows(decodeImage(bytes, format, options))
  try {
    return decodeJpegRows(bytes, options)
  } catch (error) {
    if (error instanceof ImageDecodeError) throw error
    throw new ImageDecodeError('the JPEG data is corrupt')
  }
}
