import { Unzlib } from 'fflate'
import { orientationInTiff, tiffOfExif, type Orientation } from './exif.ts'
import { MAX_PROFILE_BYTES, srgbConversionOf } from './icc.ts'
import type { DecodedImageInfo, DisplayTransform } from './types.ts'

/**
 * The image as a viewer shows it: its header's size turned as its EXIF orientation says, and what else a viewer does
 * to the stored pixels before showing them (an ICC profile's colours, CMYK inks). Read from the metadata alone: a
 * broken or hostile EXIF block or profile counts as absent (orientation 1, sRGB), never as an error.
 */
export function asDisplayed(header: DecodedImageInfo, bytes: Uint8Array): DecodedImageInfo & DisplayTransform {
  const found = header.format === 'jpeg' ? jpegMetadata(bytes) : header.format === 'png' ? pngMetadata(bytes) : webpMetadata(bytes)
  const orientation = found.orientation ?? 1
  const colourProfile = found.profile ? srgbConversionOf(found.profile) : undefined
  const { width, height } = turnsQuarter(orientation) ? { width: header.height, height: header.width } : header
  return {
    format: header.format,
    width,
    height,
    ...(orientation !== 1 && { orientation }),
    ...(colourProfile && { colourProfile }),
    ...(found.cmyk && { cmyk: true }),
  }
}

/**
 * True when the stored bytes show as they are: upright, in sRGB, in RGB. The only images that may be handed on
 * untouched (to a provider); any other is decoded, turned upright, converted to sRGB and encoded again.
 */
export function shownAsStored(image: DisplayTransform): boolean {
  return (image.orientation ?? 1) === 1 && !image.colourProfile && !image.cmyk
}

/** The size of the pixels as stored (what decoders read), for an image whose width and height are as displayed. */
export function storedSize(image: { width: number; height: number } & DisplayTransform): { width: number; height: number } {
  return turnsQuarter(image.orientation ?? 1) ? { width: image.height, height: image.width } : { width: image.width, height: image.height }
}

/** Orientations 5 to 8 show the stored rows as columns. */
export function turnsQuarter(orientation: Orientation): boolean {
  return orientation >= 5
}

interface Metadata {
  orientation?: Orientation
  profile?: Uint8Array
  cmyk?: boolean
}

const fourCC = (b: Uint8Array, at: number) => String.fromCharCode(b[at], b[at + 1], b[at + 2], b[at + 3])
const u16BE = (b: Uint8Array, at: number) => (b[at] << 8) | b[at + 1]
const u32BE = (b: Uint8Array, at: number) => ((b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]) >>> 0
const u32LE = (b: Uint8Array, at: number) => (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0

const ICC_PROFILE = 'ICC_PROFILE\0'
const ICC_CHUNK_HEADER = ICC_PROFILE.length + 2

/**
 * APP1 (EXIF), APP2 (ICC profile, in numbered chunks) and the frame's component count, from the segments before the
 * first scan. The first APP1 holding an orientation gives it, as in Chromium (exif.ts); each segment is visited once.
 */
function jpegMetadata(bytes: Uint8Array): Metadata {
  const found: Metadata = {}
  const chunks: Uint8Array[] = []
  for (let offset = 2; offset + 4 <= bytes.length; ) {
    if (bytes[offset] !== 0xff) break
    while (offset < bytes.length && bytes[offset] === 0xff) offset++
    const marker = bytes[offset++]
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) continue
    if (marker === 0xda || marker === 0xd9 || offset + 2 > bytes.length) break
    const length = u16BE(bytes, offset)
    if (length < 2 || offset + length > bytes.length) break
    const payload = bytes.subarray(offset + 2, offset + length)
    if (marker === 0xe1 && found.orientation === undefined) {
      const tiff = tiffOfExif(payload)
      if (tiff) found.orientation = orientationInTiff(tiff)
    } else if (marker === 0xe2 && payload.length > ICC_CHUNK_HEADER && latin1(payload, 0, ICC_PROFILE.length) === ICC_PROFILE) {
      chunks.push(payload)
    } else if ((marker === 0xc0 || marker === 0xc1 || marker === 0xc2) && payload.length >= 6) {
      found.cmyk = payload[5] === 4
    }
    offset += length
  }
  found.profile = joinIccChunks(chunks)
  return found
}

/** The chunks numbered 1 to n of one profile, each once (ICC.1:2010 Annex B.4); anything else is no profile. */
function joinIccChunks(chunks: Uint8Array[]): Uint8Array | undefined {
  if (chunks.length === 0) return undefined
  const count = chunks[0][ICC_PROFILE.length + 1]
  if (count !== chunks.length) return undefined
  const ordered: Uint8Array[] = []
  for (const chunk of chunks) {
    const sequence = chunk[ICC_PROFILE.length]
    if (chunk[ICC_PROFILE.length + 1] !== count || sequence < 1 || sequence > count || ordered[sequence - 1]) return undefined
    ordered[sequence - 1] = chunk.subarray(ICC_CHUNK_HEADER)
  }
  const size = ordered.reduce((total, part) => total + part.length, 0)
  if (size > MAX_PROFILE_BYTES) return undefined
  const profile = new Uint8Array(size)
  ordered.reduce((at, part) => (profile.set(part, at), at + part.length), 0)
  return profile
}

/** eXIf and iCCP (unless an sRGB chunk says the colours are sRGB), from the chunks before the image data, where PNG puts them. */
function pngMetadata(bytes: Uint8Array): Metadata {
  const found: Metadata = {}
  let compressedProfile: Uint8Array | undefined
  let srgb = false
  for (let pos = 8; pos + 8 <= bytes.length; ) {
    const length = u32BE(bytes, pos)
    const type = fourCC(bytes, pos + 4)
    if (type === 'IDAT' || type === 'IEND' || pos + 12 + length > bytes.length) break
    const body = bytes.subarray(pos + 8, pos + 8 + length)
    if (type === 'eXIf' && found.orientation === undefined) found.orientation = orientationInTiff(tiffOfExif(body) ?? body)
    else if (type === 'iCCP' && !compressedProfile) compressedProfile = body
    else if (type === 'sRGB') srgb = true
    pos += 12 + length
  }
  if (compressedProfile && !srgb) found.profile = inflateProfile(compressedProfile)
  return found
}

/** An iCCP chunk's profile: a name of 1 to 79 bytes, a NUL, compression method 0, then zlib data, inflated to MAX_PROFILE_BYTES at most. */
function inflateProfile(body: Uint8Array): Uint8Array | undefined {
  const nul = body.subarray(0, 81).indexOf(0)
  if (nul < 1 || body[nul + 1] !== 0) return undefined
  const parts: Uint8Array[] = []
  let size = 0
  const inflater = new Unzlib((part) => {
    size += part.length
    if (size <= MAX_PROFILE_BYTES) parts.push(part.slice())
  })
  const stream = body.subarray(nul + 2)
  // Pushed in small slices, so a stream that inflates without end is stopped soon after the limit.
  const slice = 1024
  try {
    for (let at = 0; at < stream.length && size <= MAX_PROFILE_BYTES; at += slice) {
      inflater.push(stream.subarray(at, at + slice), at + slice >= stream.length)
    }
  } catch {
    return undefined
  }
  if (size > MAX_PROFILE_BYTES) return undefined
  const profile = new Uint8Array(size)
  parts.reduce((at, part) => (profile.set(part, at), at + part.length), 0)
  return profile
}

/** EXIF and ICCP chunks of an extended (VP8X) WebP; a simple one carries neither. */
function webpMetadata(bytes: Uint8Array): Metadata {
  const found: Metadata = {}
  if (bytes.length < 20 || fourCC(bytes, 12) !== 'VP8X') return found
  const end = Math.min(bytes.length, 8 + u32LE(bytes, 4))
  for (let pos = 12; pos + 8 <= end; ) {
    const size = u32LE(bytes, pos + 4)
    if (pos + 8 + size > end) break
    const type = fourCC(bytes, pos)
    const body = bytes.subarray(pos + 8, pos + 8 + size)
    if (type === 'EXIF' && found.orientation === undefined) found.orientation = orientationInTiff(tiffOfExif(body) ?? body)
    else if (type === 'ICCP' && !found.profile && size <= MAX_PROFILE_BYTES) found.profile = body
    pos += 8 + size + (size & 1)
  }
  return found
}

function latin1(bytes: Uint8Array, from: number, to: number): string {
  return String.fromCharCode(...bytes.subarray(from, to))
}
