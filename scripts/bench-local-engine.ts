/**
 * Time and memory of one local try-on per person-photo size: `npx tsx scripts/bench-local-engine.ts`.
 * Each size runs in a child process of its own, so its peak RSS is not hidden by drawing the test photos
 * or by a larger size before it.
 */
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { createLocalEngine } from '../shared/engine/local/index.ts'
import type { InputImage } from '../shared/engine/types.ts'
import { readImageHeader } from '../shared/images/sniff.ts'
import { asInput, makeGarmentPhoto, makeShopperPhoto } from '../tests/support/images.ts'

/** Person photos: three camera-like sizes as JPEG, then the 40 MP limit (7744 × 5164) as JPEG and as PNG. */
const cases: { width: number; height: number; format: 'jpeg' | 'png' }[] = [
  { width: 600, height: 900, format: 'jpeg' },
  { width: 1200, height: 1800, format: 'jpeg' },
  { width: 3000, height: 4500, format: 'jpeg' },
  { width: 7744, height: 5164, format: 'jpeg' },
  { width: 7744, height: 5164, format: 'png' },
]
const runs = 7
const mebibyte = 1024 * 1024

interface Job {
  person: InputImage
  garment: InputImage
}

interface Measurement {
  milliseconds: number[]
  output: string
  baselineRss: number
  peakRss: number
  retained: number
}

/** Child: one warm-up, then the timed runs; memory is read with the collector run first, so only live data counts. */
async function measure({ person, garment }: Job): Promise<Measurement> {
  const gc = globalThis.gc ?? (() => undefined)
  const engine = createLocalEngine()
  const live = async () => {
    // Array buffer memory is released by a sweeper after the collection: give it a moment, then collect again.
    gc()
    await new Promise((resolve) => setTimeout(resolve, 100))
    gc()
    const usage = process.memoryUsage()
    return usage.heapUsed + usage.arrayBuffers
  }
  const before = await live()
  const baselineRss = process.resourceUsage().maxRSS * 1024
  const request = { person, garment, category: undefined }
  const warmUp = await engine.generate(request)
  if (warmUp.kind !== 'generated') throw new Error(`the engine answered ${warmUp.kind}: ${warmUp.reason}`)
  const milliseconds: number[] = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    await engine.generate(request)
    milliseconds.push(performance.now() - started)
  }
  const header = readImageHeader(warmUp.image.bytes)
  return {
    milliseconds,
    output: `${header?.width}x${header?.height} ${(warmUp.image.bytes.length / 1024).toFixed(0)} KB`,
    baselineRss,
    peakRss: process.resourceUsage().maxRSS * 1024,
    retained: (await live()) - before,
  }
}

/**
 * Forked before any photo is drawn: Linux carries the RSS of the forked copy into the child's maxRSS,
 * and a parent holding a 3000x4500 canvas would set every child's "peak".
 */
function startChild(): (job: Job) => Promise<Measurement> {
  const child = fork(fileURLToPath(import.meta.url), ['--child'], {
    execArgv: [...process.execArgv, '--expose-gc'],
    serialization: 'advanced',
  })
  const result = new Promise<Measurement>((resolve, reject) => {
    child.once('message', (message) => resolve(message as Measurement))
    child.once('error', reject)
    child.once('exit', (code) => code === 0 || reject(new Error(`benchmark child exited with ${code}`)))
  })
  return (job) => {
    child.send(job)
    return result
  }
}

if (process.argv.includes('--child')) {
  process.once('message', async (job) => {
    process.send!(await measure(job as Job), () => process.exit(0))
  })
} else {
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]
  const children = cases.map(() => startChild())
  const garment = makeGarmentPhoto({ kind: 'tshirt', color: [200, 30, 40], width: 1000, height: 1000 })
  console.log(`local engine, person photo + ${garment.width}x${garment.height} JPEG t-shirt, median of ${runs} runs after a warm-up`)
  console.log(
    `${'person'.padEnd(16)}${'input'.padStart(9)}${'output'.padStart(18)}${'median'.padStart(10)}${'min-max'.padStart(15)}` +
      `${'peak RSS'.padStart(11)}${'over base'.padStart(11)}${'retained'.padStart(10)}`,
  )
  for (const [index, { width, height, format }] of cases.entries()) {
    const person = makeShopperPhoto({ width, height, format })
    const result = await children[index]({ person: asInput(person), garment: asInput(garment) })
    const ms = result.milliseconds
    console.log(
      `${`${width}x${height} ${format.toUpperCase()}`.padEnd(16)}` +
        `${`${(person.bytes.length / 1024).toFixed(0)} KB`.padStart(9)}` +
        `${result.output.padStart(18)}` +
        `${`${median(ms).toFixed(0)} ms`.padStart(10)}` +
        `${`${Math.min(...ms).toFixed(0)}-${Math.max(...ms).toFixed(0)} ms`.padStart(15)}` +
        `${`${(result.peakRss / mebibyte).toFixed(0)} MB`.padStart(11)}` +
        `${`+${((result.peakRss - result.baselineRss) / mebibyte).toFixed(0)} MB`.padStart(11)}` +
        `${`${(result.retained / mebibyte).toFixed(1)} MB`.padStart(10)}`,
    )
  }
}
