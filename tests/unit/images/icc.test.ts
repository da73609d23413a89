import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { encodePng } from '../../../devstack/samples/png-encoder.ts'
import { encodeJpeg } from '../../../shared/images/codecs/jpeg-encoder.ts'
import { asDisplayed, shownAsStored } from '../../../shared/images/display.ts'
import { convertToSrgb, srgbConversionOf } from '../../../shared/images/icc.ts'
import { readImageHeader } from '../../../shared/images/sniff.ts'
import { ADOBE_RGB, DISPLAY_P3, iccProfile, SRGB, toSrgb, type RgbSpace } from '../../support/icc-profiles.ts'
import { iccpBody, iccSegments, withJpegSegments, withPngChunks, withWebpChunks } from '../../support/photo-metadata.ts'
import { coefficientsOf, writeJpeg } from '../../support/jpeg-writer.ts'
import { encodeWebpLossless } from '../../support/webp-encoder.ts'

const flat = (width: number, height: number) => ({ width, height, data: new Uint8Array(width * height * 4).fill(128) })
const p3 = iccProfile(DISPLAY_P3)

/** Every colour of a 9-level grid, converted by the profile's conversion and by the independent D65 derivation. */
function worstError(space: RgbSpace): number {
  const conversion = srgbConversionOf(iccProfile(space))
  if (!conversion) throw new Error(`no conversion for ${space.name}`)
  const levels = [0, 32, 64, 96, 128, 160, 192, 224, 255]
  let worst = 0
  for (const r of levels) {
    for (const g of levels) {
      for (const b of levels) {
        const pixel = Uint8Array.of(r, g, b, 255)
        convertToSrgb(conversion, pixel)
        const expected = toSrgb(space, [r, g, b])
        for (let c = 0; c < 3; c++) worst = Math.max(worst, Math.abs(pixel[c] - expected[c]))
      }
    }
  }
  return worst
}

describe('ICC profiles', () => {
  it('converts Display P3 and Adobe RGB to sRGB within a code value of an independent derivation', () => {
    // The reference goes from each space to sRGB in D65; the code goes through the profile's D50 colorants.
    expect(worstError(DISPLAY_P3)).toBeLessThanOrEqual(1)
    expect(worstError(ADOBE_RGB)).toBeLessThanOrEqual(1)
  })

  it('converts a mid red of a P3 photo to the redder sRGB value a colour-managed viewer shows, and leaves alpha alone', () => {
    const pixel = Uint8Array.of(200, 60, 50, 77)
    convertToSrgb(srgbConversionOf(p3)!, pixel)
    const [r, g, b] = toSrgb(DISPLAY_P3, [200, 60, 50])
    expect([...pixel]).toEqual([Math.round(r), Math.round(g), Math.round(b), 77])
    expect(pixel[0]).toBeGreaterThan(200)
  })

  it('converts ProPhoto (D50 white, gamma 1.8, a matrix with entries over 2) keeping white white and grays gray', () => {
    const prophoto: RgbSpace = {
      name: 'ProPhoto',
      red: [0.7347, 0.2653],
      green: [0.1596, 0.8404],
      blue: [0.0366, 0.0001],
      white: [0.3457, 0.3585],
      curve: 1.8,
    }
    const conversion = srgbConversionOf(iccProfile(prophoto))!
    const pixels = Uint8Array.of(255, 255, 255, 255, 128, 128, 128, 255, 255, 0, 0, 255)
    convertToSrgb(conversion, pixels)
    expect([...pixels.subarray(0, 3)].every((v) => v >= 254)).toBe(true)
    expect(Math.max(...pixels.subarray(4, 7)) - Math.min(...pixels.subarray(4, 7))).toBeLessThanOrEqual(1)
    // ProPhoto's red primary lies far outside sRGB: clipped to sRGB's red.
    expect([...pixels.subarray(8, 11)]).toEqual([255, 0, 0])
  })

  it('finds nothing to convert in an sRGB profile', () => {
    expect(srgbConversionOf(iccProfile(SRGB))).toBeUndefined()
  })

  it.each([
    ['a gray profile', (p: Uint8Array) => p.set([0x47, 0x52, 0x41, 0x59], 16)],
    ['a Lab connection space', (p: Uint8Array) => p.set([0x4c, 0x61, 0x62, 0x20], 20)],
    ['no acsp signature', (p: Uint8Array) => p.set([0, 0, 0, 0], 36)],
    ['a tag count past the end', (p: Uint8Array) => p.set([0x7f, 0xff, 0xff, 0xff], 128)],
    ['a colorant offset past the end', (p: Uint8Array) => p.set([0x7f, 0xff, 0xff, 0xff], 132 + 3 * 12 + 4)],
    ['an unknown curve type', (p: Uint8Array) => p.set([0x78, 0x78, 0x78, 0x78], p.length - 32)],
  ])('takes %s as no profile (sRGB), without throwing', (_, damage) => {
    const profile = p3.slice()
    damage(profile)
    expect(srgbConversionOf(profile)).toBeUndefined()
  })

  it('takes a parametric curve of an unknown function type, or a curv table longer than its tag, as no profile', () => {
    const para = p3.slice()
    const curve = para.length - 32
    para[curve + 9] = 9
    expect(srgbConversionOf(para)).toBeUndefined()
    const adobe = iccProfile(ADOBE_RGB).slice()
    const curv = adobe.length - 16
    adobe.set([0x7f, 0xff, 0xff, 0xff], curv + 8)
    expect(srgbConversionOf(adobe)).toBeUndefined()
  })

  it('never throws on damaged profiles, and converts to bytes when it converts (fast-check)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(p3.length - 1), fc.integer({ min: 0, max: 255 })), { maxLength: 16 }), (edits) => {
        const profile = p3.slice()
        for (const [at, value] of edits) profile[at] = value
        const conversion = srgbConversionOf(profile)
        const pixel = Uint8Array.of(255, 10, 200, 255)
        if (conversion) convertToSrgb(conversion, pixel)
        expect(pixel.every((v) => Number.isInteger(v) && v >= 0 && v <= 255)).toBe(true)
      }),
      { numRuns: 500, seed: 2727 },
    )
  })
})

describe('ICC profiles in each container', () => {
  const jpeg = encodeJpeg(flat(40, 24), 90)
  const seen = (bytes: Uint8Array) => asDisplayed(readImageHeader(bytes)!, bytes)

  it('reads a JPEG profile split over several APP2 chunks, in any order', () => {
    const chunks = iccSegments(p3, 200)
    expect(chunks.length).toBeGreaterThan(2)
    const image = seen(withJpegSegments(jpeg, [chunks[1], chunks[0], ...chunks.slice(2)]))
    expect(image.colourProfile).toBeDefined()
    expect(shownAsStored(image)).toBe(false)
  })

  it.each([
    ['a missing chunk', (chunks: Uint8Array[]) => chunks.slice(1)],
    ['a chunk given twice', (chunks: Uint8Array[]) => [...chunks, chunks[0]]],
    ['a chunk numbered 0', (chunks: Uint8Array[]) => chunks.map((c, i) => (i === 0 ? c.map((v, k) => (k === 16 ? 0 : v)) : c))],
  ])('takes a JPEG profile with %s as no profile', (_, damage) => {
    const image = seen(withJpegSegments(jpeg, damage(iccSegments(p3, 200))))
    expect(image.colourProfile).toBeUndefined()
    expect(shownAsStored(image)).toBe(true)
  })

  it('reads a PNG iCCP profile, unless an sRGB chunk says the colours are sRGB', () => {
    const png = encodePng(flat(40, 24))
    expect(seen(withPngChunks(png, [{ type: 'iCCP', body: iccpBody(p3) }])).colourProfile).toBeDefined()
    const both = withPngChunks(png, [
      { type: 'sRGB', body: Uint8Array.of(0) },
      { type: 'iCCP', body: iccpBody(p3) },
    ])
    expect(seen(both).colourProfile).toBeUndefined()
  })

  it('takes an iCCP stream that inflates past the profile limit (a zip bomb) as no profile', () => {
    const bomb = new Uint8Array(8 * 1024 * 1024)
    const png = withPngChunks(encodePng(flat(40, 24)), [{ type: 'iCCP', body: iccpBody(bomb) }])
    expect(png.length).toBeLessThan(200_000)
    expect(seen(png).colourProfile).toBeUndefined()
  })

  it('reads a WebP ICCP chunk', () => {
    const webp = withWebpChunks(encodeWebpLossless(flat(40, 24)), { icc: p3 }, { width: 40, height: 24 })
    expect(seen(webp).colourProfile).toBeDefined()
  })

  it.each(['cmyk', 'ycck'] as const)('marks a %s JPEG, which a provider is not handed as is', (layout) => {
    const inks = seen(writeJpeg(coefficientsOf(flat(40, 24), layout)))
    expect(inks).toEqual({ format: 'jpeg', width: 40, height: 24, cmyk: true })
    expect(shownAsStored(inks)).toBe(false)
    expect(seen(writeJpeg(coefficientsOf(flat(40, 24), '4:2:0'))).cmyk).toBeUndefined()
  })
})
