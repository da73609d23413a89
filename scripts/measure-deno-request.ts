/**
 * Peak memory and CPU time of one request on Deno, against Supabase's per-request limits (256 MB, 2 s CPU):
 * `npx tsx scripts/measure-deno-request.ts [--runs 3] [--sizes 2800x4200,1200x1800]`.
 *
 * Runs the Supabase entry as deployed (its own deno.json, no package.json) against a fresh database on the local
 * Postgres and a local Storage stand-in. Each measured request gets a fresh Deno process (after one small warm-up
 * request), so nothing an earlier request left on the heap counts; the script reads the process's counters in /proc:
 * CPU time of its main thread (the isolate running our code) and of all its threads (adds V8's GC and compiler
 * threads and the I/O runtime), and its peak resident memory (VmHWM, reset before each request). A test key's
 * `X-Tryon-Scenario: generation_failed` skips the engine, which separates the service's own work (body, base64
 * or URL fetch, checks, two database calls) from the local engine's. The photos are synthetic camera-like JPEGs
 * with sensor grain, cached under test-artifacts/.
 *
 * `--providers` measures instead one live-key request per remote engine (FASHN, Vertex, Gemini; `--engines fashn`
 * for fewer) against local fakes of their APIs on 127.0.0.1 (tests/support/provider-fakes.ts, each speaking its
 * provider's documented wire format) that answer at once, with the largest photos as base64 and as URLs: what
 * reading the body, preparing the inputs for a provider (re-encoding, base64, the JSON body), taking its result
 * back (base64 in the answer, or FASHN's output URL) and storing it cost in memory.
 *
 * `--hostile` sends instead each file of the hostile corpus (scripts/bench/hostile-corpus.ts) as a test key's shopper
 * photo, in a fresh process each, and adds the longest wait of unrelated requests (CORS preflights, answered without
 * the database) sent one after another while it is worked on: how long the isolate's event loop was held. HOSTILE_ONLY=regexp sends the files whose name matches it.
 */
import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { drawGarment } from '../devstack/samples/garment-photo.ts'
import { random } from '../devstack/samples/drawing.ts'
import { drawShopper } from '../devstack/samples/shopper-photo.ts'
import { encodeJpeg } from '../shared/images/codecs/jpeg-encoder.ts'
import type { RgbaImage } from '../shared/images/codecs/raster.ts'
import { DEFAULT_MODELS } from '../shared/engine/providers/settings.ts'
import { encodeBase64 } from '../shared/images/base64.ts'
import { hostileCorpus } from './bench/hostile-corpus.ts'
import { createKey, createTestDatabase } from '../tests/support/database.ts'
import { startFakeStorage } from '../tests/support/fake-storage.ts'
import { startImageServer } from '../tests/support/image-server.ts'
import {
  fashn,
  FASHN_PREDICTION,
  gemini,
  geminiPath,
  startFakeServer,
  startFashnFake,
  vertex,
  vertexPredictPath,
} from '../tests/support/provider-fakes.ts'
import { TEST_CLIENT_ADDRESS_SECRET, freePort, startProcess } from '../tests/support/process.ts'

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    sizes: { type: 'string', default: '3100x4650,2000x3000,1200x1800' },
    providers: { type: 'boolean', default: false },
    hostile: { type: 'boolean', default: false },
    engines: { type: 'string', default: 'fashn,vertex,gemini' },
  },
})
const runs = Number(values.runs)
const sizes = values.sizes.split(',').map((s) => s.split('x').map(Number) as [number, number])
const MAX_IMAGE_BYTES = 10 * 1024 * 1024
const MB = 1024 * 1024
const CLOCK_TICKS_PER_SECOND = 100

/** A camera-like JPEG: the drawing plus sensor grain, at the highest quality that stays under `maxBytes`. */
function cameraJpeg(image: RgbaImage, seed: number, maxBytes: number): Uint8Array {
  const next = random(seed)
  for (let i = 0; i < image.data.length; i++) {
    if ((i & 3) !== 3) image.data[i] = Math.max(0, Math.min(255, image.data[i] + (next() - 0.5) * 96))
  }
  for (let quality = 99; quality > 50; quality -= 2) {
    const bytes = encodeJpeg(image, quality)
    if (bytes.byteLength <= maxBytes) return bytes
  }
  throw new Error('could not fit the photo under the size limit')
}

async function photos(width: number, height: number): Promise<{ shopper: Uint8Array; garment: Uint8Array }> {
  const dir = `test-artifacts/measure/${width}x${height}`
  if (existsSync(`${dir}/garment.jpg`)) {
    return { shopper: await readFile(`${dir}/shopper.jpg`), garment: await readFile(`${dir}/garment.jpg`) }
  }
  console.error(`drawing ${width}x${height} photos (cached in ${dir})…`)
  // Just under the 10 MB limit per photo; two of them as base64 then make a 27 MB body, under the 30 MB one.
  const budget = MAX_IMAGE_BYTES - 64 * 1024
  const shopper = cameraJpeg(drawShopper({ width, height }).image, 3, budget)
  const side = Math.round(Math.sqrt(width * height * 0.75))
  const garment = cameraJpeg(drawGarment({ kind: 'jacket', color: [120, 40, 40], width: side, height: side }).image, 4, budget)
  await mkdir(dir, { recursive: true })
  await writeFile(`${dir}/shopper.jpg`, shopper)
  await writeFile(`${dir}/garment.jpg`, garment)
  return { shopper, garment }
}

interface Counters {
  mainCpu: number
  allCpu: number
  rss: number
  peakRss: number
}

async function countersOf(pid: number): Promise<Counters> {
  const cpuOf = async (path: string) => {
    // Fields after the command name (which may contain spaces): utime and stime are the 12th and 13th.
    const fields = (await readFile(path, 'utf8')).split(') ')[1].split(' ')
    return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND) * 1000
  }
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024
  return {
    mainCpu: await cpuOf(`/proc/${pid}/task/${pid}/stat`),
    allCpu: await cpuOf(`/proc/${pid}/stat`),
    rss: kb('VmRSS'),
    peakRss: kb('VmHWM'),
  }
}

interface Measurement {
  status: number
  /** The longest wait of an unrelated request sent while this one was worked on (--hostile). */
  probeMs?: number
  answer?: string
  mainCpuMs: number
  allCpuMs: number
  wallMs: number
  rssBeforeMb: number
  peakRssMb: number
  steps: Record<string, number>
}

async function startDeno(env: Record<string, string>): Promise<{ url: string; pid: number; output(): string; stop(): Promise<void> }> {
  const port = await freePort()
  const deno = startProcess(
    'node_modules/.bin/deno',
    ['run', '--allow-all', '--no-prompt', '--config', 'supabase/functions/tryon-api/deno.json', 'supabase/functions/tryon-api/index.ts'],
    {
      ...Object.fromEntries(
        Object.entries(process.env).filter(([name]) =>
          /^(PATH|HOME|DENO_DIR|NODE_EXTRA_CA_CERTS|NPM_CONFIG_REGISTRY|HTTPS?_PROXY|NO_PROXY)$/i.test(name),
        ),
      ),
      DENO_NO_PACKAGE_JSON: '1',
      NO_COLOR: '1',
      TRYON_ALLOW_PRIVATE_IMAGE_HOSTS: '1',
      PORT: String(port),
      ...env,
    },
  )
  await deno.waitFor(/Listening on/, 120_000)
  return { url: `http://127.0.0.1:${port}/tryon-api`, pid: deno.child.pid!, output: deno.output, stop: deno.stop }
}

async function main() {
  const db = await createTestDatabase('postgres')
  const storage = await startFakeStorage()
  const key = await createKey(db.sql, { credits: 10_000, mode: 'test' })
  const env = {
    DATABASE_URL: db.url,
    SUPABASE_URL: storage.url,
    SUPABASE_SECRET_KEYS: JSON.stringify({ default: storage.key }),
    TRYON_CLIENT_ADDRESS_SECRET: TEST_CLIENT_ADDRESS_SECRET,
  }
  const small = await photos(240, 420)
  const warmUp = { userPhoto: encodeBase64(small.shopper), productImage: encodeBase64(small.garment), clothingType: 'Jacket' }
  const results: { label: string; image: string; measurements: Measurement[] }[] = []

  /** One request in a fresh Deno process, after a small warm-up request compiled the code paths. */
  async function measure(
    body: unknown,
    scenario?: string,
    live?: { env: Record<string, string>; apiKey: string },
    probe = false,
  ): Promise<Measurement> {
    const deno = await startDeno({ ...env, ...live?.env })
    try {
      const post = (payload: unknown, headers: Record<string, string> = {}) =>
        fetch(deno.url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-API-Key': live?.apiKey ?? key.apiKey, ...headers },
          body: JSON.stringify(payload),
        }).then(async (response) => (await response.arrayBuffer(), response.status))
      if ((await post(warmUp)) !== 200) throw new Error(`warm-up failed:\n${deno.output()}`)
      await writeFile(`/proc/${deno.pid}/clear_refs`, '5') // resets VmHWM to the current RSS
      const logStart = deno.output().length
      const before = await countersOf(deno.pid)
      const started = performance.now()
      let settled = false
      let answer = ''
      const sent = fetch(deno.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'X-API-Key': live?.apiKey ?? key.apiKey,
          ...(scenario ? { 'X-Tryon-Scenario': scenario } : {}),
        },
        body: JSON.stringify(body),
      })
        .then(async (response) => {
          answer = (await response.text()).slice(0, 90)
          return response.status
        })
        .finally(() => {
          settled = true
        })
      const probes = (async () => {
        let longest = 0
        while (probe && !settled) {
          const at = performance.now()
          await fetch(deno.url, {
            method: 'OPTIONS',
            headers: { Origin: 'https://shop.example', 'Access-Control-Request-Method': 'POST' },
          }).then((r) => r.arrayBuffer())
          longest = Math.max(longest, performance.now() - at)
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
        return longest
      })().catch(() => Number.NaN)
      const status = await sent
      const wallMs = performance.now() - started
      const probeMs = await probes
      const after = await countersOf(deno.pid)
      const line = deno
        .output()
        .slice(logStart)
        .split('\n')
        .find((l) => l.includes('"msg":"tryon"'))
      return {
        status,
        probeMs: probe ? probeMs : undefined,
        answer,
        mainCpuMs: after.mainCpu - before.mainCpu,
        allCpuMs: after.allCpu - before.allCpu,
        wallMs,
        rssBeforeMb: before.rss / MB,
        peakRssMb: after.peakRss / MB,
        steps: line ? JSON.parse(line).durationsMs : {},
      }
    } finally {
      await deno.stop()
    }
  }

  try {
    if (values.providers) await measureProviders()
    else if (values.hostile) await measureHostile()
    else
      for (const [width, height] of sizes) {
        const { shopper, garment } = await photos(width, height)
        const image = `${width}x${height}, ${(shopper.byteLength / MB).toFixed(1)} + ${(garment.byteLength / MB).toFixed(1)} MB`
        const files = await startImageServer({
          '/shopper.jpg': { bytes: shopper, contentType: 'image/jpeg' },
          '/garment.jpg': { bytes: garment, contentType: 'image/jpeg' },
        })
        const inBody = { userPhoto: encodeBase64(shopper), productImage: encodeBase64(garment), clothingType: 'Jacket' }
        const byUrl = { userPhoto: files.url('/shopper.jpg'), productImage: files.url('/garment.jpg'), clothingType: 'Jacket' }
        const cases: [string, unknown, string | undefined][] = [
          ['service only, base64 in the body', inBody, 'generation_failed'],
          ['service only, image URLs', byUrl, 'generation_failed'],
          ['full try-on (local engine), base64 in the body', inBody, undefined],
          ['full try-on (local engine), image URLs', byUrl, undefined],
        ]
        for (const [label, body, scenario] of cases) {
          const measurements: Measurement[] = []
          for (let i = 0; i < runs; i++) measurements.push(await measure(body, scenario))
          results.push({ label, image, measurements })
          console.error(`measured ${image}: ${label}`)
        }
        await files.close()
      }
  } finally {
    await storage.close()
    await db.close()
  }

  /** Each file of the hostile corpus as a test key's shopper photo, with a small garment photo. */
  async function measureHostile() {
    const garment = encodeBase64(small.garment)
    for (const file of (await hostileCorpus()).filter((f) => new RegExp(process.env.HOSTILE_ONLY ?? '').test(f.name))) {
      const body = { userPhoto: encodeBase64(file.bytes), productImage: garment, productType: file.wedding ? 'wedding-dress' : undefined }
      const measurements: Measurement[] = []
      for (let i = 0; i < runs; i++) measurements.push(await measure(body, undefined, undefined, true))
      results.push({ label: `hostile: ${file.name}`, image: `${(file.bytes.byteLength / 1024).toFixed(0)} KB`, measurements })
      console.error(`measured ${file.name}: ${measurements[0].status} ${measurements[0].answer}`)
    }
  }

  /** One live request per remote engine, its provider answering at once from a local fake. */
  async function measureProviders() {
    const [width, height] = sizes[0]
    const { shopper, garment } = await photos(width, height)
    const image = `${width}x${height}, ${(shopper.byteLength / MB).toFixed(1)} + ${(garment.byteLength / MB).toFixed(1)} MB`
    // What the providers send back: a 768×1152 photo-like JPEG (FASHN's CDN serves it without a length, chunked).
    const result = cameraJpeg(drawShopper({ width: 768, height: 1152 }).image, 5, 2 * MB)
    console.error(`provider result: ${(result.byteLength / MB).toFixed(2)} MB`)
    const fashnFake = await startFashnFake(result, { record: false })
    fashnFake.script('GET', `/v1/status/${FASHN_PREDICTION}`, fashn.completed(fashnFake.outputUrl))
    const googleFake = await startFakeServer(
      (f) => {
        f.script('POST', geminiPath(DEFAULT_MODELS.GEMINI_MODEL), gemini.image(result, { mimeType: 'image/jpeg' }))
        f.script('POST', vertexPredictPath('bench-project', 'us-central1'), vertex.image(result))
      },
      { record: false },
    )
    const files = await startImageServer({
      '/shopper.jpg': { bytes: shopper, contentType: 'image/jpeg' },
      '/garment.jpg': { bytes: garment, contentType: 'image/jpeg' },
    })
    const liveKey = await createKey(db.sql, { credits: 10_000, mode: 'live' })
    const wanted = new Set(values.engines.split(',').map((e) => e.trim()))
    const engines = (
      [
        ['fashn', { TRYON_ENGINE: 'fashn', FASHN_API_KEY: 'fa-bench', FASHN_BASE_URL: fashnFake.url }],
        [
          'vertex',
          { TRYON_ENGINE: 'vertex', VERTEX_PROJECT: 'bench-project', VERTEX_ACCESS_TOKEN: 'ya29.bench', VERTEX_BASE_URL: googleFake.url },
        ],
        ['gemini', { TRYON_ENGINE: 'gemini', GEMINI_API_KEY: 'AIza-bench', GEMINI_BASE_URL: googleFake.url }],
      ] as [string, Record<string, string>][]
    ).filter(([engine]) => wanted.has(engine))
    const bodies: [string, unknown][] = [
      ['base64 in the body', { userPhoto: encodeBase64(shopper), productImage: encodeBase64(garment), clothingType: 'Jacket' }],
      ['image URLs', { userPhoto: files.url('/shopper.jpg'), productImage: files.url('/garment.jpg'), clothingType: 'Jacket' }],
    ]
    try {
      for (const [engine, engineEnv] of engines) {
        for (const [how, body] of bodies) {
          const measurements: Measurement[] = []
          for (let i = 0; i < runs; i++) measurements.push(await measure(body, undefined, { env: engineEnv, apiKey: liveKey.apiKey }))
          results.push({ label: `live key, ${engine} (local fake), ${how}`, image, measurements })
          console.error(`measured ${image}: ${engine}, ${how}`)
        }
      }
    } finally {
      await Promise.all([fashnFake.close(), googleFake.close(), files.close()])
    }
  }

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  const max = (xs: number[]) => Math.max(...xs)
  console.log(
    `Deno, ${runs} runs each, every run in a fresh process after one small warm-up request; CPU and wall time are medians, peak RSS the maximum (VmHWM).\n`,
  )
  console.log(
    '| images | request | status | CPU, main thread | CPU, all threads | wall | RSS before | peak RSS | longest wait of another request | steps (median ms) |',
  )
  console.log('|---|---|---|---|---|---|---|---|---|---|')
  for (const { label, image, measurements: m } of results) {
    const steps = Object.keys(m[0].steps)
      .map((step) => `${step} ${median(m.map((x) => x.steps[step] ?? 0))}`)
      .join(', ')
    console.log(
      `| ${image} | ${label} | ${m[0].status} ${/"errorCode":"(\w+)"/.exec(m[0].answer ?? '')?.[1] ?? ''} | ${median(m.map((x) => x.mainCpuMs)).toFixed(0)} ms | ${median(m.map((x) => x.allCpuMs)).toFixed(0)} ms | ` +
        `${median(m.map((x) => x.wallMs)).toFixed(0)} ms | ${median(m.map((x) => x.rssBeforeMb)).toFixed(0)} MB | ${max(m.map((x) => x.peakRssMb)).toFixed(0)} MB | ${m[0].probeMs === undefined ? '' : `${max(m.map((x) => x.probeMs ?? 0)).toFixed(0)} ms`} | ${steps} |`,
    )
  }
}

await main()
