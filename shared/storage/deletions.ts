import type { Sql } from 'postgres'
import type { ResultStore } from './result-store.ts'

/**
 * Removes the queued images through the store: those of deleted try-ons (tryon.delete_tryon and
 * tryon.delete_account_tryons) and whatever a try-on that ended without a delivery may have left (queued when it
 * ended: supabase/migrations/20261201000200_unsettled_results.sql). Each is confirmed only after the store removed
 * it, so one the store could not remove stays queued for the next run. Returns how many images were there to remove.
 */
export async function removeDeletedResults(sql: Sql, store: ResultStore, options: { batch?: number } = {}): Promise<number> {
  const batch = options.batch ?? 100
  let removed = 0
  for (;;) {
    const rows = await sql<{ path: string }[]>`select path from tryon.pending_result_deletions(${batch}) as path`
    for (const { path } of rows) {
      if (await store.remove(path)) removed++
      await sql`select tryon.confirm_result_deletion(${path})`
    }
    if (rows.length < batch) return removed
  }
}
