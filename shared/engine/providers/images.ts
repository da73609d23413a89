import { contentTypeOf, type ImageField, type ImageFormat } from '../../images/types.ts'
import {
  decodeImageRows,
  encodeJpegRows,
  ImageDecodeError,
  type DecodeBudget,
  type RgbaImage,
  type RowSource,
} from '../../images/codecs/index.ts'
import { downscaleRowsToFit } from '../../images/resize.ts'
import { reencodeDecodeSide, uprightRows } from '../../images/upright.ts'
import { shownAsStored, storedSize } from '../../images/display.ts'
import type { InputImage, TryOnRequest } from '../types.ts'
import { Base64Bytes } from './json-body.ts'

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
 * An image that must be re-encoded anyway goes out at about this long side: at least this (or the original
 * size), under twice this, never past the provider's limit. The try-on models render smaller (Gemini 2.5 Flash
 * Image answers at about 1024 px, FASHN takes 2000 px at most), and a JPEG is then decoded at a DCT scale: a
 * 14 MP camera photo becomes 3.6 MP of pixels (14 MB) instead of 58 MB, and is sent at that size without a
 * resize. This keeps a request with two 10 MB photos within an edge function's memory and CPU time.
 */
export const REENCODE_LONG_SIDE = 2048

/**
 * The request's decoded copy of a photo is re-encoded instead of decoding it again when its long side is at least this
 * share of the re-encode's: the floor a turned photo is already decoded at (reencodeDecodeSide), above what the models
 * render (about 1024 px). A 40 MP baseline JPEG's 1936 px copy does; a 40 MP progressive one's 968 px (read at 1/8 by
 * the local steps) does not, and is decoded again at the provider's size.
 */
const HELD_COPY_SHARE = 0.75

/**
 * The image as the provider accepts it: the original bytes when they already fit the policy and show as stored
 * (upright, sRGB, not CMYK); otherwise decoded, flattened on white (JPEG has no alpha), turned upright and converted
 * to sRGB (shrunk first), shrunk to about REENCODE_LONG_SIDE (less, until it fits) and encoded as JPEG.
 * A JPEG is kept as its decoded planes and converted, shrunk and encoded a strip of rows at a time, so no whole
 * RGBA copy of it is ever made (2325 × 1550 px would be 14 MB, and its resized copy 11 MB more).
 *
 * With the request's `budget`, the decode is charged to it, and the request's decoded copy of the image is re-encoded
 * instead when it is large enough (HELD_COPY_SHARE): a wedding dress's pre-treatment has read the shopper photo at 1/4
 * of a 40 MP baseline JPEG's size, so that photo is decoded once rather than twice.
 */
export function prepareInput(image: InputImage, field: ImageField, policy: InputPolicy, budget?: DecodeBudget): PreparedImage {
  if (sentAsIs(image, policy))
    return { bytes: image.bytes, format: image.format, contentType: contentTypeOf[image.format], reencoded: false }

  const reencodeSide = Math.min(policy.maxLongSide, REENCODE_LONG_SIDE)
  let pixels: RowSource
  try {
    const minLongSide = reencodeDecodeSide(image, reencodeSide)
    const held = budget?.copies?.get(image.bytes)
    pixels =
      held && 'image' in held && Math.max(held.image.width, held.image.height) >= Math.round(reencodeSide * HELD_COPY_SHARE)
        ? copiedRows(held.image)
        : decodeImageRows(image.bytes, image.format, { minLongSide, expected: storedSize(image), budget })
  } catch (error) {
    if (error instanceof ImageDecodeError) throw new InputPreparationError(field, error.message)
    throw error
  }
  if (image.format !== 'jpeg') pixels = onWhite(pixels)
  pixels = uprightRows(pixels, image, reencodeSide)
  const decoded = Math.max(pixels.width, pixels.height)
  let side = Math.min(policy.maxLongSide, decoded < 2 * REENCODE_LONG_SIDE ? decoded : REENCODE_LONG_SIDE)
  for (let tries = 0; ; tries++) {
    const bytes = encodeJpegRows(downscaleRowsToFit(pixels, side), JPEG_QUALITY)
    if (bytes.byteLength <= policy.maxBytes || tries >= 6) return { bytes, format: 'jpeg', contentType: 'image/jpeg', reencoded: true }
    side = Math.max(256, Math.floor(side * 0.75))
  }
}

/**
 * How a provider's input images are prepared (prepareInput): in the request's thread by default; the Node dev stack
 * runs the decoding and re-encoding on its local-work threads (adapters/local-workers.ts), where a 12 MP phone photo's
 * few hundred milliseconds hold no other request. Bytes sent as they are never leave the request's thread.
 */
export type ImagePreparer = (
  image: InputImage,
  field: ImageField,
  policy: InputPolicy,
  budget?: DecodeBudget,
  signal?: AbortSignal,
) => Promise<PreparedImage>

export const prepareInThread: ImagePreparer = async (image, field, policy, budget) => prepareInput(image, field, policy, budget)

/** A preparer that hands `elsewhere` only the images whose pixels must be decoded. */
export function preparedElsewhere(elsewhere: ImagePreparer): ImagePreparer {
  return (image, field, policy, budget, signal) =>
    sentAsIs(image, policy) ? prepareInThread(image, field, policy, budget) : elsewhere(image, field, policy, budget, signal)
}

/** The request's two photos as the provider takes them, one after the other (each decode charged to the request's budget). */
export async function preparePair(
  prepare: ImagePreparer,
  request: Pick<TryOnRequest, 'person' | 'garment' | 'decodeBudget' | 'signal'>,
  policy: InputPolicy,
): Promise<[PreparedImage, PreparedImage]> {
  const person = await prepare(request.person, 'userPhoto', policy, request.decodeBudget, request.signal)
  const garment = await prepare(request.garment, 'productImage', policy, request.decodeBudget, request.signal)
  return [person, garment]
}

/**
 * Whether the provider takes the caller's bytes as they are: a format it reads, within its size and side limits. Intake
 * has checked the headers (format, pixels, decoding work), so such an image goes out without a pixel decoded here.
 * A rule that must change the pixels first (an EXIF turn, an sRGB conversion) belongs here, and makes this false.
 */
export function sentAsIs(image: InputImage, policy: InputPolicy): boolean {
  return (
    // A photo a viewer would turn or colour-convert: a provider may not do what the viewer did.
    shownAsStored(image) &&
    policy.formats.includes(image.format) &&
    image.bytes.byteLength <= policy.maxBytes &&
    Math.max(image.width, image.height) <= policy.maxLongSide
  )
}

/** The request's copy read a strip at a time, each strip a copy: what follows converts and flattens strips in place. */
function copiedRows(image: RgbaImage): RowSource {
  const stride = image.width * 4
  return {
    width: image.width,
    height: image.height,
    rows: (y, count) => image.data.slice(y * stride, (y + count) * stride),
  }
}

/** The image as a data URI in a JSON body, its base64 written only as the body is sent. */
export function dataUri(image: PreparedImage): Base64Bytes {
  return new Base64Bytes(image.bytes, `data:${image.contentType};base64,`)
}

/** Transparent pixels become white, as a product shot on a white background would be (in place, strip by strip). */
function onWhite(source: RowSource): RowSource {
  return {
    width: source.width,
    height: source.height,
    rows(y, count) {
      const data = source.rows(y, count)
      flattenOnWhite(data)
      return data
    },
  }
}

function flattenOnWhite(data: Uint8Array): void {
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
