import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { chunk, encodePng } from '../../../devstack/samples/png-encoder.ts'
import { encodeJpeg } from '../../../shared/images/codecs/jpeg-encoder.ts'
import { asDisplayed } from '../../../shared/images/display.ts'
import { orientationInTiff } from '../../../shared/images/exif.ts'
import { intakeImage } from '../../../shared/images/intake.ts'
import { readImageHeader } from '../../../shared/images/sniff.ts'
import { defaultImageLimits } from '../../../shared/images/types.ts'
import {
  exifSegment,
  exifWithOrientation,
  jpegSegment,
  ORIENTATION_TAG,
  ORIENTATIONS,
  tiffBlock,
  withJpegSegments,
  withPngChunks,
  withWebpChunks,
} from '../../support/photo-metadata.ts'
import { encodeWebpLossless } from '../../support/webp-encoder.ts'
import { base64Of } from './fixtures.ts'

const flat = (width: number, height: number) => ({ width, height, data: new Uint8Array(width * height * 4).fill(200) })
/** A real 40 × 24 JPEG (landscape as stored), to which each test adds its segments. */
const jpeg = encodeJpeg(flat(40, 24), 90)
const ascii = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0))

function seen(bytes: Uint8Array) {
  const header = readImageHeader(bytes)
  if (!header) throw new Error('test image has no header')
  return asDisplayed(header, bytes)
}

const orientationEntry = (value: number, type = 3, count = 1) => ({ tag: ORIENTATION_TAG, type, count, value })

describe('EXIF orientation in a JPEG', () => {
  it.each(ORIENTATIONS.flatMap((o) => [[o, 'little'] as const, [o, 'big'] as const]))(
    'reads orientation %i (%s-endian) and gives the displayed size',
    (orientation, order) => {
      const image = seen(withJpegSegments(jpeg, [exifSegment(exifWithOrientation(orientation, { bigEndian: order === 'big' }))]))
      const quarter = orientation >= 5
      expect(image).toEqual({
        format: 'jpeg',
        width: quarter ? 24 : 40,
        height: quarter ? 40 : 24,
        ...(orientation !== 1 && { orientation }),
      })
    },
  )

  it('finds the EXIF APP1 after an XMP APP1 and after APP0', () => {
    const xmp = jpegSegment(0xe1, ascii('http://ns.adobe.com/xap/1.0/\0<x:xmpmeta tiff:Orientation="3"/>'))
    expect(seen(withJpegSegments(jpeg, [xmp, exifSegment(exifWithOrientation(6))])).orientation).toBe(6)
  })

  it('takes the first APP1 holding an orientation, as Chromium does, past one that holds none', () => {
    const none = exifSegment(tiffBlock([{ tag: 0x010f, type: 2, count: 4, value: 0 }]))
    expect(seen(withJpegSegments(jpeg, [none, exifSegment(exifWithOrientation(8)), exifSegment(exifWithOrientation(3))])).orientation).toBe(
      8,
    )
  })

  it('reads an APP1 that comes after the frame header but before the scan', () => {
    const sof = jpeg.indexOf(0xc0, 2) - 1
    const moved = new Uint8Array([...jpeg.subarray(0, sof), ...exifSegment(exifWithOrientation(6)), ...jpeg.subarray(sof)])
    // Our encoder writes SOF before DHT and SOS, so the segment lands between frame and scan.
    expect(seen(moved).orientation).toBe(6)
  })

  it.each([
    ['a count of 2', tiffBlock([orientationEntry(6, 3, 2)])],
    ['type LONG instead of SHORT', tiffBlock([orientationEntry(6, 4, 1)])],
    ['value 0', tiffBlock([orientationEntry(0)])],
    ['value 9', tiffBlock([orientationEntry(9)])],
    ['value 0xffff', tiffBlock([orientationEntry(0xffff)])],
    ['an IFD offset past the end', tiffBlock([orientationEntry(6)], { ifdOffset: 4000, length: 64 })],
    ['an IFD offset of 0xffffffff', tiffBlock([orientationEntry(6)], { ifdOffset: 0xffffffff, length: 64 })],
    ['the entry cut short by the end of the block', tiffBlock([orientationEntry(6)]).subarray(0, 8 + 2 + 11)],
    ['a byte order mark that is neither II nor MM', Uint8Array.of(0x49, 0x4d, 42, 0, 8, 0, 0, 0, 0, 0)],
    [
      'a magic number other than 42',
      (() => {
        const block = tiffBlock([orientationEntry(6)])
        block[2] = 43
        return block
      })(),
    ],
    ['an empty block', new Uint8Array(0)],
  ])('takes the photo as upright (1) with %s', (_, tiff) => {
    const image = seen(withJpegSegments(jpeg, [exifSegment(tiff)]))
    expect(image.orientation).toBeUndefined()
    expect(image).toMatchObject({ width: 40, height: 24 })
  })

  it('reads entries only as far as the block holds whole ones when the count claims more', () => {
    const entries = [{ tag: 0x0100, type: 4, count: 1, value: 1 }, orientationEntry(6)]
    expect(orientationInTiff(tiffBlock(entries, { declaredCount: 0xffff }))).toBe(6)
    // The orientation entry lies past the declared count: not read.
    expect(orientationInTiff(tiffBlock(entries, { declaredCount: 1 }))).toBeUndefined()
  })

  it('reads IFD0 only: an IFD chain that loops back on itself is never followed', () => {
    // IFD0 has no orientation and points at itself as the next IFD; IFD1's orientation (a thumbnail's) is not IFD0's.
    const looping = tiffBlock([{ tag: 0x0100, type: 4, count: 1, value: 1 }], { nextIfd: 8 })
    expect(orientationInTiff(looping)).toBeUndefined()
    expect(seen(withJpegSegments(jpeg, [exifSegment(looping)])).orientation).toBeUndefined()
  })

  it('does not read past an APP1 whose length runs beyond the file', () => {
    const segment = exifSegment(exifWithOrientation(6))
    segment[2] = 0xff
    segment[3] = 0xff
    // The header reader refuses such a file; the metadata reader, asked anyway, stops at the bad length.
    const image = asDisplayed({ format: 'jpeg', width: 40, height: 24 }, withJpegSegments(jpeg, [segment]))
    expect(image).toEqual({ format: 'jpeg', width: 40, height: 24 })
  })

  it('never throws and never answers outside 1–8, whatever the EXIF bytes (fast-check)', () => {
    const valid = exifWithOrientation(6)
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ minLength: 0, maxLength: 200 }),
          fc.array(fc.tuple(fc.nat(valid.length - 1), fc.integer({ min: 0, max: 255 })), { maxLength: 12 }).map((edits) => {
            const block = valid.slice()
            for (const [at, value] of edits) block[at] = value
            return block
          }),
        ),
        (tiff) => {
          const orientation = orientationInTiff(tiff)
          expect(orientation === undefined || (orientation >= 1 && orientation <= 8)).toBe(true)
          const image = seen(withJpegSegments(jpeg, [exifSegment(tiff)]))
          expect([undefined, 2, 3, 4, 5, 6, 7, 8]).toContain(image.orientation)
        },
      ),
      { numRuns: 400, seed: 27 },
    )
  })

  it('answers a photo with a broken EXIF block at intake, as upright', async () => {
    const broken = withJpegSegments(jpeg, [exifSegment(tiffBlock([orientationEntry(6)], { ifdOffset: 0xfffffff0, length: 30 }))])
    const padded = withJpegSegments(broken, [jpegSegment(0xfe, new Uint8Array(1200))])
    const image = await intakeImage('userPhoto', base64Of(padded), {
      limits: defaultImageLimits,
      fetchImage: async () => new Uint8Array(0),
    })
    expect(image).toMatchObject({ format: 'jpeg', width: 40, height: 24 })
    expect(image.orientation).toBeUndefined()
  })
})

describe('EXIF orientation in PNG and WebP', () => {
  const png = encodePng(flat(40, 24))

  it.each(ORIENTATIONS)('reads orientation %i from a PNG eXIf chunk', (orientation) => {
    const image = seen(withPngChunks(png, [{ type: 'eXIf', body: exifWithOrientation(orientation, { bigEndian: true }) }]))
    expect(image.orientation ?? 1).toBe(orientation)
    expect(image.width).toBe(orientation >= 5 ? 24 : 40)
  })

  it('tolerates an "Exif\\0\\0" prefix in the eXIf chunk, as some writers add', () => {
    const body = new Uint8Array([...ascii('Exif\0\0'), ...exifWithOrientation(8)])
    expect(seen(withPngChunks(png, [{ type: 'eXIf', body }])).orientation).toBe(8)
  })

  it('ignores an eXIf chunk after the image data, where PNG does not put it', () => {
    const iend = png.length - 12
    const file = new Uint8Array([...png.subarray(0, iend), ...chunk('eXIf', exifWithOrientation(6)), ...png.subarray(iend)])
    expect(readImageHeader(file)).not.toBeNull()
    expect(seen(file).orientation).toBeUndefined()
  })

  it.each(ORIENTATIONS)('reads orientation %i from a WebP EXIF chunk', (orientation) => {
    const webp = withWebpChunks(encodeWebpLossless(flat(40, 24)), { exif: exifWithOrientation(orientation) }, { width: 40, height: 24 })
    const image = seen(webp)
    expect(image.orientation ?? 1).toBe(orientation)
    expect(image.height).toBe(orientation >= 5 ? 40 : 24)
  })

  it('takes a simple WebP (no VP8X) as upright', () => {
    expect(seen(encodeWebpLossless(flat(40, 24))).orientation).toBeUndefined()
  })
})
