export type ImageFormat = 'jpeg' | 'png' | 'webp'

export const contentTypeOf: Record<ImageFormat, 'image/jpeg' | 'image/png' | 'image/webp'> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
}

/** Format and dimensions read from an image's header, without decoding its pixels. */
export interface DecodedImageInfo {
  format: ImageFormat
  width: number
  height: number
}

/** Limits of DESIGN.md §4, per image. */
export interface ImageLimits {
  minBytes: number
  maxBytes: number
  maxPixels: number
}

export const defaultImageLimits: ImageLimits = {
  minBytes: 1024,
  maxBytes: 10 * 1024 * 1024,
  maxPixels: 40_000_000,
}

/** Which request field an image came from; used in error messages. */
export type ImageField = 'userPhoto' | 'productImage'
