import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { keyModeOf } from '../../shared/auth/api-key.ts'
import { runAdmin } from '../../cli/admin.ts'
import { createTestDatabase, ledgerCheck, type TestDatabase } from '../support/database.ts'

const run = promisify(execFile)

describe('admin CLI', () => {
  let db: TestDatabase
  beforeAll(async () => {
    db = await createTestDatabase('postgres')
  })
  afterAll(() => db?.close())

  const admin = (...argv: string[]) => runAdmin(db.sql, argv) as Promise<Record<string, unknown>>

  it('prints the created key as JSON exactly as documented', async () => {
    const { stdout } = await run('node_modules/.bin/tsx', ['cli/admin.ts', 'keys', 'create', '--credits', '10'], {
      env: { ...process.env, DATABASE_URL: db.url },
    })
    const printed = JSON.parse(stdout)
    expect(Object.keys(printed)).toEqual(['apiKey', 'keyId', 'accountId', 'credits'])
    expect(printed.credits).toBe(10)
    expect(keyModeOf(printed.apiKey)).toBe('test')
  })

  it('creates live keys with origins on a shared account, tops up, shows and deactivates', async () => {
    const first = await admin('keys', 'create', '--credits', '3', '--mode', 'live', '--origin', 'https://shop.example', '--origin', 'https://*.shop.example', '--label', 'storefront')
    expect(keyModeOf(first.apiKey as string)).toBe('live')
    const second = await admin('keys', 'create', '--account', first.accountId as string)
    expect(second).toMatchObject({ accountId: first.accountId, credits: 3 })

    expect(await admin('credits', 'add', first.keyId as string, '7')).toEqual({ credits: 10 })
    expect(await admin('credits', 'show', second.keyId as string)).toEqual({ credits: 10 })
    expect(await admin('keys', 'deactivate', first.keyId as string)).toEqual({ keyId: first.keyId, active: false })
    const [row] = await db.sql`select active, allowed_origins, label from tryon.api_keys where id = ${first.keyId as string}`
    expect(row).toEqual({ active: false, allowed_origins: ['https://shop.example', 'https://*.shop.example'], label: 'storefront' })
    const check = await ledgerCheck(db.sql, first.accountId as string)
    expect(check.balance).toBe(check.ledgerBalance)
  })

  it('sweeps reservations older than the given age', async () => {
    expect(await admin('sweep', '--older-than', '0')).toEqual({ refunded: 0 })
  })

  it.each([
    [['keys', 'create', '--credits', '-1'], /--credits/],
    [['keys', 'create', '--mode', 'prod'], /--mode/],
    [['credits', 'add', 'not-a-uuid', '1'], /KEY_ID/],
    [['credits', 'add', '00000000-0000-4000-8000-000000000000', '0'], /AMOUNT/],
    [['launch', 'rockets'], /unknown command/],
  ])('refuses %j', async (argv, message) => {
    await expect(admin(...argv)).rejects.toThrow(message)
  })

  it('exits non-zero with a JSON error for an unknown key id', async () => {
    const failure = await run('node_modules/.bin/tsx', ['cli/admin.ts', 'credits', 'show', '00000000-0000-4000-8000-000000000000'], {
      env: { ...process.env, DATABASE_URL: db.url },
    }).catch((error) => error)
    expect(failure.code).toBe(1)
    expect(JSON.parse(failure.stderr)).toEqual({ error: expect.stringMatching(/does not exist/) })
  })
})
