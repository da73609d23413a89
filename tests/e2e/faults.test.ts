import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectDatabase, createPostgresBilling } from '../../shared/billing/store.ts'
import { credentialFrom } from '../../shared/auth/api-key.ts'
import type { TryOnEngine } from '../../shared/engine/types.ts'
import { encodeBase64 } from '../../shared/images/base64.ts'
import { serverUrl } from '../support/database.ts'
import { eventually } from '../support/eventually.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../support/images.ts'
import { expectErrorBody, postTryOn, startTestStack, type ApiResponse, type TestStack } from '../support/stack.ts'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts'

const body = {
  userPhoto: encodeBase64(makeShopperPhoto({ width: 160, height: 280, format: 'jpeg' }).bytes),
  productImage: encodeBase64(makeGarmentPhoto({ kind: 'tshirt', color: [90, 60, 160], width: 160, height: 160, format: 'png' }).bytes),
}

/** A response to a request that met a fault: a documented JSON error, never a hang or an HTML page. */
function expectCleanFailure(res: ApiResponse) {
  const context = JSON.stringify({ status: res.status, headers: Object.fromEntries(res.headers), body: res.body })
  expect(res.status, context).toBeGreaterThanOrEqual(500)
  expect(Object.keys(res.body).sort(), context).toEqual(['error', 'errorCode', 'success'])
  expect(['database_unavailable', 'internal_error'], context).toContain(res.body.errorCode)
}

/** A test stack whose service reaches Postgres through a TCP proxy the test can cut, stall or make drop replies. */
async function startProxiedStack(): Promise<{ t: TestStack; proxy: TcpProxy }> {
  const target = new URL(serverUrl)
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
  const t = await startTestStack({ serviceDatabaseUrl: (url) => proxy.through(url), env: { TRYON_DATABASE_TIMEOUT_MS: '1500' } })
  return { t, proxy }
}

describe('database faults between the service and Postgres', () => {
  let t: TestStack
  let proxy: TcpProxy

  beforeAll(async () => {
    ;({ t, proxy } = await startProxiedStack())
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
    // postgres.js may still send the refused call once it reconnects; a reservation it makes is refunded at once.
    await eventually(async () => (await t.ledger(key)).reserved === 0)
    expect(await t.ledger(key)).toEqual({ balance: 2, reserved: 0, ledgerBalance: 2, ledgerReserved: 0, heldByTryOns: 0 })
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

describe('a settlement whose reply is lost', () => {
  let t: TestStack
  let proxy: TcpProxy

  beforeAll(async () => {
    ;({ t, proxy } = await startProxiedStack())
  })
  afterAll(async () => {
    await t?.close()
    await proxy?.close()
  })

  const post = (apiKey: string, headers: Record<string, string> = {}) => postTryOn(t.stack.functionUrl, { apiKey, body, headers })
  const movements = (accountId: string) =>
    t.db!
      .sql`select kind, delta::int, reserved_delta::int, reason from tryon.ledger where account_id = ${accountId} and kind <> 'topup' order by id`

  it('asks again on a fresh connection after the charge commits, and answers 200 with the result and one charge', async () => {
    const key = await t.createKey({ credits: 3 })
    const dropped = proxy.dropReplyTo('settle_tryon')
    const res = await post(key.apiKey)
    expect(await dropped).toBe(1)

    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({
      success: true,
      creditsCharged: 1,
      creditsRemaining: 2,
      shortId: expect.stringMatching(/^[0-9A-Za-z]{10}$/),
    })
    const image = await fetch(res.body.resultUrl)
    expect(image.status).toBe(200)
    expect(image.headers.get('content-type')).toBe('image/jpeg')
    expect(await movements(key.accountId)).toEqual([
      { kind: 'reservation', delta: -1, reserved_delta: 1, reason: 'standard' },
      { kind: 'charge', delta: 0, reserved_delta: -1, reason: 'generated' },
    ])
    expect(await t.ledger(key)).toEqual({ balance: 2, reserved: 0, ledgerBalance: 2, ledgerReserved: 0, heldByTryOns: 0 })
    const line = t.logs.find((l) => l.msg === 'tryon' && l.tryOnId === res.body.tryOnId)
    expect(line).toMatchObject({ outcome: 'generated', creditsCharged: 1, settleRetries: expect.any(Number) })
  })

  it('says the outcome is unknown when the database is gone for good, and the same Idempotency-Key then replays the success', async () => {
    const key = await t.createKey({ credits: 3 })
    const dropped = proxy.dropReplyTo('settle_tryon', { after: 'refuse' })
    let first: Awaited<ReturnType<typeof post>> | undefined
    try {
      first = await post(key.apiKey, { 'Idempotency-Key': 'checkout-7' })
      expect(await dropped).toBe(1)
    } finally {
      proxy.setMode('up')
    }
    expectErrorBody(first, 500, 'settlement_unknown', /same Idempotency-Key/)
    expect(first.body.error).not.toMatch(/no credits were charged/i)

    const again = await post(key.apiKey, { 'Idempotency-Key': 'checkout-7' })
    expect(again.status, JSON.stringify(again.body)).toBe(200)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(first.body.error).toContain(again.body.tryOnId)
    expect(again.body).toMatchObject({ success: true, creditsCharged: 1, creditsRemaining: 2 })
    expect((await fetch(again.body.resultUrl)).status).toBe(200)
    expect(await movements(key.accountId)).toEqual([
      { kind: 'reservation', delta: -1, reserved_delta: 1, reason: 'standard' },
      { kind: 'charge', delta: 0, reserved_delta: -1, reason: 'generated' },
    ])
    // The sweeper finds nothing to return: the charge stands.
    expect(await t.stack.deps.billing.sweep(0)).toBe(0)
    expect(await t.balanceOf(key)).toBe(2)
  })

  it('tells a call that never reached the database from one that may have committed', async () => {
    const refused = createPostgresBilling(connectDatabase('postgres://postgres@127.0.0.1:1/postgres', { max: 1 }), { timeoutMs: 5000 })
    const never = await refused.settle({ tryOnId: crypto.randomUUID(), outcome: 'generation_failed' }).catch((error: unknown) => error)
    expect(never).toMatchObject({ name: 'DatabaseUnavailable', mayHaveCommitted: false })

    const sql = connectDatabase(proxy.through(t.db!.url), { max: 1 })
    // 300 ms against 2 × 400 ms of latency: late whatever the machine's load; the patient one opens the connection.
    const hasty = createPostgresBilling(sql, { timeoutMs: 300 })
    const patient = createPostgresBilling(sql, { timeoutMs: 10_000 })
    try {
      await patient.sweep(3600)
      // Sent on an open connection, answered too late: it may have run.
      proxy.setLatency(400)
      const late = await hasty.sweep(3600).catch((error: unknown) => error)
      expect(late).toMatchObject({ name: 'DatabaseUnavailable', mayHaveCommitted: true })
      proxy.setLatency(0)

      // Sent, then the connection dropped before the reply: it may have run.
      const dropped = proxy.dropReplyTo('sweep_reservations')
      const cut = await hasty.sweep(3600).catch((error: unknown) => error)
      expect(await dropped).toBe(1)
      expect(cut).toMatchObject({ name: 'DatabaseUnavailable', mayHaveCommitted: true })

      // An error the server sent about the statement is a definite answer, not a lost reply.
      await expect(patient.settle({ tryOnId: crypto.randomUUID(), outcome: 'generation_failed' })).rejects.toMatchObject({
        name: 'PostgresError',
        code: 'P0002',
      })
    } finally {
      proxy.setLatency(0)
      await sql.end({ timeout: 0 })
    }
  })

  it('refunds at once a reservation that lands after its caller gave up', async () => {
    const key = await t.createKey({ credits: 2 })
    const sql = connectDatabase(proxy.through(t.db!.url), { max: 1 })
    const hasty = createPostgresBilling(sql, { timeoutMs: 300 })
    try {
      await createPostgresBilling(sql, { timeoutMs: 10_000 }).sweep(3600)
      proxy.setLatency(400)
      const tryOnId = crypto.randomUUID()
      const credential = (await credentialFrom(key.apiKey))!
      const begun = await hasty
        .begin({ keyHash: credential.keyHash, origin: null, tryOnId, productKind: 'standard' })
        .catch((error: unknown) => error)
      expect(begun).toMatchObject({ name: 'DatabaseUnavailable' })
      await eventually(async () => (await movements(key.accountId)).length === 2)
      expect(await movements(key.accountId)).toEqual([
        { kind: 'reservation', delta: -1, reserved_delta: 1, reason: 'standard' },
        { kind: 'refund', delta: 1, reserved_delta: -1, reason: 'database_unavailable' },
      ])
      expect(await t.ledger(key)).toEqual({ balance: 2, reserved: 0, ledgerBalance: 2, ledgerReserved: 0, heldByTryOns: 0 })
    } finally {
      proxy.setLatency(0)
      await sql.end({ timeout: 0 })
    }
  })
})

describe('a refund that finds the try-on charged', () => {
  let t: TestStack
  let failAfterCharge = false

  beforeAll(async () => {
    t = await startTestStack({
      override: (deps) => ({
        ...deps,
        billing: {
          ...deps.billing,
          // The charge commits, then the call fails in a way that is not a lost connection (a driver fault).
          async settle(request) {
            const settlement = await deps.billing.settle(request)
            if (failAfterCharge && request.outcome === 'generated') {
              failAfterCharge = false
              throw new Error('the reply to settle_tryon could not be read')
            }
            return settlement
          },
        },
      }),
    })
  })
  afterAll(() => t?.close())

  it('answers 200 with the result it charged for, never "no credits were charged"', async () => {
    const key = await t.createKey({ credits: 2 })
    failAfterCharge = true
    const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body })
    expect(failAfterCharge).toBe(false)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ success: true, creditsCharged: 1, creditsRemaining: 1, shortId: expect.any(String) })
    expect((await fetch(res.body.resultUrl)).status).toBe(200)
    expect(await t.ledger(key)).toEqual({ balance: 1, reserved: 0, ledgerBalance: 1, ledgerReserved: 0, heldByTryOns: 0 })
    expect(t.logs).toContainEqual(
      expect.objectContaining({ msg: 'tryon', tryOnId: res.body.tryOnId, outcome: 'charged', chargedDespite: 'internal_error' }),
    )
  })
})

describe('hanging steps', () => {
  const never = new Promise<never>(() => {})

  describe('an engine that never answers', () => {
    let t: TestStack
    beforeAll(async () => {
      const hanging: TryOnEngine = { name: 'hanging', generate: () => never }
      t = await startTestStack({
        env: { TRYON_GENERATION_TIMEOUT_MS: '300' },
        // Live keys get the engine that never answers.
        override: (deps) => ({ ...deps, engines: { ...deps.engines, live: hanging } }),
      })
    })
    afterAll(() => t?.close())

    it('is stopped at the deadline: 500 generation_failed, refunded', async () => {
      const key = await t.createKey({ credits: 1, mode: 'live' })
      const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body })
      expectErrorBody(res, 500, 'generation_failed', /took too long/)
      expect(await t.ledger(key)).toMatchObject({ balance: 1, reserved: 0, ledgerBalance: 1 })
    })
  })

  describe('a store that never answers', () => {
    let t: TestStack
    // Its own stack with the usual generation deadline: a short one would also stop a slow local engine.
    beforeAll(async () => {
      t = await startTestStack({
        env: { TRYON_STORE_TIMEOUT_MS: '300' },
        override: (deps) => ({ ...deps, store: { ...deps.store, put: () => never } }),
      })
    })
    afterAll(() => t?.close())

    it('is stopped at its deadline: 500 storage_failed, refunded', async () => {
      const key = await t.createKey({ credits: 1 })
      const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body })
      expectErrorBody(res, 500, 'storage_failed')
      expect(await t.ledger(key)).toMatchObject({ balance: 1, reserved: 0, ledgerBalance: 1 })
    })
  })
})
