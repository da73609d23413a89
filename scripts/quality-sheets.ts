/**
 * `npx tsx scripts/quality-sheets.ts [DIR]`: three contact sheets of checked results (docs/billing.md, "Checked
 * results"), made through the real dev stack (embedded PGlite, the local engine in its worker threads) with the
 * Gemini engine played by the provider fake (tests/support/provider-fakes.ts):
 *
 *   pass.png          a test key at level measured: the local engine's result passes, 1 credit
 *   refunded.png      a live key at level measured, TRYON_ENGINE=gemini: Gemini answers with the shopper photo
 *                     unchanged, the measured checks fail it, delivered for 0 credits with the issue codes
 *   regenerated.png   a live key at level measured, TRYON_ENGINE=gemini,local: the same unchanged photo from Gemini,
 *                     generated again on the local engine, checked again, passed, 1 credit
 *
 * Each sheet: shopper photo | product photo | result(s) | caption (credits charged, the answer's quality object, the
 * engine that made the delivered result, the check's time). DIR defaults to test-artifacts/quality.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startDevStack, type DevStack } from '../devstack/stack.ts'
import { encodeBase64 } from '../shared/images/base64.ts'
import { decodeImage } from '../shared/images/codecs/index.ts'
import type { RgbaImage } from '../shared/images/codecs/raster.ts'
import { readImageHeader } from '../shared/images/sniff.ts'
import { createKey } from '../tests/support/database.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../tests/support/images.ts'
import { gemini, geminiPath, startFakeServer, type FakeServer } from '../tests/support/provider-fakes.ts'
import { contactSheet, type SheetTone } from '../tests/support/scenes/sheet.ts'

const IMAGE_MODEL = 'gemini-3.1-flash-image'
const outDir = process.argv[2] ?? 'test-artifacts/quality'

const shopper = makeShopperPhoto({ width: 240, height: 420, format: 'jpeg' })
const product = makeGarmentPhoto({ kind: 'tshirt', color: [200, 40, 40], width: 200, height: 200, format: 'png' })
const body = { userPhoto: encodeBase64(shopper.bytes), productImage: encodeBase64(product.bytes), clothingType: 'T-shirt' }

function decoded(bytes: Uint8Array): RgbaImage {
  const format = readImageHeader(bytes)?.format
  if (!format) throw new Error('not an image')
  return decodeImage(bytes, format)
}

interface Run {
  stack: DevStack
  fake: FakeServer
  logs: Record<string, unknown>[]
  close(): Promise<void>
}

async function start(engine: string): Promise<Run> {
  const fake = await startFakeServer()
  const dataDir = await mkdtemp(join(tmpdir(), 'tryon-sheets-'))
  const logs: Record<string, unknown>[] = []
  const stack = await startDevStack({
    env: { TRYON_ENGINE: engine, GEMINI_API_KEY: 'AIza-fake', GEMINI_BASE_URL: fake.url, TRYON_LOCAL_QUEUE: '8' },
    dataDir,
    port: 0,
    dbPort: 0,
    log: (entry) => logs.push(entry),
  })
  return {
    stack,
    fake,
    logs,
    async close() {
      await stack.stop()
      await fake.close()
      await rm(dataDir, { recursive: true, force: true })
    },
  }
}

/** One try-on with a key of this mode at this level; the delivered image, the answer and what the service logged. */
async function tryOn(run: Run, mode: 'test' | 'live', level: 'off' | 'measured' | 'judge') {
  const key = await createKey(run.stack.sql, { credits: 5, mode })
  await run.stack.sql`select tryon.set_key_quality(${key.keyId}::uuid, ${level})`
  const response = await fetch(run.stack.functionUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': key.apiKey },
    body: JSON.stringify(body),
  })
  const answer = (await response.json()) as Record<string, any>
  if (response.status !== 200) throw new Error(`${response.status} ${JSON.stringify(answer)}`)
  const image = new Uint8Array(await (await fetch(String(answer.resultUrl))).arrayBuffer())
  const [row] = await run.stack.sql<{ engine: string; outcome: string }[]>`
    select engine, outcome from tryon.tryons where id = ${answer.tryOnId}`
  const log = run.logs.find((l) => l.msg === 'tryon' && l.tryOnId === answer.tryOnId) as
    | { durationsMs?: Record<string, number> }
    | undefined
  return { answer, image: decoded(image), row, checkMs: log?.durationsMs?.check }
}

function caption(title: string, level: string, r: Awaited<ReturnType<typeof tryOn>>, extra: string[] = []): string[] {
  const q = r.answer.quality as { checked: boolean; passed: boolean | null; score: number | null; issues: string[] } | undefined
  return [
    title,
    `key level ${level}; delivered by engine ${r.row.engine}, outcome ${r.row.outcome}`,
    `creditsCharged ${r.answer.creditsCharged}, creditsRemaining ${r.answer.creditsRemaining}, shortId ${r.answer.shortId}`,
    // The caption font has no braces or brackets: the quality object written out field by field.
    `quality: checked ${q?.checked}, passed ${q?.passed}, score ${q?.score}, issues ${q?.issues?.length ? q.issues.join(' ') : 'none'}`,
    `check step ${r.checkMs ?? '?'} ms on the server (durationsMs.check${r.row.engine === 'local' && extra.length ? ', generating again included' : ''})`,
    ...extra,
  ]
}

function save(name: string, panels: RgbaImage[], lines: string[], tone: SheetTone): void {
  const path = join(outDir, name)
  writeFileSync(path, contactSheet(panels, lines, tone))
  console.log(`${path}\n  ${lines.join('\n  ')}`)
}

async function main(): Promise<void> {
  mkdirSync(outDir, { recursive: true })
  const unchanged = gemini.image(shopper.bytes)

  const gem = await start('gemini')
  try {
    const pass = await tryOn(gem, 'test', 'measured')
    if (pass.answer.quality?.passed !== true) throw new Error(`expected a pass: ${JSON.stringify(pass.answer.quality)}`)
    save('pass.png', [shopper.pixels, product.pixels, pass.image], caption('(a) passed: charged', 'measured', pass), 'good')

    gem.fake.script('POST', geminiPath(IMAGE_MODEL), unchanged)
    const refunded = await tryOn(gem, 'live', 'measured')
    if (refunded.answer.quality?.passed !== false) throw new Error(`expected a failure: ${JSON.stringify(refunded.answer.quality)}`)
    save(
      'refunded.png',
      [shopper.pixels, product.pixels, refunded.image],
      caption('(b) failed the check: delivered, refunded', 'measured', refunded, [
        'Gemini (fake) answered with the shopper photo unchanged; TRYON_ENGINE=gemini, no engine after it',
      ]),
      'refunded',
    )
  } finally {
    await gem.close()
  }

  const chain = await start('gemini,local')
  try {
    chain.fake.script('POST', geminiPath(IMAGE_MODEL), unchanged)
    const again = await tryOn(chain, 'live', 'measured')
    const calls = chain.fake.requestsTo(geminiPath(IMAGE_MODEL)).length
    if (again.answer.quality?.passed !== true || again.row.engine !== 'local')
      throw new Error(`expected a pass on the local engine: ${JSON.stringify(again.answer.quality)} ${again.row.engine}`)
    save(
      'regenerated.png',
      [shopper.pixels, product.pixels, decoded(shopper.bytes), again.image],
      caption('(c) failed on Gemini, generated again on local, passed', 'measured', again, [
        `TRYON_ENGINE=gemini,local; Gemini (fake, ${calls} call) answered the photo unchanged (3rd panel): failed the measured check`,
        '4th panel: the local engine result, checked again, passed, charged once',
      ]),
      'good',
    )
  } finally {
    await chain.close()
  }
}

await main()
