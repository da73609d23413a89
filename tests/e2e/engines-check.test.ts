import { execFile } from 'node:child_process'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { checkEngines, runEnginesCheck, type EngineCheck } from '../../cli/engines.ts'
import {
  fashn,
  gemini,
  geminiModelPath,
  makeServiceAccount,
  scriptGeminiModels,
  startFakeServer,
  vertex,
  vertexPublisherModelPath,
  type FakeServer,
} from '../support/provider-fakes.ts'

const TODAY = Date.parse('2026-11-25T12:00:00Z')

/** `npm run admin -- engines check` as an operator runs it: its output and exit code. */
function runCli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'node_modules/.bin/tsx',
      ['cli/admin.ts', ...args],
      { env: { PATH: process.env.PATH ?? '', ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    )
  })
}

describe('npm run admin -- engines check, against the providers’ fakes', () => {
  let google: FakeServer
  let fashnFake: FakeServer
  let account: Awaited<ReturnType<typeof makeServiceAccount>>
  let env: Record<string, string>
  beforeAll(async () => {
    google = await startFakeServer()
    fashnFake = await startFakeServer()
    account = await makeServiceAccount(`${google.url}/token`)
  })
  afterAll(async () => {
    await google?.close()
    await fashnFake?.close()
  })
  beforeEach(() => {
    google.reset()
    fashnFake.reset()
    // Gemini API: the image model and the judge served; the 2.5 ids shut down.
    scriptGeminiModels(google, {
      served: { 'gemini-3.1-flash-image': gemini.image(new Uint8Array()), 'gemini-3.5-flash': gemini.judged() },
      gone: ['gemini-2.5-flash-image', 'gemini-2.5-flash'],
    })
    google.script('POST', '/token', vertex.token('ya29.check'))
    google.script('GET', vertexPublisherModelPath('virtual-try-on-001'), vertex.publisherModel('virtual-try-on-001'))
    fashnFake.script('GET', '/v1/credits', fashn.credits(234, 100))
    env = {
      TRYON_ENGINE: 'fashn,vertex,gemini',
      TRYON_TRAIN_SCORER: 'gemini',
      FASHN_API_KEY: 'fa-live',
      FASHN_BASE_URL: fashnFake.url,
      VERTEX_PROJECT: 'test-project',
      VERTEX_SERVICE_ACCOUNT_JSON: account.json,
      VERTEX_BASE_URL: google.url,
      GEMINI_API_KEY: 'AIza-live',
      GEMINI_BASE_URL: google.url,
    }
  })

  it('with the defaults: every engine and the judge proved by free calls, exit 0', async () => {
    const checks = await checkEngines(env, { now: () => TODAY })
    expect(checks.map((c) => [c.role, c.engine, c.setting, c.model, c.credentials, c.modelServed, c.lifecycle.state, c.canServe])).toEqual([
      ['engine', 'fashn', 'FASHN_MODEL', 'tryon-v1.6', 'accepted', null, 'served', true],
      ['engine', 'vertex', 'VERTEX_MODEL', 'virtual-try-on-001', 'accepted', true, 'served', true],
      ['engine', 'gemini', 'GEMINI_MODEL', 'gemini-3.1-flash-image', 'accepted', true, 'served', true],
      ['judge', 'gemini', 'GEMINI_SCORER_MODEL', 'gemini-3.5-flash', 'accepted', true, 'served', true],
    ])
    expect(checks[0].balance).toEqual({ total: 234, subscription: 100, onDemand: 134 })
    // Free calls only: the balance, a token and the models' metadata; nothing generated.
    expect(fashnFake.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/credits'])
    expect(fashnFake.requests[0].headers.authorization).toBe('Bearer fa-live')
    expect(google.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /token',
      `GET ${vertexPublisherModelPath('virtual-try-on-001')}`,
      `GET ${geminiModelPath('gemini-3.1-flash-image')}`,
      `GET ${geminiModelPath('gemini-3.5-flash')}`,
    ])
    expect(google.requestsTo(vertexPublisherModelPath('virtual-try-on-001'))[0].headers.authorization).toBe('Bearer ya29.check')
    expect(google.requestsTo(geminiModelPath('gemini-3.5-flash'))[0].headers['x-goog-api-key']).toBe('AIza-live')
  })

  it('warns of virtual-try-on-001’s shutdown within 30 days and still passes', async () => {
    const [, vertexRow] = await checkEngines(env, { now: () => Date.parse('2026-12-25T12:00:00Z') })
    expect(vertexRow).toMatchObject({
      lifecycle: { state: 'retiring', day: '2027-01-20', daysLeft: 26, successor: 'gemini-3.1-flash-image' },
      canServe: true,
      detail: expect.stringContaining('set VERTEX_MODEL=gemini-3.1-flash-image'),
    })
  })

  it('fails loudly on a retired image model, a judge that is gone and a refused FASHN key: table and exit 1', async () => {
    fashnFake.script('GET', '/v1/credits', { status: 401, json: { error: 'UnauthorizedAccess', message: 'Unauthorized: Invalid token' } })
    const broken = { ...env, GEMINI_MODEL: 'gemini-2.5-flash-image', GEMINI_SCORER_MODEL: 'gemini-2.5-flash' }
    let printed = ''
    const code = await runEnginesCheck({ json: false }, broken, { write: (text) => (printed += text), now: () => TODAY })
    expect(code).toBe(1)
    const lines = printed.split('\n')
    expect(lines[0]).toMatch(/^ROLE\s+ENGINE\s+SETTING\s+MODEL\s+CREDENTIALS\s+MODEL SERVED\s+LIFECYCLE\s+VERDICT$/)
    expect(printed).toMatch(/engine\s+fashn\s+FASHN_MODEL\s+tryon-v1\.6\s+refused\s+not checked\s+served\s+CANNOT SERVE/)
    expect(printed).toMatch(/engine\s+vertex\s+VERTEX_MODEL\s+virtual-try-on-001\s+accepted\s+yes\s+served\s+ok/)
    expect(printed).toMatch(/engine\s+gemini\s+GEMINI_MODEL\s+gemini-2\.5-flash-image\s+accepted\s+NO\s+retired 2026-10-02\s+CANNOT SERVE/)
    expect(printed).toMatch(/judge\s+gemini\s+GEMINI_SCORER_MODEL\s+gemini-2\.5-flash\s+accepted\s+NO\s+retired 2026-10-16\s+CANNOT SERVE/)
    expect(printed).toContain('set GEMINI_MODEL=gemini-3.1-flash-image')
    expect(printed).toContain('set GEMINI_SCORER_MODEL=gemini-3.5-flash')
    expect(printed).toContain('wedding dresses are billed without a train score until this is fixed')
    expect(printed).toContain('This model models/gemini-2.5-flash-image is no longer available')
  })

  it('a Vertex model the provider does not serve, and a service account the token endpoint refuses', async () => {
    google.script(
      'GET',
      vertexPublisherModelPath('virtual-try-on-001'),
      vertex.modelNotFound('test-project', 'us-central1', 'virtual-try-on-001'),
    )
    const [notServed] = await checkEngines({ ...env, TRYON_ENGINE: 'vertex' }, { now: () => TODAY })
    expect(notServed).toMatchObject({ credentials: 'accepted', modelServed: false, canServe: false })
    google.script('POST', '/token', { status: 400, json: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' } })
    const [refused] = await checkEngines({ ...env, TRYON_ENGINE: 'vertex', TRYON_TRAIN_SCORER: 'local' }, { now: () => TODAY })
    expect(refused).toMatchObject({
      credentials: 'refused',
      modelServed: null,
      canServe: false,
      detail: expect.stringContaining('invalid_grant'),
    })
  })

  describe('as the admin CLI, without a database', () => {
    it('prints JSON with --json and exits 0', async () => {
      const ok = await runCli(['engines', 'check', '--json'], env)
      expect(ok.code, ok.stderr).toBe(0)
      const report = JSON.parse(ok.stdout) as { engines: EngineCheck[]; canServe: boolean }
      expect(report.canServe).toBe(true)
      expect(report.engines.map((e) => e.model)).toEqual(['tryon-v1.6', 'virtual-try-on-001', 'gemini-3.1-flash-image', 'gemini-3.5-flash'])
    })

    it('prints the table and exits 1 once the judge is gone', async () => {
      const gone = await runCli(['engines', 'check'], { ...env, TRYON_ENGINE: 'gemini', GEMINI_SCORER_MODEL: 'gemini-2.5-flash' })
      expect(gone.code).toBe(1)
      expect(gone.stdout).toMatch(/judge\s+gemini\s+GEMINI_SCORER_MODEL\s+gemini-2\.5-flash\s+.*CANNOT SERVE/)
    })

    it('exits 2 with the usage on a stray argument', async () => {
      const usage = await runCli(['engines', 'check', 'extra'], env)
      expect(usage.code).toBe(2)
      expect(usage.stderr).toContain('engines check takes no arguments')
    })
  })
})
