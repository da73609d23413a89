import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, startProcess, type RunningProcess } from './process.ts'

/** Server connections per database: fewer than the tests' client pools, so transactions really change connections. */
export const POOL_SIZE = 4

export interface TransactionPooler {
  /** A connection string through the pooler to `database`, with prepared statements off as production has them. */
  urlFor(database: string): string
  stop(): Promise<void>
}

/**
 * PgBouncer in transaction mode in front of a real Postgres server: each transaction may run on a different
 * server connection, as through Supabase's transaction pooler (Supavisor, port 6543). PgBouncer 1.18 keeps no
 * prepared statements across them, so code that needs session state fails here as it would in production.
 */
export async function startTransactionPooler(serverUrl: string): Promise<TransactionPooler> {
  const server = new URL(serverUrl)
  const dir = await mkdtemp(join(tmpdir(), 'tryon-pooler-'))
  // PgBouncer refuses to run as root; as root it drops to the postgres user, which must read the config.
  await chmod(dir, 0o755)
  const port = await freePort()
  const target = [
    `host=${server.hostname}`,
    `port=${server.port || 5432}`,
    `user=${decodeURIComponent(server.username || 'postgres')}`,
    server.password ? `password=${decodeURIComponent(server.password)}` : '',
  ].join(' ')
  const config = join(dir, 'pgbouncer.ini')
  await writeFile(
    config,
    [
      '[databases]',
      `* = ${target}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'auth_type = any',
      'pool_mode = transaction',
      `default_pool_size = ${POOL_SIZE}`,
      'max_client_conn = 200',
      'unix_socket_dir =',
      'logfile =',
      'pidfile =',
      'log_connections = 0',
      'log_disconnections = 0',
    ].join('\n'),
  )
  await chmod(config, 0o644)

  const asRoot = process.getuid?.() === 0 ? ['-u', 'postgres'] : []
  let bouncer: RunningProcess
  try {
    bouncer = startProcess('pgbouncer', [...asRoot, config], { PATH: `${process.env.PATH}:/usr/sbin` })
    const notStarted = new Promise<never>((_, reject) => bouncer.child.once('error', reject))
    notStarted.catch(() => {})
    await Promise.race([bouncer.waitFor(/listening on 127\.0\.0\.1/, 10_000), notStarted])
  } catch (error) {
    await rm(dir, { recursive: true, force: true })
    throw new Error('TEST_POOLER=1 needs PgBouncer (apt-get install pgbouncer; .ci/run installs it)', { cause: error })
  }

  return {
    urlFor: (database) => `postgres://postgres@127.0.0.1:${port}/${database}?prepare=false`,
    async stop() {
      await bouncer.stop()
      await rm(dir, { recursive: true, force: true })
    },
  }
}
