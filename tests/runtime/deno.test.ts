import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encodeBase64 } from '../../shared/images/base64.ts'
import { readImageHeader } from '../../shared/images/sniff.ts'
import { createKey, createTestDatabase, ledgerCheck, type TestDatabase } from '../support/database.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../support/images.ts'
import { TEST_CLIENT_ADDRESS_SECRET, denoNetworkEnv, freePort, startProcess, type RunningProcess } from '../support/process.ts'
import { abortMidBody, expectErrorBody, postTryOn } from '../support/stack.ts'

describe('the Supabase entry under Deno', () => {
  let db: TestDatabase
  let deno: RunningProcess
  let dataDir: string
  let url: string

  beforeAll(async () => {
    db = await createTestDatabase('postgres')
    dataDir = await mkdtemp(join(tmpdir(), 'tryon-deno-'))
    const port = await freePort()
    url = `http://127.0.0.1:${port}/tryon-api`
    deno = startProcess('node_modules/.bin/deno', ['run', '--allow-all', '--no-prompt', 'supabase/functions/tryon-api/index.ts'], {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      // Whichever Deno test runs first fills Deno's cache: it needs this machine's registry and certificates.
      ...denoNetworkEnv(),
      DATABASE_URL: db.url,
      PORT: String(port),
      TRYON_STORAGE: 'local',
      TRYON_DATA_DIR: dataDir,
      TRYON_ALLOW_PRIVATE_IMAGE_HOSTS: '1',
      TRYON_CLIENT_ADDRESS_SECRET: TEST_CLIENT_ADDRESS_SECRET,
      NO_COLOR: '1',
    })
    await deno.waitFor(/Listening on/, 120_000)
  }, 150_000)

  afterAll(async () => {
    await deno?.stop()
    await db?.close()
    if (dataDir) await rm(dataDir, { recursive: true, force: true })
  })

  it('serves a full try-on against the real Postgres and stores the result', async () => {
    const key = await createKey(db.sql, { credits: 2 })
    const res = await postTryOn(url, {
      apiKey: key.apiKey,
      body: {
        userPhoto: encodeBase64(makeShopperPhoto({ width: 240, height: 420, format: 'jpeg' }).bytes),
        productImage: `data:image/webp;base64,${encodeBase64(makeGarmentPhoto({ kind: 'jacket', color: [90, 60, 30], width: 220, height: 240, format: 'webp' }).bytes)}`,
        clothingType: 'Jacket',
      },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ success: true, creditsCharged: 1, creditsRemaining: 1 })

    const path = new URL(res.body.resultUrl).pathname.replace('/storage/v1/object/public/tryon-results/', '')
    const stored = await readFile(join(dataDir, 'storage', 'tryon-results', path))
    expect(readImageHeader(stored)).toEqual({ format: 'jpeg', width: 240, height: 420 })
    const check = await ledgerCheck(db.sql, key.accountId)
    expect(check).toMatchObject({ balance: 1, ledgerBalance: 1, reserved: 0 })
  })

  it('logs a client that goes away mid-body once, at info level, as 499, and charges nothing', async () => {
    const key = await createKey(db.sql, { credits: 1 })
    const requestId = `gone-${Date.now()}`
    await abortMidBody(url, { apiKey: key.apiKey, requestId })
    await deno.waitFor(new RegExp(`"msg":"request","requestId":"${requestId}"`))
    const lines = deno
      .output()
      .split('\n')
      .filter((line) => line.includes(requestId))
      .map((line) => JSON.parse(line))
    expect(lines).toEqual([expect.objectContaining({ level: 'info', msg: 'request', status: 499 })])
    expect(await ledgerCheck(db.sql, key.accountId)).toMatchObject({ balance: 1, ledgerBalance: 1, reserved: 0 })
  })

  it('answers errors with the same bodies as on Node', async () => {
    expectErrorBody(await postTryOn(url, { body: {} }), 401, 'authentication_required', 'Authentication required')
    const key = await createKey(db.sql, { credits: 0 })
    expectErrorBody(await postTryOn(url, { apiKey: key.apiKey, body: { userPhoto: 'x', productImage: 'y' } }), 402, 'insufficient_credits')
  })

  it('counts clients by the X-Real-IP header the gateway sets, as on Supabase, and one unknown client without it', async () => {
    const key = await createKey(db.sql, { credits: 10, origins: ['https://shop.example'] })
    await db.sql`select tryon.set_key_limits(${key.keyId}, '{"perClientDailyRefunded": 1}', true)`
    const body = {
      userPhoto: encodeBase64(makeShopperPhoto({ width: 160, height: 280, format: 'jpeg' }).bytes),
      productImage: encodeBase64(
        makeGarmentPhoto({ kind: 'gown-with-train', color: [242, 236, 224], width: 160, height: 160, transparentBackground: true }).bytes,
      ),
      productType: 'wedding-dress',
    }
    const send = (realIp?: string) =>
      postTryOn(url, {
        apiKey: key.apiKey,
        body,
        headers: { Origin: 'https://shop.example', 'X-Tryon-Scenario': 'train_score_low', ...(realIp && { 'X-Real-IP': realIp }) },
      })
    expect((await send('198.51.100.1')).body).toMatchObject({ success: true, creditsCharged: 0 })
    const refused = await send('198.51.100.1')
    expectErrorBody(refused, 429, 'free_deliveries_exhausted')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await send('198.51.100.2')).status).toBe(200)
    expect((await send()).status).toBe(200)
    expectErrorBody(await send(), 429, 'free_deliveries_exhausted')
    expect(await ledgerCheck(db.sql, key.accountId)).toMatchObject({ balance: 10, reserved: 0, ledgerBalance: 10 })
  })
})
