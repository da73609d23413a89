import type { InputImage } from '../engine/types.ts'
import { refusal, type TryOnFailure } from '../failure.ts'
import { LargeString } from '../encoding/json-bytes.ts'
import { decodeBase64, decodedLengthOf } from './base64.ts'
import { readInlineBase64, type InlineBase64 } from './base64-in-place.ts'
import { ImageFetchError, type ImageFetcher } from './fetch.ts'
import { decodingWork } from './decoding-work.ts'
import { asDisplayed } from './display.ts'
import { refusedFormatOf } from './refused-formats.ts'
import { readImageHeader } from './sniff.ts'
import type { ImageField, ImageLimits } from './types.ts'

export interface ImageIntakeDeps {
  fetchImage: ImageFetcher
  limits: ImageLimits
}

const ACCEPTED_FORMS = 'an http(s) URL, a data:image/<type>;base64,<data> URI or raw base64'
const ACCEPTED_TYPES = 'JPEG, PNG or WebP'
// A data URI as the spec writes it; media-type parameters before ";base64" are tolerated.
const DATA_URI_PREFIX = /^data:image\/[a-z0-9.+-]+(?:;[a-z0-9.+-]+=[a-z0-9.+-]*)*;base64,/i
const SCHEME = /^[a-z][a-z0-9+.-]*:/i

/**
 * Turns a `userPhoto` / `productImage` value (URL, data URI or raw base64) into
 * validated image bytes, or throws a refusal (shared/failure.ts) naming the field. A value still in the request's bytes
 * (LargeString) is decoded there when it is plain base64, with the same answers as its string would get.
 */
export async function intakeImage(
  field: ImageField,
  value: string | LargeString,
  deps: ImageIntakeDeps,
  signal?: AbortSignal,
): Promise<InputImage> {
  if (value instanceof LargeString) {
    const inline = readInlineBase64(value)
    if (inline) return checkImage(field, decodeInline(field, inline, deps.limits), deps.limits)
    value = value.text()
  }
  const text = value.trim()
  if (text === '') {
    throw refusal('invalid_request', `${field}: is empty; send ${ACCEPTED_FORMS}`)
  }
  let bytes: Uint8Array
  if (/^data:/i.test(text)) {
    bytes = decodeDataUri(field, text, deps.limits)
  } else if (SCHEME.test(text)) {
    // Base64 never contains ':', so anything with a scheme is meant as a URL.
    bytes = await fetchFromUrl(field, text, deps, signal)
  } else {
    bytes = decodePayload(field, text, deps.limits, NEITHER_URL_NOR_BASE64)
  }
  return checkImage(field, bytes, deps.limits)
}

function decodeDataUri(field: ImageField, text: string, limits: ImageLimits): Uint8Array {
  const prefix = DATA_URI_PREFIX.exec(text)
  if (!prefix) throw malformedDataUri(field)
  return decodePayload(field, text.slice(prefix[0].length), limits, INVALID_PAYLOAD)
}

const NEITHER_URL_NOR_BASE64 = `is neither a URL nor valid base64; send ${ACCEPTED_FORMS}`
const INVALID_PAYLOAD = 'the data URI payload is not valid base64'

function malformedDataUri(field: ImageField): TryOnFailure {
  return refusal('invalid_request', `${field}: malformed data URI; expected data:image/<type>;base64,<data> with ${ACCEPTED_TYPES} data`)
}

function decodePayload(field: ImageField, payload: string, limits: ImageLimits, invalid: string): Uint8Array {
  // Refuse oversized payloads from their length alone; only long strings pay for the exact count.
  if ((payload.length * 3) / 4 > limits.maxBytes) {
    const decodedLength = decodedLengthOf(payload)
    if (decodedLength > limits.maxBytes) throw tooLarge(field, limits, decodedLength)
  }
  const bytes = decodeBase64(payload)
  if (!bytes) throw refusal('invalid_request', `${field}: ${invalid}`)
  return bytes
}

function decodeInline(field: ImageField, inline: InlineBase64, limits: ImageLimits): Uint8Array {
  if (inline.prefix !== '' && DATA_URI_PREFIX.exec(inline.prefix.trimStart())?.[0] !== inline.prefix.trimStart()) {
    throw malformedDataUri(field)
  }
  if (inline.decodedLength > limits.maxBytes) throw tooLarge(field, limits, inline.decodedLength)
  if (!inline.valid) {
    throw refusal('invalid_request', `${field}: ${inline.prefix === '' ? NEITHER_URL_NOR_BASE64 : INVALID_PAYLOAD}`)
  }
  return inline.decode()
}

async function fetchFromUrl(field: ImageField, text: string, deps: ImageIntakeDeps, signal: AbortSignal | undefined): Promise<Uint8Array> {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw refusal('invalid_request', `${field}: is not a valid URL; send ${ACCEPTED_FORMS}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw refusal('image_unreachable', `${field}: only http and https image URLs can be fetched`)
  }
  try {
    return await deps.fetchImage(url, { maxBytes: deps.limits.maxBytes, signal })
  } catch (error) {
    // The caller gave up (client gone or request deadline): not the image's fault.
    if (signal?.aborted) throw signal.reason
    if (error instanceof ImageFetchError) {
      if (error.reason === 'too_large') throw tooLarge(field, deps.limits)
      throw refusal('image_unreachable', `${field}: could not fetch the image: ${error.message}`)
    }
    throw refusal('image_unreachable', `${field}: could not fetch the image`)
  }
}

function checkImage(field: ImageField, bytes: Uint8Array, limits: ImageLimits): InputImage {
  if (bytes.length < limits.minBytes) {
    throw refusal(
      'image_too_small',
      `${field}: image is smaller than ${formatLimit(limits.minBytes)} (${formatCount(bytes.length)} bytes); ` +
        `images must be at least ${formatLimit(limits.minBytes)}`,
    )
  }
  if (bytes.length > limits.maxBytes) throw tooLarge(field, limits, bytes.length)

  const sniffed = readImageHeader(bytes)
  if (!sniffed) throw notAccepted(field, bytes)
  // Sized, analysed and sent as the shopper saw it: turned by its EXIF orientation (docs/api.md#images).
  const header = asDisplayed(sniffed, bytes)
  const pixels = header.width * header.height
  if (pixels > limits.maxPixels) {
    throw refusal(
      'image_too_large',
      `${field}: image is ${header.width}×${header.height} (${(pixels / 1e6).toFixed(1)} megapixels); ` +
        `images may have at most ${limits.maxPixels / 1e6} megapixels`,
    )
  }
  const work = decodingWork(bytes, sniffed)
  if (work?.refusal) throw refusal('image_too_complex', `${field}: ${work.refusal}`)
  return { ...header, bytes }
}

function notAccepted(field: ImageField, bytes: Uint8Array): TryOnFailure {
  const other = refusedFormatOf(bytes)
  const sent = other ? `image is ${other}, which is not accepted` : `image is not a readable ${ACCEPTED_TYPES}`
  return refusal(
    'unsupported_image',
    `${field}: ${sent} (the format is read from the bytes, not from the URL or data URI); send a ${ACCEPTED_TYPES} image` +
      (other === 'HEIC' || other === 'HEIF' ? ` (an iPhone saves JPEG with Settings > Camera > Formats > Most Compatible)` : ''),
  )
}

function tooLarge(field: ImageField, limits: ImageLimits, size?: number): TryOnFailure {
  const actual = size === undefined ? '' : ` (${formatCount(size)} bytes)`
  return refusal(
    'image_too_large',
    `${field}: image is larger than ${formatLimit(limits.maxBytes)}${actual}; ` + `images may be at most ${formatLimit(limits.maxBytes)}`,
  )
}

function formatLimit(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Number((bytes / (1024 * 1024)).toFixed(1))} MB`
  if (bytes >= 1024) return `${Number((bytes / 1024).toFixed(1))} KB`
  return `${bytes} bytes`
}

function formatCount(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',')
}
