import { zlibSync } from 'fflate'
import type { RgbaImage } from '../../shared/images/codecs/raster.ts'
import { crc32 } from '../../shared/encoding/crc32.ts'

export interface PngOptions {
  /** 0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA (default). Gray types read the red channel. */
  colorType?: 0 | 2 | 3 | 4 | 6
  bitDepth?: 1 | 2 | 4 | 8 | 16
  interlace?: boolean
  /** Colour-key transparency (tRNS) for types 0 and 2: pixels of this value become transparent. */
  transparentKey?: [number, number, number]
}

// Written apart from the decoder's table on purpose: this encoder is the oracle the decoder's Adam7 tests trust.
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
]
const CHANNELS = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as const

/** A test PNG encoder covering every colour type, depth, palette+tRNS and Adam7; rows cycle through all five filters. */
export function encodePng(image: RgbaImage, options: PngOptions = {}): Uint8Array {
  const colorType = options.colorType ?? 6
  const depth = options.bitDepth ?? 8
  const { width, height, data } = image
  const palette = colorType === 3 ? buildPalette(image) : null
  const chunks: Uint8Array[] = []
  const ihdr = new Uint8Array(13)
  const view = new DataView(ihdr.buffer)
  view.setUint32(0, width)
  view.setUint32(4, height)
  ihdr.set([depth, colorType, 0, 0, options.interlace ? 1 : 0], 8)
  chunks.push(chunk('IHDR', ihdr))
  if (palette) {
    chunks.push(chunk('PLTE', Uint8Array.from(palette.colors.flatMap((c) => [c[0], c[1], c[2]]))))
    if (palette.colors.some((c) => c[3] < 255)) chunks.push(chunk('tRNS', Uint8Array.from(palette.colors.map((c) => c[3]))))
  }
  if (options.transparentKey && (colorType === 0 || colorType === 2)) {
    const key = (colorType === 0 ? [options.transparentKey[0]] : options.transparentKey).map((v) => scaleDown(v, depth))
    chunks.push(chunk('tRNS', Uint8Array.from(key.flatMap((v) => [v >> 8, v & 255]))))
  }
  const channels = CHANNELS[colorType]
  const sampleAt = (x: number, y: number, c: number): number => {
    const p = (y * width + x) * 4
    if (colorType === 3) return palette!.index.get(key32(data, p))!
    if (colorType === 0) return scaleDown(data[p], depth)
    if (colorType === 4) return scaleDown(c === 0 ? data[p] : data[p + 3], depth)
    return scaleDown(data[p + (c === 3 ? 3 : c)], depth)
  }
  if (depth === 8 && (colorType === 6 || colorType === 2) && !options.interlace) {
    chunks.push(chunk('IDAT', zlibSync(fastRows(image, channels), { level: 6 })))
    chunks.push(chunk('IEND', new Uint8Array(0)))
    return concat([Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ...chunks])
  }
  const raw: number[] = []
  const passes = options.interlace ? ADAM7 : [[0, 0, 1, 1]]
  for (const [x0, y0, dx, dy] of passes) {
    const pw = Math.ceil((width - x0) / dx)
    const ph = Math.ceil((height - y0) / dy)
    if (pw <= 0 || ph <= 0) continue
    const bpp = Math.max(1, (channels * depth) >> 3)
    let previous: number[] | null = null
    for (let y = 0; y < ph; y++) {
      const samples: number[] = []
      for (let x = 0; x < pw; x++) for (let c = 0; c < channels; c++) samples.push(sampleAt(x0 + x * dx, y0 + y * dy, c))
      const row = packRow(samples, depth)
      const filter = y % 5
      raw.push(filter, ...filterRow(row, previous, bpp, filter))
      previous = row
    }
  }
  chunks.push(chunk('IDAT', zlibSync(Uint8Array.from(raw), { level: 6 })))
  chunks.push(chunk('IEND', new Uint8Array(0)))
  return concat([Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ...chunks])
}

/** 8-bit RGB/RGBA rows with the "up" filter, built in typed arrays so large photos stay quick. */
function fastRows({ width, height, data }: RgbaImage, channels: number): Uint8Array {
  const stride = width * channels
  const raw = new Uint8Array(height * (stride + 1))
  for (let y = 0; y < height; y++) {
    const o = y * (stride + 1)
    raw[o] = 2
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < channels; c++) {
        const p = (y * width + x) * 4 + c
        raw[o + 1 + x * channels + c] = (data[p] - (y > 0 ? data[p - width * 4] : 0)) & 255
      }
    }
  }
  return raw
}

function key32(data: Uint8Array, p: number): number {
  return ((data[p] << 24) | (data[p + 1] << 16) | (data[p + 2] << 8) | data[p + 3]) >>> 0
}

function buildPalette(image: RgbaImage) {
  const index = new Map<number, number>()
  const colors: number[][] = []
  for (let p = 0; p < image.data.length; p += 4) {
    const key = key32(image.data, p)
    if (!index.has(key)) {
      index.set(key, colors.length)
      colors.push([image.data[p], image.data[p + 1], image.data[p + 2], image.data[p + 3]])
    }
  }
  if (colors.length > 256) throw new Error(`palette PNG needs at most 256 colours, image has ${colors.length}`)
  return { index, colors }
}

function scaleDown(value: number, depth: number): number {
  if (depth === 16) return value * 257
  return depth === 8 ? value : value >> (8 - depth)
}

function packRow(samples: number[], depth: number): number[] {
  if (depth === 8) return samples
  if (depth === 16) return samples.flatMap((v) => [v >> 8, v & 255])
  const bytes = new Array<number>(Math.ceil((samples.length * depth) / 8)).fill(0)
  samples.forEach((v, i) => {
    const bit = i * depth
    bytes[bit >> 3] |= v << (8 - depth - (bit & 7))
  })
  return bytes
}

function filterRow(row: number[], previous: number[] | null, bpp: number, filter: number): number[] {
  return row.map((value, i) => {
    const a = i >= bpp ? row[i - bpp] : 0
    const b = previous ? previous[i] : 0
    const c = previous && i >= bpp ? previous[i - bpp] : 0
    let predictor = 0
    if (filter === 1) predictor = a
    else if (filter === 2) predictor = b
    else if (filter === 3) predictor = (a + b) >> 1
    else if (filter === 4) {
      const p = a + b - c
      const pa = Math.abs(p - a)
      const pb = Math.abs(p - b)
      const pc = Math.abs(p - c)
      predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c
    }
    return (value - predictor) & 255
  })
}

/** One PNG chunk: length, type, body and the CRC-32 of type and body. */
export function chunk(type: string, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + body.length)
  const view = new DataView(out.buffer)
  view.setUint32(0, body.length)
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i)
  out.set(body, 8)
  view.setUint32(8 + body.length, crc32(out, 4, 8 + body.length))
  return out
}

export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}
