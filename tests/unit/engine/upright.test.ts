import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { random } from '../../../devstack/samples/drawing.ts'
import { encodePng } from '../../../devstack/samples/png-encoder.ts'
import { decodeImageRows, encodeJpeg, type RgbaImage } from '../../../shared/images/codecs/index.ts'
import { orientImage, orientRows } from '../../../shared/images/codecs/orient.ts'
import { rgbaRows } from '../../../shared/images/codecs/raster.ts'
import { downscaleToFit } from '../../../shared/images/resize.ts'
import { decodeUpright, uprightRows } from '../../../shared/images/upright.ts'
import type { InputImage } from '../../../shared/engine/types.ts'
import { asDisplayed } from '../../../shared/images/display.ts'
import { readImageHeader } from '../../../shared/images/sniff.ts'
import { DISPLAY_P3, fromSrgb, iccProfile } from '../../support/icc-profiles.ts'
import {
  exifSegment,
  exifWithOrientation,
  iccSegments,
  ORIENTATIONS,
  withJpegSegments,
  withPngChunks,
} from '../../support/photo-metadata.ts'
import { storedPixels } from '../../support/jpeg-exif.ts'

function noise(width: number, height: number, seed: number): RgbaImage {
  const next = random(seed)
  return { width, height, data: Uint8Array.from({ length: width * height * 4 }, () => Math.floor(next() * 256)) }
}

/** An input as intake hands it on: header read, turned by its metadata. */
function input(bytes: Uint8Array): InputImage {
  return { ...asDisplayed(readImageHeader(bytes)!, bytes), bytes }
}

function meanDifference(a: RgbaImage, b: RgbaImage): number {
  expect([a.width, a.height]).toEqual([b.width, b.height])
  let sum = 0
  for (let i = 0; i < a.data.length; i++) if ((i & 3) !== 3) sum += Math.abs(a.data[i] - b.data[i])
  return sum / ((a.data.length / 4) * 3)
}

describe('turning decoded pixels upright', () => {
  it('gives back the upright picture, pixel for pixel, for every orientation and size (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 40 }),
        fc.constantFrom(...ORIENTATIONS),
        fc.integer(),
        (width, height, orientation, seed) => {
          const upright = noise(width, height, seed)
          const turned = orientImage(storedPixels(upright, orientation), orientation)
          expect(turned.width).toBe(width)
          expect(turned.height).toBe(height)
          expect(turned.data).toEqual(upright.data)
        },
      ),
      { numRuns: 300, seed: 6 },
    )
  })

  it('reads a strip source once, in order, whatever its strips return', () => {
    const upright = noise(37, 53, 3)
    const stored = storedPixels(upright, 6)
    const asked: number[] = []
    const source = rgbaRows(stored)
    const counting = { width: source.width, height: source.height, rows: (y: number, n: number) => (asked.push(y), source.rows(y, n)) }
    expect(orientRows(counting, 6).data).toEqual(upright.data)
    expect(asked).toEqual(Array.from({ length: Math.ceil(stored.height / 16) }, (_, i) => i * 16))
  })
})

describe('decoding an input as the shopper saw it', () => {
  const upright = noise(30, 48, 11)

  it.each(ORIENTATIONS)('decodes a PNG with eXIf orientation %i to the upright pixels exactly', (orientation) => {
    const stored = encodePng(storedPixels(upright, orientation))
    const png = withPngChunks(stored, [{ type: 'eXIf', body: exifWithOrientation(orientation) }])
    const image = input(png)
    expect([image.width, image.height]).toEqual([30, 48])
    expect(decodeUpright(image).data).toEqual(upright.data)
  })

  it.each(ORIENTATIONS)('shrinks before it turns, giving what shrinking the upright picture gives (orientation %i)', (orientation) => {
    // A side that divides both sides evenly: each output pixel averages the same source pixels either way.
    const big = noise(60, 96, 5)
    const png = withPngChunks(encodePng(storedPixels(big, orientation)), [{ type: 'eXIf', body: exifWithOrientation(orientation) }])
    expect(decodeUpright(input(png), { side: 48 }).data).toEqual(downscaleToFit(big, 48).data)
  })

  it('turns a provider re-encode strip by strip into one image no larger than the side asked for', () => {
    const big = noise(300, 200, 9)
    const jpeg = withJpegSegments(encodeJpeg(storedPixels(big, 8), 95), [exifSegment(exifWithOrientation(8))])
    const image = input(jpeg)
    const rows = uprightRows(decodeImageRows(jpeg, 'jpeg', { expected: { width: 200, height: 300 } }), image, 150)
    expect([rows.width, rows.height]).toEqual([150, 100])
    const turned: RgbaImage = { width: rows.width, height: rows.height, data: rows.rows(0, rows.height).slice() }
    expect(meanDifference(turned, downscaleToFit(big, 150))).toBeLessThan(6)
  })

  it('converts a Display P3 photo to the sRGB colours a colour-managed viewer shows, after shrinking', () => {
    const srgbRed: [number, number, number] = [200, 30, 45]
    const p3Red = fromSrgb(DISPLAY_P3, srgbRed)
    const patch: RgbaImage = { width: 64, height: 64, data: new Uint8Array(64 * 64 * 4) }
    for (let i = 0; i < patch.data.length; i += 4) patch.data.set([...p3Red, 255], i)
    const jpeg = withJpegSegments(encodeJpeg(patch, 98), iccSegments(iccProfile(DISPLAY_P3)))
    const decoded = decodeUpright(input(jpeg), { side: 32 })
    expect(decoded.width).toBe(32)
    const centre = decoded.data.subarray((16 * 32 + 16) * 4, (16 * 32 + 16) * 4 + 3)
    for (let c = 0; c < 3; c++) expect(Math.abs(centre[c] - srgbRed[c])).toBeLessThanOrEqual(3)
    // Taken as sRGB, the stored values would be this far off.
    expect(Math.abs(p3Red[0] - srgbRed[0]) + Math.abs(p3Red[1] - srgbRed[1])).toBeGreaterThan(20)
  })

  it('decodes the same after a structured clone (how the dev stack hands an input to a worker thread)', () => {
    const patch = noise(24, 40, 4)
    const jpeg = withJpegSegments(encodeJpeg(storedPixels(patch, 6), 95), [
      exifSegment(exifWithOrientation(6)),
      ...iccSegments(iccProfile(DISPLAY_P3)),
    ])
    const image = input(jpeg)
    expect(image.colourProfile).toBeDefined()
    expect(decodeUpright(structuredClone(image)).data).toEqual(decodeUpright(image).data)
  })

  it('hands the rows on untouched when nothing is to be turned or converted', () => {
    const jpeg = encodeJpeg(upright, 90)
    const source = decodeImageRows(jpeg, 'jpeg')
    expect(uprightRows(source, input(jpeg), 16)).toBe(source)
  })
})
