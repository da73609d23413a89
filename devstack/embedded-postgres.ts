import { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'

export interface EmbeddedPostgres {
  /** postgres://… URL that psql, the admin CLI and the service connect to. */
  url: string
  port: number
  stop(): Promise<void>
}

/**
 * PGlite (Postgres compiled to WASM) behind a wire-protocol socket, so the service
 * reaches it with the same postgres.js code it uses for a real server.
 * `dataDir` undefined keeps everything in memory.
 */
export async function startEmbeddedPostgres(options: {
  dataDir?: string
  host?: string
  port?: number
}): Promise<EmbeddedPostgres> {
  const db = await PGlite.create(options.dataDir ?? 'memory://')
  const host = options.host ?? '127.0.0.1'
  const server = new PGLiteSocketServer({ db, host, port: options.port ?? 0, maxConnections: 32 })
  await server.start()
  const port = Number(server.getServerConn().split(':').pop())
  return {
    url: `postgres://postgres@${host}:${port}/postgres`,
    port,
    async stop() {
      await server.stop()
      await db.close()
    },
  }
}
