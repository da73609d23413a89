/**
 * `npx tsx scripts/measure-hostile.ts`: sends hostile requests to a dev stack running in a child process (embedded
 * PGlite, nothing else needed; HOSTILE_POSTGRES=1 uses a fresh database on the tests' Postgres instead, so the
 * database does not share the server's thread) and prints, for each, the answer, the server's CPU time (all of it, and
 * that of its event loop's thread, which every request shares; the worker threads' is the rest) and peak
 * memory above its resident size before the request, and how long an unrelated request sent meanwhile waited.
 * First the corpus of scripts/bench/hostile-corpus.ts (many-scan JPEGs, 40 MP WebPs, the PNG bomb, 40 MP photos),
 * each as a test key's shopper photo; then the header and key cases. HOSTILE_ONLY=regexp runs the cases whose name
 * matches it; HOSTILE_CPU_PROF=dir writes the server's CPU profiles there (node --cpu-prof: its main thread's and each
 * worker's, written when the server stops). HOSTILE_LIVE=1 sends them with a live key to the Gemini engine instead,
 * played by a stand-in on 127.0.0.1 that answers at once (the provider's re-encode of the photos is then the work).
 * Printed numbers, not a test: run it on two checkouts to compare.
 */
import { fork } from 'node:child_process'
import { get } from 'node:http'
import { readFile, writeFile, mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { encodeBase64 } from '../shared/images/base64.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../tests/support/images.ts'
import { jpegWithFrames, pngWithHeaders, webpCanvasAndFrame } from '../tests/support/hostile-images.ts'
import { processCpuSeconds, threadCpuSeconds } from './bench/cpu.ts'
import { hostileCorpus } from './bench/hostile-corpus.ts'
import { createTestDatabase } from '../tests/support/database.ts'
import { gemini as fakeGemini, geminiPath, startFakeServer } from '../tests/support/provider-fakes.ts'
import { DEFAULT_MODELS } from '../shared/engine/providers/settings.ts'

type Ready = { url: string; apiKey: string; databaseUrl: string }

async function child(): Promise<void> {
  const { startDevStack } = await import('../devstack/stack.ts')
  const dataDir = await mkdtemp(join(tmpdir(), 'tryon-hostile-'))
  const logs: string[] = []
  const live = process.env.HOSTILE_GEMINI_URL
  const stack = await startDevStack({
    env: live ? { TRYON_ENGINE: 'gemini', GEMINI_API_KEY: 'AIza-hostile', GEMINI_BASE_URL: live, TRYON_TRAIN_SCORER: 'local' } : {},
    dataDir,
    port: 0,
    dbPort: 0,
    databaseUrl: process.env.HOSTILE_DATABASE_URL || undefined,
    log: (entry) => {
      logs.push(JSON.stringify(entry))
      if (process.env.HOSTILE_DEBUG && entry.level === 'error') console.error(JSON.stringify(entry).slice(0, 300))
    },
    playgroundKey: () => 'vto_test_playgroundplaygroundplaygroundpla',
  })
  const mode = live ? 'live' : 'test'
  const [row] = await stack.sql`select api_key from tryon.create_api_key(100000, ${mode}, '{}'::text[], true, 'hostile', null)`
  process.on('message', (message: { type: string; needle?: string }) => {
    if (message.type === 'logs') process.send!({ type: 'logs', count: logs.filter((l) => l.includes(message.needle!)).length })
    if (message.type === 'stop') void stack.stop().then(() => process.exit(0))
  })
  process.send!({ type: 'ready', url: stack.url, apiKey: row.api_key, databaseUrl: stack.databaseUrl } satisfies Ready & { type: string })
}

/** fetch() drops a Host header; node:http sends it as given, as a DNS-rebinding page's browser would. */
function getWithHost(url: string, host: string): Promise<Response> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { host }, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () =>
        resolve(new Response(Buffer.concat(chunks), { status: res.statusCode, headers: res.headers as Record<string, string> })),
      )
    }).on('error', reject)
  })
}

async function status(pid: number, field: string): Promise<number> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8')
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? NaN) / 1024
}

interface Case {
  name: string
  send: (server: Ready) => Promise<Response>
}

async function parent(): Promise<void> {
  const db = process.env.HOSTILE_POSTGRES === '1' ? await createTestDatabase('postgres') : null
  // The Gemini engine's stand-in: every generateContent answered at once with a small picture.
  const gemini =
    process.env.HOSTILE_LIVE === '1'
      ? await startFakeServer((f) =>
          f.script(
            'POST',
            geminiPath(DEFAULT_MODELS.GEMINI_MODEL),
            fakeGemini.image(makeShopperPhoto({ width: 240, height: 400, format: 'jpeg' }).bytes),
          ),
        )
      : null
  const start = async () => {
    const child = fork(fileURLToPath(import.meta.url), ['child'], {
      execArgv: process.env.HOSTILE_CPU_PROF
        ? [...process.execArgv, '--cpu-prof', `--cpu-prof-dir=${process.env.HOSTILE_CPU_PROF}`]
        : process.execArgv,
      env: { ...process.env, HOSTILE_DATABASE_URL: db?.url ?? '', HOSTILE_GEMINI_URL: gemini?.url ?? '' },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    })
    return { child, ready: await new Promise<Ready>((resolve) => child.once('message', (m: Ready) => resolve(m))) }
  }
  let { child: server, ready } = await start()
  let pid = server.pid!
  const ask = (message: object) =>
    new Promise<any>((resolve) => {
      server.once('message', resolve)
      server.send(message)
    })

  const person = encodeBase64(makeShopperPhoto({ width: 240, height: 400, format: 'jpeg' }).bytes)
  const garment = encodeBase64(makeGarmentPhoto({ kind: 'tshirt', color: [10, 120, 200], width: 240, height: 240, format: 'png' }).bytes)
  const big = process.env.HOSTILE_40MP_JPEG ? await readFile(process.env.HOSTILE_40MP_JPEG) : null
  const post = (s: Ready, body: unknown, init: { path?: string; headers?: Record<string, string> } = {}) =>
    fetch(`${s.url}/functions/v1/tryon-api${init.path ?? ''}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': s.apiKey, ...init.headers },
      body: JSON.stringify(body),
    })
  const tryOn =
    (userPhoto: Uint8Array | string, productImage: string = garment, productType?: string) =>
    (s: Ready) =>
      post(s, { userPhoto: typeof userPhoto === 'string' ? userPhoto : encodeBase64(userPhoto), productImage, productType })

  const corpus = (await hostileCorpus()).map(
    (file): Case => ({ name: `0 ${file.name}`, send: tryOn(file.bytes, garment, file.wedding ? 'wedding-dress' : undefined) }),
  )
  const cases: Case[] = [
    ...corpus,
    {
      name: '1 PNG, IHDR 64×64 then IHDR 8000×8000',
      send: tryOn(
        pngWithHeaders([
          { width: 64, height: 64 },
          { width: 8000, height: 8000 },
        ]),
      ),
    },
    {
      name: '1 PNG, IHDR 64×64 then IHDR 16000×16000',
      send: tryOn(
        pngWithHeaders([
          { width: 64, height: 64 },
          { width: 16000, height: 16000 },
        ]),
      ),
    },
    {
      name: '1 WebP, VP8X 64×64 holding VP8L 8000×8000',
      send: tryOn(webpCanvasAndFrame({ width: 64, height: 64 }, { width: 8000, height: 8000 })),
    },
    {
      name: '1 JPEG, SOF 64×64 then SOF 8000×8000',
      send: tryOn(
        jpegWithFrames([
          { width: 64, height: 64 },
          { width: 8000, height: 8000 },
        ]),
      ),
    },
    ...(big
      ? [
          {
            name: '2 40 MP progressive JPEG + corrupt product image',
            send: tryOn(big, encodeBase64(jpegWithFrames([{ width: 64, height: 64 }]).subarray(0, 1200))),
          },
          { name: '2 40 MP progressive JPEG + good product image', send: tryOn(big) },
          {
            name: '2 burst: 12 of the 40 MP progressive JPEG try-ons at once',
            send: async (s: Ready) => {
              const answers = await Promise.all(Array.from({ length: 12 }, () => tryOn(big)(s)))
              const counts: Record<string, number> = {}
              for (const a of answers) {
                const code = a.status === 200 ? '200' : `${a.status} ${((await a.clone().json()) as { errorCode: string }).errorCode}`
                counts[code] = (counts[code] ?? 0) + 1
              }
              const busy = answers.find((a) => a.status === 503)
              return new Response(`statuses ${JSON.stringify(counts)}${busy ? `, Retry-After ${busy.headers.get('retry-after')}` : ''}`, {
                status: 207,
              })
            },
          },
        ]
      : []),
    {
      name: '3 key as a query parameter name',
      send: (s) => post(s, { userPhoto: person, productImage: garment }, { path: `?${s.apiKey}` }),
    },
    { name: '4 key in the path (404)', send: (s) => post(s, {}, { path: `/${s.apiKey}` }) },
    { name: '5 storage path with a bad escape', send: (s) => fetch(`${s.url}/storage/v1/object/public/tryon-results/%.jpg`) },
    { name: '6 X-Request-Id set to the key', send: (s) => post(s, {}, { headers: { 'x-request-id': s.apiKey } }) },
    { name: '7 playground with Host: evil.example', send: (s) => getWithHost(`${s.url}/`, 'evil.example') },
  ]

  console.log(
    '| request | answer | server CPU ms | of it on the event loop thread, ms | peak RSS above start, MB | longest wait of an unrelated request, ms |',
  )
  console.log('|---|---|--:|--:|--:|--:|')
  for (const c of cases.filter((c) => new RegExp(process.env.HOSTILE_ONLY ?? '').test(c.name))) {
    await writeFile(`/proc/${pid}/clear_refs`, '5')
    const rssBefore = await status(pid, 'VmRSS')
    const cpuBefore = await processCpuSeconds(pid)
    const loopBefore = await threadCpuSeconds(pid)
    let settled = false
    const pending = c.send(ready).finally(() => (settled = true))
    // Unrelated requests sent one after another while the hostile one is being worked on: the longest any of them
    // waited is how long the event loop was held.
    const probes = (async () => {
      let longest = 0
      while (!settled) {
        const started = performance.now()
        // A connection the server dropped meanwhile (its keep-alive ran out while the loop was held) is retried.
        for (let attempt = 0; attempt < 3; attempt++) {
          const ok = await fetch(`${ready.url}/openapi.json`).then(
            (r) => r.arrayBuffer().then(() => true),
            () => false,
          )
          if (ok) break
        }
        longest = Math.max(longest, performance.now() - started)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      return longest
    })().catch(() => Number.NaN)
    const answered = await pending.then(
      async (response) => ({ response, text: (await response.text()).replace(/\s+/g, ' ').slice(0, 110) }),
      (error: Error) => ({ response: null, text: `no answer (${error.message})` }),
    )
    const waited = await probes
    if (!answered.response) {
      const exited = new Promise((resolve) => server.once('exit', resolve))
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3000))])
    }
    if (!answered.response || server.exitCode !== null) {
      const exit = server.exitCode === null ? '' : `, the server exited with ${server.exitCode ?? server.signalCode}`
      console.log(`| ${c.name} | ${answered.text}${exit} | | | | ${Math.round(waited)} |`)
      if (server.exitCode !== null || server.signalCode !== null) ({ child: server, ready } = await start())
      pid = server.pid!
      continue
    }
    const { response, text } = answered
    const cpu = (await processCpuSeconds(pid)) - cpuBefore
    const loop = (await threadCpuSeconds(pid)) - loopBefore
    const peak = (await status(pid, 'VmHWM')) - rssBefore
    const extra =
      c.name.startsWith('4') || c.name.startsWith('6')
        ? `; log lines with the key: ${(await ask({ type: 'logs', needle: ready.apiKey.slice(9, 30) })).count}`
        : ''
    const echoed = c.name.startsWith('6') ? `; X-Request-Id echoed: ${response.headers.get('x-request-id') === ready.apiKey}` : ''
    const headers = c.name.startsWith('7')
      ? `; CSP ${response.headers.has('content-security-policy')}, XFO ${response.headers.get('x-frame-options')}`
      : ''
    console.log(
      `| ${c.name} | ${response.status} ${text.replaceAll('|', '/')}${extra}${echoed}${headers} | ${Math.round(cpu * 1000)} | ${Math.round(loop * 1000)} | ${Math.round(peak)} | ${Math.round(waited)} |`,
    )
  }
  const exited = new Promise((resolve) => server.once('exit', resolve))
  server.send({ type: 'stop' })
  await exited
  await db?.close()
  await gemini?.close()
}

if (process.argv[2] === 'child') await child()
else await parent()
