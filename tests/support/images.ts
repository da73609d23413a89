/**
 * Synthetic test photos as encoded bytes, runtime-agnostic (Uint8Array only), shared by the whole test suite.
 * The figure and garments are drawn with anti-aliased shapes, soft lighting and fabric texture so the local
 * engine's segmentation, landmarks and shading have something realistic to work on.
 */
import { encodeJpeg } from '../../shared/images/codecs/jpeg-encoder.ts'
import type { RgbaImage } from '../../shared/images/codecs/raster.ts'
import type { InputImage } from '../../shared/engine/types.ts'
import type { ImageFormat } from '../../shared/images/types.ts'
import { random, type Rgb } from '../../devstack/samples/drawing.ts'
import { drawGarment, type GarmentKind, type GarmentPhotoOptions } from '../../devstack/samples/garment-photo.ts'
import { encodePng } from '../../devstack/samples/png-encoder.ts'
import { drawShopper, type ShopperGeometry, type ShopperPhotoOptions } from '../../devstack/samples/shopper-photo.ts'
import { encodeWebpLossless } from './webp-encoder.ts'

export { shopperGeometry, type Box, type ShopperGeometry } from '../../devstack/samples/shopper-photo.ts'
export type { GarmentKind } from '../../devstack/samples/garment-photo.ts'
export type { Rgb } from '../../devstack/samples/drawing.ts'

export interface EncodedPhoto {
  bytes: Uint8Array
  format: ImageFormat
  width: number
  height: number
  /** The pixels before encoding, for tests that compare against them. */
  pixels: RgbaImage
}

export function encodeImage(image: RgbaImage, format: ImageFormat): Uint8Array {
  if (format === 'png') return encodePng(image)
  if (format === 'webp') return encodeWebpLossless(image)
  return encodeJpeg(image, 92)
}

function encoded(pixels: RgbaImage, format: ImageFormat): EncodedPhoto {
  return { bytes: encodeImage(pixels, format), format, width: pixels.width, height: pixels.height, pixels }
}

export function makeShopperPhoto(options: ShopperPhotoOptions & { format?: ImageFormat }): EncodedPhoto & { geometry: ShopperGeometry } {
  const { image, geometry } = drawShopper(options)
  return { ...encoded(image, options.format ?? 'jpeg'), geometry }
}

export function makeGarmentPhoto(
  options: Omit<GarmentPhotoOptions, 'width' | 'height'> & { width?: number; height?: number; format?: ImageFormat },
): EncodedPhoto & { box: [number, number, number, number] } {
  const format = options.format ?? (options.transparentBackground ? 'png' : 'jpeg')
  const { image, box } = drawGarment({ width: 480, height: 480, ...options })
  return { ...encoded(image, format), box }
}

/** Random pixels: no person, no garment, nothing to segment. */
export function makeNoiseImage(options: { width: number; height: number; format?: ImageFormat; seed?: number }): EncodedPhoto {
  const next = random(options.seed ?? 5)
  const data = new Uint8Array(options.width * options.height * 4)
  for (let i = 0; i < data.length; i++) data[i] = (i & 3) === 3 ? 255 : Math.floor(next() * 256)
  return encoded({ width: options.width, height: options.height, data }, options.format ?? 'png')
}

/** A flat colour image (e.g. an empty studio shot). */
export function makeFlatImage(options: { width: number; height: number; color: Rgb; format?: ImageFormat }): EncodedPhoto {
  const data = new Uint8Array(options.width * options.height * 4)
  for (let i = 0; i < data.length; i += 4) data.set([...options.color, 255], i)
  return encoded({ width: options.width, height: options.height, data }, options.format ?? 'png')
}

/** The engine's input shape for an encoded photo. */
export function asInput(photo: EncodedPhoto): InputImage {
  return { bytes: photo.bytes, format: photo.format, width: photo.width, height: photo.height }
}

export const garmentKinds: GarmentKind[] = ['tshirt', 'trousers', 'dress', 'gown', 'gown-with-train', 'jacket']
