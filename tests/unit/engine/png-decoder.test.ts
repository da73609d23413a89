import { zlibSync } from 'fflate'
import { describe, expect, it } from 'vitest'
import { random } from '../../../devstack/samples/drawing.ts'
import { encodePng, type PngOptions } from '../../../devstack/samples/png-encoder.ts'
import { decodeImage, ImageDecodeError, type RgbaImage } from '../../../shared/images/codecs/index.ts'
import { crc32 } from '../../../shared/encoding/crc32.ts'

/** Random RGBA with every alpha level represented: any mix-up of channels or rows shows. */
function noisyImage(width: number, height: number, seed = 1): RgbaImage {
  const next = random(seed)
  return { width, height, data: Uint8Array.from({ length: width * height * 4 }, () => Math.floor(next() * 256)) }
}

/** An image using only `colours` (RGBA), for palette PNGs whose bit depth limits the palette size. */
function paletteImage(width: number, height: number, colours: number[][]): RgbaImage {
  const data = new Uint8Array(width * height * 4)
  for (let i = 0; i < width * height; i++) data.set(colours[(i * 7 + (i >> 3)) % colours.length], i * 4)
  return { width, height, data }
}

/** What a decoder must return for `image` written with `options`, by the PNG specification's sample scaling. */
function expectedPixels(image: RgbaImage, options: PngOptions): Uint8Array {
  const colorType = options.colorType ?? 6
  const depth = options.bitDepth ?? 8
  const shift = depth < 8 ? 8 - depth : 0
  const widen = (v: number) => ((v >> shift) * 255) / ((1 << (8 - shift)) - 1)
  const key = options.transparentKey
  const out = new Uint8Array(image.data.length)
  for (let p = 0; p < out.length; p += 4) {
    const [r, g, b, a] = image.data.subarray(p, p + 4)
    if (colorType === 0) {
      const keyed = key !== undefined && r >> shift === key[0] >> shift
      out.set([widen(r), widen(r), widen(r), keyed ? 0 : 255], p)
    } else if (colorType === 2) {
      const keyed = key !== undefined && r === key[0] && g === key[1] && b === key[2]
      out.set([r, g, b, keyed ? 0 : 255], p)
    } else if (colorType === 4) out.set([r, r, r, a], p)
    else out.set([r, g, b, a], p)
  }
  return out
}

function decodeError(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  return undefined
}

/** Rewrites every chunk's CRC so damage inside a chunk reaches the decoder instead of failing the checksum. */
function fixChecksums(png: Uint8Array): Uint8Array {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength)
  for (let pos = 8; pos + 12 <= png.length; ) {
    const end = pos + 8 + view.getUint32(pos)
    if (end + 4 > png.length) break
    view.setUint32(end, crc32(png, pos + 4, end))
    pos = end + 4
  }
  return png
}

/** A PNG whose single IDAT holds `payload` as its zlib stream. */
function withImageData(png: Uint8Array, payload: Uint8Array): Uint8Array {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength)
  const ihdrEnd = 8 + 12 + view.getUint32(8)
  const idat = new Uint8Array(12 + payload.length)
  new DataView(idat.buffer).setUint32(0, payload.length)
  idat.set([0x49, 0x44, 0x41, 0x54], 4)
  idat.set(payload, 8)
  const iend = Uint8Array.of(0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0, 0, 0, 0)
  const out = new Uint8Array(ihdrEnd + idat.length + iend.length)
  out.set(png.subarray(0, ihdrEnd))
  out.set(idat, ihdrEnd)
  out.set(iend, ihdrEnd + idat.length)
  return fixChecksums(out)
}

const layouts: [string, PngOptions][] = [
  ['RGBA 8-bit', { colorType: 6, bitDepth: 8 }],
  ['RGBA 16-bit', { colorType: 6, bitDepth: 16 }],
  ['RGB 8-bit', { colorType: 2, bitDepth: 8 }],
  ['RGB 16-bit', { colorType: 2, bitDepth: 16 }],
  ['gray+alpha 8-bit', { colorType: 4, bitDepth: 8 }],
  ['gray+alpha 16-bit', { colorType: 4, bitDepth: 16 }],
  ...[1, 2, 4, 8, 16].map((bitDepth): [string, PngOptions] => [`gray ${bitDepth}-bit`, { colorType: 0, bitDepth: bitDepth as 1 }]),
]

describe('PNG decoding', () => {
  const image = noisyImage(13, 11)

  it.each(
    layouts.flatMap(([name, options]) => [
      [name, options],
      [`${name}, Adam7`, { ...options, interlace: true }],
    ]),
  )('decodes %s exactly', (_, options) => {
    const decoded = decodeImage(encodePng(image, options), 'png')
    expect([decoded.width, decoded.height]).toEqual([13, 11])
    expect(decoded.data).toEqual(expectedPixels(image, options))
  })

  it.each([1, 2, 4, 8] as const)('decodes a %i-bit palette with per-entry transparency, plain and Adam7', (bitDepth) => {
    const colours = [
      [250, 10, 10, 255],
      [10, 250, 10, 128],
      [10, 10, 250, 0],
      [200, 200, 0, 255],
      [0, 90, 180, 64],
      [33, 66, 99, 255],
    ]
    const source = paletteImage(13, 11, colours.slice(0, Math.min(colours.length, 1 << bitDepth)))
    for (const interlace of [false, true]) {
      expect(decodeImage(encodePng(source, { colorType: 3, bitDepth, interlace }), 'png').data).toEqual(source.data)
    }
  })

  it.each([
    ['gray 8-bit', { colorType: 0, bitDepth: 8 }],
    ['gray 4-bit', { colorType: 0, bitDepth: 4 }],
    ['gray 16-bit', { colorType: 0, bitDepth: 16 }],
    ['RGB 8-bit', { colorType: 2, bitDepth: 8 }],
    ['RGB 16-bit', { colorType: 2, bitDepth: 16 }],
  ] as [string, PngOptions][])('makes the tRNS colour key transparent in %s', (_, options) => {
    const source = paletteImage(13, 11, [
      [240, 240, 240, 255],
      [120, 30, 200, 255],
      [31, 30, 200, 255],
      [247, 5, 9, 255],
    ])
    const withKey = { ...options, transparentKey: [240, 240, 240] as [number, number, number] }
    const decoded = decodeImage(encodePng(source, withKey), 'png')
    expect(decoded.data).toEqual(expectedPixels(source, withKey))
    expect(decoded.data.some((v, i) => (i & 3) === 3 && v === 0)).toBe(true)
  })

  it.each([
    [1, 1],
    [2, 3],
    [5, 1],
    [1, 9],
    [37, 21],
  ])('decodes a %ix%i image, every Adam7 pass full or empty', (width, height) => {
    const source = noisyImage(width, height, width * height)
    for (const options of [{}, { interlace: true }, { colorType: 0, bitDepth: 2, interlace: true }] as PngOptions[]) {
      expect(decodeImage(encodePng(source, options), 'png').data).toEqual(expectedPixels(source, options))
    }
  })

  it('joins image data split over several IDAT chunks', () => {
    const source = noisyImage(40, 30, 4)
    const whole = encodePng(source)
    const view = new DataView(whole.buffer)
    const ihdrEnd = 8 + 12 + view.getUint32(8)
    const idatLength = view.getUint32(ihdrEnd)
    const stream = whole.subarray(ihdrEnd + 8, ihdrEnd + 8 + idatLength)
    const chunk = (body: Uint8Array) => {
      const bytes = new Uint8Array(12 + body.length)
      new DataView(bytes.buffer).setUint32(0, body.length)
      bytes.set([0x49, 0x44, 0x41, 0x54], 4)
      bytes.set(body, 8)
      return bytes
    }
    const cuts = [0, 1, 100, 101, stream.length]
    const parts = cuts.slice(1).map((end, i) => chunk(stream.subarray(cuts[i], end)))
    const tail = whole.subarray(ihdrEnd + 12 + idatLength)
    const split = fixChecksums(Uint8Array.from([...whole.subarray(0, ihdrEnd), ...parts.flatMap((p) => [...p]), ...tail]))
    expect(decodeImage(split, 'png').data).toEqual(source.data)
  })
})

describe('corrupt PNG data', () => {
  const source = noisyImage(60, 40, 9)
  const bytes = encodePng(source)

  it('refuses a file cut anywhere', () => {
    for (let cut = 0; cut < bytes.length - 12; cut += 131) {
      const error = decodeError(() => decodeImage(bytes.subarray(0, cut), 'png'))
      expect(error, `cut at ${cut} of ${bytes.length}`).toBeInstanceOf(ImageDecodeError)
    }
  })

  it('refuses a damaged byte through the chunk checksum', () => {
    for (const at of [16, 30, 40, bytes.length >> 1, bytes.length - 20]) {
      const damaged = bytes.slice()
      damaged[at] ^= 0x10
      expect(
        decodeError(() => decodeImage(damaged, 'png')),
        `byte ${at}`,
      ).toBeInstanceOf(ImageDecodeError)
    }
  })

  it('stops inflating at the bytes its header promises, so a bomb costs no more than the image it claims to be', () => {
    // The 60 × 40 image's rows (all zero: transparent black), then 64 MB more zeros: 64 KB of deflate data.
    const stream = zlibSync(new Uint8Array((1 + 60 * 4) * 40 + (1 << 26)), { level: 9 })
    expect(stream.length).toBeGreaterThan(60_000)
    // Damage far past the first bytes: an inflate that decodes the whole stream reaches it and fails.
    stream.fill(0xff, stream.length - 2000, stream.length - 4)
    expect(decodeImage(withImageData(bytes, stream), 'png').data).toEqual(new Uint8Array(60 * 40 * 4))
  })

  it('refuses image data that does not inflate, inflates short, or uses an unknown row filter', () => {
    const rowBytes = 1 + 60 * 4
    const badFilter = new Uint8Array(rowBytes * 40)
    badFilter[rowBytes * 7] = 9
    const payloads = [
      Uint8Array.of(0x78, 0x9c, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff),
      // A zlib header and checksum around no deflate data at all.
      Uint8Array.of(0x78, 0x9c, 0, 0, 0, 1),
      zlibSync(new Uint8Array(rowBytes * 39)),
      zlibSync(badFilter),
    ]
    for (const payload of payloads)
      expect(decodeError(() => decodeImage(withImageData(bytes, payload), 'png'))).toBeInstanceOf(ImageDecodeError)
  })

  it('refuses an invalid colour type and bit depth pair, and a palette image without its palette', () => {
    const badDepth = bytes.slice()
    badDepth[24] = 3
    expect(decodeError(() => decodeImage(fixChecksums(badDepth), 'png'))).toBeInstanceOf(ImageDecodeError)
    const noPalette = bytes.slice()
    noPalette[25] = 3
    expect(decodeError(() => decodeImage(fixChecksums(noPalette), 'png'))).toBeInstanceOf(ImageDecodeError)
  })

  it('either decodes a damaged file at its size or throws ImageDecodeError, never anything else', () => {
    const next = random(23)
    for (let round = 0; round < 60; round++) {
      const damaged = bytes.slice()
      const flips = 1 + Math.floor(next() * 6)
      for (let k = 0; k < flips; k++) damaged[8 + Math.floor(next() * (damaged.length - 8))] = Math.floor(next() * 256)
      const error = decodeError(() => {
        const decoded = decodeImage(fixChecksums(damaged), 'png')
        expect(decoded.data.length).toBe(decoded.width * decoded.height * 4)
      })
      if (error !== undefined) expect(error, `round ${round}`).toBeInstanceOf(ImageDecodeError)
    }
  })

  it('refuses JPEG bytes and noise under a PNG label', () => {
    const next = random(8)
    const noise = Uint8Array.from({ length: 2048 }, () => Math.floor(next() * 256))
    for (const data of [new Uint8Array(0), noise, Uint8Array.of(0xff, 0xd8, 0xff, 0xe0, 0, 16)]) {
      expect(decodeError(() => decodeImage(data, 'png'))).toBeInstanceOf(ImageDecodeError)
    }
  })
})
