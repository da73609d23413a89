import type { Sql } from 'postgres'
import type { ResultStore } from './result-store.ts'

/**
 * Removes the stored images of deleted try-ons (queued by tryon.delete_tryon and tryon.delete_account_tryons)
 * through the store, confirming each one only after the store removed it: an image the store could not remove
 * stays queued for the next run. Returns how many were removed.
 */
export async function removeDeletedResults(sql: Sql, store: ResultStore, options: { batch?: number } = {}): Promise<number> {
  const batch = options.batch ?? 100
  let removed = 0
  for (;;) {
    const rows = await sql<{ path: string }[]>`select path from tryon.pending_result_deletions(${batch}) as path`
    for (const { path } of rows) {
      await store.remove(path)
      await sql`select tryon.confirm_result_deletion(${path})`
      removed++
    }
    if (rows.length < batch) return removed
  }
}
