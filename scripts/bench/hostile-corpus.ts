/**
 * The hostile corpus the CPU-budget benchmarks send as a shopper photo (scripts/measure-hostile.ts on Node,
 * scripts/measure-deno-request.ts --hostile on Deno): files small on the wire whose decoding work is out of proportion
 * to their size, and the largest legitimate photos. Made once and cached under test-artifacts/hostile/.
 */
import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { zlibSync } from 'fflate'
import { chunk as pngChunk, concat } from '../../devstack/samples/png-encoder.ts'
import { random } from '../../devstack/samples/drawing.ts'
import { drawShopper } from '../../devstack/samples/shopper-photo.ts'
import { encodeJpeg } from '../../shared/images/codecs/jpeg-encoder.ts'
import { manyScanJpeg, webpFlat } from '../../tests/support/hostile-images.ts'
import { coefficientsOf, writeJpeg } from '../../tests/support/jpeg-writer.ts'
import { encodeWebpLossyFlat } from '../../tests/support/webp-encoder.ts'
import { storedPixels } from '../../tests/support/jpeg-exif.ts'
import { exifSegment, exifWithOrientation, withJpegSegments } from '../../tests/support/photo-metadata.ts'

export interface CorpusFile {
  name: string
  bytes: Uint8Array
  /** Sent as a wedding dress (2 credits, the bridal steps decode the photos again). */
  wedding?: boolean
}

const DIR = 'test-artifacts/hostile'
/** The 40 MP of the attacks: 7296 × 5472 (a 4:3 sensor), just under the 40-megapixel limit. */
const W = 7296
const H = 5472

async function cached(file: string, make: () => Uint8Array): Promise<Uint8Array> {
  const path = `${DIR}/${file}`
  if (existsSync(path)) return new Uint8Array(await readFile(path))
  console.error(`making ${path}…`)
  const bytes = make()
  await mkdir(DIR, { recursive: true })
  await writeFile(path, bytes)
  return bytes
}

/** A shopper photo of 7744 × 5164 with camera-like grain, so the local engine finds a person in it. */
function photo40mp() {
  const image = drawShopper({ width: 7744, height: 5164 }).image
  const next = random(11)
  for (let i = 0; i < image.data.length; i++) {
    if ((i & 3) !== 3) image.data[i] = Math.max(0, Math.min(255, image.data[i] + Math.round((next() - 0.5) * 16)))
  }
  return image
}

/** A 12 MP portrait photo stored as a phone stores it: the pixels sideways (4032 × 3024), EXIF Orientation 6. */
function phone12mp(): Uint8Array {
  const upright = drawShopper({ width: 3024, height: 4032, seed: 3 }).image
  const next = random(12)
  for (let i = 0; i < upright.data.length; i++) {
    if ((i & 3) !== 3) upright.data[i] = Math.max(0, Math.min(255, upright.data[i] + Math.round((next() - 0.5) * 16)))
  }
  return withJpegSegments(encodeJpeg(storedPixels(upright, 6), 90), [exifSegment(exifWithOrientation(6))])
}

/** An 8-bit RGBA PNG of zeros: about 160 KB that inflate to 160 MB, the most a 40 MP PNG can ask a decoder for. */
function zlibBombPng(width = W, height = H): Uint8Array {
  const header = new Uint8Array(13)
  const view = new DataView(header.buffer)
  view.setUint32(0, width)
  view.setUint32(4, height)
  header.set([8, 6, 0, 0, 0], 8)
  const raw = new Uint8Array((1 + width * 4) * height)
  const signature = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)
  return concat([signature, pngChunk('IHDR', header), pngChunk('IDAT', zlibSync(raw, { level: 9 })), pngChunk('IEND', new Uint8Array(0))])
}

export async function hostileCorpus(): Promise<CorpusFile[]> {
  let grainy: ReturnType<typeof photo40mp> | null = null
  const grain = () => (grainy ??= photo40mp())
  const files: CorpusFile[] = []
  for (const scans of [1, 200, 1000, 10000]) {
    files.push({
      name: `progressive JPEG 7296×5472, ${scans} end-of-band scans`,
      bytes: await cached(`scans-${scans}.jpg`, () => manyScanJpeg({ width: W, height: H, scans })),
    })
  }
  files.push(
    { name: 'lossy WebP 7296×5472', bytes: await cached('lossy.webp', () => encodeWebpLossyFlat(W, H, { filterLevel: 20 })) },
    { name: 'lossy WebP 7296×5472 with alpha', bytes: await cached('alpha.webp', () => encodeWebpLossyFlat(W, H, { alpha: true })) },
    { name: 'lossless WebP 7296×5472', bytes: await cached('lossless.webp', () => webpFlat({ width: W, height: H })) },
    { name: 'zlib-bomb PNG 7296×5472 RGBA', bytes: await cached('bomb.png', () => zlibBombPng()) },
    {
      name: 'zlib-bomb PNG 4000×3000 RGBA (12 MP, the most a PNG may have)',
      bytes: await cached('bomb-12mp.png', () => zlibBombPng(4000, 3000)),
    },
  )
  const baseline = await cached('photo-baseline.jpg', () => encodeJpeg(grain(), 92))
  const progressive = await cached('photo-progressive.jpg', () => writeJpeg(coefficientsOf(grain(), '4:2:0', 92), { progressive: true }))
  files.push(
    { name: 'baseline JPEG 7744×5164 photo', bytes: baseline },
    { name: 'progressive JPEG 7744×5164 photo', bytes: progressive },
    { name: 'progressive JPEG 7744×5164 photo, wedding dress', bytes: progressive, wedding: true },
    { name: '12 MP phone photo 4032×3024, EXIF Orientation 6', bytes: await cached('phone-12mp-o6.jpg', phone12mp) },
  )
  return files
}
