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
    const first = await admin(
      'keys',
      'create',
      '--credits',
      '3',
      '--mode',
      'live',
      '--origin',
      'https://shop.example',
      '--origin',
      'https://*.shop.example',
      '--label',
      'storefront',
    )
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

  it('shows a key with its limits, and sets, removes and clears them', async () => {
    const browser = await admin('keys', 'create', '--credits', '4', '--mode', 'live', '--origin', 'https://shop.example')
    const keyId = browser.keyId as string
    const shown = await admin('keys', 'show', keyId)
    expect(shown).toMatchObject({
      keyId,
      accountId: browser.accountId,
      mode: 'live',
      active: true,
      credits: 4,
      allowedOrigins: ['https://shop.example'],
      limits: { perMinute: null, perClientPerMinute: 10, dailyCredits: null, dailyRefunded: 20, perClientDailyRefunded: 5 },
    })
    expect(JSON.stringify(shown)).not.toContain((browser.apiKey as string).slice(13))

    expect(await admin('keys', 'limits', keyId, '--per-minute', '30', '--daily-credits', '200', '--daily-refunded', 'none')).toEqual({
      keyId,
      limits: { perMinute: 30, perClientPerMinute: 10, dailyCredits: 200, dailyRefunded: null, perClientDailyRefunded: 5 },
    })
    expect(await admin('keys', 'limits', keyId, '--clear', '--per-client-daily-refunded', '1')).toEqual({
      keyId,
      limits: { perMinute: null, perClientPerMinute: null, dailyCredits: null, dailyRefunded: null, perClientDailyRefunded: 1 },
    })
    expect(await admin('keys', 'limits', keyId, '--clear')).toMatchObject({ limits: { perClientDailyRefunded: null } })
    expect((await admin('keys', 'show', keyId)).limits).toEqual({
      perMinute: null,
      perClientPerMinute: null,
      dailyCredits: null,
      dailyRefunded: null,
      perClientDailyRefunded: null,
    })

    const server = await admin('keys', 'create', '--credits', '1')
    expect((await admin('keys', 'show', server.keyId as string)).limits).toEqual({
      perMinute: null,
      perClientPerMinute: null,
      dailyCredits: null,
      dailyRefunded: null,
      perClientDailyRefunded: null,
    })
  })

  it("sets how a key's results are checked, shows it, and a rotated key keeps it", async () => {
    const key = await admin('keys', 'create', '--credits', '1', '--mode', 'live')
    const keyId = key.keyId as string
    expect(await admin('keys', 'quality', keyId)).toEqual({ keyId, qualityCheck: null })
    expect((await admin('keys', 'show', keyId)).qualityCheck).toBeNull()
    for (const level of ['off', 'measured', 'judge'] as const) {
      expect(await admin('keys', 'quality', keyId, `--${level}`)).toEqual({ keyId, qualityCheck: level })
      expect(await admin('keys', 'quality', keyId)).toEqual({ keyId, qualityCheck: level })
      const [row] = await db.sql`select quality_check from tryon.api_keys where id = ${keyId}`
      expect(row.quality_check).toBe(level)
    }
    const shown = await admin('keys', 'show', keyId)
    expect(shown.qualityCheck).toBe('judge')
    expect(Object.keys(shown).indexOf('qualityCheck')).toBe(Object.keys(shown).indexOf('label') + 1)
    const listed = (await admin('keys', 'list', '--account', key.accountId as string)).keys as Record<string, unknown>[]
    expect(listed.map((k) => [k.keyId, k.qualityCheck])).toEqual([[keyId, 'judge']])

    const rotated = await admin('keys', 'rotate', keyId)
    expect((await admin('keys', 'show', rotated.keyId as string)).qualityCheck).toBe('judge')
    expect(await admin('keys', 'quality', keyId, '--default')).toEqual({ keyId, qualityCheck: null })
    expect((await admin('keys', 'show', keyId)).qualityCheck).toBeNull()

    await expect(admin('keys', 'quality', keyId, '--off', '--judge')).rejects.toThrow(/one of --off, --measured, --judge or --default/)
    await expect(admin('keys', 'quality', 'not-a-key', '--off')).rejects.toThrow(/KEY_ID must be a UUID/)
    await expect(admin('keys', 'quality', '00000000-0000-4000-8000-000000000000', '--off')).rejects.toThrow(/does not exist/)
    await expect(admin('keys', 'quality', keyId, '--strict')).rejects.toMatchObject({ code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' })
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
    [['keys', 'limits', '00000000-0000-4000-8000-000000000000'], /at least one limit/],
    [['keys', 'limits', '00000000-0000-4000-8000-000000000000', '--per-minute', '0'], /--per-minute/],
    [['keys', 'limits', '00000000-0000-4000-8000-000000000000', '--daily-credits', '-3'], /--daily-credits/],
    [['keys', 'limits', '00000000-0000-4000-8000-000000000000', '--daily-refunded', 'lots'], /--daily-refunded/],
    [['keys', 'limits', '00000000-0000-4000-8000-000000000000', '--per-minute', '5'], /does not exist/],
    [['keys', 'show', 'nope'], /KEY_ID/],
  ])('refuses %j', async (argv, message) => {
    await expect(admin(...argv)).rejects.toThrow(message)
  })

  it.each([
    [['keys', 'create', '--credits', '9007199254740993'], /at most 9007199254740991/],
    [['credits', 'add', '00000000-0000-4000-8000-000000000000', '18446744073709551616'], /cannot be handled exactly/],
    [['sweep', '--older-than', '9007199254740992'], /--older-than must be at most/],
  ])('refuses an integer beyond 2^53 instead of rounding it: %j', async (argv, message) => {
    await expect(admin(...argv)).rejects.toThrow(message)
  })

  it('takes the largest exact integer as it is', async () => {
    const created = await admin('keys', 'create', '--credits', '9007199254740991')
    expect(created.credits).toBe(9007199254740991)
    const [row] = await db.sql`select balance::text from tryon.accounts where id = ${created.accountId as string}`
    expect(row.balance).toBe('9007199254740991')
  })

  it.each(['https://*.co.uk', 'https://*.com', 'https://*.github.io', 'https://*.com.br'])(
    'refuses the wildcard origin %s, which sits on a public suffix',
    async (origin) => {
      await expect(admin('keys', 'create', '--origin', origin)).rejects.toThrow(/public suffix/)
    },
  )

  it.each(['https://*.shop.co.uk', 'https://*.me.github.io', 'https://*.example.com'])(
    'accepts the wildcard origin %s, below a registrable domain',
    async (origin) => {
      const created = await admin('keys', 'create', '--origin', origin)
      const [row] = await db.sql`select allowed_origins from tryon.api_keys where id = ${created.keyId as string}`
      expect(row.allowed_origins).toEqual([origin])
    },
  )

  it.each([
    ['with its default port', 'https://*.co.uk:443'],
    ['in capitals, with a trailing dot', 'HTTPS://*.CO.UK.'],
    ['with a trailing dot and its default port', 'https://*.github.io.:443/'],
    ['in Unicode', 'https://*.公司.cn'],
    ['in punycode', 'https://*.xn--55qx5d.cn'],
  ])('refuses a wildcard on a public suffix written %s: %s', async (_, origin) => {
    await expect(admin('keys', 'create', '--origin', origin)).rejects.toThrow(/public suffix/)
  })

  it.each([
    ['https://Shop.Example:443/', 'https://shop.example'],
    ['https://shop.example.', 'https://shop.example'],
    ['https://shop.example:8443', 'https://shop.example:8443'],
    ['https://*.Shop.CO.uk.:443', 'https://*.shop.co.uk'],
    ['https://*.bücher.de', 'https://*.xn--bcher-kva.de'],
  ])('stores the origin %s as browsers send it: %s', async (given, stored) => {
    const created = await admin('keys', 'create', '--origin', given)
    const [row] = await db.sql`select allowed_origins from tryon.api_keys where id = ${created.keyId as string}`
    expect(row.allowed_origins).toEqual([stored])
  })

  it.each([
    ['https://user@shop.example', /without credentials/],
    ['https://shop.example/checkout', /without credentials, path/],
    ['https://shop.example?x=1', /query/],
    ['shop.example', /not an origin/],
  ])('refuses %s, which is not an origin alone', async (origin, message) => {
    await expect(admin('keys', 'create', '--origin', origin)).rejects.toThrow(message)
  })

  it('limits a label to 200 printable characters, in the CLI and in SQL', async () => {
    const created = await admin('keys', 'create', '--label', 'é'.repeat(200))
    const [row] = await db.sql`select label from tryon.api_keys where id = ${created.keyId as string}`
    expect(row.label).toBe('é'.repeat(200))
    await expect(admin('keys', 'create', '--label', 'x'.repeat(201))).rejects.toThrow(/--label must be at most 200 characters/)
    await expect(admin('keys', 'create', '--label', 'x'.repeat(100_000))).rejects.toThrow(/--label must be at most 200/)
    await expect(admin('keys', 'create', '--label', 'shop\u0000')).rejects.toThrow(/--label must be printable/)
    await expect(db.sql`select * from tryon.create_api_key(0, 'test', '{}', true, ${'x'.repeat(201)})`).rejects.toThrow(
      /api_keys_label_length/,
    )
  })

  it('exits non-zero with a JSON error for an unknown key id', async () => {
    const failure = await run('node_modules/.bin/tsx', ['cli/admin.ts', 'credits', 'show', '00000000-0000-4000-8000-000000000000'], {
      env: { ...process.env, DATABASE_URL: db.url },
    }).catch((error) => error)
    expect(failure.code).toBe(1)
    expect(JSON.parse(failure.stderr)).toEqual({ error: expect.stringMatching(/does not exist/) })
  })
})
