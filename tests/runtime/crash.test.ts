import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encodeBase64 } from '../../shared/images/base64.ts'
import { createKey, createTestDatabase, ledgerCheck, type TestDatabase } from '../support/database.ts'
import { eventually } from '../support/eventually.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../support/images.ts'
import { startImageServer, type ImageServer } from '../support/image-server.ts'
import { freePort, startProcess, type RunningProcess } from '../support/process.ts'
import { postTryOn, type ApiResponse } from '../support/stack.ts'

const person = makeShopperPhoto({ width: 200, height: 320, format: 'jpeg' }).bytes
const garment = makeGarmentPhoto({ kind: 'tshirt', color: [200, 120, 20], width: 200, height: 200, format: 'png' }).bytes

describe('a service process killed between reservation and settlement (SIGKILL)', () => {
  let db: TestDatabase
  let images: ImageServer
  let dataDir: string
  let port: number
  let release: () => void = () => {}
  const gate = new Promise<void>((resolve) => (release = resolve))

  beforeAll(async () => {
    db = await createTestDatabase('postgres')
    images = await startImageServer({ '/held.png': { bytes: garment, contentType: 'image/png', before: () => gate } })
    dataDir = await mkdtemp(join(tmpdir(), 'tryon-crash-'))
    port = await freePort()
  })
  afterAll(async () => {
    release()
    await images?.close()
    await db?.close()
    if (dataDir) await rm(dataDir, { recursive: true, force: true })
  })

  const start = (env: Record<string, string> = {}): RunningProcess =>
    // One process (node with tsx's loader, not the tsx wrapper), so SIGKILL kills the server itself.
    startProcess(process.execPath, ['--import', 'tsx', 'devstack/main.ts'], {
      ...process.env,
      DATABASE_URL: db.url,
      TRYON_DATA_DIR: dataDir,
      PORT: String(port),
      TRYON_ALLOW_PRIVATE_IMAGE_HOSTS: '1',
      // Bursts wait for the local engine rather than being refused: these tests are about crashes, not admission.
      TRYON_LOCAL_QUEUE: '64',
      ...env,
    })
  const url = () => `http://127.0.0.1:${port}/functions/v1/tryon-api`

  async function kill(service: RunningProcess) {
    service.child.kill('SIGKILL')
    await service.stop()
  }

  it('loses nothing: the sweeper refunds the reservation after its TTL and a late settlement changes nothing', async () => {
    const key = await createKey(db.sql, { credits: 2 })
    const service = start()
    await service.waitFor(/^curl /m, 90_000)
    const pending = postTryOn(url(), {
      apiKey: key.apiKey,
      body: { userPhoto: encodeBase64(person), productImage: images.url('/held.png') },
      headers: { 'Idempotency-Key': 'killed-request' },
    }).catch((error: Error) => error)
    // Reserved: the image is fetched only after the credits are held.
    await eventually(async () => images.requests.includes('/held.png'))
    await kill(service)
    expect(await pending).toBeInstanceOf(Error)

    const [held] = await db.sql`select id, status from tryon.tryons where account_id = ${key.accountId}`
    expect(held.status).toBe('reserved')
    expect(await ledgerCheck(db.sql, key.accountId)).toMatchObject({ balance: 1, reserved: 1, ledgerBalance: 1, ledgerReserved: 1 })

    // The next process's sweeper, with a 1 s TTL, returns the credit on its own schedule.
    const restarted = start({ TRYON_RESERVATION_TTL_SECONDS: '1', TRYON_SWEEP_INTERVAL_MS: '200' })
    try {
      await restarted.waitFor(/^curl /m, 90_000)
      await eventually(async () => (await db.sql`select status from tryon.tryons where id = ${held.id}`)[0].status === 'expired')
      expect(await ledgerCheck(db.sql, key.accountId)).toEqual({
        balance: 2,
        reserved: 0,
        ledgerBalance: 2,
        ledgerReserved: 0,
        heldByTryOns: 0,
      })

      // A settlement arriving after the sweep (a slow twin of the dead process) moves nothing.
      const [late] = await db.sql`select * from tryon.settle_tryon(${held.id}, 'generated', 'LateShort1', '2026/11/late.jpg', 'local')`
      expect(late).toMatchObject({ settled: false, status: 'expired', credits_charged: 0 })
      expect(await ledgerCheck(db.sql, key.accountId)).toMatchObject({ balance: 2, ledgerBalance: 2, reserved: 0 })
      const rows = await db.sql`select kind, delta::int, reason from tryon.ledger where tryon_id = ${held.id} order by id`
      expect(rows).toEqual([
        { kind: 'reservation', delta: -1, reason: 'standard' },
        { kind: 'refund', delta: 1, reason: 'expired' },
      ])
    } finally {
      await restarted.stop()
    }

    // The idempotency key of the killed request was released with it: the same retry runs (not 409). It runs
    // on a process with the usual TTL: a 1 s one would sweep the retry's own reservation on a slow machine.
    const usual = start()
    try {
      await usual.waitFor(/^curl /m, 90_000)
      release()
      const retry = await postTryOn(url(), {
        apiKey: key.apiKey,
        body: { userPhoto: encodeBase64(person), productImage: images.url('/held.png') },
        headers: { 'Idempotency-Key': 'killed-request' },
      })
      expect(retry.status, JSON.stringify(retry.body)).toBe(200)
      expect(retry.body.creditsRemaining).toBe(1)
    } finally {
      await usual.stop()
    }
  }, 240_000)

  it('keeps every account exact when killed in the middle of a burst of try-ons', async () => {
    const key = await createKey(db.sql, { credits: 40 })
    const service = start()
    await service.waitFor(/^curl /m, 90_000)
    const body = { userPhoto: encodeBase64(person), productImage: encodeBase64(garment) }
    const results: (ApiResponse | Error)[] = []
    // Killed the moment the third result is delivered, while the others are in every stage of their work. (Not
    // the third answer: on a starved machine the first answers can be refunded timeouts, which end nothing midway.)
    let delivered = 0
    const record = (result: ApiResponse | Error) => {
      results.push(result)
      if (!(result instanceof Error) && result.status === 200 && ++delivered === 3) service.child.kill('SIGKILL')
    }
    const burst = Array.from({ length: 30 }, () => postTryOn(url(), { apiKey: key.apiKey, body }).then(record, record))
    await Promise.all(burst)
    await service.stop()

    const answers = JSON.stringify(
      results.map((r) => (r instanceof Error ? r.message : { status: r.status, errorCode: r.body?.errorCode })),
    )
    expect(delivered, answers).toBeGreaterThanOrEqual(3)
    expect(results.filter((r) => r instanceof Error).length).toBeGreaterThan(0)

    // Try-ons the process settled before dying are final; the rest are swept back.
    await db.sql`select tryon.sweep_reservations(interval '0')`
    const [counts] = await db.sql`
      select count(*) filter (where status = 'succeeded')::int as succeeded,
             count(*) filter (where status = 'reserved')::int as reserved
        from tryon.tryons where account_id = ${key.accountId}`
    expect(counts.reserved).toBe(0)
    expect(counts.succeeded).toBeGreaterThanOrEqual(delivered)
    expect(await ledgerCheck(db.sql, key.accountId)).toEqual({
      balance: 40 - counts.succeeded,
      reserved: 0,
      ledgerBalance: 40 - counts.succeeded,
      ledgerReserved: 0,
      heldByTryOns: 0,
    })
  }, 240_000)
})
