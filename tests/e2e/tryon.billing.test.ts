import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encodeBase64 } from '../../shared/images/base64.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../support/images.ts'
import { postTryOn, startTestStack, type TestStack } from '../support/stack.ts'

describe('billing under concurrency', () => {
  let t: TestStack
  beforeAll(async () => {
    t = await startTestStack()
  })
  afterAll(() => t?.close())

  const body = {
    userPhoto: encodeBase64(makeShopperPhoto({ width: 160, height: 280, format: 'jpeg' }).bytes),
    productImage: encodeBase64(makeGarmentPhoto({ kind: 'tshirt', color: [240, 200, 20], width: 160, height: 160, format: 'png' }).bytes),
  }

  it('gives exactly five results to twenty concurrent requests on five credits', async () => {
    const key = await t.createKey({ credits: 5 })
    const responses = await Promise.all(Array.from({ length: 20 }, () => postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body })))

    const ok = responses.filter((r) => r.status === 200)
    expect(ok).toHaveLength(5)
    expect(responses.filter((r) => r.status === 402)).toHaveLength(15)
    expect(new Set(ok.map((r) => r.body.tryOnId)).size).toBe(5)
    for (const r of ok) expect(r.body.creditsRemaining).toBeLessThanOrEqual(4)

    expect(await t.ledger(key)).toEqual({ balance: 0, reserved: 0, ledgerBalance: 0, ledgerReserved: 0, heldByTryOns: 0 })
    const [charges] = await t.stack.sql`
      select count(*)::int as n, sum(-reserved_delta)::int as credits from tryon.ledger
       where account_id = ${key.accountId} and kind = 'charge'`
    expect(charges).toEqual({ n: 5, credits: 5 })
  })

  it('counts a key down one credit per try-on and keeps the balance equal to the ledger', async () => {
    const key = await t.createKey({ credits: 4 })
    const remaining: number[] = []
    for (let i = 0; i < 4; i++) {
      const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body })
      expect(res.status).toBe(200)
      remaining.push(res.body.creditsRemaining)
    }
    expect(remaining).toEqual([3, 2, 1, 0])
    expect((await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body })).status).toBe(402)
    const check = await t.ledger(key)
    expect(check.balance).toBe(check.ledgerBalance)
    expect(check.balance).toBe(0)
  })
})
