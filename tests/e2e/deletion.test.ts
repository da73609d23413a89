import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runAdmin } from '../../cli/admin.ts'
import { hashApiKey } from '../../shared/auth/api-key.ts'
import { DatabaseUnavailable } from '../../shared/billing/store.ts'
import { encodeBase64 } from '../../shared/images/base64.ts'
import type { CreatedKey, DatabaseKind } from '../support/database.ts'
import { eventually } from '../support/eventually.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../support/images.ts'
import { postTryOn, startTestStack, type TestStack } from '../support/stack.ts'

const person = encodeBase64(makeShopperPhoto({ width: 200, height: 320, format: 'jpeg' }).bytes)
// A red T-shirt: the drawn shopper already wears a blue one, and a blue T-shirt put on it changes so little of the
// photo that the result check reads it as not put on (reported as a blind spot of shared/quality/measure.ts).
const tshirt = encodeBase64(makeGarmentPhoto({ kind: 'tshirt', color: [200, 40, 40], width: 160, height: 160, format: 'png' }).bytes)

describe.each<DatabaseKind>(['postgres', 'pglite'])('deleting a shopper image on %s', (database) => {
  let t: TestStack

  beforeAll(async () => {
    // The dev stack's timer would also remove queued images; here only the CLI does (the timer has its own test).
    t = await startTestStack({ database, env: { TRYON_SWEEP_INTERVAL_MS: '3600000' } })
  })
  afterAll(() => t?.close())

  const sql = () => t.db?.sql ?? t.stack.sql
  const admin = (...argv: string[]) => runAdmin(sql(), argv, { store: () => t.stack.deps.store }) as Promise<Record<string, unknown>>
  const shareLink = (shortId: string) => `${t.stack.functionUrl}/s/${shortId}`
  const fileOf = (resultUrl: string) => join(t.dataDir, 'storage', new URL(resultUrl).pathname.replace('/storage/v1/object/public/', ''))

  async function tryOn(key: CreatedKey, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    const res = await postTryOn(t.stack.functionUrl, {
      apiKey: key.apiKey,
      body: { userPhoto: person, productImage: tshirt, parentUrl: 'https://shop.example/p/red-tee?ref=mail#size', locale: 'fr', ...extra },
      headers,
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return res.body as { tryOnId: string; shortId: string; resultUrl: string }
  }

  const ledgerOf = (key: CreatedKey) =>
    sql()`select id::text, tryon_id, kind, delta::int, reserved_delta::int, reason, created_at from tryon.ledger where account_id = ${key.accountId} order by id`

  it('removes the image, its share link and the personal fields, keeps the ledger, and says so when asked again', async () => {
    const key = await t.createKey({ credits: 5 })
    const result = await tryOn(key, {}, { 'Idempotency-Key': 'order-1' })
    expect((await fetch(result.resultUrl)).status).toBe(200)
    expect((await fetch(shareLink(result.shortId), { redirect: 'manual' })).status).toBe(302)
    expect(existsSync(fileOf(result.resultUrl))).toBe(true)
    const ledgerBefore = await ledgerOf(key)
    const [before] = await sql()`select * from tryon.tryons where id = ${result.tryOnId}`

    expect(await admin('tryons', 'delete', result.tryOnId)).toEqual({ tryOnId: result.tryOnId, deleted: true, imagesRemoved: 1 })

    const image = await fetch(result.resultUrl)
    expect(image.status).toBe(404)
    const share = await fetch(shareLink(result.shortId), { redirect: 'manual' })
    expect(share.status).toBe(404)
    expect(await share.json()).toEqual({ error: 'requested path is invalid' })
    expect(existsSync(fileOf(result.resultUrl))).toBe(false)

    const [after] = await sql()`select * from tryon.tryons where id = ${result.tryOnId}`
    expect(after).toMatchObject({ short_id: null, result_path: null, locale: null, client_hash: null, deleted_at: expect.any(Date) })
    // What billing and the shop's analytics need stays: the key, the product, the outcome, the credits, the page.
    for (const field of [
      'account_id',
      'api_key_id',
      'product_kind',
      'status',
      'outcome',
      'credits_reserved',
      'credits_charged',
      'created_at',
      'settled_at',
      'origin',
      'clothing_type',
    ]) {
      expect(after[field], field).toEqual(before[field])
    }
    expect(after.parent_url).toBe('https://shop.example/p/red-tee')
    const [claims] = await sql()`select count(*)::int as n from tryon.idempotency_keys where tryon_id = ${result.tryOnId}`
    expect(claims.n).toBe(0)
    expect(await ledgerOf(key)).toEqual(ledgerBefore)
    expect(await t.ledger(key)).toMatchObject({ balance: 4, ledgerBalance: 4, reserved: 0, ledgerReserved: 0 })

    expect(await admin('tryons', 'delete', result.tryOnId)).toEqual({
      tryOnId: result.tryOnId,
      deleted: false,
      alreadyDeleted: true,
      imagesRemoved: 0,
      message: `try-on ${result.tryOnId} was already deleted; nothing to do`,
    })
    expect(await ledgerOf(key)).toEqual(ledgerBefore)
  })

  it('deletes every try-on of an account before a date, failed ones included, and only those', async () => {
    const key = await t.createKey({ credits: 10 })
    const other = await t.createKey({ credits: 2 })
    const first = await tryOn(key)
    const second = await tryOn(key)
    const failed = await postTryOn(t.stack.functionUrl, {
      apiKey: key.apiKey,
      body: { userPhoto: person, productImage: tshirt },
      headers: { 'X-Tryon-Scenario': 'generation_failed' },
    })
    expect(failed.status).toBe(500)
    const later = await tryOn(key)
    const untouched = await tryOn(other)
    // `later` was made after the cut-off; the others a day before it.
    await sql()`update tryon.tryons set created_at = created_at - interval '1 day' where account_id = ${key.accountId} and id <> ${later.tryOnId}`
    const cutOff = new Date(Date.now() - 3_600_000).toISOString()
    const ledgerBefore = await ledgerOf(key)

    expect(await admin('tryons', 'delete', '--account', key.accountId, '--before', cutOff)).toEqual({
      accountId: key.accountId,
      before: cutOff,
      deleted: 3,
      alreadyDeleted: 0,
      running: 0,
      imagesRemoved: 2,
    })
    for (const gone of [first, second]) expect((await fetch(gone.resultUrl)).status).toBe(404)
    for (const kept of [later, untouched]) {
      expect((await fetch(kept.resultUrl)).status).toBe(200)
      expect((await fetch(shareLink(kept.shortId), { redirect: 'manual' })).status).toBe(302)
    }
    expect(await ledgerOf(key)).toEqual(ledgerBefore)

    expect(await admin('tryons', 'delete', '--account', key.accountId, '--before', cutOff)).toMatchObject({
      deleted: 0,
      alreadyDeleted: 3,
      running: 0,
      imagesRemoved: 0,
      message: 'every try-on before that date was already deleted; nothing to do',
    })
  })

  it('leaves a try-on that is still running, and refuses to delete it on its own', async () => {
    const key = await t.createKey({ credits: 3 })
    const tryOnId = crypto.randomUUID()
    const begun = await t.stack.deps.billing.begin({
      keyHash: await hashApiKey(key.apiKey),
      origin: null,
      tryOnId,
      productKind: 'standard',
    })
    expect(begun.verdict).toBe('ok')

    await expect(admin('tryons', 'delete', tryOnId)).rejects.toThrow(/still running/)
    expect(await admin('tryons', 'delete', '--account', key.accountId, '--before', '2999-01-01')).toMatchObject({
      deleted: 0,
      running: 1,
      message: expect.stringMatching(/still running were left/),
    })
    await t.stack.deps.billing.settle({ tryOnId, outcome: 'generation_failed' })
    expect(await admin('tryons', 'delete', tryOnId)).toMatchObject({ deleted: true })
  })

  it('closes the share link at once when deleted with SQL alone, and the image goes once the CLI reaches the store', async () => {
    const key = await t.createKey({ credits: 1 })
    const bySqlThenCli = await tryOn(key)

    const [row] = await sql()`select tryon.delete_tryon(${bySqlThenCli.tryOnId}) as result`
    expect(row.result).toBe('deleted')
    expect((await fetch(shareLink(bySqlThenCli.shortId), { redirect: 'manual' })).status).toBe(404)
    const [again] = await sql()`select tryon.delete_tryon(${bySqlThenCli.tryOnId}) as result`
    expect(again.result).toBe('already_deleted')

    // The CLI removes whatever is queued, whoever queued it.
    expect((await fetch(bySqlThenCli.resultUrl)).status).toBe(200)
    expect(await admin('tryons', 'purge')).toEqual({ imagesRemoved: 1 })
    expect((await fetch(bySqlThenCli.resultUrl)).status).toBe(404)
    expect(await admin('tryons', 'purge')).toEqual({ imagesRemoved: 0 })
  })

  it('refuses unknown try-ons, accounts and malformed arguments', async () => {
    await expect(admin('tryons', 'delete', '00000000-0000-4000-8000-000000000000')).rejects.toThrow(/does not exist/)
    await expect(admin('tryons', 'delete', '--account', '00000000-0000-4000-8000-000000000000', '--before', '2026-01-01')).rejects.toThrow(
      /does not exist/,
    )
    await expect(admin('tryons', 'delete', 'nope')).rejects.toThrow(/TRYON_ID must be a UUID/)
    await expect(admin('tryons', 'delete', '--account', '00000000-0000-4000-8000-000000000000')).rejects.toThrow(/--before/)
    await expect(admin('tryons', 'delete', '--account', '00000000-0000-4000-8000-000000000000', '--before', '2026-02-30')).rejects.toThrow(
      /--before must be a date/,
    )
    await expect(admin('tryons', 'delete', '--account', '00000000-0000-4000-8000-000000000000', '--before', 'yesterday')).rejects.toThrow(
      /--before must be a date/,
    )
  })
})

describe('the dev stack after a deletion made with SQL alone', () => {
  let t: TestStack
  beforeAll(async () => {
    t = await startTestStack({ env: { TRYON_SWEEP_INTERVAL_MS: '200' } })
  })
  afterAll(() => t?.close())

  it('removes the image by itself, on its sweeper timer', async () => {
    const key = await t.createKey({ credits: 1 })
    const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: { userPhoto: person, productImage: tshirt } })
    expect(res.status).toBe(200)
    await t.db!.sql`select tryon.delete_tryon(${res.body.tryOnId})`
    await eventually(async () => (await fetch(res.body.resultUrl)).status === 404, 10_000)
    const [queued] = await t.db!.sql`select count(*)::int as n from tryon.result_deletions`
    expect(queued.n).toBe(0)
  })
})

describe("deleting from the command line, against the dev stack's database and folder", () => {
  let t: TestStack
  beforeAll(async () => {
    t = await startTestStack()
  })
  afterAll(() => t?.close())

  const cli = (env: Record<string, string>, ...argv: string[]) =>
    promisify(execFile)('node_modules/.bin/tsx', ['cli/admin.ts', ...argv], { env: { ...process.env, DATABASE_URL: t.db!.url, ...env } })

  it('removes the image from TRYON_DATA_DIR and prints what it did', async () => {
    const key = await t.createKey({ credits: 1 })
    const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: { userPhoto: person, productImage: tshirt } })
    expect(res.status).toBe(200)

    // Pointed at a folder that holds no results, the CLI refuses rather than forget an image it could not reach.
    const wrong = await cli({ TRYON_DATA_DIR: join(t.dataDir, 'elsewhere') }, 'tryons', 'delete', res.body.tryOnId).catch((error) => error)
    expect(wrong.code).toBe(2)
    expect(JSON.parse(wrong.stderr.split('\n')[0]).error).toMatch(/no results folder/)
    expect((await fetch(res.body.resultUrl)).status).toBe(200)

    const { stdout } = await cli({ TRYON_DATA_DIR: t.dataDir }, 'tryons', 'delete', res.body.tryOnId)
    expect(JSON.parse(stdout)).toEqual({ tryOnId: res.body.tryOnId, deleted: true, imagesRemoved: 1 })
    expect((await fetch(res.body.resultUrl)).status).toBe(404)
  })
})

describe('a result stored for a try-on that then did not settle as delivered', () => {
  let t: TestStack
  /** Settlements that fail as if the database refused the connection (nothing reached it): none, deliveries, or all. */
  let failing: 'none' | 'deliveries' | 'all' = 'none'
  const written: string[] = []

  beforeAll(async () => {
    t = await startTestStack({
      // Only the test sweeps and purges here; the timer has its own test below.
      env: { TRYON_SWEEP_INTERVAL_MS: '3600000' },
      override: (deps) => ({
        ...deps,
        store: {
          ...deps.store,
          put: async (path, body, type) => {
            const url = await deps.store.put(path, body, type)
            written.push(path)
            return url
          },
        },
        billing: {
          ...deps.billing,
          settle: (request) =>
            failing === 'all' || (failing === 'deliveries' && request.resultPath)
              ? Promise.reject(new DatabaseUnavailable('connect ECONNREFUSED 127.0.0.1:5432', { mayHaveCommitted: false }))
              : deps.billing.settle(request),
        },
      }),
    })
  })
  afterAll(() => t?.close())

  const admin = (...argv: string[]) => runAdmin(t.db!.sql, argv, { store: () => t.stack.deps.store }) as Promise<Record<string, unknown>>
  const fileOf = (path: string) => join(t.dataDir, 'storage', 'tryon-results', path)
  const publicUrl = (path: string) => t.stack.deps.store.urlOf(path)

  async function failedAfterTheWrite(expectedCode: string): Promise<{ key: CreatedKey; tryOnId: string; path: string }> {
    const key = await t.createKey({ credits: 1 })
    written.length = 0
    const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: { userPhoto: person, productImage: tshirt } })
    expect(res.status, JSON.stringify(res.body)).toBe(500)
    expect(res.body.errorCode).toBe(expectedCode)
    expect(written).toHaveLength(1)
    const [row] = await t.db!.sql`select id from tryon.tryons where account_id = ${key.accountId}`
    return { key, tryOnId: row.id, path: written[0] }
  }

  it('removes it at once when the refund says the try-on ended without a delivery', async () => {
    failing = 'deliveries'
    const { key, tryOnId, path } = await failedAfterTheWrite('database_unavailable')
    failing = 'none'
    expect(existsSync(fileOf(path))).toBe(false)
    expect((await fetch(publicUrl(path))).status).toBe(404)
    expect(await t.ledger(key)).toMatchObject({ balance: 1, reserved: 0, ledgerBalance: 1 })
    const [row] = await t.db!.sql`select status, outcome, result_path from tryon.tryons where id = ${tryOnId}`
    expect(row).toEqual({ status: 'failed', outcome: 'database_unavailable', result_path: null })
    expect(await admin('tryons', 'delete', tryOnId)).toEqual({ tryOnId, deleted: true, imagesRemoved: 0 })
  })

  it('is found by the sweeper and by erasure when the database could not be asked at all', async () => {
    failing = 'all'
    const { key, tryOnId, path } = await failedAfterTheWrite('settlement_unknown')
    failing = 'none'
    // Nobody knows yet whether it was charged: the image stays until the sweeper decides.
    expect(existsSync(fileOf(path))).toBe(true)
    await expect(admin('tryons', 'delete', tryOnId)).rejects.toThrow(/still running/)

    await t.db!.sql`update tryon.tryons set created_at = created_at - interval '11 minutes' where id = ${tryOnId}`
    expect(await t.stack.deps.billing.sweep(600)).toBe(1)
    const [row] = await t.db!.sql`select status, result_path from tryon.tryons where id = ${tryOnId}`
    expect(row).toEqual({ status: 'expired', result_path: null })
    expect(await t.ledger(key)).toMatchObject({ balance: 1, reserved: 0, ledgerBalance: 1 })

    expect(await admin('tryons', 'delete', tryOnId)).toEqual({ tryOnId, deleted: true, imagesRemoved: 1 })
    expect(existsSync(fileOf(path))).toBe(false)
    expect((await fetch(publicUrl(path))).status).toBe(404)
    const [queued] = await t.db!.sql`select count(*)::int as n from tryon.result_deletions where tryon_id = ${tryOnId}`
    expect(queued.n).toBe(0)
  })

  it('is removed by `tryons purge` once swept, without an erasure request', async () => {
    failing = 'all'
    const { tryOnId, path } = await failedAfterTheWrite('settlement_unknown')
    failing = 'none'
    await t.db!.sql`update tryon.tryons set created_at = created_at - interval '11 minutes' where id = ${tryOnId}`
    await t.stack.deps.billing.sweep(600)
    expect(existsSync(fileOf(path))).toBe(true)
    expect(await admin('tryons', 'purge')).toEqual({ imagesRemoved: 1 })
    expect(existsSync(fileOf(path))).toBe(false)
  })
})

describe('a result written after the store gave up on it', () => {
  let t: TestStack
  let release!: () => void
  const answer = new Promise<void>((resolve) => (release = resolve))
  const written: string[] = []

  beforeAll(async () => {
    t = await startTestStack({
      env: { TRYON_STORE_TIMEOUT_MS: '300', TRYON_SWEEP_INTERVAL_MS: '3600000' },
      override: (deps) => ({
        ...deps,
        store: {
          ...deps.store,
          // The write lands, but its answer comes only once the test says so: long after the store's time limit.
          put: async (path, body, type) => {
            const url = await deps.store.put(path, body, type)
            written.push(path)
            await answer
            return url
          },
        },
      }),
    })
  })
  afterAll(() => t?.close())

  it('is removed when its late answer comes, since its try-on was refunded', async () => {
    const key = await t.createKey({ credits: 1 })
    const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: { userPhoto: person, productImage: tshirt } })
    expect(res.status, JSON.stringify(res.body)).toBe(500)
    expect(res.body.errorCode).toBe('storage_failed')
    expect(await t.ledger(key)).toMatchObject({ balance: 1, reserved: 0 })
    // The write itself lands (however slow the machine), its answer waits.
    await eventually(async () => written.length === 1, 10_000)
    const file = join(t.dataDir, 'storage', 'tryon-results', written[0])
    expect(existsSync(file)).toBe(true)
    release()
    await eventually(async () => !existsSync(file), 10_000)
  })
})

describe('the dev stack after a try-on swept with a stored result', () => {
  let t: TestStack
  let failing = false
  beforeAll(async () => {
    t = await startTestStack({
      env: { TRYON_SWEEP_INTERVAL_MS: '200' },
      override: (deps) => ({
        ...deps,
        billing: {
          ...deps.billing,
          settle: (request) =>
            failing
              ? Promise.reject(new DatabaseUnavailable('connect ECONNREFUSED', { mayHaveCommitted: false }))
              : deps.billing.settle(request),
        },
      }),
    })
  })
  afterAll(() => t?.close())

  it('removes the image by itself, on its timer', async () => {
    const key = await t.createKey({ credits: 1 })
    failing = true
    const res = await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body: { userPhoto: person, productImage: tshirt } })
    failing = false
    expect(res.body.errorCode).toBe('settlement_unknown')
    const [row] = await t.db!.sql`select id, created_at from tryon.tryons where account_id = ${key.accountId}`
    const [path] = (await t.db!.sql`select tryon.possible_result_paths(${row.id}, ${row.created_at}) as paths`)[0].paths.filter(
      (p: string) => existsSync(join(t.dataDir, 'storage', 'tryon-results', p)),
    )
    expect(path).toBeDefined()
    await t.db!.sql`update tryon.tryons set created_at = created_at - interval '11 minutes' where id = ${row.id}`
    // The timer sweeps (the default 10 minutes have passed), then removes what the sweep queued.
    await eventually(async () => !existsSync(join(t.dataDir, 'storage', 'tryon-results', path)), 10_000)
  })
})
