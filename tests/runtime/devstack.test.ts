import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readImageHeader } from '../../shared/images/sniff.ts'
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
      expect(wedding).toMatchObject({ success: true, creditsCharged: 2, creditsRemaining: 97, bridal: { applied: true, reason: 'train_rendered' } })
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
