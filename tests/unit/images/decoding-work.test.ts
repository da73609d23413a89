import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decodeImage } from '../../../shared/images/codecs/index.ts'
import { createDecodeBudget, ImageTooComplexError } from '../../../shared/images/codecs/raster.ts'
import { decodingWork, JPEG_MAX_SCANS, JPEG_WORK_PER_BLOCK, LOSSY_WEBP_MAX_PIXELS } from '../../../shared/images/decoding-work.ts'
import { readImageHeader } from '../../../shared/images/sniff.ts'
import { manyScanJpeg, manyScanJpegArbitrary, pngWithHeaders, webpFlat } from '../../support/hostile-images.ts'
import { blankCoefficients, writeJpeg, type JpegLayout } from '../../support/jpeg-writer.ts'
import { encodeWebpLossyFlat } from '../../support/webp-encoder.ts'

const workOf = (bytes: Uint8Array) => decodingWork(bytes, readImageHeader(bytes)!)

describe('the decoding work of a progressive JPEG', () => {
  it.each<JpegLayout>(['gray', '4:4:4', '4:2:2', '4:2:0', 'cmyk', 'ycck'])(
    "admits libjpeg's default progression (%s) with room to spare, and a baseline file at a sixth of the limit",
    (layout) => {
      const progressive = workOf(writeJpeg(blankCoefficients(333, 251, layout), { progressive: true }))!
      const baseline = workOf(writeJpeg(blankCoefficients(333, 251, layout)))!
      expect(progressive.refusal).toBeUndefined()
      expect(progressive.work / progressive.limit).toBeLessThan(0.6)
      expect(baseline.work / baseline.limit).toBeLessThan(1 / 6)
    },
  )

  it('refuses a 40 MP file of 1,000 end-of-band scans from its markers, naming the scan limit', () => {
    const work = workOf(manyScanJpeg({ width: 7296, height: 5472, scans: 1000 }))!
    expect(work.refusal).toMatch(/more than the 100 progressive scans a JPEG may have/)
  })

  it('refuses a 40 MP file of 10 full-band scans for their work, though they are under the scan limit', () => {
    const work = workOf(manyScanJpeg({ width: 7296, height: 5472, scans: 10 }))!
    expect(work.refusal).toMatch(/times the decoding work/)
    expect(work.work).toBeGreaterThan(work.limit)
  })

  it('agrees with the decoder, which stops at the limit it counts: never more coefficient steps than the image may take', () => {
    fc.assert(
      fc.property(manyScanJpegArbitrary({ maxSide: 640, maxScans: 160 }), fc.constantFrom(0, 256, 2048), (options, minLongSide) => {
        const bytes = manyScanJpeg(options)
        const estimate = workOf(bytes)!
        const budget = createDecodeBudget(1e9, 1e12)
        let refused: unknown = null
        try {
          decodeImage(bytes, 'jpeg', { minLongSide, budget })
        } catch (error) {
          refused = error
        }
        expect(budget.workSpent).toBeLessThanOrEqual(estimate.limit)
        if (estimate.refusal) {
          expect(refused).toBeInstanceOf(ImageTooComplexError)
        } else {
          expect(refused).toBeNull()
          expect(budget.workSpent).toBe(estimate.work)
        }
        expect(estimate.refusal !== undefined).toBe(options.scans + 1 > JPEG_MAX_SCANS || estimate.work > estimate.limit)
      }),
      { numRuns: 60, seed: 24_0001 },
    )
  })

  it("stops a decode at the request's budget of work, having spent no more than it", () => {
    const bytes = manyScanJpeg({ width: 400, height: 300, scans: 3 })
    const blocks = 50 * 38
    const budget = createDecodeBudget(1e9, blocks * 100)
    expect(() => decodeImage(bytes, 'jpeg', { budget })).toThrow(ImageTooComplexError)
    expect(budget.workSpent).toBeLessThanOrEqual(blocks * 100)
    expect(JPEG_WORK_PER_BLOCK * blocks).toBeGreaterThan(blocks * 100)
  })
})

describe('the decoding work of a WebP', () => {
  const size = fc.record({ width: fc.integer({ min: 16, max: 16383 }), height: fc.integer({ min: 16, max: 16383 }) })

  it('refuses a lossy WebP, with or without alpha, over 2048 × 2048 pixels, and admits any smaller one', () => {
    fc.assert(
      fc.property(size, fc.boolean(), fc.constantFrom(0, 63), ({ width, height }, alpha, filterLevel) => {
        const work = workOf(encodeWebpLossyFlat(width, height, { alpha, filterLevel }))!
        expect(work.work).toBe(width * height)
        if (width * height > LOSSY_WEBP_MAX_PIXELS) expect(work.refusal).toMatch(/lossy WebP .* cannot be decoded at a reduced size/)
        else expect(work.refusal).toBeUndefined()
      }),
      { numRuns: 40, seed: 24_0002 },
    )
  })

  it('refuses a lossless WebP or a PNG over 12 megapixels, decoded whole, and admits one of 12', () => {
    expect(workOf(webpFlat({ width: 7000, height: 5000 }))?.refusal).toMatch(
      /^a lossless WebP of 7000×5000 \(35\.0 megapixels\) is decoded whole, .* send a lossless WebP of at most 12 megapixels, or a JPEG$/,
    )
    expect(workOf(webpFlat({ width: 4000, height: 3000 }))).toMatchObject({ work: 12_000_000, refusal: undefined })
    const png = (width: number, height: number) => pngWithHeaders([{ width, height }])
    expect(workOf(png(4001, 3000))?.refusal).toMatch(/^a PNG of 4001×3000 \(12\.0 megapixels\) is decoded whole/)
    expect(workOf(png(4000, 3000))?.refusal).toBeUndefined()
  })

  it('decodes the lossy files it admits, to the size their header gives', () => {
    const image = decodeImage(encodeWebpLossyFlat(300, 200, { alpha: true, filterLevel: 20 }), 'webp')
    expect([image.width, image.height]).toEqual([300, 200])
    expect(image.data[3]).toBe(128)
  })
})
