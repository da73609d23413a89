import { describe, expect, it } from 'vitest'
import { readImageHeader } from '../../../shared/images/sniff.ts'
import { APP0_JFIF, jpeg, jpegSegment, notImages, png, sof, webpVp8, webpVp8l, webpVp8x } from './fixtures.ts'

const SOI = [0xff, 0xd8]

describe('PNG header', () => {
  it('reads width and height from IHDR', () => {
    expect(readImageHeader(png(640, 480))).toEqual({ format: 'png', width: 640, height: 480 })
    expect(readImageHeader(png(1, 70_000, 24))).toEqual({ format: 'png', width: 1, height: 70_000 })
  })

  it('refuses a zero-size image', () => {
    expect(readImageHeader(png(0, 480))).toBeNull()
    expect(readImageHeader(png(640, 0))).toBeNull()
  })

  it('refuses dimensions beyond the 2^31-1 PNG maximum', () => {
    expect(readImageHeader(png(0x80000000, 1))).toBeNull()
  })

  it('refuses a signature not followed by IHDR', () => {
    const bytes = png(640, 480)
    bytes[12] = 0x49 + 1
    expect(readImageHeader(bytes)).toBeNull()
  })

  it('refuses a header cut short, even when the bytes after the view would complete it', () => {
    const whole = png(640, 480, 64)
    expect(readImageHeader(whole.subarray(0, 23))).toBeNull()
    expect(readImageHeader(whole.subarray(0, 24))).toEqual({ format: 'png', width: 640, height: 480 })
  })
})

describe('JPEG header', () => {
  it('reads the frame header after an APP0 segment', () => {
    expect(readImageHeader(jpeg(1920, 1080))).toEqual({ format: 'jpeg', width: 1920, height: 1080 })
  })

  it.each([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf].map((m) => [m.toString(16), m]))(
    'reads dimensions from SOF marker 0x%s',
    (_, marker) => {
      expect(readImageHeader(jpeg(300, 200, 2048, { marker }))).toEqual({ format: 'jpeg', width: 300, height: 200 })
    },
  )

  it('skips DHT, JPG and DAC segments, whose markers sit among the SOF markers', () => {
    const before = [0xc4, 0xc8, 0xcc].flatMap((marker) => jpegSegment(marker, [0, 9, 9, 9, 9, 9]))
    expect(readImageHeader(jpeg(300, 200, 2048, { before }))).toEqual({ format: 'jpeg', width: 300, height: 200 })
  })

  it('walks past a large EXIF segment, fill bytes and standalone markers', () => {
    const exif = jpegSegment(0xe1, new Array(5000).fill(0x41))
    const before = [...exif, 0xff, 0xff, 0xff, 0xd0, ...APP0_JFIF]
    expect(readImageHeader(jpeg(4000, 3000, 8192, { before }))).toEqual({ format: 'jpeg', width: 4000, height: 3000 })
  })

  it('refuses a scan that starts before any frame header', () => {
    const bytes = Uint8Array.from([...SOI, ...jpegSegment(0xda, [1, 2, 3]), ...sof(10, 10)])
    expect(readImageHeader(bytes)).toBeNull()
  })

  it('refuses an image that ends before its frame header', () => {
    expect(readImageHeader(Uint8Array.from([...SOI, ...APP0_JFIF, 0xff, 0xd9, ...sof(10, 10)]))).toBeNull()
  })

  it('refuses a zero height (DNL-defined) frame', () => {
    expect(readImageHeader(jpeg(640, 0))).toBeNull()
  })

  it('refuses a segment length below 2 instead of looping', () => {
    expect(readImageHeader(Uint8Array.from([...SOI, 0xff, 0xe0, 0x00, 0x01, ...sof(10, 10)]))).toBeNull()
  })

  it('refuses garbage where a marker should be', () => {
    expect(readImageHeader(Uint8Array.from([...SOI, 0xff, 0xe0, 0x00, 0x04, 0, 0, 0x12, ...sof(10, 10)]))).toBeNull()
  })

  it('refuses a segment whose length runs past the end', () => {
    expect(readImageHeader(Uint8Array.from([...SOI, 0xff, 0xe0, 0x40, 0x00, 1, 2, 3]))).toBeNull()
  })

  it('refuses a frame header cut short, even when the bytes after the view would complete it', () => {
    const whole = Uint8Array.from([...SOI, ...sof(640, 480), 0, 0, 0])
    expect(readImageHeader(whole.subarray(0, 10))).toBeNull()
    expect(readImageHeader(whole.subarray(0, 11))).toEqual({ format: 'jpeg', width: 640, height: 480 })
  })
})

describe('WebP header', () => {
  it('reads a lossy (VP8) image', () => {
    expect(readImageHeader(webpVp8(1024, 768))).toEqual({ format: 'webp', width: 1024, height: 768 })
  })

  it('reads a lossless (VP8L) image', () => {
    expect(readImageHeader(webpVp8l(16384, 3))).toEqual({ format: 'webp', width: 16384, height: 3 })
  })

  it('reads an extended (VP8X) image beyond 16383 pixels', () => {
    expect(readImageHeader(webpVp8x(20_000, 9_000))).toEqual({ format: 'webp', width: 20_000, height: 9_000 })
  })

  it('refuses a VP8 chunk without the key-frame start code', () => {
    const bytes = webpVp8(100, 100)
    bytes[23] = 0
    expect(readImageHeader(bytes)).toBeNull()
  })

  it('refuses a VP8 frame of zero width', () => {
    expect(readImageHeader(webpVp8(0, 100))).toBeNull()
  })

  it('refuses a VP8L chunk with a bad signature or version', () => {
    const badSignature = webpVp8l(100, 100)
    badSignature[20] = 0x2e
    const badVersion = webpVp8l(100, 100)
    badVersion[24] |= 0x20
    expect(readImageHeader(badSignature)).toBeNull()
    expect(readImageHeader(badVersion)).toBeNull()
  })

  it('refuses a RIFF file that is not WebP, or a WebP with an unknown first chunk', () => {
    const wave = webpVp8(100, 100)
    wave.set([0x57, 0x41, 0x56, 0x45], 8)
    const unknown = webpVp8(100, 100)
    unknown.set([0x41, 0x4c, 0x50, 0x48], 12)
    expect(readImageHeader(wave)).toBeNull()
    expect(readImageHeader(unknown)).toBeNull()
  })

  it('refuses each kind of chunk cut short', () => {
    expect(readImageHeader(webpVp8(100, 100).subarray(0, 29))).toBeNull()
    expect(readImageHeader(webpVp8l(100, 100).subarray(0, 24))).toBeNull()
    expect(readImageHeader(webpVp8x(100, 100).subarray(0, 29))).toBeNull()
  })
})

describe('other content', () => {
  it.each(Object.entries(notImages))('refuses %s', (_, bytes) => {
    expect(readImageHeader(bytes)).toBeNull()
  })

  it('refuses empty and one-byte inputs', () => {
    expect(readImageHeader(new Uint8Array(0))).toBeNull()
    expect(readImageHeader(Uint8Array.from([0xff]))).toBeNull()
  })

  it('never throws on any prefix or random corruption of a valid header', () => {
    const headers = [png(640, 480, 40), jpeg(640, 480, 300), webpVp8(64, 64, 40), webpVp8l(64, 64, 40), webpVp8x(64, 64, 40)]
    let state = 7
    const random = (n: number) => {
      state = (state * 1103515245 + 12345) & 0x7fffffff
      return state % n
    }
    for (const header of headers) {
      for (let length = 0; length <= header.length; length++) {
        expect(() => readImageHeader(header.subarray(0, length))).not.toThrow()
      }
      for (let round = 0; round < 2000; round++) {
        const corrupted = header.slice(0, 4 + random(header.length))
        for (let flips = 0; flips < 3; flips++) corrupted[4 + random(corrupted.length - 4)] = random(256)
        const result = readImageHeader(corrupted)
        if (result !== null) {
          expect(result.width).toBeGreaterThan(0)
          expect(result.height).toBeGreaterThan(0)
        }
      }
    }
  })
})
