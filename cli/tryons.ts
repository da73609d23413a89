import type { Sql } from 'postgres'
import { removeDeletedResults } from '../shared/storage/deletions.ts'
import type { ResultStore } from '../shared/storage/result-store.ts'
import { instant, UsageError, uuid } from './args.ts'

/**
 * `tryons delete TRYON_ID`, `tryons delete --account ACCOUNT_ID --before DATE` and `tryons purge`: a shopper's
 * erasure request. The SQL function clears the try-on's personal fields and queues its image in one transaction;
 * then every queued image (this one, and any left by SQL-only deletions) is removed through the store.
 */
export async function runTryOns(
  sql: Sql,
  storeOf: () => ResultStore,
  action: string | undefined,
  args: { id?: string; account?: string; before?: string },
): Promise<Record<string, unknown>> {
  if (action === 'purge') return { imagesRemoved: await removeDeletedResults(sql, storeOf()) }
  if (action !== 'delete') throw new UsageError(`unknown command: tryons ${action ?? ''}`.trim())

  if (args.id !== undefined) {
    if (args.account !== undefined || args.before !== undefined) throw new UsageError('give either TRYON_ID or --account with --before')
    const tryOnId = uuid(args.id, 'TRYON_ID')
    // Before anything is deleted: a store that cannot be reached as configured refuses now, not after the commit.
    const store = storeOf()
    const [row] = await sql<{ result: string }[]>`select tryon.delete_tryon(${tryOnId}) as result`
    const imagesRemoved = await removeDeletedResults(sql, store)
    if (row.result === 'already_deleted') {
      return {
        tryOnId,
        deleted: false,
        alreadyDeleted: true,
        imagesRemoved,
        message: `try-on ${tryOnId} was already deleted; nothing to do`,
      }
    }
    return { tryOnId, deleted: true, imagesRemoved }
  }

  if (args.account === undefined || args.before === undefined)
    throw new UsageError('give TRYON_ID, or --account ACCOUNT_ID with --before DATE')
  const accountId = uuid(args.account, '--account')
  const before = instant(args.before, '--before')
  const store = storeOf()
  const [row] = await sql<{ deleted: number; already_deleted: number; running: number }[]>`
    select deleted, already_deleted, running from tryon.delete_account_tryons(${accountId}, ${before.toISOString()}::timestamptz)`
  const imagesRemoved = await removeDeletedResults(sql, store)
  const report: Record<string, unknown> = {
    accountId,
    before: before.toISOString(),
    deleted: row.deleted,
    alreadyDeleted: row.already_deleted,
    running: row.running,
    imagesRemoved,
  }
  if (row.running > 0) report.message = `${row.running} try-on(s) still running were left; run this again once they have finished`
  else if (row.deleted === 0)
    report.message =
      row.already_deleted > 0
        ? 'every try-on before that date was already deleted; nothing to do'
        : 'no try-on before that date; nothing to do'
  return report
}
