// Price and refund rules: supabase/migrations/20261123000200_credit_functions.sql (begin_tryon, settle_tryon, credits_for_outcome);
// checked results: supabase/migrations/20261202000100_quality_checks.sql.
import postgres from 'postgres'
import type { Sql } from 'postgres'
import type { KeyMode } from '../auth/api-key.ts'
import type { ProductKind } from '../engine/types.ts'

/** Why a key may not be used; 'ok' when it may. */
export type KeyVerdict = 'ok' | 'invalid_key' | 'key_inactive' | 'origin_not_allowed'

/** Why a key's abuse limits refuse a request (429): its rate, its daily credit cap, or its free deliveries for the day. */
export type LimitVerdict = 'rate_limited' | 'daily_cap_reached' | 'free_deliveries_exhausted'

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
  /** HMAC of the client's address (shared/limits/client-address.ts); without it, the client counts as unknown. */
  clientHash?: Uint8Array
  /** The time the limits count by; the database's clock without it. */
  now?: Date
}

/**
 * How a key's results are checked before they are billed (`admin keys quality`): not at all, by the measured checks,
 * or by those and a seeing judge. null: the service's default (judge for live keys where a judge is configured,
 * measured otherwise).
 */
export type QualityCheckLevel = 'off' | 'measured' | 'judge'

export type BeginResult =
  | { verdict: 'ok'; keyMode: KeyMode; balance: number; creditsReserved: number; qualityCheck: QualityCheckLevel | null }
  | { verdict: 'insufficient_credits'; keyMode: KeyMode; balance: number }
  /** The first request with this idempotency key completed: its response, as it was sent. */
  | { verdict: 'replay'; response: Record<string, unknown> }
  | { verdict: 'idempotency_in_progress' | 'idempotency_mismatch' }
  /** A limit of the key refused the request; nothing was reserved. */
  | { verdict: LimitVerdict; retryAfterSeconds: number }
  | { verdict: Exclude<KeyVerdict, 'ok'> }

/** Outcomes that deliver a result (tryon.is_delivered); any other outcome is the error code the request failed with. */
export type DeliveredOutcome =
  | 'generated'
  | 'train_rendered'
  | 'score_unavailable'
  | 'train_score_low'
  | 'train_pretreatment_unavailable'
  /** The result failed its check: delivered all the same, 0 credits, no short id, one of the key's free deliveries. */
  | 'quality_failed'

/**
 * What the check of a result found, as the answer's `quality` object says it. `passed` is null when the check could
 * not run (`checked: false`); `score` is within 0..1 or null; `issues` are codes such as `colour_changed`.
 */
export interface QualityRecord {
  checked: boolean
  passed: boolean | null
  score: number | null
  issues: string[]
}

export interface SettleTryOn {
  tryOnId: string
  /** A delivered outcome, or the error code the request failed with. */
  outcome: DeliveredOutcome | (string & {})
  /** Stored on the try-on. quality_failed without one records `{ checked: true, passed: false }`. */
  quality?: QualityRecord | null
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

export interface FreeDelivery {
  held: boolean
  /** Seconds to the end of the UTC day, when the day's free deliveries come back. */
  retryAfterSeconds: number
}

/** The database port: every credit movement happens inside one of these calls. */
export interface BillingStore {
  /** `now` is the service's clock: a rotated key expires by it. */
  authorize(keyHash: Uint8Array, origin: string | null, now?: Date): Promise<KeyVerdict>
  begin(request: BeginTryOn): Promise<BeginResult>
  settle(request: SettleTryOn): Promise<Settlement>
  sweep(olderThanSeconds: number): Promise<number>
  /**
   * Whether a running try-on may be delivered for nothing (a result that failed its check): its key has no limit on
   * free deliveries, or the try-on holds its free-delivery slots; with when the day's come back by `now`, the service's
   * clock (begin's).
   */
  freeDelivery(tryOnId: string, now?: Date): Promise<FreeDelivery>
  /** The stored path of the result a share link names, or null when it is unknown, not delivered or deleted. */
  sharedResult(shortId: string): Promise<string | null>
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

/**
 * The database could not be reached or did not answer in time. `mayHaveCommitted` is false only when the call
 * provably never reached the server (no connection could be opened); a reset or a timeout after sending is
 * ambiguous: the statement may have committed and only its reply was lost.
 */
export class DatabaseUnavailable extends Error {
  readonly mayHaveCommitted: boolean

  constructor(cause: unknown, options: { mayHaveCommitted: boolean }) {
    super(`database unavailable: ${cause instanceof Error ? cause.message : String(cause)}`)
    this.name = 'DatabaseUnavailable'
    this.mayHaveCommitted = options.mayHaveCommitted
  }
}

/**
 * Codes meaning no connection could be opened, so the call was never sent: postgres.js and socket codes, and
 * the server refusing a new session (57P03 cannot connect now, 08001/08004 connection rejected).
 */
const CONNECT_ERRORS = new Set(['CONNECT_TIMEOUT', 'ECONNREFUSED', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN', '57P03', '08001', '08004'])

/** Server errors about the connection itself (class 08, shutdowns 57P0x), not about the statement. */
const SERVER_CONNECTION_ERROR = /^(08|57P0)/

/**
 * Awaits one database call with a time limit. Past it the caller gets DatabaseUnavailable and the call is
 * abandoned, never cancelled: postgres.js cancels a sent query by backend, which can stop the next query on
 * that connection or hand it the skipped query's reply (seen under load: a settlement answered with another
 * call's empty result), and cancelling a query that is opening its connection leaves that connection stuck.
 * An abandoned call may still run later (postgres.js keeps reconnecting for it); every call is safe to run
 * late, and `begin` refunds a late reservation itself.
 *
 * Only an error the server sent about the statement (a PostgresError: its transaction rolled back) is a
 * definite failure, and a connection that could not be opened never sent the call. Anything else (a reset, a
 * timeout, a driver fault, a missing result row) may have followed a commit, which is why settlement retries
 * (settle_tryon is idempotent) and an unsettled reservation is swept and refunded later.
 */
async function bounded<T extends readonly postgres.MaybeRow[]>(timeoutMs: number, pending: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  try {
    const timeout = new Promise<never>((_, reject) => {
      const giveUp = () => reject(new DatabaseUnavailable(`no answer within ${timeoutMs} ms`, { mayHaveCommitted: true }))
      // A thread kept busy (decoding, generating) runs due timers before it reads the sockets: look at the
      // answers already received once more before giving up, or an answer that came in time is lost.
      timer = setTimeout(() => (timer = setTimeout(giveUp, 0)), timeoutMs)
    })
    const rows = await Promise.race([pending, timeout])
    if (rows.length === 0) throw new DatabaseUnavailable('the call returned no result row', { mayHaveCommitted: true })
    return rows
  } catch (error) {
    if (error instanceof DatabaseUnavailable) throw error
    const code = (error as { code?: string }).code ?? ''
    if (error instanceof postgres.PostgresError && !SERVER_CONNECTION_ERROR.test(code)) throw error
    throw new DatabaseUnavailable(error, { mayHaveCommitted: !CONNECT_ERRORS.has(code) })
  } finally {
    clearTimeout(timer)
  }
}

type BeginRow = {
  verdict: string
  key_mode: KeyMode
  balance: string | null
  credits_reserved: number
  replay: Record<string, unknown> | null
  retry_after: number | null
  quality_check: QualityCheckLevel | null
}

export function createPostgresBilling(sql: Sql, options: { timeoutMs?: number } = {}): BillingStore {
  const timeoutMs = options.timeoutMs ?? 10_000

  /** A begin abandoned at its time limit may still reserve later: that reservation is refunded when it lands. */
  const refundIfReservedLate = (call: Promise<BeginRow[]>, tryOnId: string) => {
    call
      .then(([row]) => (row?.verdict === 'ok' ? billing.settle({ tryOnId, outcome: 'database_unavailable' }) : undefined))
      // Unreachable again: the sweeper returns the credits after its TTL.
      .catch(() => {})
  }

  const billing: BillingStore = {
    async authorize(keyHash, origin, now) {
      const [row] = await bounded(
        timeoutMs,
        sql<{ verdict: KeyVerdict }[]>`
        select verdict from tryon.authorize_api_key(decode(${toHex(keyHash)}, 'hex'), ${origin},
                                                    ${now ? now.toISOString() : null}::timestamptz)`,
      )
      return row.verdict
    },

    async begin(request) {
      const idempotency = request.idempotency
      const call = sql<BeginRow[]>`
        select verdict, key_mode, balance, credits_reserved, replay, retry_after, quality_check
          from tryon.begin_tryon(
            decode(${toHex(request.keyHash)}, 'hex'), ${request.origin}, ${request.tryOnId},
            ${request.productKind}, ${request.clothingType ?? null}, ${request.parentUrl ?? null},
            ${request.locale ?? null}, ${idempotency?.key ?? null},
            ${idempotency ? sql`decode(${toHex(idempotency.requestHash)}, 'hex')` : null},
            ${request.clientHash ? sql`decode(${toHex(request.clientHash)}, 'hex')` : null},
            ${request.now ? request.now.toISOString() : null}::timestamptz)`
      let row: BeginRow
      try {
        ;[row] = await bounded(timeoutMs, call)
      } catch (error) {
        // Two requests claimed the same idempotency key at once: the loser was rolled back whole.
        if ((error as { code?: string }).code === '40001' && idempotency) return { verdict: 'idempotency_in_progress' }
        // The caller is told its credits come back; a reservation made after it gave up comes back at once.
        if (error instanceof DatabaseUnavailable) refundIfReservedLate(call, request.tryOnId)
        throw error
      }
      const balance = Number(row.balance)
      switch (row.verdict) {
        case 'ok':
          return {
            verdict: 'ok',
            keyMode: row.key_mode,
            balance,
            creditsReserved: row.credits_reserved,
            qualityCheck: row.quality_check,
          }
        case 'insufficient_credits':
          return { verdict: 'insufficient_credits', keyMode: row.key_mode, balance }
        case 'replay':
          return { verdict: 'replay', response: row.replay ?? {} }
        case 'idempotency_in_progress':
        case 'idempotency_mismatch':
          return { verdict: row.verdict }
        case 'rate_limited':
        case 'daily_cap_reached':
        case 'free_deliveries_exhausted':
          return { verdict: row.verdict, retryAfterSeconds: row.retry_after ?? 60 }
        default:
          return { verdict: row.verdict as Exclude<KeyVerdict, 'ok'> }
      }
    },

    async settle(request) {
      const [row] = await bounded(
        timeoutMs,
        sql<{ settled: boolean; status: Settlement['status']; credits_charged: number; balance: string; short_id: string | null }[]>`
        select settled, status, credits_charged, balance, short_id
          from tryon.settle_tryon(${request.tryOnId}, ${request.outcome}, ${request.shortId ?? null},
                                  ${request.resultPath ?? null}, ${request.engine ?? null},
                                  ${request.response ? sql.json(request.response as postgres.JSONValue) : null},
                                  ${request.quality ? sql.json(request.quality as unknown as postgres.JSONValue) : null})`,
      )
      return {
        settled: row.settled,
        status: row.status,
        creditsCharged: row.credits_charged,
        balance: Number(row.balance),
        shortId: row.short_id,
      }
    },

    async sweep(olderThanSeconds) {
      const [row] = await bounded(
        timeoutMs,
        sql<{ refunded: number }[]>`
        select tryon.sweep_reservations(make_interval(secs => ${olderThanSeconds})) as refunded`,
      )
      return row.refunded
    },

    async freeDelivery(tryOnId, now) {
      const [row] = await bounded(
        timeoutMs,
        sql<{ held: boolean; retry_after: number }[]>`
        select held, retry_after from tryon.free_delivery_held(${tryOnId}, ${now ?? null})`,
      )
      return { held: row.held, retryAfterSeconds: row.retry_after }
    },

    async sharedResult(shortId) {
      const [row] = await bounded(timeoutMs, sql<{ path: string | null }[]>`select tryon.shared_result(${shortId}) as path`)
      return row.path
    },
  }
  return billing
}
