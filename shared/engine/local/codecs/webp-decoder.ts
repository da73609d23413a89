import { Format } from 'image-in-browser/lib/src/color/format.js'
import { WebPDecoder } from 'image-in-browser/lib/src/formats/webp-decoder.js'
import { ImageDecodeError, type RgbaImage } from './raster.ts'

/**
 * Lossy (VP8), lossless (VP8L) and extended (VP8X with ALPH) WebP; an animation yields its first frame.
 * Decoding is delegated to image-in-browser, a pure TypeScript port of libwebp with no Node or WASM use.
 */
export function decodeWebp(bytes: Uint8Array): RgbaImage {
  requireWholeFile(bytes)
  const decoder = new WebPDecoder()
  let decoded
  try {
    decoded = decoder.decode({ bytes, frameIndex: 0 })
  } catch (error) {
    throw new ImageDecodeError(`the WebP data is corrupt (${error instanceof Error ? error.message : 'decoder failure'})`)
  }
  if (!decoded) throw new ImageDecodeError('the WebP data is corrupt or uses an unsupported feature')
  const image = decoded.numChannels === 4 && decoded.format === Format.uint8
    ? decoded
    : decoded.convert({ numChannels: 4, format: Format.uint8, alpha: 255 })
  const data = image.toUint8Array()
  if (data.length !== image.width * image.height * 4) throw new ImageDecodeError('the WebP decoded to an unexpected pixel layout')
  return { width: image.width, height: image.height, data }
}

/**
 * Past the end of a cut-short file image-in-browser reads zeros and "decodes" garbage rows, so the container is
 * checked first, as libwebp does when it has all the data: the RIFF size and every chunk must fit in the bytes.
 */
function requireWholeFile(bytes: Uint8Array): void {
  if (bytes.length < 20) throw new ImageDecodeError('the WebP data is truncated')
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const end = 8 + view.getUint32(4, true)
  if (end > bytes.length) throw new ImageDecodeError('the WebP data is truncated')
  for (let pos = 12; pos + 8 <= end; ) {
    const size = view.getUint32(pos + 4, true)
    if (pos + 8 + size > end) throw new ImageDecodeError('the WebP data is truncated (a chunk runs past the end of the file)')
    pos += 8 + size + (size & 1)
  }
}
