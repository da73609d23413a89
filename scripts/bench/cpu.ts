import { readFile } from 'node:fs/promises'
import type { Sql } from 'postgres'

const TICKS_PER_SECOND = 100

/** User + system CPU seconds a Linux process has used (/proc/<pid>/stat), 0 once it is gone. */
export async function processCpuSeconds(pid: number): Promise<number> {
  return statCpuSeconds(`/proc/${pid}/stat`)
}

/**
 * The same for one thread of it (/proc/<pid>/task/<tid>/stat); a process's main thread has its pid as its tid. On
 * Node that is the event loop's thread: what every request waits on, apart from the worker threads.
 */
export async function threadCpuSeconds(pid: number, tid = pid): Promise<number> {
  return statCpuSeconds(`/proc/${pid}/task/${tid}/stat`)
}

async function statCpuSeconds(path: string): Promise<number> {
  try {
    const stat = await readFile(path, 'utf8')
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND
  } catch {
    return 0
  }
}

/** CPU seconds used so far by each Postgres backend connected to the benchmark's database. */
export async function backendCpu(sql: Sql): Promise<Map<number, number>> {
  const rows = await sql<
    { pid: number }[]
  >`select pid from pg_stat_activity where datname = current_database() and backend_type = 'client backend'`
  const cpu = new Map<number, number>()
  for (const { pid } of rows) cpu.set(pid, await processCpuSeconds(pid))
  return cpu
}

/** CPU seconds the backends used between two readings; a backend that appeared in between counts in full. */
export function backendCpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0)
  return total
}
