import type { Orientation } from './exif.ts'
import type { SrgbConversion } from './icc.ts'

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

/**
 * What a viewer does to the stored pixels before showing them, read from the image's metadata at intake
 * (shared/images/display.ts). Absent fields mean nothing to do: upright, sRGB.
 */
export interface DisplayTransform {
  /** The EXIF orientation, when it is not 1: the width and height beside it are then the displayed ones. */
  orientation?: Orientation
  /** The conversion of the stored colours to sRGB, from an embedded ICC profile that is not sRGB's. */
  colourProfile?: SrgbConversion
  /** A CMYK or YCCK JPEG: its inks are converted to RGB when decoded. */
  cmyk?: boolean
}

/** The image limits of docs/api.md ("Images"), per image. */
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
