import { DatabaseUnavailable, type BillingStore, type Settlement, type SettleTryOn } from '../billing/store.ts'

/** How hard a settlement whose reply was lost is pursued before its outcome is declared unknown. */
export interface SettlementRetry {
  /** Calls in all, the first one included. */
  attempts: number
  /** Wait before the first retry, doubled before each next one. */
  backoffMs: number
  /** No retry starts once this long has passed since the first call. */
  budgetMs: number
}

export const defaultSettlementRetry: SettlementRetry = { attempts: 4, backoffMs: 200, budgetMs: 15_000 }

/** A settle call may have committed, and no later call could find out: the try-on may or may not be charged. */
export class SettlementUnknown extends Error {
  constructor(
    readonly tryOnId: string,
    cause: unknown,
  ) {
    super(`the settlement of try-on ${tryOnId} may have committed, and the database could not be asked again: ${String(cause)}`)
    this.name = 'SettlementUnknown'
  }
}

/**
 * Settles a try-on and resolves a call whose reply was lost. `settle_tryon` is idempotent, so the same call is
 * sent again (on a fresh connection: the pool replaces a lost one) until the database says what happened:
 * either it settles now, or it reports the earlier call's settlement. Throws DatabaseUnavailable when no call
 * can have reached the database (the reservation stands and the sweeper returns it), and SettlementUnknown
 * when one may have committed but no later one got an answer.
 */
export async function settleResolvingLostReplies(
  billing: Pick<BillingStore, 'settle'>,
  request: SettleTryOn,
  retry: SettlementRetry,
  wait: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<Settlement & { retried: number }> {
  const started = Date.now()
  let mayHaveCommitted = false
  let lastError: DatabaseUnavailable | undefined
  for (let attempt = 0; attempt < retry.attempts; attempt++) {
    if (attempt > 0) {
      const pause = retry.backoffMs * 2 ** (attempt - 1)
      if (Date.now() - started + pause > retry.budgetMs) break
      await wait(pause)
    }
    try {
      return { ...(await billing.settle(request)), retried: attempt }
    } catch (error) {
      if (!(error instanceof DatabaseUnavailable)) throw error
      lastError = error
      mayHaveCommitted ||= error.mayHaveCommitted
    }
  }
  if (mayHaveCommitted) throw new SettlementUnknown(request.tryOnId, lastError?.message)
  throw lastError ?? new DatabaseUnavailable('no settlement attempt was made', { mayHaveCommitted: false })
}
