import { createServer, connect, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'

/**
 * A TCP proxy on 127.0.0.1 between the service and Postgres, for injecting faults: added latency,
 * dropped connections, refused connections and a black hole that accepts and never answers.
 */
export interface TcpProxy {
  port: number
  /** Rewrites a postgres:// URL to go through the proxy. */
  through(url: string): string
  /** Delay each chunk in both directions by this many milliseconds. */
  setLatency(ms: number): void
  /** 'up' forwards; 'refuse' closes new connections at once; 'blackhole' holds them silently. */
  setMode(mode: 'up' | 'refuse' | 'blackhole'): void
  /** Destroys every open connection (a server restart or a network reset). */
  resetAll(): void
  connections(): number
  close(): Promise<void>
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let latency = 0
  let mode: 'up' | 'refuse' | 'blackhole' = 'up'
  const open = new Set<Socket>()
  const track = (socket: Socket) => {
    open.add(socket)
    socket.on('close', () => open.delete(socket))
    socket.on('error', () => socket.destroy())
  }
  const pipe = (from: Socket, to: Socket) => {
    from.on('data', (chunk) => {
      if (latency === 0) to.write(chunk)
      else setTimeout(() => to.writable && to.write(chunk), latency)
    })
    from.on('close', () => to.destroy())
  }

  const server: Server = createServer((client) => {
    track(client)
    if (mode === 'refuse') return void client.destroy()
    if (mode === 'blackhole') return
    const upstream = connect(target.port, target.host)
    track(upstream)
    pipe(client, upstream)
    pipe(upstream, client)
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
    setLatency: (ms) => void (latency = ms),
    setMode: (next) => void (mode = next),
    resetAll() {
      for (const socket of open) socket.destroy()
    },
    connections: () => open.size,
    async close() {
      for (const socket of open) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
