/**
 * `npm run eval:quality`: seeded scenes through the real service path (the dev stack in this process, on its
 * embedded PGlite, the local engine), each delivered image judged by the oracle against the scene's ground truth
 * (docs/quality-evaluation.md), and the figures the quality work is held to.
 *
 *   --set tuning|held-out|held-out-2   the declared set (tests/support/scenes/held-out.ts); tuning by default
 *   --seeds 1-250 | 3,8,21   tuning seeds to run (default 1-250); the held-out set always runs whole
 *   --json                   the figures (and, for tuning, every scene) as JSON
 *   --sheet DIR              a contact sheet per scene: shopper | product | result | verdicts (tuning only)
 *   --save DIR               each delivered image as served, DIR/<seed>.img, to measure again offline (tuning only)
 *   --list                   one line per scene that missed a goal (tuning only)
 *   --key test|live          the key's mode (default test; a live key meets TRYON_ENGINE=local here)
 *   --level off|measured|judge  the key's check level (admin keys quality; default measured): the service as it bills
 *                            with the check on. At judge, a live key meets a judge only if the environment sets one
 *   --concurrency N          requests in flight (default 2)
 *   --draw                   only draw the scenes, and print the CPU time each style takes to draw one
 *
 * The held-out set is measured once, at the end, and prints its totals only: no scene of it is listed, drawn or run alone.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { startDevStack } from '../devstack/stack.ts'
import { decodeImage } from '../shared/images/codecs/index.ts'
import { readImageHeader } from '../shared/images/sniff.ts'
import { createKey } from '../tests/support/database.ts'
import { failedCheck, qualityOf, report, reportByKind, summarise, goals, type Outcome } from '../tests/support/scenes/evaluation.ts'
import { SETS, styleOf, type SceneSet } from '../tests/support/scenes/held-out.ts'
import { scene, type Scene } from '../tests/support/scenes/index.ts'
import { judge } from '../tests/support/scenes/oracle.ts'
import { contactSheet, type SheetTone } from '../tests/support/scenes/sheet.ts'

class UsageError extends Error {}

const LEVELS = ['off', 'measured', 'judge'] as const
type QualityLevel = (typeof LEVELS)[number]

interface Options {
  set: SceneSet
  seeds: number[]
  json: boolean
  sheet?: string
  save?: string
  list: boolean
  keyMode: 'test' | 'live'
  level: QualityLevel
  concurrency: number
  drawOnly: boolean
}

const DEFAULT_TUNING_SEEDS = 250

function parseArgs(argv: string[]): Options {
  let setName = 'tuning'
  let seedText: string | undefined
  const options: Omit<Options, 'set' | 'seeds'> = {
    json: false,
    list: false,
    keyMode: 'test',
    level: 'measured',
    concurrency: 2,
    drawOnly: false,
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const value = () => {
      const v = argv[++i]
      if (v === undefined) throw new UsageError(`${arg} needs a value`)
      return v
    }
    if (arg === '--set') setName = value()
    else if (arg === '--seeds') seedText = value()
    else if (arg === '--json') options.json = true
    else if (arg === '--sheet') options.sheet = value()
    else if (arg === '--save') options.save = value()
    else if (arg === '--list') options.list = true
    else if (arg === '--draw') options.drawOnly = true
    else if (arg === '--key') {
      const mode = value()
      if (mode !== 'test' && mode !== 'live') throw new UsageError('--key is test or live')
      options.keyMode = mode
    } else if (arg === '--level') {
      const level = value()
      if (!LEVELS.includes(level as QualityLevel)) throw new UsageError('--level is off, measured or judge')
      options.level = level as QualityLevel
    } else if (arg === '--concurrency') {
      options.concurrency = Number(value())
      if (!Number.isSafeInteger(options.concurrency) || options.concurrency < 1 || options.concurrency > 16)
        throw new UsageError('--concurrency is 1 to 16')
    } else throw new UsageError(`unknown argument ${arg}`)
  }
  if (setName !== 'tuning' && setName !== 'held-out' && setName !== 'held-out-2')
    throw new UsageError('--set is tuning, held-out or held-out-2')
  const set = SETS[setName]
  if (set.name !== 'tuning') {
    // Looking at held-out scenes one by one would make them tuning scenes.
    if (seedText || options.sheet || options.save || options.list || options.drawOnly)
      throw new UsageError(`the ${set.name} set runs whole and prints totals only: no --seeds, --sheet, --save, --list or --draw`)
    return { ...options, set, seeds: range(set.first, set.last) }
  }
  const seeds = seedText ? parseSeeds(seedText) : range(set.first, set.first + DEFAULT_TUNING_SEEDS - 1)
  const outside = seeds.find((s) => s < set.first || s > set.last)
  if (outside !== undefined) throw new UsageError(`seed ${outside} is not a tuning seed (${set.first}-${set.last})`)
  return { ...options, set, seeds }
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

function parseSeeds(text: string): number[] {
  return text.split(',').flatMap((part) => {
    const [from, to] = part.split('-').map(Number)
    if (!Number.isSafeInteger(from) || (to !== undefined && (!Number.isSafeInteger(to) || to < from || to - from > 100_000)))
      throw new UsageError(`--seeds takes ranges and lists such as 1-250 or 3,8,21, not ${text}`)
    return to === undefined ? [from] : range(from, to)
  })
}

/**
 * One HTTP request on a connection of its own. The dev stack runs in this process, so a CPU-bound step blocks the
 * client's and the server's timers alike; fetch's pooled keep-alive connections then met the server's idle timeout
 * and were reset (a third of the requests under a load of 14). A fresh connection each time cannot race it.
 */
function request(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: Uint8Array }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: new Uint8Array(Buffer.concat(chunks)) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(options.body)
  })
}

const dataUri = (photo: Scene['shopper']) => `data:image/${photo.format};base64,${Buffer.from(photo.bytes).toString('base64')}`

async function runScene(
  functionUrl: string,
  apiKey: string,
  s: Scene,
): Promise<{ outcome: Outcome; result: ReturnType<typeof decodeImage> | null; image?: Uint8Array }> {
  const started = performance.now()
  const response = await request(functionUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': apiKey },
    body: JSON.stringify({ userPhoto: dataUri(s.shopper), productImage: dataUri(s.product), ...s.request }),
  })
  const body = (() => {
    try {
      return JSON.parse(Buffer.from(response.body).toString('utf8')) as Record<string, unknown>
    } catch {
      return null
    }
  })()
  const outcome = sceneOutcome(s, response.status)
  let result: ReturnType<typeof decodeImage> | null = null
  let image: Uint8Array | undefined
  if (response.status === 200 && body) {
    outcome.creditsCharged = typeof body.creditsCharged === 'number' ? body.creditsCharged : undefined
    outcome.bridal = body.bridal as Outcome['bridal']
    outcome.quality = qualityOf(body)
    image = (await request(String(body.resultUrl))).body
    const format = readImageHeader(image)?.format
    try {
      if (!format) throw new Error('not an image')
      result = decodeImage(image, format)
      outcome.judgement = judge(s, result)
    } catch {
      outcome.judgement = { broken: true, issues: ['result_unreadable'], measures: {} }
    }
  } else {
    outcome.errorCode = typeof body?.errorCode === 'string' ? body.errorCode : undefined
  }
  outcome.ms = performance.now() - started
  return { outcome, result, image }
}

/** What the scene is, with the answer's status: the rest of the outcome is filled in from the answer. */
function sceneOutcome(s: Scene, status: number): Outcome {
  return {
    style: s.style,
    seed: s.seed,
    kind: s.truth.product.kind,
    hasTrain: s.truth.product.hasTrain,
    wedding: s.request.productType === 'wedding-dress',
    fullLength: s.truth.shopper.fullLength,
    status,
    ms: 0,
    description: s.description,
  }
}

function noAnswer(s: Scene, cause: string): Outcome {
  return { ...sceneOutcome(s, 599), errorCode: `no_answer_${cause}` }
}

function sheetFor(s: Scene, o: Outcome, result: ReturnType<typeof decodeImage> | null): Uint8Array {
  const tone: SheetTone =
    o.status !== 200 ? 'failed' : o.judgement?.broken ? ((o.creditsCharged ?? 0) > 0 ? 'broken-charged' : 'refunded') : 'good'
  const q = o.quality
  const m = o.judgement?.measures ?? {}
  const lines = [
    `${s.style} ${s.seed}: ${s.truth.product.kind} ${s.request.productType ?? 'standard'}`,
    `${s.truth.shopper.framing} ${s.truth.shopper.pose} ${s.shopper.width}x${s.shopper.height}, ${s.truth.product.convention}`,
    o.status === 200 ? `200, charged ${o.creditsCharged}` : `${o.status} ${o.errorCode ?? ''}`,
    o.bridal ? `bridal ${o.bridal.reason} ${o.bridal.trainScore?.toFixed(2) ?? 'null'}` : '',
    q
      ? `check: ${q.checked ? (q.passed ? 'passed' : 'failed') : 'not run'} ${q.score?.toFixed(2) ?? ''} ${q.issues.join(' ')}`
      : 'check: none in the answer',
    o.judgement ? `oracle: ${o.judgement.broken ? `broken ${o.judgement.issues.join(' ')}` : 'good'}` : '',
    ...Object.entries(m)
      .filter(([k]) => k.startsWith('cover.') || k === 'headDeltaE' || k === 'offBody' || k === 'colourDeltaE')
      .map(([k, v]) => `${k} ${v.toFixed(2)}`),
  ].filter(Boolean)
  return contactSheet([s.shopper.pixels, s.product.pixels, result], lines, tone)
}

/** CPU milliseconds to draw each scene (this thread only: no service runs), by style. */
function drawOnly(options: Options): void {
  const byStyle = new Map<string, number[]>()
  for (const seed of options.seeds) {
    const style = styleOf(options.set, seed)
    const before = process.cpuUsage()
    scene(style, seed)
    const used = process.cpuUsage(before)
    byStyle.set(style, [...(byStyle.get(style) ?? []), (used.user + used.system) / 1000])
  }
  console.log(`scenes ${summariseSeeds(options.seeds)} drawn, CPU ms per scene (load ${loadavg()[0].toFixed(2)}):`)
  for (const [style, ms] of byStyle) {
    const sorted = [...ms].sort((a, b) => a - b)
    const mean = ms.reduce((a, b) => a + b, 0) / ms.length
    console.log(
      `  ${style.padEnd(7)} mean ${mean.toFixed(0)}, median ${sorted[sorted.length >> 1].toFixed(0)}, worst ${sorted[sorted.length - 1].toFixed(0)} (${ms.length} scenes)`,
    )
  }
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2))
  if (options.drawOnly) return drawOnly(options)
  const dataDir = await mkdtemp(join(tmpdir(), 'tryon-eval-'))
  const stack = await startDevStack({
    env: { TRYON_ENGINE: 'local', TRYON_LOCAL_QUEUE: '64' },
    dataDir,
    port: 0,
    dbPort: 0,
    log: () => {},
  })
  const started = performance.now()
  const cpuBefore = process.cpuUsage()
  const outcomes: Outcome[] = []
  let generationMs = 0
  try {
    const key = await createKey(stack.sql, { credits: 10_000_000, mode: options.keyMode })
    // Set explicitly: what a key without a level of its own gets is the service's default, which may change.
    await stack.sql`select tryon.set_key_quality(${key.keyId}::uuid, ${options.level})`
    for (const dir of [options.sheet, options.save]) if (dir) mkdirSync(dir, { recursive: true })
    const queue = [...options.seeds]
    const worker = async () => {
      for (let seed = queue.shift(); seed !== undefined; seed = queue.shift()) {
        const drawStarted = performance.now()
        const s = scene(styleOf(options.set, seed), seed)
        generationMs += performance.now() - drawStarted
        const { outcome, result, image } = await runScene(stack.functionUrl, key.apiKey, s).catch((error: Error) => {
          // No answer at all (the connection reset): counted as a failure of the service, named in the list.
          const cause = (error.cause as { code?: string } | undefined)?.code ?? error.message
          process.stderr.write(`  ${s.style} ${seed}: no answer (${cause})\n`)
          return { outcome: noAnswer(s, cause), result: null, image: undefined }
        })
        outcomes.push(outcome)
        if (options.sheet) writeFileSync(join(options.sheet, `${s.style}-${seed}.png`), sheetFor(s, outcome, result))
        if (options.save && image) writeFileSync(join(options.save, `${seed}.img`), image)
        if (!options.json && outcomes.length % 25 === 0) process.stderr.write(`  ${outcomes.length}/${options.seeds.length} scenes\n`)
      }
    }
    await Promise.all(Array.from({ length: options.concurrency }, worker))
  } finally {
    await stack.stop()
    await rm(dataDir, { recursive: true, force: true })
  }
  outcomes.sort((a, b) => a.seed - b.seed)
  const figures = summarise(outcomes)
  const cpu = process.cpuUsage(cpuBefore)
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
  const run = {
    date: new Date().toISOString(),
    commit,
    set: options.set.name,
    seeds: options.set.name !== 'tuning' ? `${options.set.first}-${options.set.last}` : summariseSeeds(options.seeds),
    keyMode: options.keyMode,
    level: options.level,
    seconds: Math.round((performance.now() - started) / 1000),
    cpuSeconds: Math.round((cpu.user + cpu.system) / 1e6),
    msPerSceneDrawn: Math.round(generationMs / outcomes.length),
    loadAverage: loadavg()[0].toFixed(2),
  }
  if (options.json) {
    const scenes = options.set.name === 'tuning' ? outcomes : undefined
    const byKind = {
      standard: goals(summarise(outcomes.filter((o) => !o.wedding))),
      weddingDress: goals(summarise(outcomes.filter((o) => o.wedding))),
    }
    console.log(JSON.stringify({ run, figures, goals: goals(figures), byKind, scenes }, null, 2))
    return
  }
  console.log(`\n${run.set} scenes ${run.seeds}, ${run.keyMode} key at level ${run.level}, commit ${run.commit}, ${run.date}`)
  console.log(
    `${run.seconds} s (${run.cpuSeconds} s CPU in this process, load ${run.loadAverage}); a scene drawn in ${run.msPerSceneDrawn} ms\n`,
  )
  console.log(report(figures))
  console.log(`\n${reportByKind(outcomes)}`)
  if (options.list) {
    console.log('')
    for (const o of outcomes) {
      const reasons = [
        o.judgement?.broken && (o.creditsCharged ?? 0) > 0
          ? `broken and charged ${o.creditsCharged} (${o.judgement.issues.join(', ')})`
          : '',
        o.judgement && !o.judgement.broken && failedCheck(o) ? `good but failed the check (${o.quality!.issues.join(', ')})` : '',
        o.fullLength && (o.status >= 500 || o.errorCode === 'person_not_found') ? `${o.status} ${o.errorCode}` : '',
        o.fullLength && o.wedding && o.hasTrain && o.bridal?.applied !== true
          ? `train not applied (${o.bridal?.reason ?? o.errorCode})`
          : '',
        o.fullLength && o.wedding && !o.hasTrain && o.bridal?.applied === true ? 'no train, applied as one' : '',
      ].filter(Boolean)
      if (reasons.length) console.log(`${o.style} ${o.seed}: ${reasons.join('; ')} :: ${o.description}`)
    }
  }
}

function summariseSeeds(seeds: number[]): string {
  const sorted = [...seeds].sort((a, b) => a - b)
  const contiguous = sorted.every((s, i) => i === 0 || s === sorted[i - 1] + 1)
  return contiguous ? `${sorted[0]}-${sorted[sorted.length - 1]}` : sorted.join(',')
}

await main().catch((error) => {
  if (!(error instanceof UsageError)) throw error
  console.error(`eval:quality: ${error.message}`)
  process.exit(2)
})
