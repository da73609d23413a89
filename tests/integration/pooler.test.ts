import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectDatabase, preparedStatementsFor } from '../../shared/billing/store.ts'
import { createTestDatabase, serverUrl, type TestDatabase } from '../support/database.ts'
import { POOL_SIZE, startTransactionPooler, type TransactionPooler } from '../support/pooler.ts'

describe('which connection strings allow prepared statements', () => {
  it('turns them off for the transaction pooler port and for ?prepare=false, and only then', () => {
    expect(preparedStatementsFor('postgresql://postgres.abcd:pw@aws-0-eu-central-1.pooler.supabase.com:6543/postgres')).toBe(false)
    expect(preparedStatementsFor('postgres://u:pw@pooler.example.com:6543?sslmode=require')).toBe(false)
    expect(preparedStatementsFor('postgres://u:pw@db.abcd.supabase.co:5432/postgres?prepare=false')).toBe(false)
    expect(preparedStatementsFor('postgres://u:pw@db.abcd.supabase.co:5432/postgres?prepare=0')).toBe(false)
    expect(preparedStatementsFor('postgres://u:pw@db.abcd.supabase.co:5432/postgres')).toBe(true)
    expect(preparedStatementsFor('postgres://u:6543@db.example.com:5432/postgres')).toBe(true)
    expect(preparedStatementsFor('postgres://u@db.example.com:65430/postgres')).toBe(true)
    expect(preparedStatementsFor('postgres://u@db.example.com:6543/postgres?prepare=true')).toBe(true)
  })
})

describe('a transaction pooler in front of Postgres', () => {
  let db: TestDatabase
  let database: string
  const poolers: TransactionPooler[] = []

  beforeAll(async () => {
    db = await createTestDatabase('postgres')
    database = new URL(db.url).pathname.slice(1)
  })

  afterAll(async () => {
    for (const pooler of poolers) await pooler.stop()
    await db?.close()
  })

  async function freshPooler(): Promise<TransactionPooler> {
    const pooler = await startTransactionPooler(serverUrl)
    poolers.push(pooler)
    return pooler
  }

  /** Occupies every server connection of the pool at once and counts the prepared statements each one holds. */
  async function preparedStatementsOnServers(pooler: TransactionPooler): Promise<Map<number, number>> {
    const checker = connectDatabase(pooler.urlFor(database), { max: POOL_SIZE })
    const seen = new Map<number, number>()
    let release!: () => void
    const allIn = new Promise<void>((resolve) => (release = resolve))
    try {
      await Promise.all(
        Array.from({ length: POOL_SIZE }, () =>
          checker.begin(async (tx) => {
            const [row] = await tx`select pg_backend_pid() as pid, (select count(*) from pg_prepared_statements)::int as prepared`
            seen.set(row.pid, row.prepared)
            if (seen.size === POOL_SIZE) release()
            await allIn
          }),
        ),
      )
    } finally {
      await checker.end()
    }
    return seen
  }

  it("runs one client connection's transactions on different server connections", async () => {
    const pooler = await freshPooler()
    const client = connectDatabase(pooler.urlFor(database), { max: 1 })
    const other = connectDatabase(pooler.urlFor(database), { max: 1 })
    try {
      const [first] = await client`select pg_backend_pid() as pid`
      let second: { pid: number } | undefined
      // PgBouncer gives the connection just freed to the next transaction: hold it, and the client moves.
      await other.begin(async (tx) => {
        const [held] = await tx`select pg_backend_pid() as pid`
        expect(held.pid).toBe(first.pid)
        ;[second] = await client`select pg_backend_pid() as pid`
      })
      expect(second?.pid).not.toBe(first.pid)
    } finally {
      await client.end()
      await other.end()
    }
  })

  it('keeps prepared statements on shared server connections unless the URL turns them off', async () => {
    const workload = async (url: string, prepare?: boolean) => {
      const sql = connectDatabase(url, { max: 2, prepare })
      for (let i = 0; i < 5; i++) await sql`select ${i}::int + 1 as n`
      await sql.end()
    }

    const pooler = await freshPooler()
    expect(preparedStatementsFor(pooler.urlFor(database))).toBe(false)
    await workload(pooler.urlFor(database))
    const afterUnprepared = await preparedStatementsOnServers(pooler)
    expect(afterUnprepared.size).toBe(POOL_SIZE)
    expect([...afterUnprepared.values()]).toEqual(Array(POOL_SIZE).fill(0))

    // The same workload with prepared statements leaves them behind for whichever client gets that connection next.
    await workload(pooler.urlFor(database), true)
    const afterPrepared = await preparedStatementsOnServers(pooler)
    expect(Math.max(...afterPrepared.values())).toBeGreaterThan(0)
  })
})
