/**
 * `npx tsx scripts/tune-quality.ts --seeds 1-100`: the measured quality checks (shared/quality/measure.ts) against the
 * oracle (tests/support/scenes/oracle.ts) on tuning scenes only (tests/support/scenes/held-out.ts refuses any other
 * seed). For each scene it checks the local engine's result, run in this process, and hand-made composites: a good one
 * (the product's lit colours painted over the regions its category covers) and broken ones (a far colour, shifted
 * sideways, the garment left off, the face painted over, the garment moved off the body). It prints how often the
 * check and the oracle disagree: broken by the oracle but passed by the check (goal 0), good by the oracle but failed
 * by the check (goal at most 5%).
 *
 *   --seeds a-b | a,b,c   tuning seeds (default 1-60)
 *   --list                one line per disagreement
 *   --measures            print the check's measures on each disagreement
 *   --cache DIR           keep the engine's results in DIR (JPEG per seed), so a rerun after a threshold change is quicker
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { decodeImage } from '../shared/images/codecs/index.ts'
import type { RgbaImage } from '../shared/images/codecs/raster.ts'
import { createLocalEngine } from '../shared/engine/local/index.ts'
import type { InputImage } from '../shared/engine/types.ts'
import { measureResult } from '../shared/quality/measure.ts'
import { farColour, paintedComposite, paintedParts, received, shifted } from '../tests/support/scenes/composites.ts'
import { SETS, styleOf } from '../tests/support/scenes/held-out.ts'
import { scene, type Scene } from '../tests/support/scenes/index.ts'
import { judge } from '../tests/support/scenes/oracle.ts'
import { PART } from '../tests/support/scenes/types.ts'
import { checkCategoryOf } from './tune-quality-categories.ts'

function parseSeeds(text: string): number[] {
  const seeds = text.includes('-')
    ? (() => {
        const [a, b] = text.split('-').map(Number)
        return Array.from({ length: b - a + 1 }, (_, i) => a + i)
      })()
    : text.split(',').map(Number)
  for (const s of seeds) styleOf(SETS.tuning, s) // throws for any seed outside the tuning set
  return seeds
}

const args = process.argv.slice(2)
const seedsAt = args.indexOf('--seeds')
const seeds = parseSeeds(seedsAt >= 0 ? args[seedsAt + 1] : '1-60')
const list = args.includes('--list')
const showMeasures = args.includes('--measures')
const cacheAt = args.indexOf('--cache')
const cache = cacheAt >= 0 ? args[cacheAt + 1] : undefined
if (cache) mkdirSync(cache, { recursive: true })

interface Tally {
  judged: number
  broken: number
  brokenPassed: number
  good: number
  goodFailed: number
}
const tallies = new Map<string, Tally>()
const times: number[] = []
const engine = createLocalEngine({ maxOutputSide: 1024 })

function input(photo: Scene['shopper']): InputImage {
  return { bytes: photo.bytes, format: photo.format, width: photo.width, height: photo.height }
}

function record(name: string, sc: Scene, result: RgbaImage, product: RgbaImage, expectBroken?: boolean) {
  const verdict = judge(sc, result)
  const started = performance.now()
  const check = measureResult({
    shopper: received(sc),
    product,
    result,
    ...checkCategoryOf(sc.truth.product.kind),
    weddingDress: sc.request.productType === 'wedding-dress',
  })
  times.push(performance.now() - started)
  const tally = tallies.get(name) ?? { judged: 0, broken: 0, brokenPassed: 0, good: 0, goodFailed: 0 }
  tallies.set(name, tally)
  // A hand-made composite the oracle disputes (a good one it calls broken, a broken one it passes) is not counted.
  if (expectBroken !== undefined && expectBroken !== verdict.broken) return
  tally.judged++
  if (verdict.broken) tally.broken++
  if (verdict.broken && check.passed) tally.brokenPassed++
  if (!verdict.broken) tally.good++
  if (!verdict.broken && !check.passed) tally.goodFailed++
  const wrong = (verdict.broken && check.passed) || (!verdict.broken && !check.passed)
  if (wrong && list) {
    const what = verdict.broken ? `BROKEN passed (oracle: ${verdict.issues.join(',')})` : `GOOD failed (check: ${check.issues.join(',')})`
    console.log(`${sc.style} ${sc.seed} ${name}: ${what} — ${sc.description}`)
    if (showMeasures)
      console.log('   check', JSON.stringify(roundAll(check.measures)), '\n   oracle', JSON.stringify(roundAll(verdict.measures)))
  }
}

const roundAll = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, Math.round(v * 100) / 100]))

for (const seed of seeds) {
  const sc = scene(styleOf(SETS.tuning, seed), seed)
  const product = decodeImage(sc.product.bytes, sc.product.format)
  const cached = cache && join(cache, `${seed}.jpg`)
  let bytes: Uint8Array | undefined = cached && existsSync(cached) ? new Uint8Array(readFileSync(cached)) : undefined
  if (!bytes && !(cached && existsSync(`${cached}.none`))) {
    const outcome = await engine.generate({
      person: input(sc.shopper),
      garment: input(sc.product),
      category: undefined,
      clothingType: sc.request.clothingType,
      ...(sc.request.productType === 'wedding-dress' && sc.truth.product.hasTrain && { train: { length: 0.25, spread: 1.6 } }),
    })
    if (outcome.kind === 'generated' && 'bytes' in outcome.image) bytes = outcome.image.bytes
    if (cached) writeFileSync(bytes ? cached : `${cached}.none`, bytes ?? '')
  }
  if (bytes) record('engine', sc, decodeImage(bytes, 'jpeg'), product)
  if (!sc.truth.shopper.fullLength) continue
  const good = paintedComposite(sc)
  record('painted', sc, good, product, false)
  record('far-colour', sc, paintedComposite(sc, { colours: [farColour(sc)] }), product, true)
  record('shifted', sc, shifted(good, Math.round(0.05 * sc.shopper.width)), product, true)
  record('unchanged', sc, received(sc), product, true)
  record('face-painted', sc, paintedParts(good, sc, [PART.face], farColour(sc)), product, true)
  record('off-body', sc, paintedComposite(sc, { offsetX: 0.25 * sc.truth.shopper.figureHeight }), product, true)
}

let brokenPassed = 0
let good = 0
let goodFailed = 0
console.log('case          judged  broken  broken-passed  good  good-failed')
for (const [name, t] of tallies) {
  brokenPassed += t.brokenPassed
  good += t.good
  goodFailed += t.goodFailed
  console.log(
    `${name.padEnd(13)} ${String(t.judged).padStart(6)}  ${String(t.broken).padStart(6)}  ${String(t.brokenPassed).padStart(13)}  ${String(t.good).padStart(4)}  ${String(t.goodFailed).padStart(11)}`,
  )
}
times.sort((a, b) => a - b)
console.log(
  `total: broken passed by the check ${brokenPassed} (goal 0); good failed by the check ${goodFailed}/${good} ` +
    `(${((100 * goodFailed) / Math.max(1, good)).toFixed(1)}%, goal ≤ 5%); check median ${times[times.length >> 1]?.toFixed(1)} ms`,
)
