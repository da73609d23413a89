import { describe, expect, it } from 'vitest'
import { refusedFormatOf } from '../../../shared/images/refused-formats.ts'
import { readImageHeader } from '../../../shared/images/sniff.ts'
import { notImages } from './fixtures.ts'

const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0))
const be32 = (n: number) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]
/** An ISO BMFF file's first box, `ftyp`, declaring `size` bytes, then padding. */
const ftyp = (major: string, compatible: string[], size = 16 + 4 * compatible.length) =>
  Uint8Array.from(
    { length: 2048 },
    (_, i) => [...be32(size), ...ascii('ftyp'), ...ascii(major), 0, 0, 0, 0, ...compatible.flatMap(ascii)][i] ?? 0,
  )

describe('formats the service refuses, named from their bytes', () => {
  it.each([
    ['an iPhone photo (heic, mif1)', ftyp('heic', ['mif1', 'heic']), 'HEIC'],
    ['a HEIC burst (hevc)', ftyp('hevc', ['msf1', 'hevc']), 'HEIC'],
    ['a HEIF with only the generic brand', ftyp('mif1', ['mif1', 'miaf']), 'HEIF'],
    ['an AVIF (avif, mif1, miaf)', ftyp('avif', ['mif1', 'miaf', 'MA1B']), 'AVIF'],
    ['an AVIF named only among the compatible brands', ftyp('mif1', ['miaf', 'avif']), 'AVIF'],
    ['an animated AVIF', ftyp('avis', ['msf1', 'avis']), 'AVIF'],
    ['a GIF', notImages.gif, 'GIF'],
    ['a BMP', notImages.bmp, 'BMP'],
    ['a little-endian TIFF', Uint8Array.of(0x49, 0x49, 0x2a, 0, 8, 0, 0, 0), 'TIFF'],
    ['a JPEG XL container', Uint8Array.of(0, 0, 0, 0x0c, 0x4a, 0x58, 0x4c, 0x20, 0x0d, 0x0a, 0x87, 0x0a), 'JPEG XL'],
  ])('names %s', (_, bytes, name) => {
    expect(readImageHeader(bytes)).toBeNull()
    expect(refusedFormatOf(bytes)).toBe(name)
  })

  it.each([
    ['an MP4 video (isom)', ftyp('isom', ['isom', 'iso2', 'mp41'])],
    ['an SVG', notImages.svg],
    ['HTML', notImages.html],
    ['"BM" followed by no BMP header', Uint8Array.from([...ascii('BM'), ...new Array(40).fill(0x41)])],
    ['an ftyp box cut short', ftyp('heic', []).subarray(0, 10)],
  ])('names nothing for %s', (_, bytes) => {
    expect(refusedFormatOf(bytes)).toBeUndefined()
  })

  it('reads brands only within the box and the bytes, however large the box says it is', () => {
    // The AVIF brand lies past the declared box: it is not one of this file's brands.
    const short = ftyp('mif1', ['miaf', 'avif'], 20)
    expect(refusedFormatOf(short)).toBe('HEIF')
    const huge = ftyp('isom', ['mp41'], 0xffffffff)
    expect(refusedFormatOf(huge.subarray(0, 24))).toBeUndefined()
  })
})
