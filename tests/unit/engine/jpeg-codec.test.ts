import { JpegChroma, JpegEncoder } from 'image-in-browser/lib/src/formats/jpeg-encoder.js'
import { JpegDecoder } from 'image-in-browser/lib/src/formats/jpeg-decoder.js'
import { MemoryImage } from 'image-in-browser/lib/src/image/image.js'
import { describe, expect, it } from 'vitest'
import { random } from '../../../devstack/samples/drawing.ts'
import { decodeImage, encodeJpeg, ImageDecodeError, type RgbaImage } from '../../../shared/images/codecs/index.ts'
import { resizeArea } from '../../../shared/images/resize.ts'
import { makeShopperPhoto } from '../../support/images.ts'

const shopper = makeShopperPhoto({ width: 200, height: 300, format: 'png' }).pixels

/** Mean absolute difference over the colour channels (alpha is not stored in a JPEG). */
function colourError(a: RgbaImage, b: RgbaImage, rows: [number, number] = [0, a.height]): number {
  expect([a.width, a.height]).toEqual([b.width, b.height])
  let sum = 0
  let count = 0
  for (let i = rows[0] * a.width * 4; i < rows[1] * a.width * 4; i++) {
    if ((i & 3) === 3) continue
    sum += Math.abs(a.data[i] - b.data[i])
    count++
  }
  return sum / count
}

/** Gentle gradients and a soft disc at a fixed pixel scale: photo-like content whatever the image size. */
function smoothImage(width: number, height: number): RgbaImage {
  const data = new Uint8Array(width * height * 4)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const disc = Math.max(0, 1 - Math.hypot(x - 20, y - 12) / 14)
      const o = (y * width + x) * 4
      data[o] = 60 + 2 * x
      data[o + 1] = 200 - 1.5 * y - 60 * disc
      data[o + 2] = 90 + 120 * disc
      data[o + 3] = 255
    }
  }
  return { width, height, data }
}

function withForeignEncoder(image: RgbaImage, chroma: JpegChroma): Uint8Array {
  const memory = MemoryImage.fromBytes({ width: image.width, height: image.height, bytes: image.data.slice().buffer, numChannels: 4 })
  return new JpegEncoder(92).encode({ image: memory, chroma })
}

function decodeError(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  return undefined
}

describe('JPEG round trip', () => {
  it('decodes what the encoder wrote close to the source pixels', () => {
    const decoded = decodeImage(encodeJpeg(shopper, 90), 'jpeg')
    expect([decoded.width, decoded.height]).toEqual([200, 300])
    expect(colourError(decoded, shopper)).toBeLessThan(2.5)
    expect(decoded.data.every((v, i) => (i & 3) !== 3 || v === 255)).toBe(true)
  })

  it('trades bytes for fidelity as the quality rises', () => {
    const results = [40, 75, 95].map((quality) => {
      const bytes = encodeJpeg(shopper, quality)
      return { size: bytes.length, error: colourError(decodeImage(bytes, 'jpeg'), shopper) }
    })
    expect(results[0].size).toBeLessThan(results[1].size)
    expect(results[1].size).toBeLessThan(results[2].size)
    expect(results[0].error).toBeGreaterThan(results[1].error)
    expect(results[1].error).toBeGreaterThan(results[2].error)
  })

  it.each([
    [45, 29],
    [17, 9],
    [8, 8],
    [1, 1],
    [3, 70],
  ])('keeps a %ix%i image whole, partial blocks at the edges included', (width, height) => {
    const source = smoothImage(width, height)
    const decoded = decodeImage(encodeJpeg(source, 95), 'jpeg')
    expect([decoded.width, decoded.height]).toEqual([width, height])
    expect(colourError(decoded, source)).toBeLessThan(3)
    expect(colourError(decoded, source, [height - 1, height])).toBeLessThan(4)
  })

  it('encodes the same pixels to the same bytes', () => {
    expect(encodeJpeg(shopper, 88)).toEqual(encodeJpeg(makeShopperPhoto({ width: 200, height: 300, format: 'png' }).pixels, 88))
  })
})

describe('JPEG interoperability', () => {
  it.each([
    ['4:4:4', JpegChroma.yuv444],
    ['4:2:0', JpegChroma.yuv420],
  ])('decodes a %s JPEG from another encoder', (_, chroma) => {
    const decoded = decodeImage(withForeignEncoder(shopper, chroma), 'jpeg')
    expect(colourError(decoded, shopper)).toBeLessThan(2)
  })

  it('writes JPEGs another decoder reads back to the source pixels', () => {
    const foreign = new JpegDecoder().decode({ bytes: encodeJpeg(shopper, 90) })
    expect(foreign).toBeDefined()
    const rgba = foreign!.convert({ numChannels: 4 }).toUint8Array()
    expect(colourError({ width: foreign!.width, height: foreign!.height, data: rgba }, shopper)).toBeLessThan(2.5)
  })
})

describe('JPEG variants written by libjpeg', () => {
  // Pillow 12 (libjpeg-turbo) output for smoothImage(40, 32): quality 90; progressive 4:2:0, progressive grayscale
  // (luma per ITU-R 601), and baseline 4:2:2 with a restart marker every 3 MCUs.
  const fixtures = {
    progressive:
      '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/wgARCAAgACgDASIAAhEBAxEB/8QAGgAAAgMBAQAAAAAAAAAAAAAAAAQCAwUGAf/EABcBAQEBAQAAAAAAAAAAAAAAAAUEBgP/2gAMAwEAAhADEAAAAdaSdYmB0G+e0Wm9wVMXVzvqtzgs3Fr+zD4sD3//xAAbEAADAQADAQAAAAAAAAAAAAAAAQIDERITIf/aAAgBAQABBQJUenAtSNBUKiqO33OiaFQxIgVCoVCYmKj/xAAZEQADAQEBAAAAAAAAAAAAAAAAAgMRIQH/2gAIAQMBAT8BhPRZeYKhJcE6KnD/xAAcEQACAgMBAQAAAAAAAAAAAAABAgADBBESBSH/2gAIAQIBAT8BxqBbZozN85Er3Cv2KxrPQl2W9i8wrP/EABQQAQAAAAAAAAAAAAAAAAAAAED/2gAIAQEABj8CJ//EABoQAAMAAwEAAAAAAAAAAAAAAAABIRARIDH/2gAIAQEAAT8hBhX038QJw4hgooT3AZ//2gAMAwEAAgADAAAAECm/A0/P/8QAGBEBAQEBAQAAAAAAAAAAAAAAAQARECH/2gAIAQMBAT8QBGxheEyEtjOD/8QAGhEAAgIDAAAAAAAAAAAAAAAAAAEQESExQf/aAAgBAgEBPxDlER1rRWyi7fhkP//EABsQAAIDAQEBAAAAAAAAAAAAAAABESFhEDFR/9oACAEBAAE/ENjyJ8ijLNSj0bdkX8HosoWbcKwskQJWbGwshNj/2Q==',
    progressiveGray:
      '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/wgALCAAgACgBAREA/8QAGgAAAgMBAQAAAAAAAAAAAAAAAwQBBQYAAv/aAAgBAQAAAAG29c25nBhsbLOzDjudMY5v/8QAGxAAAwEAAwEAAAAAAAAAAAAAAAECAxESEyH/2gAIAQEAAQUCVHpwLUjQVCoqjt9zomhUMSIFQqFQmJio/8QAFBABAAAAAAAAAAAAAAAAAAAAQP/aAAgBAQAGPwIn/8QAGhAAAwADAQAAAAAAAAAAAAAAAAEhEBEgMf/aAAgBAQABPyEGFfTfxAnDiGCihPcBn//aAAgBAQAAABAdRh//xAAbEAACAwEBAQAAAAAAAAAAAAAAAREhYRAxUf/aAAgBAQABPxDY8ifIoyzUo9G3ZF/B6LKFm3CsLJECVmxsLITY/9k=',
    restartIntervals:
      '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/wAARCAAgACgDASEAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/90ABAAD/9oADAMBAAIRAxEAPwDrIrj3qR9Q8vgGvznC4X6xWUD+ecHT5mgi1b5vvVr2Opb8ZNe5meUezoc1j7SjQsjYhufeivziUNT2acPdP//Q2Y7jjrVa4uTzzXzmRwTxOp+F4CHvIqJdP5o9K6HTLljjmv0viClSWEXL2PvacFyo6W3uPlHNFfznUj7zOynDQ//RmiuPenSfNXyWBq/V66kfiuCXK0Nii+YVs2A2kV9LmuZ+0octz7Wi7o2objAHNFflko3Z69OHun//0qcVx71ciuPevipxPx/DQ2LkUoq9DPiuKo5SVmz6vDQehdiuPeiuCUdT6SnD3T//2Q==',
  }
  const source = smoothImage(40, 32)
  const bytesOf = (name: keyof typeof fixtures) => Uint8Array.from(atob(fixtures[name]), (c) => c.charCodeAt(0))

  it.each(['progressive', 'restartIntervals'] as const)('decodes a %s JPEG close to its source', (name) => {
    const decoded = decodeImage(bytesOf(name), 'jpeg')
    expect([decoded.width, decoded.height]).toEqual([40, 32])
    expect(colourError(decoded, source)).toBeLessThan(2.5)
  })

  it('decodes a progressive grayscale JPEG to gray pixels close to the source luma', () => {
    const decoded = decodeImage(bytesOf('progressiveGray'), 'jpeg')
    const luma = new Uint8Array(source.data.length)
    for (let p = 0; p < luma.length; p += 4) {
      const y = Math.round((source.data[p] * 299 + source.data[p + 1] * 587 + source.data[p + 2] * 114) / 1000)
      luma.set([y, y, y, 255], p)
    }
    expect(colourError(decoded, { width: 40, height: 32, data: luma })).toBeLessThan(1.5)
  })

  it('decodes a progressive JPEG at a reduced scale', () => {
    const decoded = decodeImage(bytesOf('progressive'), 'jpeg', { minLongSide: 20 })
    expect([decoded.width, decoded.height]).toEqual([20, 16])
    expect(colourError(decoded, resizeArea(source, 20, 16))).toBeLessThan(3.5)
  })
})

describe('JPEG reduced-scale decoding', () => {
  const bytes = encodeJpeg(shopper, 95)

  it.each([
    [150, 2, 100, 150, 2],
    [149, 2, 100, 150, 2],
    [75, 4, 50, 75, 2.5],
    [38, 8, 25, 38, 5],
    [5, 8, 25, 38, 5],
  ])('decodes at the smallest scale that still gives a long side of %i', (minLongSide, factor, width, height, tolerance) => {
    const decoded = decodeImage(bytes, 'jpeg', { minLongSide })
    expect([decoded.width, decoded.height]).toEqual([width, height])
    // At 1/8 each pixel is a block's DC, and chroma blocks span 16×16: a coarser match. Rows from whole blocks only.
    const fullRows = Math.floor(300 / factor)
    const reference = resizeArea(shopper, width, Math.ceil(300 / factor))
    expect(colourError(decoded, reference, [0, Math.min(fullRows, height)])).toBeLessThan(tolerance)
  })

  it.each([0, 151, 300, 5000])('decodes at full size when %i pixels are wanted', (minLongSide) => {
    const decoded = decodeImage(bytes, 'jpeg', { minLongSide })
    expect([decoded.width, decoded.height]).toEqual([200, 300])
  })
})

describe('corrupt JPEG data', () => {
  const bytes = encodeJpeg(shopper, 90)

  it('refuses a file cut anywhere before its last few hundred bytes', () => {
    for (let cut = 0; cut < bytes.length - 512; cut += 97) {
      const error = decodeError(() => decodeImage(bytes.subarray(0, cut), 'jpeg'))
      expect(error, `cut at ${cut} of ${bytes.length}`).toBeInstanceOf(ImageDecodeError)
    }
  })

  it('still decodes a file missing only its end-of-image marker, as libjpeg does', () => {
    const decoded = decodeImage(bytes.subarray(0, bytes.length - 2), 'jpeg')
    expect(colourError(decoded, shopper)).toBeLessThan(2.5)
  })

  it('refuses other formats and noise under a JPEG label', () => {
    const next = random(3)
    const noise = Uint8Array.from({ length: 4096 }, () => Math.floor(next() * 256))
    const soiThenNoise = Uint8Array.from([0xff, 0xd8, ...noise.subarray(0, 2000)])
    for (const data of [
      new Uint8Array(0),
      Uint8Array.of(0xff, 0xd8),
      noise,
      soiThenNoise,
      makeShopperPhoto({ width: 20, height: 30, format: 'png' }).bytes,
    ]) {
      expect(decodeError(() => decodeImage(data, 'jpeg'))).toBeInstanceOf(ImageDecodeError)
    }
  })

  it('either decodes a damaged file at its size or throws ImageDecodeError, never anything else', () => {
    const next = random(17)
    let refused = 0
    for (let round = 0; round < 60; round++) {
      const damaged = bytes.slice()
      const flips = 1 + Math.floor(next() * 8)
      for (let k = 0; k < flips; k++) damaged[2 + Math.floor(next() * (damaged.length - 2))] = Math.floor(next() * 256)
      const error = decodeError(() => {
        const decoded = decodeImage(damaged, 'jpeg')
        expect(decoded.data.length).toBe(decoded.width * decoded.height * 4)
      })
      if (error === undefined) continue
      expect(error, `round ${round}`).toBeInstanceOf(ImageDecodeError)
      refused++
    }
    expect(refused).toBeGreaterThan(0)
  })
})
