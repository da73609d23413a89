/**
 * What a 12 MP phone photo costs as the widget sends it, against the photo as the phone stored it:
 * `npx tsx scripts/measure-widget-upload.ts [--rounds 5] [--widget FILE]` (another build of tryon-widget.js, e.g. an older
 * commit's from `git show <commit>:web/tryon-widget.js`).
 *
 * The photo: a 3000 × 4000 full-length portrait with sensor grain, stored 4000 × 3000 with EXIF Orientation 6, as many
 * phones write it (tests/support/phone-photo.ts). The widget's version is made by web/tryon-widget.js itself, in
 * headless Chromium (`photoToDataUri`: decoded upright, scaled to 1536 px, JPEG quality 0.9). Each body also holds the
 * same product image, so the difference between the two is the photo's.
 *
 * Server CPU per request: the dev stack in a child process (scripts/bench/child.ts), its user + system CPU time read
 * from /proc before and after each request, the two bodies alternated so both see the same machine load. Twice: a test
 * key on the embedded local engine, and a live key on FASHN through its fake (tests/support/provider-fakes.ts wire
 * format, answering at once), where an input over FASHN's 2000 px is decoded and re-encoded by the server.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { encodeBase64 } from '../shared/images/base64.ts'
import { readImageHeader } from '../shared/images/sniff.ts'
import { launchChromium } from '../tests/browser/chromium.ts'
import { createKey, createTestDatabase } from '../tests/support/database.ts'
import { makeGarmentPhoto } from '../tests/support/images.ts'
import { makePhonePhoto } from '../tests/support/phone-photo.ts'
import { startServer, type ServerProcess } from './bench/child.ts'
import { processCpuSeconds } from './bench/cpu.ts'
import { startLatencyFakes } from './bench/providers.ts'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, widget: { type: 'string' } } })
const rounds = Number(values.rounds)
const KB = 1024

/** The widget's own photoToDataUri in Chromium, on the phone's file; also the browser's time for it. */
async function widgetPhoto(jpeg: Uint8Array): Promise<{ dataUri: string; browserMs: number }> {
  const widget = await readFile(values.widget ?? new URL('../web/tryon-widget.js', import.meta.url))
  const server = createServer((request, response) => {
    if (request.url === '/tryon-widget.js') return response.writeHead(200, { 'Content-Type': 'text/javascript' }).end(widget)
    response.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>widget</title>')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const browser = await launchChromium()
  try {
    const { page } = await browser.newPage()
    await page.goto(origin)
    // A string, so that tsx leaves the page's code alone.
    return await page.evaluate(`(async () => {
      const { photoToDataUri } = await import('${origin}/tryon-widget.js')
      const bytes = Uint8Array.from(atob('${encodeBase64(jpeg)}'), (c) => c.charCodeAt(0))
      const file = new File([bytes], 'IMG_0001.jpg', { type: 'image/jpeg' })
      const started = performance.now()
      const dataUri = await photoToDataUri(file)
      return { dataUri, browserMs: performance.now() - started }
    })()`)
  } finally {
    await browser.close()
    server.close()
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const range = (values: number[]) => `${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}`

/** CPU milliseconds the server spends on each body, alternated over `rounds` rounds after one warm-up each. */
async function serverCpu(server: ServerProcess, apiKey: string, bodies: string[]): Promise<number[][]> {
  const post = async (body: string) => {
    const response = await fetch(server.url, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-API-Key': apiKey }, body })
    const answer = await response.text()
    if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${answer}`)
  }
  for (const body of bodies) await post(body)
  const cpu: number[][] = bodies.map(() => [])
  for (let round = 0; round < rounds; round++) {
    for (const [index, body] of bodies.entries()) {
      const before = await processCpuSeconds(server.pid)
      await post(body)
      cpu[index].push((await processCpuSeconds(server.pid)) - before)
    }
  }
  return cpu.map((seconds) => seconds.map((s) => s * 1000))
}

const phone = makePhonePhoto({ width: 3000, height: 4000 })
const product = `data:image/png;base64,${encodeBase64(makeGarmentPhoto({ kind: 'tshirt', color: [30, 90, 160], format: 'png' }).bytes)}`
const { dataUri: widgetUri, browserMs } = await widgetPhoto(phone.jpeg)
const sent = readImageHeader(Uint8Array.from(Buffer.from(widgetUri.slice(widgetUri.indexOf(',') + 1), 'base64')))!
const bodyOf = (userPhoto: string) => JSON.stringify({ userPhoto, productImage: product, clothingType: 'T-shirt' })
const bodies = [bodyOf(`data:image/jpeg;base64,${encodeBase64(phone.jpeg)}`), bodyOf(widgetUri)]
const labels = [
  `the phone's file, ${phone.jpeg.byteLength >> 10} KB JPEG 4000×3000 (Orientation 6)`,
  `as the widget sends it, JPEG ${sent.width}×${sent.height}`,
]

const db = await createTestDatabase('postgres')
const fakes = await startLatencyFakes(0)
const rows: string[] = []
try {
  for (const engine of ['local', 'fashn'] as const) {
    const key = await createKey(db.sql, { credits: 1000, mode: engine === 'local' ? 'test' : 'live' })
    const server = await startServer(engine, db.url, engine === 'fashn' ? { BENCH_PROVIDER_ENV: JSON.stringify(fakes.env('fashn')) } : {})
    try {
      const cpu = await serverCpu(server, key.apiKey, bodies)
      for (const [index, label] of labels.entries()) {
        const kb = (Buffer.byteLength(bodies[index]) / KB).toFixed(0)
        rows.push(`| ${label} | ${engine} | ${kb} KB | ${median(cpu[index]).toFixed(0)} (${range(cpu[index])}) |`)
      }
    } finally {
      await server.stop()
    }
  }
} finally {
  await fakes.close()
  await db.close()
}

console.log(`Photo made in the browser (decode upright, scale, encode): ${browserMs.toFixed(0)} ms in headless Chromium.`)
console.log(`Server CPU: ${rounds} requests of each body, alternated; median (range) in ms. Body: the whole JSON request.\n`)
console.log('| userPhoto | engine | request body | server CPU ms per request |')
console.log('|---|---|--:|--:|')
for (const row of rows) console.log(row)
