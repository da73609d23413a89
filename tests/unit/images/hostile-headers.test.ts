import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createDecodeBudget, decodeImage, ImageDecodeError, ImageTooLargeError } from '../../../shared/images/codecs/index.ts'
import { readImageHeader } from '../../../shared/images/sniff.ts'
import { hostileImageArbitrary, jpegWithFrames, pngWithHeaders, webpCanvasAndFrame, webpFlat } from '../../support/hostile-images.ts'

function thrown(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  return undefined
}

const small = { width: 64, height: 64 }
const huge = { width: 8000, height: 8000 }

describe('a file whose headers disagree about its size', () => {
  const cases = [
    ['a PNG with a second IHDR', 'png', () => pngWithHeaders([small, huge]), /more than one IHDR/],
    ['a WebP whose VP8L bitstream is larger than its VP8X canvas', 'webp', () => webpCanvasAndFrame(small, huge), /disagree/],
    ['a JPEG with a second frame header', 'jpeg', () => jpegWithFrames([small, huge]), /more than one frame/],
  ] as const

  it.each(cases)('is refused by the header check (%s)', (_, __, build) => {
    expect(readImageHeader(build())).toBeNull()
  })

  it.each(cases)('is refused by the decoder before it allocates, whatever the header check said (%s)', (_, format, build, reason) => {
    const error = thrown(() => decodeImage(build(), format, { expected: small }))
    expect(error).toBeInstanceOf(ImageDecodeError)
    expect((error as Error).message).toMatch(reason)
  })

  it('refuses a PNG whose first chunk is not its IHDR', () => {
    const bytes = pngWithHeaders([small])
    const moved = new Uint8Array(bytes.length)
    // Swap the IHDR (25 bytes from offset 8) behind the next chunk.
    const next = 33 + 12 + new DataView(bytes.buffer).getUint32(33)
    moved.set(bytes.subarray(0, 8))
    moved.set(bytes.subarray(33, next), 8)
    moved.set(bytes.subarray(8, 33), 8 + next - 33)
    moved.set(bytes.subarray(next), next)
    expect(thrown(() => decodeImage(moved, 'png'))).toBeInstanceOf(ImageDecodeError)
  })

  it('refuses a JPEG that defers its height to a DNL segment', () => {
    const bytes = jpegWithFrames([{ width: 64, height: 0 }], { dnlHeight: 8000 })
    expect(readImageHeader(bytes)).toBeNull()
    expect(thrown(() => decodeImage(bytes, 'jpeg'))).toBeInstanceOf(ImageDecodeError)
  })

  it('refuses a decode whose size differs from the one intake checked', () => {
    const bytes = webpFlat({ width: 40, height: 30 })
    expect(decodeImage(bytes, 'webp', { expected: { width: 40, height: 30 } })).toMatchObject({ width: 40, height: 30 })
    expect((thrown(() => decodeImage(bytes, 'webp', { expected: { width: 30, height: 40 } })) as Error).message).toMatch(/disagree/)
  })
})

describe('the pixel limit in the decoders', () => {
  it.each([
    ['png', () => pngWithHeaders([huge])],
    ['webp', () => webpFlat(huge)],
    ['jpeg', () => jpegWithFrames([huge])],
  ] as const)('refuses a %s over 40 megapixels from its header, with no intake in front of it', (format, build) => {
    const error = thrown(() => decodeImage(build(), format))
    expect(error).toBeInstanceOf(ImageTooLargeError)
    expect((error as Error).message).toMatch(/8000×8000 \(64\.0 megapixels\), more than the 40 allowed/)
  })

  it('takes every decode of a request from one budget and refuses the decode that would overdraw it', () => {
    const budget = createDecodeBudget(64 * 64 * 2 + 100)
    const bytes = webpFlat(small)
    decodeImage(bytes, 'webp', { budget })
    decodeImage(bytes, 'webp', { budget })
    expect(budget.remaining).toBe(100)
    expect((thrown(() => decodeImage(bytes, 'webp', { budget })) as Error).message).toMatch(/budget/)
    expect(budget.remaining).toBe(100)
  })

  it('charges a JPEG at the scale it decodes: 1/8 of each side when that is all the caller needs', () => {
    const budget = createDecodeBudget(1_000_000)
    const bytes = jpegWithFrames([small])
    const decoded = decodeImage(bytes, 'jpeg', { minLongSide: 8, budget })
    expect([decoded.width, decoded.height]).toEqual([8, 8])
    expect(budget.remaining).toBe(1_000_000 - 64)
  })
})

describe('fuzzed multi-header files (fast-check)', () => {
  it('decode to exactly the size the header check announced, within the limit, or are refused with ImageDecodeError', () => {
    const maxPixels = 1_000_000
    fc.assert(
      fc.property(hostileImageArbitrary({ laterMax: 6000 }), (file) => {
        const header = readImageHeader(file.bytes)
        const consistent = file.sizes.every((s) => s.width === file.sizes[0].width && s.height === file.sizes[0].height)
        // The cheap check lets through only files whose headers agree.
        if (!consistent) expect(header, JSON.stringify(file.sizes)).toBeNull()
        let decoded: ReturnType<typeof decodeImage> | undefined
        try {
          decoded = decodeImage(file.bytes, file.format, { maxPixels, expected: header ?? file.sizes[0] })
        } catch (error) {
          expect(error).toBeInstanceOf(ImageDecodeError)
          return
        }
        expect(consistent, `decoded ${decoded.width}×${decoded.height} from ${JSON.stringify(file.sizes)}`).toBe(true)
        expect([decoded.width, decoded.height]).toEqual([file.sizes[0].width, file.sizes[0].height])
        expect(decoded.width * decoded.height).toBeLessThanOrEqual(maxPixels)
      }),
      { numRuns: 120, seed: 1212 },
    )
  })
})
