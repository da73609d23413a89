import { createServer, connect, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'

type Mode = 'up' | 'refuse' | 'blackhole'

/**
 * A TCP proxy on 127.0.0.1 between the service and Postgres, for injecting faults: added latency,
 * dropped connections, refused connections, a black hole that accepts and never answers, and a reply
 * lost after the server committed (it reads the Postgres wire protocol to find that reply).
 */
export interface TcpProxy {
  port: number
  /** Rewrites a postgres:// URL to go through the proxy. */
  through(url: string): string
  /** Delay each chunk in both directions by this many milliseconds. */
  setLatency(ms: number): void
  /** 'up' forwards; 'refuse' closes new connections at once; 'blackhole' holds them silently. */
  setMode(mode: Mode): void
  /** Destroys every open connection (a server restart or a network reset). */
  resetAll(): void
  /**
   * The next `times` statements whose SQL contains `sqlFragment` run to completion on the server (their
   * transaction commits), but their reply never reaches the client: the connection is cut once the server
   * reports ready for the next query. `after: 'refuse'` (or 'blackhole') also cuts every other connection at
   * that moment and applies to new ones: the database is gone for good.
   * Resolves with the number of replies dropped when all `times` were.
   */
  dropReplyTo(sqlFragment: string, options?: { times?: number; after?: Mode }): Promise<number>
  connections(): number
  close(): Promise<void>
}

/** Frontend messages the drop rule reads (PostgreSQL protocol v3, "Message Formats"). */
const PARSE = 0x50 // 'P': statement name, query text, …
const BIND = 0x42 // 'B': portal name, statement name, …
const QUERY = 0x51 // 'Q': query text (simple protocol, also a sync point)
const SYNC = 0x53 // 'S': ends an extended-protocol batch; the server answers ReadyForQuery
const READY_FOR_QUERY = 0x5a // 'Z' (backend)
const SSL_REQUEST = 80877103
const GSSENC_REQUEST = 80877104

interface DropRule {
  fragment: string
  remaining: number
  dropped: number
  after?: Mode
  done: (dropped: number) => void
}

interface Message {
  /** The startup and SSL/GSS negotiation requests have no type byte. */
  untyped: boolean
  bytes: Buffer
}

/** Splits a byte stream into whole protocol messages. */
class MessageReader {
  private buffer: Buffer = Buffer.alloc(0)
  constructor(private untyped: boolean) {}

  push(chunk: Buffer): Message[] {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk
    const messages: Message[] = []
    for (;;) {
      const header = this.untyped ? 0 : 1
      if (this.buffer.length < header + 4) break
      const size = header + this.buffer.readInt32BE(header)
      if (this.buffer.length < size) break
      const bytes = this.buffer.subarray(0, size)
      this.buffer = this.buffer.subarray(size)
      messages.push({ untyped: this.untyped, bytes })
      // SSL/GSS negotiation is followed by another untyped startup message.
      if (this.untyped) this.untyped = isNegotiation(bytes)
    }
    return messages
  }
}

const isNegotiation = (startup: Buffer) => [SSL_REQUEST, GSSENC_REQUEST].includes(startup.readInt32BE(4))

const cString = (message: Buffer, offset: number): [string, number] => {
  const end = message.indexOf(0, offset)
  return [message.toString('utf8', offset, end), end + 1]
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let latency = 0
  let mode: Mode = 'up'
  const rules: DropRule[] = []
  const open = new Set<Socket>()
  const track = (socket: Socket) => {
    open.add(socket)
    socket.on('close', () => open.delete(socket))
    socket.on('error', () => socket.destroy())
  }
  const send = (to: Socket, bytes: Buffer) => {
    if (latency === 0) to.write(bytes)
    else setTimeout(() => to.writable && to.write(bytes), latency)
  }

  const server: Server = createServer((client) => {
    track(client)
    if (mode === 'refuse') return void client.destroy()
    if (mode === 'blackhole') return
    const upstream = connect(target.port, target.host)
    track(upstream)

    // Sync points sent (the startup exchange is the first) and ReadyForQuery answers received.
    let syncsSent = 0
    let readiesReceived = 0
    const statements = new Map<string, string>()
    let matched: DropRule | undefined
    // The sync point whose reply is being withheld, and the rule it fulfils.
    let withheld: { sync: number; rule: DropRule } | undefined
    const ruleFor = (sql: string) => rules.find((r) => r.remaining > 0 && sql.includes(r.fragment))

    // A negotiation request is answered with one untyped byte ('N' here: the proxy only carries plain TCP).
    let negotiationBytesOwed = 0
    const fromClient = new MessageReader(true)
    client.on('data', (chunk: Buffer) => {
      for (const { untyped, bytes: message } of fromClient.push(chunk)) {
        const type = message[0]
        if (untyped) {
          if (isNegotiation(message)) negotiationBytesOwed++
          else syncsSent = 1
        } else if (type === PARSE) {
          const [name, next] = cString(message, 5)
          const [sql] = cString(message, next)
          statements.set(name, sql)
          matched ??= ruleFor(sql)
        } else if (type === BIND) {
          const [, next] = cString(message, 5)
          const [statement] = cString(message, next)
          matched ??= ruleFor(statements.get(statement) ?? '')
        } else if (type === QUERY || type === SYNC) {
          syncsSent++
          if (type === QUERY) matched ??= ruleFor(cString(message, 5)[0])
          if (matched && !withheld) {
            matched.remaining--
            withheld = { sync: syncsSent, rule: matched }
          }
          matched = undefined
        }
        send(upstream, message)
      }
    })

    const fromServer = new MessageReader(false)
    upstream.on('data', (chunk: Buffer) => {
      while (negotiationBytesOwed > 0 && chunk.length > 0) {
        negotiationBytesOwed--
        send(client, chunk.subarray(0, 1))
        chunk = chunk.subarray(1)
      }
      for (const { bytes: message } of fromServer.push(chunk)) {
        const belongsTo = readiesReceived + 1
        if (message[0] === READY_FOR_QUERY) readiesReceived++
        if (!withheld || belongsTo < withheld.sync) {
          send(client, message)
        } else if (message[0] === READY_FOR_QUERY) {
          // The statement ran and its transaction ended on the server; the client never hears of it.
          const { rule } = withheld
          rule.dropped++
          if (rule.remaining === 0) rule.done(rule.dropped)
          client.destroy()
          upstream.destroy()
          if (rule.after) {
            mode = rule.after
            if (mode !== 'up') for (const socket of open) socket.destroy()
          }
          return
        }
      }
    })
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    port,
    through(url) {
      const u = new URL(url)
      u.hostname = '127.0.0.1'
      u.port = String(port)
      return u.toString()
    },
    setLatency(ms) {
      latency = ms
    },
    setMode(next) {
      mode = next
    },
    resetAll() {
      for (const socket of open) socket.destroy()
    },
    dropReplyTo(fragment, options = {}) {
      return new Promise((done) => rules.push({ fragment, remaining: options.times ?? 1, dropped: 0, after: options.after, done }))
    },
    connections: () => open.size,
    async close() {
      for (const socket of open) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
