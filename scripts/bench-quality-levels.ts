/**
 * `npx tsx scripts/bench-quality-levels.ts [-- --rounds N]`: what each check level (docs/billing.md, "Checked
 * results") adds to a try-on on the server, measured through the real dev stack (embedded PGlite) with the Gemini
 * engine and the Gemini judge played by the provider fake (tests/support/provider-fakes.ts), which answers at once.
 *
 * Three live keys, one at each level (off, measured, judge), send the same standard try-on in turn, N rounds (default
 * 15), one request in flight. The fake's image is the local engine's own result for those photos (made first with a
 * test key), which the measured checks pass, and its judge answers "passed", so every request takes the same path to
 * settlement. Printed per level: the median and p90 of the success log line's `durationsMs.check` (the check step:
 * measuring, then at level judge preparing the three images, the call over loopback and reading the answer) and of
 * the request's wall time. The judge model's own 1-3 s (docs/engines.md, "What a judgement adds in time") comes on top.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { startDevStack } from '../devstack/stack.ts'
import { encodeBase64 } from '../shared/images/base64.ts'
import { createKey } from '../tests/support/database.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../tests/support/images.ts'
import { gemini, geminiPath, startFakeServer } from '../tests/support/provider-fakes.ts'

const LEVELS = ['off', 'measured', 'judge'] as const
const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 15

const body = {
  userPhoto: encodeBase64(makeShopperPhoto({ width: 240, height: 420, format: 'jpeg' }).bytes),
  productImage: encodeBase64(makeGarmentPhoto({ kind: 'tshirt', color: [200, 40, 40], width: 200, height: 200, format: 'png' }).bytes),
  clothingType: 'T-shirt',
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}

async function main(): Promise<void> {
  const fake = await startFakeServer()
  const dataDir = await mkdtemp(join(tmpdir(), 'tryon-bench-levels-'))
  const logs: Record<string, unknown>[] = []
  const stack = await startDevStack({
    env: {
      TRYON_ENGINE: 'gemini',
      TRYON_TRAIN_SCORER: 'gemini',
      GEMINI_API_KEY: 'AIza-fake',
      GEMINI_BASE_URL: fake.url,
      TRYON_LOCAL_QUEUE: '8',
    },
    dataDir,
    port: 0,
    dbPort: 0,
    log: (entry) => logs.push(entry),
  })
  const post = async (apiKey: string) => {
    const started = performance.now()
    const response = await fetch(stack.functionUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': apiKey },
      body: JSON.stringify(body),
    })
    const answer = (await response.json()) as Record<string, any>
    if (response.status !== 200) throw new Error(`${response.status} ${JSON.stringify(answer)}`)
    return { answer, ms: performance.now() - started }
  }
  try {
    // The local engine's result for these photos (test keys run it), passed by the measured checks: the fake's image.
    const probe = await createKey(stack.sql, { credits: 1, mode: 'test' })
    await stack.sql`select tryon.set_key_quality(${probe.keyId}::uuid, 'measured')`
    const made = await post(probe.apiKey)
    if (made.answer.quality?.passed !== true) throw new Error(`the probe did not pass: ${JSON.stringify(made.answer.quality)}`)
    const generated = new Uint8Array(await (await fetch(String(made.answer.resultUrl))).arrayBuffer())
    fake.script('POST', geminiPath('gemini-3.1-flash-image'), gemini.image(generated))
    fake.script('POST', geminiPath('gemini-3.5-flash'), gemini.qualityJudged())

    const keys = await Promise.all(
      LEVELS.map(async (level) => {
        const key = await createKey(stack.sql, { credits: rounds + 5, mode: 'live' })
        await stack.sql`select tryon.set_key_quality(${key.keyId}::uuid, ${level})`
        return { level, apiKey: key.apiKey }
      }),
    )
    const figures = new Map(LEVELS.map((level) => [level, { check: [] as number[], wall: [] as number[], charged: 0 }]))
    // One warm-up round, not counted; then the levels in turn, so a change in the machine's load meets all three.
    for (const key of keys) await post(key.apiKey)
    for (let round = 0; round < rounds; round++) {
      for (const key of keys) {
        const { answer, ms } = await post(key.apiKey)
        const line = logs.find((l) => l.msg === 'tryon' && l.tryOnId === answer.tryOnId) as { durationsMs?: Record<string, number> }
        const f = figures.get(key.level)!
        f.check.push(line?.durationsMs?.check ?? Number.NaN)
        f.wall.push(ms)
        f.charged += answer.creditsCharged
        const expected = key.level === 'off' ? undefined : true
        if (answer.quality?.passed !== expected) throw new Error(`${key.level}: quality ${JSON.stringify(answer.quality)}`)
      }
    }
    const judgeCalls = fake.requestsTo(geminiPath('gemini-3.5-flash')).length
    console.log(
      `bench-quality-levels: ${rounds} rounds, one request in flight, load average ${loadavg()[0].toFixed(1)}, ` +
        `${new Date().toISOString().slice(0, 16)}Z; judge calls ${judgeCalls}`,
    )
    console.log('| level | check step: median | p90 | request wall time: median | p90 | credits charged |')
    console.log('|---|--:|--:|--:|--:|--:|')
    for (const [level, f] of figures) {
      const ms = (v: number) => `${Math.round(v)} ms`
      console.log(
        `| ${level} | ${ms(quantile(f.check, 0.5))} | ${ms(quantile(f.check, 0.9))} | ${ms(quantile(f.wall, 0.5))} | ` +
          `${ms(quantile(f.wall, 0.9))} | ${f.charged}/${rounds} |`,
      )
    }
  } finally {
    await stack.stop()
    await fake.close()
    await rm(dataDir, { recursive: true, force: true })
  }
}

await main()
