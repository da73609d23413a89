import { mkdtemp, rm } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import { expect } from 'vitest'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Env } from '../../shared/config.ts'
import type { Deps } from '../../shared/deps.ts'
import { startDevStack, type DevStack } from '../../devstack/stack.ts'
import { createKey, createTestDatabase, ledgerCheck, type CreatedKey, type DatabaseKind, type TestDatabase } from './database.ts'

export interface TestStack {
  stack: DevStack
  db: TestDatabase | null
  dataDir: string
  logs: Record<string, unknown>[]
  createKey(options?: Parameters<typeof createKey>[1]): Promise<CreatedKey>
  balanceOf(key: CreatedKey): Promise<number>
  /** Asserts nothing is held and every balance equals its ledger; returns the check. */
  ledger(key: CreatedKey): ReturnType<typeof ledgerCheck>
  close(): Promise<void>
}

/**
 * The dev stack in-process on a free port, on a fresh real Postgres database (default)
 * or on its embedded PGlite. Loopback image hosts are allowed so tests can serve images.
 */
export async function startTestStack(
  options: {
    database?: DatabaseKind
    env?: Env
    override?: (deps: Deps) => Deps
    /** Rewrites the database URL the service uses (e.g. through a fault-injecting proxy); tests keep the direct one. */
    serviceDatabaseUrl?: (url: string) => string
    playgroundKey?: () => string | undefined
  } = {},
): Promise<TestStack> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tryon-e2e-'))
  const db = options.database === 'pglite' ? null : await createTestDatabase('postgres')
  const logs: Record<string, unknown>[] = []
  const stack = await startDevStack({
    // Bursts of test requests wait for the local engine instead of being refused (hostile.test.ts tests the refusal).
    env: { TRYON_ALLOW_PRIVATE_IMAGE_HOSTS: '1', TRYON_LOCAL_QUEUE: '64', ...options.env },
    dataDir,
    port: 0,
    dbPort: 0,
    databaseUrl: db && options.serviceDatabaseUrl ? options.serviceDatabaseUrl(db.url) : db?.url,
    log: (entry) => logs.push(entry),
    override: options.override,
    playgroundKey: options.playgroundKey,
  })
  return {
    stack,
    db,
    dataDir,
    logs,
    createKey: (keyOptions) => createKey(db?.sql ?? stack.sql, keyOptions),
    async balanceOf(key) {
      const [row] = await (db?.sql ?? stack.sql)`select tryon.credit_balance(${key.keyId})::float8 as credits`
      return row.credits
    },
    ledger: (key) => ledgerCheck(db?.sql ?? stack.sql, key.accountId),
    async close() {
      await stack.stop()
      await db?.close()
      await rm(dataDir, { recursive: true, force: true })
    },
  }
}

export interface ApiResponse {
  status: number
  headers: Headers
  body: any
}

export async function postTryOn(
  url: string,
  options: { apiKey?: string; body?: unknown; rawBody?: BodyInit; headers?: Record<string, string> },
): Promise<ApiResponse> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', ...options.headers }
  if (options.apiKey !== undefined) headers['X-API-Key'] = options.apiKey
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body: options.rawBody ?? JSON.stringify(options.body ?? {}),
  })
  const text = await response.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // not JSON: the assertion on the body will show the text
  }
  return { status: response.status, headers: response.headers, body }
}

/** Wraps the billing port to record which database calls a request made. */
export function countingBilling(billing: Deps['billing'], calls: string[]): Deps['billing'] {
  return {
    authorize: (...args) => (calls.push('authorize'), billing.authorize(...args)),
    begin: (...args) => (calls.push('begin'), billing.begin(...args)),
    settle: (...args) => (calls.push('settle'), billing.settle(...args)),
    sweep: (...args) => (calls.push('sweep'), billing.sweep(...args)),
    freeDelivery: (...args) => (calls.push('freeDelivery'), billing.freeDelivery(...args)),
    sharedResult: (...args) => (calls.push('sharedResult'), billing.sharedResult(...args)),
  }
}

/** The documented error body (docs/api.md, "Errors"): exactly these three fields. */
export function expectErrorBody(res: ApiResponse, status: number, errorCode: string, error?: string | RegExp): void {
  const context = JSON.stringify(res.body)
  expect(res.status, context).toBe(status)
  expect(res.headers.get('content-type'), context).toMatch(/^application\/json/)
  expect(Object.keys(res.body).sort(), context).toEqual(['error', 'errorCode', 'success'])
  expect(res.body, context).toMatchObject({ success: false, errorCode, error: expect.any(String) })
  if (typeof error === 'string') expect(res.body.error).toBe(error)
  if (error instanceof RegExp) expect(res.body.error).toMatch(error)
}

/**
 * POSTs a large body with node:http and takes the response as soon as it arrives. A server may answer
 * (413, 401) before reading a body it refuses and close the connection; fetch reports that as a failed
 * upload, while real clients such as curl show the response, and so does this.
 */
export function postEarlyAnswer(url: string, options: { apiKey: string; rawBody: string }): Promise<ApiResponse> {
  const body = Buffer.from(options.rawBody)
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, {
      method: 'POST',
      agent: false,
      headers: { 'Content-Type': 'application/json', 'Content-Length': body.length, 'X-API-Key': options.apiKey },
    })
    request.on('response', (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => {
        const headers = new Headers()
        for (const [name, value] of Object.entries(response.headers)) if (typeof value === 'string') headers.set(name, value)
        resolve({ status: response.statusCode ?? 0, headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) })
      })
      response.on('error', reject)
    })
    // EPIPE/ECONNRESET on the upload after the answer came are expected; before it they fail the request.
    request.on('error', (error) => setImmediate(() => reject(error)))
    // The upload may fail once the answer is in, when the socket no longer belongs to the request.
    request.on('socket', (socket) => socket.on('error', () => {}))
    request.end(body)
  })
}

/**
 * A client that goes away in the middle of its body: the headers (`Content-Length: 1000000`) and 50 KB of a JSON
 * body go over a raw socket, which is then closed. Nobody is left to read an answer.
 */
export async function abortMidBody(url: string, options: { apiKey: string; requestId: string }): Promise<void> {
  const { hostname, port, pathname } = new URL(url)
  const socket = connect(Number(port), hostname)
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  const head =
    `POST ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nX-API-Key: ${options.apiKey}\r\n` +
    `X-Request-Id: ${options.requestId}\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n`
  await new Promise<void>((resolve) => socket.write(`${head}{"userPhoto":"${'A'.repeat(50_000)}`, () => resolve()))
  socket.destroy()
}
