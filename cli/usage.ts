import type { PendingQuery, Row, Sql } from 'postgres'
import { day, UsageError, uuid } from './args.ts'

/** What each group of `usage` reports, in the order printed: counts of try-ons and credits from the ledger. */
const METRICS = {
  tryOns: 'tryons',
  delivered: 'delivered',
  failed: 'failed',
  running: 'running',
  creditsCharged: 'credits_charged',
  creditsRefunded: 'credits_refunded',
  trainRendered: 'train_rendered',
  trainScoreLow: 'train_score_low',
  scoreUnavailable: 'score_unavailable',
  trainPretreatmentUnavailable: 'train_pretreatment_unavailable',
  /** Results that failed their check (delivered for nothing) and results whose check could not run (billed as usual). */
  qualityFailed: 'quality_failed',
  qualityUnchecked: 'quality_unchecked',
} as const

type Metric = keyof typeof METRICS
export type UsageGroup = Record<string, string | number | null>
export const GROUPINGS = ['day', 'key', 'parent-url', 'origin', 'outcome'] as const
export type Grouping = (typeof GROUPINGS)[number]

export interface UsageReport {
  accountId: string
  from: string | null
  to: string | null
  by: Grouping
  groups: UsageGroup[]
  total: Record<Metric, number>
}

/** The columns naming a group, and how groups are ordered: by day, by key creation, else the busiest first. */
function grouping(sql: Sql, by: Grouping): { columns: PendingQuery<Row[]>; groupBy: PendingQuery<Row[]>; orderBy: PendingQuery<Row[]> } {
  const busiest = sql`sum(u.tryons) desc`
  switch (by) {
    case 'day':
      return { columns: sql`to_char(u.day, 'YYYY-MM-DD') as "day"`, groupBy: sql`u.day`, orderBy: sql`u.day` }
    case 'key':
      return {
        columns: sql`k.id as "keyId", k.display_prefix as "displayPrefix", k.label as "label"`,
        groupBy: sql`k.id, k.display_prefix, k.label, k.created_at`,
        orderBy: sql`k.created_at, k.id`,
      }
    case 'parent-url':
      return { columns: sql`u.parent_url as "parentUrl"`, groupBy: sql`u.parent_url`, orderBy: sql`${busiest}, u.parent_url nulls last` }
    case 'origin':
      return { columns: sql`u.origin as "origin"`, groupBy: sql`u.origin`, orderBy: sql`${busiest}, u.origin nulls last` }
    case 'outcome':
      return { columns: sql`u.outcome as "outcome"`, groupBy: sql`u.outcome`, orderBy: sql`${busiest}, u.outcome` }
  }
}

/**
 * `usage --account ACCOUNT_ID [--from DAY] [--to DAY] --by day|key|parent-url|origin|outcome`: try-ons, credits
 * charged and refunded (from the ledger) and wedding-dress verdicts per group, over the UTC days from..to
 * (both included) on which the try-ons started. Product pages are grouped without query strings and fragments.
 */
export async function usageReport(sql: Sql, options: { account?: string; from?: string; to?: string; by?: string }): Promise<UsageReport> {
  const accountId = uuid(options.account, '--account')
  if (!GROUPINGS.includes(options.by as Grouping)) throw new UsageError(`--by must be one of ${GROUPINGS.join(', ')}`)
  const by = options.by as Grouping
  const from = options.from === undefined ? null : day(options.from, '--from')
  const to = options.to === undefined ? null : day(options.to, '--to')
  if (from && to && from > to) throw new UsageError('--from must not be after --to')

  const [account] = await sql`select 1 from tryon.accounts where id = ${accountId}`
  if (!account) throw Object.assign(new Error(`account ${accountId} does not exist`), { code: 'P0002' })

  const { columns, groupBy, orderBy } = grouping(sql, by)
  const sums = Object.entries(METRICS)
    .map(([name, column]) => sql`sum(u.${sql(column)})::float8 as ${sql(name)}`)
    .reduce((list, sum) => sql`${list}, ${sum}`)
  const rows = await sql<UsageGroup[]>`
    select ${columns}, ${sums}
      from tryon.usage_daily u join tryon.api_keys k on k.id = u.api_key_id
     where u.account_id = ${accountId}
       and (${from}::date is null or u.day >= ${from}::date)
       and (${to}::date is null or u.day <= ${to}::date)
     group by ${groupBy}
     order by ${orderBy}`

  const total = Object.fromEntries(Object.keys(METRICS).map((name) => [name, 0])) as Record<Metric, number>
  for (const row of rows) for (const name of Object.keys(METRICS) as Metric[]) total[name] += row[name] as number
  return { accountId, from, to, by, groups: rows.map((row) => ({ ...row })), total }
}

/** A cell a spreadsheet will not run: quoted when needed, and a leading = + - @ defused. */
function csvCell(value: string | number | null): string {
  if (value === null) return ''
  let text = String(value)
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}

export function usageCsv(report: UsageReport): string {
  const columns = report.groups.length > 0 ? Object.keys(report.groups[0]) : [...groupColumns(report.by), ...Object.keys(METRICS)]
  const lines = [columns.join(','), ...report.groups.map((group) => columns.map((column) => csvCell(group[column])).join(','))]
  return `${lines.join('\n')}\n`
}

function groupColumns(by: Grouping): string[] {
  return { day: ['day'], key: ['keyId', 'displayPrefix', 'label'], 'parent-url': ['parentUrl'], origin: ['origin'], outcome: ['outcome'] }[
    by
  ]
}
