import { build } from 'esbuild'
import { Miniflare } from 'miniflare'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { encodeBase64 } from '../../shared/images/base64.ts'
import { readImageHeader } from '../../shared/images/sniff.ts'
import { RESULT_CACHE_SECONDS } from '../../shared/storage/supabase-store.ts'
import { createKey, createTestDatabase, ledgerCheck, type TestDatabase } from '../support/database.ts'
import { startFakeStorage, type FakeStorage } from '../support/fake-storage.ts'
import { startImageServer, type ImageServer } from '../support/image-server.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../support/images.ts'
import { TEST_CLIENT_ADDRESS_SECRET } from '../support/process.ts'
import { expectErrorBody, postTryOn } from '../support/stack.ts'

const root = fileURLToPath(new URL('../../', import.meta.url))

/** workers/worker.ts bundled as `wrangler deploy` would: workerd's package exports, node: and cloudflare: left to the runtime. */
async function bundleWorker(): Promise<string> {
  const result = await build({
    entryPoints: [`${root}workers/worker.ts`],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    external: ['node:*', 'cloudflare:*'],
    logLevel: 'silent',
  })
  return result.outputFiles[0].text
}

function withPassword(url: string): string {
  const parsed = new URL(url)
  parsed.password ||= 'trusted-locally'
  return parsed.toString()
}

let bundled: Promise<string> | undefined
const workerModule = () => (bundled ??= bundleWorker())

/** The runtime settings workers/wrangler.toml deploys with, so the test runs what production would. */
const wrangler = readFileSync(`${root}workers/wrangler.toml`, 'utf8')
const compatibilityDate = /^compatibility_date = "(.+)"$/m.exec(wrangler)![1]
const compatibilityFlags = JSON.parse(/^compatibility_flags = (\[.*\])$/m.exec(wrangler)![1]) as string[]

describe('the Hono app as a Cloudflare Worker in workerd (Miniflare)', () => {
  let db: TestDatabase
  let storage: FakeStorage
  let images: ImageServer
  let worker: Miniflare
  let url: string
  let workerLogs = ''
  const shopper = makeShopperPhoto({ width: 220, height: 380, format: 'jpeg' })
  const garment = makeGarmentPhoto({ kind: 'jacket', color: [120, 40, 40], width: 200, height: 220, format: 'webp' })

  beforeAll(async () => {
    db = await createTestDatabase('postgres')
    storage = await startFakeStorage()
    images = await startImageServer({ '/shopper.jpg': { bytes: shopper.bytes, contentType: 'image/jpeg' } })
    worker = new Miniflare({
      modules: [{ type: 'ESModule', path: 'worker.mjs', contents: await workerModule() }],
      compatibilityDate,
      compatibilityFlags,
      host: '127.0.0.1',
      port: 0,
      // The worker's JSON logs, kept for failure messages instead of flooding the test output.
      handleRuntimeStdio(stdout, stderr) {
        stdout.on('data', (chunk) => (workerLogs += chunk))
        stderr.on('data', (chunk) => (workerLogs += chunk))
      },
      bindings: {
        // Postgres over workerd's TCP sockets (cloudflare:sockets), which postgres.js uses in its workerd build.
        DATABASE_URL: db.url,
        SUPABASE_URL: storage.url,
        SUPABASE_SECRET_KEYS: JSON.stringify({ default: storage.key }),
        TRYON_ALLOW_PRIVATE_IMAGE_HOSTS: '1',
        TRYON_CLIENT_ADDRESS_SECRET: TEST_CLIENT_ADDRESS_SECRET,
      },
    })
    url = `${(await worker.ready).origin}/functions/v1/tryon-api`
  }, 120_000)

  afterAll(async () => {
    await worker?.dispose()
    await images?.close()
    await storage?.close()
    await db?.close()
  })

  beforeEach(() => {
    storage.failUploadsWith = null
  })

  it('serves full try-ons, one after another, against the real Postgres and stores each result', async () => {
    const key = await createKey(db.sql, { credits: 3 })
    for (const userPhoto of [encodeBase64(shopper.bytes), images.url('/shopper.jpg')]) {
      const res = await postTryOn(url, {
        apiKey: key.apiKey,
        body: { userPhoto, productImage: `data:image/webp;base64,${encodeBase64(garment.bytes)}`, clothingType: 'Jacket' },
      })
      expect(res.status, `${JSON.stringify(res.body)}\n${workerLogs}`).toBe(200)
      expect(res.body.resultUrl).toMatch(
        new RegExp(`^${storage.url}/storage/v1/object/public/tryon-results/\\d{4}/\\d{2}/${res.body.tryOnId}\\.jpg$`),
      )
      const stored = storage.objects.get(res.body.resultUrl.slice(`${storage.url}/storage/v1/object/public/`.length))
      expect(stored).toMatchObject({ contentType: 'image/jpeg', cacheControl: `max-age=${RESULT_CACHE_SECONDS}` })
      expect(readImageHeader(new Uint8Array(stored!.bytes))).toEqual({ format: 'jpeg', width: 220, height: 380 })
    }
    expect(images.requests).toEqual(['/shopper.jpg'])
    expect(await ledgerCheck(db.sql, key.accountId)).toMatchObject({ balance: 1, ledgerBalance: 1, reserved: 0, heldByTryOns: 0 })
  })

  it('refunds the credit and answers storage_failed when Storage fails', async () => {
    const key = await createKey(db.sql, { credits: 1 })
    storage.failUploadsWith = 503
    const res = await postTryOn(url, {
      apiKey: key.apiKey,
      body: { userPhoto: encodeBase64(shopper.bytes), productImage: encodeBase64(garment.bytes) },
    })
    expectErrorBody(res, 500, 'storage_failed')
    expect(await ledgerCheck(db.sql, key.accountId)).toMatchObject({ balance: 1, ledgerBalance: 1, reserved: 0, heldByTryOns: 0 })
  })

  it('answers errors and the gateway 404 like the other runtimes', async () => {
    expectErrorBody(await postTryOn(url, { body: {} }), 401, 'authentication_required', 'Authentication required')
    const key = await createKey(db.sql, { credits: 0 })
    expectErrorBody(await postTryOn(url, { apiKey: key.apiKey, body: { userPhoto: 'x', productImage: 'y' } }), 402, 'insufficient_credits')
    const wrongPath = await fetch(url.replace('tryon-api', 'nope'), { method: 'POST' })
    expect(wrongPath.status).toBe(404)
    expect(await wrongPath.json()).toEqual({ error: 'requested path is invalid' })
  })
})

describe('the Worker with a Hyperdrive binding instead of DATABASE_URL', () => {
  let db: TestDatabase
  let storage: FakeStorage
  let worker: Miniflare

  beforeAll(async () => {
    db = await createTestDatabase('postgres')
    storage = await startFakeStorage()
    worker = new Miniflare({
      modules: [{ type: 'ESModule', path: 'worker.mjs', contents: await workerModule() }],
      compatibilityDate,
      compatibilityFlags,
      // Miniflare's local Hyperdrive hands the worker a connection string to a proxy in front of this database.
      // It insists on a password in the URL; the local server trusts 127.0.0.1, so any will do there.
      hyperdrives: { HYPERDRIVE: withPassword(db.url) },
      bindings: {
        SUPABASE_URL: storage.url,
        SUPABASE_SECRET_KEYS: JSON.stringify({ default: storage.key }),
        TRYON_CLIENT_ADDRESS_SECRET: TEST_CLIENT_ADDRESS_SECRET,
      },
      handleRuntimeStdio() {},
    })
    await worker.ready
  }, 120_000)

  afterAll(async () => {
    await worker?.dispose()
    await storage?.close()
    await db?.close()
  })

  it('reaches Postgres through the binding and bills the try-on', async () => {
    const key = await createKey(db.sql, { credits: 1 })
    const response = await worker.dispatchFetch('http://localhost/functions/v1/tryon-api', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': key.apiKey },
      body: JSON.stringify({
        userPhoto: encodeBase64(makeShopperPhoto({ width: 160, height: 280, format: 'jpeg' }).bytes),
        productImage: encodeBase64(
          makeGarmentPhoto({ kind: 'tshirt', color: [20, 120, 60], width: 160, height: 170, format: 'png' }).bytes,
        ),
      }),
    })
    const body = (await response.json()) as { success: boolean; creditsRemaining: number; resultUrl: string }
    expect(response.status, JSON.stringify(body)).toBe(200)
    expect(body).toMatchObject({ success: true, creditsRemaining: 0 })
    expect(storage.objects.size).toBe(1)
    expect(await ledgerCheck(db.sql, key.accountId)).toMatchObject({ balance: 0, ledgerBalance: 0, reserved: 0 })
  })
})
