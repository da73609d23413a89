import { Format } from 'image-in-browser/lib/src/color/format.js'
import { WebPDecoder } from 'image-in-browser/lib/src/formats/webp-decoder.js'
import { checkAllocation, ImageDecodeError, type AllocationLimits, type RgbaImage } from './raster.ts'

/**
 * Lossy (VP8), lossless (VP8L) and extended (VP8X with ALPH) WebP; an animation yields its first frame.
 * Decoding is delegated to image-in-browser, a pure TypeScript port of libwebp with no Node or WASM use.
 */
export function decodeWebp(bytes: Uint8Array, limits: AllocationLimits = {}): RgbaImage {
  requireWholeFile(bytes)
  const size = frameSize(bytes)
  checkAllocation('WebP', size.width, size.height, limits)
  const decoder = new WebPDecoder()
  let decoded: ReturnType<WebPDecoder['decode']>
  try {
    decoded = decoder.decode({ bytes, frameIndex: 0 })
  } catch (error) {
    throw new ImageDecodeError(`the WebP data is corrupt (${error instanceof Error ? error.message : 'decoder failure'})`)
  }
  if (!decoded) throw new ImageDecodeError('the WebP data is corrupt or uses an unsupported feature')
  const image =
    decoded.numChannels === 4 && decoded.format === Format.uint8
      ? decoded
      : decoded.convert({ numChannels: 4, format: Format.uint8, alpha: 255 })
  const data = image.toUint8Array()
  if (data.length !== image.width * image.height * 4 || image.width > size.width || image.height > size.height) {
    throw new ImageDecodeError('the WebP decoded to an unexpected pixel layout')
  }
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

const fourCC = (b: Uint8Array, at: number) => String.fromCharCode(b[at], b[at + 1], b[at + 2], b[at + 3])

/** The size in a VP8 (lossy key frame) or VP8L (lossless) bitstream's own header, or null when it has none. */
function bitstreamSize(bytes: Uint8Array, type: string, at: number, size: number): { width: number; height: number } | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (type === 'VP8 ' && size >= 10 && bytes[at + 3] === 0x9d && bytes[at + 4] === 0x01 && bytes[at + 5] === 0x2a) {
    return { width: view.getUint16(at + 6, true) & 0x3fff, height: view.getUint16(at + 8, true) & 0x3fff }
  }
  if (type === 'VP8L' && size >= 5 && bytes[at] === 0x2f) {
    const bits = view.getUint32(at + 1, true)
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 }
  }
  return null
}

/**
 * The size the decoder will allocate for, from every header that can set it: the VP8X canvas and each VP8/VP8L
 * bitstream (an animation's inside its ANMF frames). A still image's bitstream must be exactly the canvas, an
 * animation's frames must fit inside it; anything else is refused before the decoder sees it.
 */
function frameSize(bytes: Uint8Array): { width: number; height: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const end = 8 + view.getUint32(4, true)
  let canvas: { width: number; height: number; animated: boolean } | null = null
  const frames: { width: number; height: number }[] = []
  const walk = (from: number, to: number, inFrame: boolean) => {
    for (let pos = from; pos + 8 <= to; ) {
      const type = fourCC(bytes, pos)
      const size = view.getUint32(pos + 4, true)
      const at = pos + 8
      if (type === 'VP8X' && !inFrame && pos === 12 && size >= 10) {
        const u24 = (o: number) => bytes[o] | (bytes[o + 1] << 8) | (bytes[o + 2] << 16)
        canvas = { width: u24(at + 4) + 1, height: u24(at + 7) + 1, animated: (bytes[at] & 0x02) !== 0 }
      } else if (type === 'ANMF' && !inFrame && size >= 16) {
        walk(at + 16, at + size, true)
      } else if (type === 'VP8 ' || type === 'VP8L') {
        const frame = bitstreamSize(bytes, type, at, size)
        if (!frame || frame.width === 0 || frame.height === 0)
          throw new ImageDecodeError('the WebP bitstream has no valid size in its header')
        frames.push(frame)
      }
      pos = at + size + (size & 1)
    }
  }
  walk(12, end, false)
  if (frames.length === 0) throw new ImageDecodeError('the WebP holds no image bitstream')
  const first = frames[0]
  if (!canvas) {
    if (frames.length > 1) throw new ImageDecodeError('the WebP holds more than one image bitstream')
    return first
  }
  const { width, height, animated } = canvas as { width: number; height: number; animated: boolean }
  for (const frame of frames) {
    const fits = animated ? frame.width <= width && frame.height <= height : frame.width === width && frame.height === height
    if (!fits)
      throw new ImageDecodeError(
        `the WebP headers disagree about its size (canvas ${width}×${height}, bitstream ${frame.width}×${frame.height})`,
      )
  }
  if (!animated && frames.length > 1) throw new ImageDecodeError('the WebP holds more than one image bitstream')
  return { width, height }
}
