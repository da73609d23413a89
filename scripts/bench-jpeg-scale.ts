/**
 * CPU time of decoding a 40 MP JPEG at each reduced DCT scale, this tree's decoder against the one of a git ref:
 * `npx tsx scripts/bench-jpeg-scale.ts [--against main] [--runs 7]`.
 * It makes its own photos: a 7744 × 5164 shopper photo as our encoder writes it (baseline 4:2:0), the same photo
 * with camera-like grain (a larger file, more coefficients per block), and the grainy one as a progressive file
 * with successive approximation (tests/support/jpeg-writer.ts, libjpeg's default order of scans). The two decoders
 * are alternated run by run in this one process, so a shared machine's load hits both alike; the medians and their
 * ratio are what to read. Each pair of outputs is compared byte for byte.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { drawShopper } from '../devstack/samples/shopper-photo.ts'
import { random } from '../devstack/samples/drawing.ts'
import { decodeJpeg, type JpegDecodeOptions } from '../shared/images/codecs/jpeg-decoder.ts'
import { encodeJpeg } from '../shared/images/codecs/jpeg-encoder.ts'
import type { RgbaImage } from '../shared/images/codecs/raster.ts'
import { coefficientsOf, writeJpeg } from '../tests/support/jpeg-writer.ts'

type Decode = (bytes: Uint8Array, options: JpegDecodeOptions) => RgbaImage

const { values: args } = parseArgs({ options: { against: { type: 'string', default: 'main' }, runs: { type: 'string', default: '7' } } })
const runs = Number(args.runs)
const width = 7744
const height = 5164
const codecFiles = ['jpeg-decoder.ts', 'jpeg-entropy.ts', 'jpeg-idct.ts', 'raster.ts']

/** The decoder as it is at a git ref, copied out of the repository and imported. */
async function decoderAt(ref: string): Promise<{ decode: Decode; cleanUp: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'jpeg-decoder-'))
  for (const file of codecFiles) {
    // The codecs moved from shared/engine/local/codecs/ to shared/images/codecs/: a ref from before reads the old folder.
    const at = (folder: string) => execFileSync('git', ['show', `${ref}:${folder}/${file}`], { stdio: ['ignore', 'pipe', 'ignore'] })
    let source: Buffer
    try {
      source = at('shared/images/codecs')
    } catch {
      source = at('shared/engine/local/codecs')
    }
    writeFileSync(join(dir, file), source)
  }
  const module = await import(pathToFileURL(join(dir, 'jpeg-decoder.ts')).href)
  return { decode: module.decodeJpeg, cleanUp: () => rmSync(dir, { recursive: true }) }
}

function withGrain(image: RgbaImage): RgbaImage {
  const next = random(11)
  const data = image.data.slice()
  for (let i = 0; i < data.length; i++) if ((i & 3) !== 3) data[i] = Math.max(0, Math.min(255, data[i] + Math.round((next() - 0.5) * 16)))
  return { ...image, data }
}

function cpuMilliseconds(run: () => void): number {
  const before = process.cpuUsage()
  run()
  const used = process.cpuUsage(before)
  return (used.user + used.system) / 1000
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]

function sameOutput(a: RgbaImage, b: RgbaImage): string {
  if (a.width !== b.width || a.height !== b.height) return `sizes differ (${a.width}x${a.height}, ${b.width}x${b.height})`
  let differing = 0
  let largest = 0
  for (let i = 0; i < a.data.length; i++) {
    const d = Math.abs(a.data[i] - b.data[i])
    if (d > 0) differing++
    largest = Math.max(largest, d)
  }
  return differing === 0 ? 'identical' : `${differing} bytes differ, by up to ${largest}`
}

console.log(`making the ${width}x${height} photos…`)
const photo = drawShopper({ width, height }).image
const grainy = withGrain(photo)
const files = [
  { name: 'baseline 4:2:0', bytes: encodeJpeg(photo, 92) },
  { name: 'baseline 4:2:0, grain', bytes: encodeJpeg(grainy, 92) },
  { name: 'progressive 4:2:0, grain', bytes: writeJpeg(coefficientsOf(grainy, '4:2:0', 92), { progressive: true }) },
]
const current: Decode = decodeJpeg
const previous = await decoderAt(args.against)
console.log(
  `CPU ms per decode, median of ${runs} after a warm-up, old (${args.against}) and new alternated; load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
)
console.log(
  `${'file'.padEnd(27)}${'size'.padStart(8)}${'scale'.padStart(7)}${'output'.padStart(11)}${'old'.padStart(9)}${'new'.padStart(9)}${'ratio'.padStart(8)}  outputs`,
)
for (const { name, bytes } of files) {
  for (const scale of [8, 4, 2]) {
    const options = { minLongSide: Math.ceil(width / scale) }
    const reference = previous.decode(bytes, options)
    const result = current(bytes, options)
    const old: number[] = []
    const now: number[] = []
    for (let i = 0; i < runs; i++) {
      old.push(cpuMilliseconds(() => previous.decode(bytes, options)))
      now.push(cpuMilliseconds(() => current(bytes, options)))
    }
    console.log(
      `${name.padEnd(27)}${`${(bytes.length / 1e6).toFixed(1)} MB`.padStart(8)}${`1/${scale}`.padStart(7)}` +
        `${`${result.width}x${result.height}`.padStart(11)}${median(old).toFixed(0).padStart(9)}${median(now).toFixed(0).padStart(9)}` +
        `${`${(median(old) / median(now)).toFixed(1)}x`.padStart(8)}  ${sameOutput(reference, result)}`,
    )
  }
}
console.log(
  `load average after ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
)
previous.cleanUp()
