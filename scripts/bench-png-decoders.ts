/**
 * Our PNG decoder against `fast-png` (the pure-TypeScript decoder, github.com/image-js/fast-png):
 * `npx tsx scripts/bench-png-decoders.ts`. Prints the median decode time of 7 runs, alternated in one process,
 * and what each does with a decompression bomb (a 64 × 64 header over IDAT data that inflates to 256 MB).
 * Several IHDR chunks: fast-png takes the last one it reads; ours refuses the file.
 */
import { zlibSync } from 'fflate'
import { decode as fastPngDecode } from 'fast-png'
import { chunk, concat, encodePng } from '../devstack/samples/png-encoder.ts'
import type { RgbaImage } from '../shared/images/codecs/raster.ts'
import { decodePng } from '../shared/images/codecs/png-decoder.ts'

function photo(width: number, height: number): RgbaImage {
  const data = new Uint8Array(width * height * 4)
  let seed = 7
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      seed = (seed * 1103515245 + 12345) >>> 0
      const o = (y * width + x) * 4
      data[o] = ((x * 255) / width + (seed & 31)) & 255
      data[o + 1] = ((y * 255) / height + ((seed >> 5) & 31)) & 255
      data[o + 2] = (x + y + ((seed >> 10) & 15)) & 255
      data[o + 3] = 255
    }
  }
  return { width, height, data }
}

function bomb(): Uint8Array {
  const header = new Uint8Array(13)
  const view = new DataView(header.buffer)
  view.setUint32(0, 64)
  view.setUint32(4, 64)
  header.set([8, 6, 0, 0, 0], 8)
  const signature = new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10])
  return concat([
    signature,
    chunk('IHDR', header),
    chunk('IDAT', zlibSync(new Uint8Array(256 << 20), { level: 9 })),
    chunk('IEND', new Uint8Array()),
  ])
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]

function time(decode: () => unknown): number {
  const start = performance.now()
  decode()
  return performance.now() - start
}

for (const [width, height, interlace] of [
  [1200, 1800, false],
  [3000, 4000, false],
  [3000, 4000, true],
] as const) {
  const png = encodePng(photo(width, height), { interlace })
  const ours: number[] = []
  const theirs: number[] = []
  for (let run = 0; run < 7; run++) {
    ours.push(time(() => decodePng(png)))
    theirs.push(time(() => fastPngDecode(png)))
  }
  const name = `${width}×${height}${interlace ? ' Adam7' : ''}, ${(png.length / 1e6).toFixed(1)} MB`
  console.log(
    `${name}: ours ${median(ours).toFixed(0)} ms, fast-png ${median(theirs).toFixed(0)} ms (${((median(theirs) / median(ours) - 1) * 100).toFixed(0)}%)`,
  )
}

const hostile = bomb()
for (const [name, decode] of [
  ['ours', () => decodePng(hostile).data],
  ['fast-png', () => fastPngDecode(hostile).data],
] as const) {
  const start = performance.now()
  try {
    const pixels = decode()
    const ms = (performance.now() - start).toFixed(0)
    console.log(
      `bomb (${(hostile.length / 1e3).toFixed(0)} KB, 64 × 64): ${name} gave ${(pixels.length / 1e6).toFixed(2)} MB of pixel data in ${ms} ms`,
    )
  } catch (error) {
    console.log(
      `bomb (${(hostile.length / 1e3).toFixed(0)} KB, 64 × 64): ${name} refused it: ${error instanceof Error ? error.message : String(error)}`,
    )
  }
}
