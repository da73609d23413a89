import postgres from 'postgres'
import type { Sql } from 'postgres'
import type { KeyMode } from '../auth/api-key.ts'

/** Why a key may not be used; 'ok' when it may. */
export type KeyVerdict = 'ok' | 'invalid_key' | 'key_inactive' | 'origin_not_allowed'

export type ProductKind = 'standard' | 'wedding-dress'

export interface BeginTryOn {
  keyHash: Uint8Array
  origin: string | null
  tryOnId: string
  productKind: ProductKind
  clothingType?: string
  parentUrl?: string
  locale?: string
  /** The caller's Idempotency-Key and a SHA-256 of its request, when it sent one. */
  idempotency?: { key: string; requestHash: Uint8Array }
}

export type BeginResult =
  | { verdict: 'ok'; keyMode: KeyMode; balance: number; creditsReserved: number }
  | { verdict: 'insufficient_credits'; keyMode: KeyMode; balance: number }
  /** The first request with this idempotency key completed: its response, as it was sent. */
  | { verdict: 'replay'; response: Record<string, unknown> }
  | { verdict: 'idempotency_in_progress' | 'idempotency_mismatch' }
  | { verdict: Exclude<KeyVerdict, 'ok'> }

export interface SettleTryOn {
  tryOnId: string
  /** 'generated', a bridal outcome, or the error code the request failed with. */
  outcome: string
  shortId?: string | null
  resultPath?: string | null
  engine?: string | null
  /** What the response will say besides shortId and credits, kept for idempotent replays. */
  response?: Record<string, unknown>
}

export interface Settlement {
  /** false when the try-on had already been settled or swept: nothing moved this time. */
  settled: boolean
  status: 'succeeded' | 'failed' | 'expired'
  creditsCharged: number
  balance: number
  shortId: string | null
}

/** The database port: every credit movement happens inside one of these calls. */
export interface BillingStore {
  authorize(keyHash: Uint8Array, origin: string | null): Promise<KeyVerdict>
  begin(request: BeginTryOn): Promise<BeginResult>
  settle(request: SettleTryOn): Promise<Settlement>
  sweep(olderThanSeconds: number): Promise<number>
}

export interface DatabaseOptions {
  /** Off for Supabase's transaction pooler (port 6543), which cannot keep prepared statements. */
  prepare?: boolean
  max?: number
  /**
   * Look up array types on connect, needed to send JS arrays as parameters (the admin CLI does).
   * Off for the service: it sends no arrays, and postgres.js leaves that lookup's failure unhandled
   * when a connection drops during it, which would crash a Node process on a network blip.
   */
  fetchTypes?: boolean
}

/** One small pool; production creates it once per isolate. */
export function connectDatabase(url: string, options: DatabaseOptions = {}): Sql {
  return postgres(url, {
    prepare: options.prepare ?? preparedStatementsFor(url),
    max: options.max ?? 5,
    fetch_types: options.fetchTypes ?? false,
    idle_timeout: 20,
    connect_timeout: 10,
    onnotice: () => {},
  })
}

/**
 * Whether a connection string allows prepared statements: not through Supabase's transaction pooler
 * (port 6543), whose server connections change between transactions, nor with `?prepare=false`.
 */
export function preparedStatementsFor(url: string): boolean {
  const flag = /[?&]prepare=([^&#]*)/i.exec(url)?.[1]
  if (flag !== undefined) return !['false', '0', 'off', 'disable'].includes(flag.toLowerCase())
  // A pattern, not `new URL`: multi-host strings (h1:5432,h2:6543) are valid for postgres.js.
  return !/:6543(?=[/?,#]|$)/.test(url.replace(/^[^@]*@/, ''))
}

const toHex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')

/** The database could not be reached or did not answer in time; the request fails with a 500, nothing is lost. */
export class DatabaseUnavailable extends Error {
  constructor(cause: unknown) {
    super(`database unavailable: ${cause instanceof Error ? cause.message : String(cause)}`)
    this.name = 'DatabaseUnavailable'
  }
}

/** postgres.js and server error codes that mean "no usable connection", not "bad query". */
const CONNECTION_ERRORS = new Set([
  'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT',
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN',
  '57P01', '57P02', '57P03', '08000', '08001', '08003', '08006',
])

/**
 * Runs one database call with a time limit. On timeout the query is cancelled and the caller gets
 * DatabaseUnavailable; if the call did commit after all, its reservation is swept and refunded later.
 */
async function bounded<T extends readonly postgres.MaybeRow[]>(timeoutMs: number, query: () => postgres.PendingQuery<T>): Promise<postgres.RowList<T>> {
  let timer: ReturnType<typeof setTimeout> | undefined
  try {
    const pending = query()
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        pending.cancel()
        reject(new DatabaseUnavailable(`no answer within ${timeoutMs} ms`))
      }, timeoutMs)
    })
    return await Promise.race([pending, timeout])
  } catch (error) {
    if (error instanceof DatabaseUnavailable) throw error
    if (CONNECTION_ERRORS.has((error as { code?: string }).code ?? '')) throw new DatabaseUnavailable(error)
    throw error
  } finally {
    clearTimeout(timer)
  }
}

export function createPostgresBilling(sql: Sql, options: { timeoutMs?: number } = {}): BillingStore {
  const timeoutMs = options.timeoutMs ?? 10_000
  return {
    async authorize(keyHash, origin) {
      const [row] = await bounded(timeoutMs, () => sql<{ verdict: KeyVerdict }[]>`
        select verdict from tryon.authorize_api_key(decode(${toHex(keyHash)}, 'hex'), ${origin})`)
      return row.verdict
    },

    async begin(request) {
      const idempotency = request.idempotency
      let row
      try {
        ;[row] = await bounded(timeoutMs, () => sql<{ verdict: string; key_mode: KeyMode; balance: string | null; credits_reserved: number; replay: Record<string, unknown> | null }[]>`
          select verdict, key_mode, balance, credits_reserved, replay
            from tryon.begin_tryon(
              decode(${toHex(request.keyHash)}, 'hex'), ${request.origin}, ${request.tryOnId},
              ${request.productKind}, ${request.clothingType ?? null}, ${request.parentUrl ?? null},
              ${request.locale ?? null}, ${idempotency?.key ?? null},
              ${idempotency ? sql`decode(${toHex(idempotency.requestHash)}, 'hex')` : null})`)
      } catch (error) {
        // Two requests claimed the same idempotency key at once: the loser was rolled back whole.
        if ((error as { code?: string }).code === '40001' && idempotency) return { verdict: 'idempotency_in_progress' }
        throw error
      }
      const balance = Number(row.balance)
      switch (row.verdict) {
        case 'ok':
          return { verdict: 'ok', keyMode: row.key_mode, balance, creditsReserved: row.credits_reserved }
        case 'insufficient_credits':
          return { verdict: 'insufficient_credits', keyMode: row.key_mode, balance }
        case 'replay':
          return { verdict: 'replay', response: row.replay ?? {} }
        case 'idempotency_in_progress':
        case 'idempotency_mismatch':
          return { verdict: row.verdict }
        default:
          return { verdict: row.verdict as Exclude<KeyVerdict, 'ok'> }
      }
    },

    async settle(request) {
      const [row] = await bounded(timeoutMs, () => sql<
        { settled: boolean; status: Settlement['status']; credits_charged: number; balance: string; short_id: string | null }[]
      >`
        select settled, status, credits_charged, balance, short_id
          from tryon.settle_tryon(${request.tryOnId}, ${request.outcome}, ${request.shortId ?? null},
                                  ${request.resultPath ?? null}, ${request.engine ?? null},
                                  ${request.response ? sql.json(request.response as postgres.JSONValue) : null})`)
      return {
        settled: row.settled,
        status: row.status,
        creditsCharged: row.credits_charged,
        balance: Number(row.balance),
        shortId: row.short_id,
      }
    },

    async sweep(olderThanSeconds) {
      const [row] = await bounded(timeoutMs, () => sql<{ refunded: number }[]>`
        select tryon.sweep_reservations(make_interval(secs => ${olderThanSeconds})) as refunded`)
      return row.refunded
    },
  }
}
