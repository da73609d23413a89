/**
 * The sideways case as pictures: a full-length bride photographed in portrait, stored as a phone stores it (the
 * pixels sideways, EXIF Orientation 6, "turn a quarter clockwise to show"), tried on in a gown with a train through
 * the local engine and the wedding-dress steps of a git ref (default main) and of this tree.
 * `npx tsx scripts/orientation-pictures.ts [--against main] [--out test-artifacts/orientation]`
 * Writes small PNGs (360 px on the long side) of the photo as stored, as the shopper sees it, and each tree's
 * result, and the four side by side, and prints each tree's bridal verdict. The ref's code is taken with `git archive` into a temporary folder.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { drawGarment } from '../devstack/samples/garment-photo.ts'
import { drawShopper } from '../devstack/samples/shopper-photo.ts'
import { decodeImage, encodeJpeg, type RgbaImage } from '../shared/images/codecs/index.ts'
import { downscaleToFit, resizeArea } from '../shared/images/resize.ts'
import { encodeBase64 } from '../shared/images/base64.ts'
import { encodePng } from '../devstack/samples/png-encoder.ts'
import { exifSegment, exifWithOrientation, withJpegSegments } from '../tests/support/photo-metadata.ts'
import { storedPixels } from '../tests/support/jpeg-exif.ts'

const { values: args } = parseArgs({
  options: { against: { type: 'string', default: 'main' }, out: { type: 'string', default: 'test-artifacts/orientation' } },
})
const root = resolve(import.meta.dirname, '..')
const out = resolve(root, args.out)
const PREVIEW_SIDE = 360

const slate: [number, number, number] = [120, 128, 140]
const bride = drawShopper({ width: 720, height: 1200, background: slate, seed: 9 }).image
const stored = storedPixels(bride, 6)
const photo = withJpegSegments(encodeJpeg(stored, 92), [exifSegment(exifWithOrientation(6))])
const gown = encodePng(
  drawGarment({ kind: 'gown-with-train', color: [242, 236, 224], width: 480, height: 480, transparentBackground: true }).image,
)

interface Verdict {
  tree: string
  bridal: { applied: boolean; trainScore: number | null; reason: string }
  credits: number
  result: RgbaImage
}

/** Intake, then the wedding-dress pipeline on the local engine and local steps, as the tree at `dir` has them. */
async function tryOnIn(dir: string, tree: string): Promise<Verdict> {
  const load = (path: string) => import(pathToFileURL(join(dir, path)).href)
  const [{ intakeImage }, { defaultImageLimits }, { createLocalEngine }, { generateWithTrain }, pretreatment, scorer] = await Promise.all([
    load('shared/images/intake.ts'),
    load('shared/images/types.ts'),
    load('shared/engine/local/index.ts'),
    load('shared/bridal/pipeline.ts'),
    load('shared/bridal/local-pretreatment.ts'),
    load('shared/bridal/local-scorer.ts'),
  ])
  const deps = { limits: defaultImageLimits, fetchImage: async () => new Uint8Array(0) }
  const person = await intakeImage('userPhoto', `data:image/jpeg;base64,${encodeBase64(photo)}`, deps)
  const garment = await intakeImage('productImage', `data:image/png;base64,${encodeBase64(gown)}`, deps)
  const steps = { pretreatment: pretreatment.createLocalPretreatment(), scorer: scorer.createLocalTrainScorer() }
  const generated = await generateWithTrain(
    createLocalEngine(),
    steps,
    { person, garment, category: 'dress' },
    { threshold: 0.5, log: () => {}, tryOnId: 'orientation-pictures' },
  )
  const bridal = generated.bridal
  const credits =
    bridal.reason === 'train_rendered' || bridal.reason === 'score_unavailable' ? 2 : bridal.reason === 'train_score_low' ? 0 : 1
  return { tree, bridal, credits, result: decodeImage(generated.image.bytes, 'jpeg') }
}

function save(name: string, image: RgbaImage, side = PREVIEW_SIDE): string {
  const path = join(out, name)
  writeFileSync(path, encodePng(downscaleToFit(image, side)))
  return path
}

/** The pictures in a row on white, each shrunk to the same height, 12 px apart. */
function sideBySide(images: RgbaImage[], height: number): RgbaImage {
  const scaled = images.map((image) => resizeArea(image, Math.max(1, Math.round((image.width * height) / image.height)), height))
  const gap = 12
  const width = scaled.reduce((sum, image) => sum + image.width, 0) + gap * (scaled.length + 1)
  const sheet: RgbaImage = { width, height: height + 2 * gap, data: new Uint8Array(width * (height + 2 * gap) * 4).fill(255) }
  let left = gap
  for (const image of scaled) {
    for (let y = 0; y < image.height; y++) {
      sheet.data.set(image.data.subarray(y * image.width * 4, (y + 1) * image.width * 4), ((y + gap) * width + left) * 4)
    }
    left += image.width + gap
  }
  return sheet
}

const ref = execFileSync('git', ['rev-parse', '--short', args.against], { cwd: root }).toString().trim()
const refDir = mkdtempSync(join(tmpdir(), 'orientation-ref-'))
try {
  execFileSync('sh', ['-c', `git archive ${ref} shared | tar -x -C ${refDir}`], { cwd: root })
  symlinkSync(join(root, 'node_modules'), join(refDir, 'node_modules'))
  mkdirSync(out, { recursive: true })
  const before = await tryOnIn(refDir, `${args.against} (${ref})`)
  const after = await tryOnIn(root, 'this tree')
  const written = [
    save('1-stored-pixels.png', stored),
    save('2-as-the-shopper-sees-it.png', bride),
    save(`3-before-${args.against.replace(/[^A-Za-z0-9._-]/g, '_')}.png`, before.result),
    save('4-after.png', after.result),
    save('before-after.png', sideBySide([stored, bride, before.result, after.result], 300), Number.POSITIVE_INFINITY),
  ]
  for (const v of [before, after]) {
    console.log(
      `${v.tree}: result ${v.result.width}×${v.result.height}, bridal ${JSON.stringify(v.bridal)}, ${v.credits} credit(s) charged`,
    )
  }
  console.log(`photo sent: ${stored.width}×${stored.height} stored, Orientation 6, shown ${bride.width}×${bride.height}`)
  for (const path of written) console.log(`wrote ${path}`)
} finally {
  rmSync(refDir, { recursive: true, force: true })
}
