import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encodeBase64 } from '../../shared/images/base64.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../support/images.ts'
import { startImageServer, type ImageServer } from '../support/image-server.ts'
import { expectErrorBody, postTryOn, startTestStack, type TestStack } from '../support/stack.ts'
import type { CreatedKey } from '../support/database.ts'

const person = makeShopperPhoto({ width: 200, height: 320, format: 'jpeg' }).bytes
const garment = makeGarmentPhoto({ kind: 'tshirt', color: [30, 140, 60], width: 200, height: 200, format: 'png' }).bytes
const body = { userPhoto: encodeBase64(person), productImage: encodeBase64(garment) }

describe('idempotent retries (Idempotency-Key)', () => {
  let t: TestStack
  let images: ImageServer
  let release: () => void = () => {}
  let gate: Promise<void> = Promise.resolve()
  let flaky = true

  beforeAll(async () => {
    t = await startTestStack()
    images = await startImageServer({
      '/slow.png': { bytes: garment, contentType: 'image/png', before: () => gate },
      '/flaky.png': { bytes: garment, contentType: 'image/png', unavailable: () => flaky },
    })
  })
  afterAll(async () => {
    release()
    await images?.close()
    await t?.close()
  })

  const post = (key: CreatedKey, idempotencyKey: string | undefined, payload: unknown = body, headers: Record<string, string> = {}) =>
    postTryOn(t.stack.functionUrl, {
      apiKey: key.apiKey,
      body: payload,
      headers: { ...(idempotencyKey && { 'Idempotency-Key': idempotencyKey }), ...headers },
    })

  async function movements(key: CreatedKey) {
    return t.stack
      .sql`select kind, delta::int, reason from tryon.ledger where account_id = ${key.accountId} and kind <> 'topup' order by id`
  }

  it('answers a retry with the original response and charges once', async () => {
    const key = await t.createKey({ credits: 3 })
    const first = await post(key, 'order-42-tryon')
    const again = await post(key, 'order-42-tryon')
    expect(first.status).toBe(200)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    expect(again.status).toBe(200)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body).toEqual(first.body)
    expect(first.body).toMatchObject({ creditsRemaining: 2, creditsCharged: 1 })
    expect(await movements(key)).toEqual([
      { kind: 'reservation', delta: -1, reason: 'standard' },
      { kind: 'charge', delta: 0, reason: 'generated' },
    ])
    expect(await t.balanceOf(key)).toBe(2)
  })

  it('replays a wedding-dress response with its bridal verdict', async () => {
    // The "wedding dress" here is the T-shirt photo, which the result check rightly fails as a dress (it covers no
    // legs); this test is about the replay of a charged bridal answer, so the key is not checked (level off).
    const key = await t.createKey({ credits: 4, quality: 'off' })
    const wedding = { ...body, productType: 'wedding-dress' }
    const first = await post(key, 'gown-1', wedding, { 'X-Tryon-Scenario': 'train_pretreatment_unavailable' })
    const again = await post(key, 'gown-1', wedding, { 'X-Tryon-Scenario': 'train_pretreatment_unavailable' })
    expect(first.body.bridal).toEqual({ applied: false, trainScore: null, reason: 'train_pretreatment_unavailable' })
    expect(again.body).toEqual(first.body)
    expect(await t.balanceOf(key)).toBe(3)
  })

  it('refuses the same key with a different body with 422 and charges nothing', async () => {
    const key = await t.createKey({ credits: 3 })
    expect((await post(key, 'k-1')).status).toBe(200)
    const other = await post(key, 'k-1', { ...body, clothingType: 'Shirt' })
    expectErrorBody(other, 422, 'idempotency_key_reused')
    const forced = await post(key, 'k-1', body, { 'X-Tryon-Scenario': 'content_rejected' })
    expectErrorBody(forced, 422, 'idempotency_key_reused')
    expect(await t.balanceOf(key)).toBe(2)
  })

  it('answers 409 while the first request with the key is still running, then replays it', async () => {
    const key = await t.createKey({ credits: 3 })
    gate = new Promise((resolve) => (release = resolve))
    const slow = { ...body, productImage: images.url('/slow.png') }
    const first = post(key, 'held')
    const firstSlow = post(key, 'held-slow', slow)
    // The slow request is in flight once its image has been asked for.
    while (!images.requests.includes('/slow.png')) await new Promise((resolve) => setImmediate(resolve))
    const during = await post(key, 'held-slow', slow)
    expectErrorBody(during, 409, 'idempotency_key_in_progress')
    release()
    const done = await firstSlow
    expect(done.status).toBe(200)
    expect((await first).status).toBe(200)
    const after = await post(key, 'held-slow', slow)
    expect(after.body).toEqual(done.body)
    expect(await t.balanceOf(key)).toBe(1)
  })

  it('charges exactly once when ten identical requests race', async () => {
    const key = await t.createKey({ credits: 10 })
    const responses = await Promise.all(Array.from({ length: 10 }, () => post(key, 'race')))
    const ok = responses.filter((r) => r.status === 200)
    expect(ok.length).toBeGreaterThanOrEqual(1)
    expect(new Set(ok.map((r) => r.body.tryOnId)).size).toBe(1)
    for (const r of responses.filter((r) => r.status !== 200)) expectErrorBody(r, 409, 'idempotency_key_in_progress')
    expect(await t.balanceOf(key)).toBe(9)
    expect(await t.ledger(key)).toMatchObject({ balance: 9, ledgerBalance: 9, reserved: 0 })
  })

  it('lets a failed request be retried with the same key', async () => {
    const key = await t.createKey({ credits: 2 })
    const payload = { ...body, productImage: images.url('/flaky.png') }
    flaky = true
    expectErrorBody(await post(key, 'retry-me', payload), 400, 'image_unreachable')
    flaky = false
    const retried = await post(key, 'retry-me', payload)
    expect(retried.status).toBe(200)
    expect(retried.headers.get('idempotent-replayed')).toBeNull()
    expect(await t.balanceOf(key)).toBe(1)
    expect((await movements(key)).map((m) => m.kind)).toEqual(['reservation', 'refund', 'reservation', 'charge'])
  })

  it('scopes keys to the API key', async () => {
    const a = await t.createKey({ credits: 1 })
    const b = await t.createKey({ credits: 1 })
    const fromA = await post(a, 'shared-name')
    const fromB = await post(b, 'shared-name')
    expect(fromA.status).toBe(200)
    expect(fromB.status).toBe(200)
    expect(fromB.body.tryOnId).not.toBe(fromA.body.tryOnId)
  })

  it('forgets a key after 24 hours', async () => {
    const key = await t.createKey({ credits: 2 })
    const first = await post(key, 'yesterday')
    await t.stack.sql`update tryon.idempotency_keys set created_at = now() - interval '25 hours' where tryon_id = ${first.body.tryOnId}`
    const later = await post(key, 'yesterday')
    expect(later.status).toBe(200)
    expect(later.body.tryOnId).not.toBe(first.body.tryOnId)
    expect(await t.balanceOf(key)).toBe(0)
  })

  it.each([['a space inside'], ['x'.repeat(256)], ['é']])('refuses a malformed Idempotency-Key (%#) with 400', async (value) => {
    const key = await t.createKey({ credits: 1 })
    expectErrorBody(await post(key, value), 400, 'invalid_request', /Idempotency-Key/)
    expect(await t.balanceOf(key)).toBe(1)
  })

  it('releases the key of a reservation the sweeper refunds', async () => {
    const key = await t.createKey({ credits: 1 })
    const [row] = await t.stack.sql`select id from tryon.api_keys where account_id = ${key.accountId}`
    // A try-on left reserved by a crashed process, with its key claimed.
    const tryOnId = crypto.randomUUID()
    const keyHash = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(key.apiKey)))
    await t.stack
      .sql`select * from tryon.begin_tryon(${Buffer.from(keyHash)}, null, ${tryOnId}, 'standard', null, null, null, 'crashed', ${Buffer.alloc(32, 1)})`
    expectErrorBody(await post(key, 'crashed'), 422, 'idempotency_key_reused')
    await t.stack.sql`update tryon.tryons set created_at = now() - interval '11 minutes' where id = ${tryOnId}`
    expect(await t.stack.deps.billing.sweep(600)).toBe(1)
    const [left] = await t.stack.sql`select count(*)::int as n from tryon.idempotency_keys where api_key_id = ${row.id}`
    expect(left.n).toBe(0)
    expect((await post(key, 'crashed')).status).toBe(200)
  })
})
