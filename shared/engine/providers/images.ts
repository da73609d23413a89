import { encodeBase64 } from '../../images/base64.ts'
import { contentTypeOf, type ImageField, type ImageFormat } from '../../images/types.ts'
import { decodeImage, encodeJpeg, ImageDecodeError, type RgbaImage } from '../local/codecs/index.ts'
import { downscaleToFit } from '../local/resize.ts'
import type { InputImage } from '../types.ts'

/** What a provider accepts for one input image. */
export interface InputPolicy {
  formats: readonly ImageFormat[]
  /** Largest encoded image sent, in bytes. */
  maxBytes: number
  /** Longest side sent, in pixels. */
  maxLongSide: number
}

export interface PreparedImage {
  bytes: Uint8Array
  format: ImageFormat
  contentType: 'image/jpeg' | 'image/png' | 'image/webp'
  /** False when the caller's bytes go out untouched. */
  reencoded: boolean
}

/** Thrown when an image that must be re-encoded cannot be decoded; the adapter answers `invalid_input`. */
export class InputPreparationError extends Error {
  readonly field: ImageField
  constructor(field: ImageField, message: string) {
    super(message)
    this.name = 'InputPreparationError'
    this.field = field
  }
}

const JPEG_QUALITY = 92

/**
 * The image as the provider accepts it: the original bytes when they already fit the policy; otherwise decoded,
 * flattened on white (JPEG has no alpha), shrunk until it fits and encoded as JPEG.
 */
export function prepareInput(image: InputImage, field: ImageField, policy: InputPolicy): PreparedImage {
  const fits = policy.formats.includes(image.format) && image.bytes.byteLength <= policy.maxBytes
    && Math.max(image.width, image.height) <= policy.maxLongSide
  if (fits) return { bytes: image.bytes, format: image.format, contentType: contentTypeOf[image.format], reencoded: false }

  let side = Math.min(policy.maxLongSide, Math.max(image.width, image.height))
  let pixels: RgbaImage
  try {
    pixels = decodeImage(image.bytes, image.format, { minLongSide: side })
  } catch (error) {
    if (error instanceof ImageDecodeError) throw new InputPreparationError(field, error.message)
    throw error
  }
  flattenOnWhite(pixels)
  for (let tries = 0; ; tries++) {
    const bytes = encodeJpeg(downscaleToFit(pixels, side), JPEG_QUALITY)
    if (bytes.byteLength <= policy.maxBytes || tries >= 6) return { bytes, format: 'jpeg', contentType: 'image/jpeg', reencoded: true }
    side = Math.max(256, Math.floor(side * 0.75))
  }
}

export function dataUri(image: PreparedImage): string {
  return `data:${image.contentType};base64,${encodeBase64(image.bytes)}`
}

/** Transparent pixels become white, as a product shot on a white background would be. */
function flattenOnWhite(image: RgbaImage): void {
  const { data } = image
  for (let i = 3; i < data.length; i += 4) {
    const alpha = data[i]
    if (alpha === 255) continue
    const keep = alpha / 255
    const white = 255 * (1 - keep)
    data[i - 3] = Math.round(data[i - 3] * keep + white)
    data[i - 2] = Math.round(data[i - 2] * keep + white)
    data[i - 1] = Math.round(data[i - 1] * keep + white)
    data[i] = 255
  }
}

/** Our words for an image a provider could not take, shown to the caller. */
export function describeField(field: ImageField): string {
  return field === 'userPhoto' ? 'The shopper photo (userPhoto)' : 'The product image (productImage)'
}
