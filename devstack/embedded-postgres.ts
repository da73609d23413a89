import { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface EmbeddedPostgres {
  /** postgres://… URL, password included, that psql, the admin CLI and the service connect to. */
  url: string
  port: number
  stop(): Promise<void>
}

/** Where the dev stack keeps its database password, beside the data (`.tryon/db-password`). */
export const passwordFile = (dataDir: string) => join(dataDir, 'db-password')

/** The password kept in `dataDir`, made on first use: 24 random bytes, readable by the owner only. */
export async function databasePassword(dataDir: string): Promise<string> {
  const file = passwordFile(dataDir)
  const saved = await readFile(file, 'utf8').then(
    (text) => text.trim(),
    () => '',
  )
  if (saved) return saved
  const password = randomBytes(24).toString('base64url')
  await writeFile(file, `${password}\n`, { mode: 0o600 })
  return password
}

/**
 * PGlite (Postgres compiled to WASM) behind a wire-protocol socket, so the service reaches it with the same
 * postgres.js code it uses for a real server. PGlite itself trusts every connection as superuser, so it listens only
 * on a Unix socket in a private folder, and the TCP port in front of it asks for the password first (SCRAM-SHA-256,
 * as a real server does), then passes the connection through. `dataDir` undefined keeps everything in memory.
 */
export async function startEmbeddedPostgres(options: {
  dataDir?: string
  host?: string
  port?: number
  /** Default: a random one for this run. */
  password?: string
}): Promise<EmbeddedPostgres> {
  const db = await PGlite.create(options.dataDir ?? 'memory://')
  const socketDir = await mkdtemp(join(tmpdir(), 'tryon-pg-'))
  const socketPath = join(socketDir, 'pglite.sock')
  const backend = new PGLiteSocketServer({ db, path: socketPath, maxConnections: 32 })
  await backend.start()
  const password = options.password ?? randomBytes(24).toString('base64url')
  const host = options.host ?? '127.0.0.1'
  const sockets = new Set<Socket>()
  const front = createServer((client) => {
    sockets.add(client)
    // Many small messages each way: no Nagle delay, as PGlite's own socket handler sets.
    client.setNoDelay(true)
    client.on('close', () => sockets.delete(client))
    authenticate(client, password, socketPath)
  })
  await new Promise<void>((resolve, reject) => {
    front.once('error', reject)
    front.listen(options.port ?? 0, host, () => resolve())
  })
  const port = (front.address() as { port: number }).port
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@${host.includes(':') ? `[${host}]` : host}:${port}/postgres`,
    port,
    async stop() {
      const closed = closeServer(front)
      for (const socket of sockets) socket.destroy()
      await closed
      await backend.stop()
      await db.close()
      await rm(socketDir, { recursive: true, force: true })
    },
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()))
}

const SSL_REQUEST = 80877103
const GSSENC_REQUEST = 80877104
const CANCEL_REQUEST = 80877102
const PROTOCOL_3 = 196608
const ITERATIONS = 4096

/** One backend message: type byte, length (itself included), body. */
function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5)
  head.write(type, 0, 'latin1')
  head.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([head, body])
}

function authRequest(code: number, data: Buffer = Buffer.alloc(0)): Buffer {
  const body = Buffer.alloc(4)
  body.writeInt32BE(code)
  return message('R', Buffer.concat([body, data]))
}

function fatal(code: string, text: string): Buffer {
  const fields = [
    ['S', 'FATAL'],
    ['V', 'FATAL'],
    ['C', code],
    ['M', text],
  ]
    .map(([k, v]) => `${k}${v}\0`)
    .join('')
  return message('E', Buffer.from(`${fields}\0`, 'utf8'))
}

const hmac = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest()
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest()

/**
 * The server side of SCRAM-SHA-256 (RFC 5802, RFC 7677) without channel binding, as Postgres speaks it: see
 * PostgreSQL's docs, "SASL Authentication" in the frontend/backend protocol chapter.
 */
function authenticate(client: Socket, password: string, socketPath: string): void {
  let buffered = Buffer.alloc(0)
  let startup: Buffer | null = null
  let clientFirstBare = ''
  let serverFirst = ''
  let nonce = ''
  let binding = ''
  const salt = randomBytes(16)
  const salted = pbkdf2Sync(password.normalize('NFKC'), salt, ITERATIONS, 32, 'sha256')
  let stage: 'startup' | 'initial' | 'final' = 'startup'
  const refuse = (code: string, text: string) => {
    client.end(fatal(code, text))
  }
  client.on('error', () => client.destroy())
  const onData = (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk])
    for (;;) {
      if (stage === 'startup') {
        if (buffered.length < 8) return
        const length = buffered.readInt32BE(0)
        if (length < 8 || length > 10_000) return refuse('08P01', 'invalid startup packet')
        if (buffered.length < length) return
        const code = buffered.readInt32BE(4)
        const packet = buffered.subarray(0, length)
        buffered = buffered.subarray(length)
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          client.write('N')
          continue
        }
        if (code === CANCEL_REQUEST) return void client.end()
        if (code !== PROTOCOL_3) return refuse('0A000', 'unsupported frontend protocol')
        const fields = packet.subarray(8).toString('utf8').split('\0')
        const user = fields[fields.indexOf('user') + 1]
        if (fields.indexOf('user') < 0 || user !== 'postgres')
          return refuse('28P01', `password authentication failed for user "${user ?? ''}"`)
        startup = Buffer.from(packet)
        stage = 'initial'
        client.write(authRequest(10, Buffer.from('SCRAM-SHA-256\0\0', 'latin1')))
        continue
      }
      if (buffered.length < 5) return
      const length = buffered.readInt32BE(1)
      if (buffered[0] !== 0x70 || length < 4 || length > 10_000) return refuse('08P01', 'expected a password message')
      if (buffered.length < length + 1) return
      const body = buffered.subarray(5, length + 1)
      buffered = buffered.subarray(length + 1)
      if (stage === 'initial') {
        const mechanismEnd = body.indexOf(0)
        const mechanism = body.subarray(0, mechanismEnd).toString('latin1')
        const first = body.subarray(mechanismEnd + 5).toString('utf8')
        // y: the client could bind to TLS but thinks we cannot (true: there is no TLS here); p would insist.
        const match = /^([ny],,)(n=[^,]*,r=([\x21-\x2b\x2d-\x7e]+))$/.exec(first)
        if (mechanism !== 'SCRAM-SHA-256' || !match) return refuse('28000', 'SCRAM-SHA-256 without channel binding is required')
        binding = Buffer.from(match[1], 'utf8').toString('base64')
        clientFirstBare = match[2]
        nonce = match[3] + randomBytes(18).toString('base64')
        serverFirst = `r=${nonce},s=${salt.toString('base64')},i=${ITERATIONS}`
        stage = 'final'
        client.write(authRequest(11, Buffer.from(serverFirst, 'utf8')))
        continue
      }
      const final = body.toString('utf8')
      const match = /^(c=([^,]*),r=([^,]+)),p=([A-Za-z0-9+/=]+)$/.exec(final)
      if (!match || match[2] !== binding || match[3] !== nonce) return refuse('28P01', 'password authentication failed for user "postgres"')
      const authMessage = `${clientFirstBare},${serverFirst},${match[1]}`
      const storedKey = sha256(hmac(salted, 'Client Key'))
      const proof = Buffer.from(match[4], 'base64')
      const signature = hmac(storedKey, authMessage)
      if (proof.length !== signature.length) return refuse('28P01', 'password authentication failed for user "postgres"')
      const clientKey = Buffer.from(proof.map((byte, i) => byte ^ signature[i]))
      if (!timingSafeEqual(sha256(clientKey), storedKey)) return refuse('28P01', 'password authentication failed for user "postgres"')
      client.write(authRequest(12, Buffer.from(`v=${hmac(hmac(salted, 'Server Key'), authMessage).toString('base64')}`, 'utf8')))
      client.off('data', onData)
      passThrough(client, socketPath, Buffer.concat([startup!, buffered]))
      return
    }
  }
  client.on('data', onData)
}

/** From here PGlite answers: AuthenticationOk, parameters, ReadyForQuery, then every query. */
function passThrough(client: Socket, socketPath: string, first: Buffer): void {
  client.pause()
  const server = connect(socketPath, () => {
    server.write(first)
    client.pipe(server)
    server.pipe(client)
    client.resume()
  })
  const close = () => {
    client.destroy()
    server.destroy()
  }
  server.on('error', close)
  server.on('close', close)
  client.on('close', close)
}
