import { Format } from 'image-in-browser/lib/src/color/format.js'
import { WebPDecoder } from 'image-in-browser/lib/src/formats/webp-decoder.js'
import { ImageDecodeError, type RgbaImage } from './raster.ts'

/**
 * Lossy (VP8), lossless (VP8L) and extended (VP8X with ALPH) WebP; an animation yields its first frame.
 * Decoding is delegated to image-in-browser, a pure TypeScript port of libwebp with no Node or WASM use.
 */
export function decodeWebp(bytes: Uint8Array): RgbaImage {
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
