import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { PGlite } from '@electric-sql/pglite'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readImageHeader } from '../../shared/images/sniff.ts'
import { MIGRATIONS_BEFORE_THE_SQUASH } from '../support/database.ts'
import { freePort, startProcess } from '../support/process.ts'

const run = promisify(execFile)

describe('npm start on a fresh data directory (embedded PGlite)', () => {
  let dataDir: string
  let env: Record<string, string | undefined>

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tryon-start-'))
    env = { ...process.env, TRYON_DATA_DIR: dataDir, PORT: String(await freePort()), DB_PORT: String(await freePort()), DATABASE_URL: '' }
  })
  afterAll(() => rm(dataDir, { recursive: true, force: true }))

  const start = () => startProcess('node_modules/.bin/tsx', ['devstack/main.ts'], env)

  it('prints a demo key and a curl that works as pasted; data survives a restart', async () => {
    const first = start()
    let resultUrl: string
    let apiKey: string
    try {
      const output = await first.waitFor(/^curl .*$/m, 90_000)
      apiKey = /Demo test key \(new, 100 credits\): (vto_test_\w+)/.exec(output)![1]
      const curl = /^curl .*$/m.exec(output)![0]
      const { stdout } = await run('bash', ['-c', curl])
      const body = JSON.parse(stdout)
      expect(body).toMatchObject({ success: true, creditsCharged: 1, creditsRemaining: 99 })
      resultUrl = body.resultUrl
      const weddingCurl = [...output.matchAll(/^curl .*$/gm)][1][0]
      expect(weddingCurl).toContain('demo-wedding-request.json')
      const wedding = JSON.parse((await run('bash', ['-c', weddingCurl])).stdout)
      expect(wedding).toMatchObject({
        success: true,
        creditsCharged: 2,
        creditsRemaining: 97,
        bridal: { applied: true, reason: 'train_rendered' },
      })
      const image = await fetch(resultUrl)
      expect(image.headers.get('content-type')).toBe('image/jpeg')
      expect(readImageHeader(new Uint8Array(await image.arrayBuffer()))?.format).toBe('jpeg')

      const dbUrl = /Database: (postgres:\S+)/.exec(output)![1]
      const password = (await readFile(join(dataDir, 'db-password'), 'utf8')).trim()
      expect(new URL(dbUrl).password).toBe(password)
      expect((await stat(join(dataDir, 'db-password'))).mode & 0o077).toBe(0)
      const sql = postgres(dbUrl, { max: 1 })
      const [row] = await sql`select count(*)::int as n from tryon.ledger`
      await sql.end()
      expect(row.n).toBe(5)
      const noPassword = new URL(dbUrl)
      noPassword.password = ''
      const refused = postgres(noPassword.href, { max: 1 })
      await expect(refused`select 1`).rejects.toThrow(/password authentication failed/)
      await refused.end()

      // The admin CLI finds the password in the data folder by itself.
      const keyId = /Key id \(for the admin CLI\): (\S+)/.exec(output)![1]
      const admin = await run('node_modules/.bin/tsx', ['cli/admin.ts', 'credits', 'show', keyId], { env })
      expect(JSON.parse(admin.stdout)).toEqual({ credits: 97 })
    } finally {
      await first.stop()
    }

    const second = start()
    try {
      const output = await second.waitFor(/^curl .*$/m, 90_000)
      expect(output).toContain(`Demo test key (kept from an earlier start, 97 credits): ${apiKey}`)
      const again = await fetch(resultUrl)
      expect(again.status).toBe(200)
    } finally {
      await second.stop()
    }
  }, 240_000)
})

describe('npm start on a .tryon/ made by the migrations before they were squashed', () => {
  let dataDir: string
  afterAll(() => rm(dataDir, { recursive: true, force: true }))

  it('refuses to start, says to delete the folder, and changes nothing in it', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tryon-old-'))
    const old = await PGlite.create(join(dataDir, 'pgdata'))
    await old.exec(`
      create schema supabase_migrations;
      create table supabase_migrations.schema_migrations (version text primary key, statements text[], name text);
      insert into supabase_migrations.schema_migrations (version, name) values
        ${MIGRATIONS_BEFORE_THE_SQUASH.map(([version, name]) => `('${version}', '${name}')`).join(', ')};`)
    await old.close()

    const env = {
      ...process.env,
      TRYON_DATA_DIR: dataDir,
      PORT: String(await freePort()),
      DB_PORT: String(await freePort()),
      DATABASE_URL: '',
    }
    const failure = await run('node_modules/.bin/tsx', ['devstack/main.ts'], { env, timeout: 90_000 }).then(
      () => ({ code: 0, stdout: 'started', stderr: '' }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    )
    expect(failure.code).toBe(1)
    expect(failure.stdout).toBe('')
    expect(failure.stderr).toContain('20261123000100_tryon_billing')
    expect(failure.stderr).toContain(`rm -rf '${dataDir}'`)
    expect(failure.stderr).not.toMatch(/^\s+at /m)

    const after = await PGlite.create(join(dataDir, 'pgdata'))
    const { rows } = await after.query(`select to_regnamespace('tryon') is null as no_schema,
                                               (select count(*)::int from supabase_migrations.schema_migrations) as recorded`)
    await after.close()
    expect(rows).toEqual([{ no_schema: true, recorded: MIGRATIONS_BEFORE_THE_SQUASH.length }])
  }, 120_000)
})
