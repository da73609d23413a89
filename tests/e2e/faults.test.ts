import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TryOnEngine } from '../../shared/engine/types.ts'
import { encodeBase64 } from '../../shared/images/base64.ts'
import { serverUrl } from '../support/database.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../support/images.ts'
import { expectErrorBody, postTryOn, startTestStack, type ApiResponse, type TestStack } from '../support/stack.ts'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts'

const body = {
  userPhoto: encodeBase64(makeShopperPhoto({ width: 160, height: 280, format: 'jpeg' }).bytes),
  productImage: encodeBase64(makeGarmentPhoto({ kind: 'tshirt', color: [90, 60, 160], width: 160, height: 160, format: 'png' }).bytes),
}

/** A response to a request that met a fault: a documented JSON error, never a hang or an HTML page. */
function expectCleanFailure(res: ApiResponse) {
  expect(res.status, JSON.stringify(res.body)).toBeGreaterThanOrEqual(500)
  expect(Object.keys(res.body).sort()).toEqual(['error', 'errorCode', 'success'])
  expect(['database_unavailable', 'internal_error']).toContain(res.body.errorCode)
}

describe('database faults between the service and Postgres', () => {
  let t: TestStack
  let proxy: TcpProxy

  beforeAll(async () => {
    const target = new URL(serverUrl)
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
    t = await startTestStack({ serviceDatabaseUrl: (url) => proxy.through(url), env: { TRYON_DATABASE_TIMEOUT_MS: '1500' } })
  })
  afterAll(async () => {
    await t?.close()
    await proxy?.close()
  })

  const post = (apiKey: string) => postTryOn(t.stack.functionUrl, { apiKey, body })

  it('answers 500 database_unavailable while Postgres refuses connections, and recovers by itself', async () => {
    const key = await t.createKey({ credits: 3 })
    proxy.setMode('refuse')
    proxy.resetAll()
    expectErrorBody(await post(key.apiKey), 500, 'database_unavailable', /temporarily unavailable/)
    proxy.setMode('up')
    const after = await post(key.apiKey)
    expect(after.status, JSON.stringify(after.body)).toBe(200)
    expect(await t.balanceOf(key)).toBe(2)
  })

  it('gives up after the database timeout when Postgres stops answering, then recovers', async () => {
    const key = await t.createKey({ credits: 3 })
    proxy.setMode('blackhole')
    proxy.resetAll()
    expectErrorBody(await post(key.apiKey), 500, 'database_unavailable')
    proxy.setMode('up')
    proxy.resetAll()
    expect((await post(key.apiKey)).status).toBe(200)
  })

  it('keeps working, only slower, with 40 ms of latency each way', async () => {
    const key = await t.createKey({ credits: 2 })
    proxy.setLatency(40)
    try {
      const res = await post(key.apiKey)
      expect(res.status).toBe(200)
      expect(res.body.creditsRemaining).toBe(1)
    } finally {
      proxy.setLatency(0)
    }
  })

  it('loses and double-spends nothing when connections are reset in the middle of concurrent try-ons', async () => {
    const key = await t.createKey({ credits: 30 })
    const inFlight = Array.from({ length: 24 }, () => post(key.apiKey))
    // Reset every connection a few times while the requests run.
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 40))
      proxy.resetAll()
    }
    const responses = await Promise.all(inFlight)
    for (const res of responses) if (res.status !== 200) expectCleanFailure(res)
    const delivered = responses.filter((r) => r.status === 200).length

    // Reservations whose settlement was cut off are returned by the sweeper.
    await t.stack.deps.billing.sweep(0)
    const check = await t.ledger(key)
    expect(check).toEqual({ balance: 30 - delivered, reserved: 0, ledgerBalance: 30 - delivered, ledgerReserved: 0, heldByTryOns: 0 })
    const [charges] = await t.db!.sql`
      select count(*)::int as n from tryon.ledger where account_id = ${key.accountId} and kind = 'charge'`
    expect(charges.n).toBe(delivered)
    // And the service works again without a restart.
    expect((await post(key.apiKey)).status).toBe(200)
  })
})

describe('hanging steps', () => {
  let t: TestStack
  const never = new Promise<never>(() => {})

  beforeAll(async () => {
    t = await startTestStack({
      env: { TRYON_GENERATION_TIMEOUT_MS: '300', TRYON_STORE_TIMEOUT_MS: '300' },
      override: (deps) => {
        const hanging: TryOnEngine = { name: 'hanging', generate: () => never }
        return {
          ...deps,
          // Live keys get an engine that never answers; test keys keep the local one but a store that never answers.
          engines: { ...deps.engines, live: hanging },
          store: { put: (path, bytes, type) => (hangStore ? never : deps.store.put(path, bytes, type)) },
        }
      },
    })
  })
  afterAll(() => t?.close())
  let hangStore = false

  it('stops an engine that never answers at the deadline: 500 generation_failed, refunded', async () => {
    const key = await t.createKey({ credits: 1, mode: 'live' })
    const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body })
    expectErrorBody(res, 500, 'generation_failed', /took too long/)
    expect(await t.ledger(key)).toMatchObject({ balance: 1, reserved: 0, ledgerBalance: 1 })
  })

  it('stops a store that never answers: 500 storage_failed, refunded', async () => {
    hangStore = true
    try {
      const key = await t.createKey({ credits: 1 })
      const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body })
      expectErrorBody(res, 500, 'storage_failed')
      expect(await t.ledger(key)).toMatchObject({ balance: 1, reserved: 0, ledgerBalance: 1 })
    } finally {
      hangStore = false
    }
  })
})
