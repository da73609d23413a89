import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { encodeBase64 } from '../../shared/images/base64.ts'
import { readImageHeader } from '../../shared/images/sniff.ts'
import { RESULT_CACHE_SECONDS } from '../../shared/storage/supabase-store.ts'
import { createKey, createTestDatabase, ledgerCheck, serverUrl, type TestDatabase } from '../support/database.ts'
import { startFakeStorage, type FakeStorage } from '../support/fake-storage.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../support/images.ts'
import { startTransactionPooler, type TransactionPooler } from '../support/pooler.ts'
import { TEST_CLIENT_ADDRESS_SECRET, denoNetworkEnv, freePort, startProcess, type RunningProcess } from '../support/process.ts'
import { expectErrorBody, postTryOn } from '../support/stack.ts'

/**
 * The function as Supabase deploys it: only its own deno.json resolves bare imports (no package.json, no
 * node_modules), results go to Storage by default, and Postgres is reached through a transaction pooler.
 */
describe('the Supabase entry under Deno, deployed shape', () => {
  let db: TestDatabase
  let pooler: TransactionPooler
  let storage: FakeStorage
  let deno: RunningProcess
  let url: string

  beforeAll(async () => {
    db = await createTestDatabase('postgres')
    pooler = await startTransactionPooler(serverUrl)
    storage = await startFakeStorage()
    const port = await freePort()
    url = `http://127.0.0.1:${port}/tryon-api`
    deno = startProcess(
      'node_modules/.bin/deno',
      ['run', '--allow-all', '--no-prompt', '--config', 'supabase/functions/tryon-api/deno.json', 'supabase/functions/tryon-api/index.ts'],
      {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        // Deno fetches the npm: packages itself: let it use this machine's registry, proxy and certificates.
        ...denoNetworkEnv(),
        DENO_NO_PACKAGE_JSON: '1',
        DENO_NO_UPDATE_CHECK: '1',
        NO_COLOR: '1',
        DATABASE_URL: pooler.urlFor(new URL(db.url).pathname.slice(1)),
        SUPABASE_URL: storage.url,
        SUPABASE_SECRET_KEYS: JSON.stringify({ default: storage.key }),
        SUPABASE_SERVICE_ROLE_KEY: 'eyJ.legacy-key-the-store-must-not-prefer',
        PORT: String(port),
        TRYON_CLIENT_ADDRESS_SECRET: TEST_CLIENT_ADDRESS_SECRET,
      },
    )
    await deno.waitFor(/Listening on/, 120_000)
  }, 150_000)

  afterAll(async () => {
    await deno?.stop()
    await storage?.close()
    await pooler?.stop()
    await db?.close()
  })

  beforeEach(() => {
    storage.failUploadsWith = null
  })

  const tryOnBody = () => ({
    userPhoto: encodeBase64(makeShopperPhoto({ width: 200, height: 360, format: 'jpeg' }).bytes),
    productImage: `data:image/png;base64,${encodeBase64(makeGarmentPhoto({ kind: 'tshirt', color: [30, 90, 160], width: 180, height: 200, format: 'png' }).bytes)}`,
    clothingType: 'T-shirt',
  })

  it('stores the result in the public bucket and answers its public URL', async () => {
    const key = await createKey(db.sql, { credits: 3 })
    const res = await postTryOn(url, { apiKey: key.apiKey, body: tryOnBody() })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ success: true, creditsCharged: 1, creditsRemaining: 2 })

    const month = new Date().toISOString().slice(0, 7).replace('-', '/')
    const path = `${month}/${res.body.tryOnId}.jpg`
    expect(res.body.resultUrl).toBe(`${storage.url}/storage/v1/object/public/tryon-results/${path}`)

    const upload = storage.requests.find((r) => r.method === 'POST' && r.path === `/storage/v1/object/tryon-results/${path}`)
    expect(upload?.headers).toMatchObject({
      apikey: storage.key,
      authorization: `Bearer ${storage.key}`,
      'content-type': 'image/jpeg',
      'cache-control': `max-age=${RESULT_CACHE_SECONDS}`,
      'x-upsert': 'false',
    })
    const served = await fetch(res.body.resultUrl)
    expect(served.status).toBe(200)
    expect(readImageHeader(new Uint8Array(await served.arrayBuffer()))).toEqual({ format: 'jpeg', width: 200, height: 360 })
    expect(await ledgerCheck(db.sql, key.accountId)).toMatchObject({ balance: 2, ledgerBalance: 2, reserved: 0, heldByTryOns: 0 })
  })

  it('answers 500 storage_failed and refunds the credit when Storage fails', async () => {
    const key = await createKey(db.sql, { credits: 1 })
    storage.failUploadsWith = 500
    const res = await postTryOn(url, { apiKey: key.apiKey, body: tryOnBody() })
    expectErrorBody(res, 500, 'storage_failed')
    expect(await ledgerCheck(db.sql, key.accountId)).toMatchObject({ balance: 1, ledgerBalance: 1, reserved: 0, heldByTryOns: 0 })
    const [tryOn] = await db.sql`select status from tryon.tryons where account_id = ${key.accountId}`
    expect(tryOn.status).toBe('failed')
  })
})
