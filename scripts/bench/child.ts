import { fork, type ChildProcess } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import type { ChildMessage, ParentMessage, ServerCounters, ServerMode } from './server.ts'

/** A server under test in its own process: its counters over IPC, its memory from the kernel. */
export interface ServerProcess {
  url: string
  pid: number
  counters(): Promise<ServerCounters>
  /** Waits until every request the server started has finished (a run ends with requests still in flight). */
  drain(timeoutMs: number): Promise<void>
  collectGarbage(): Promise<void>
  /** Resident set size now, in bytes. */
  rss(): Promise<number>
  /** Restarts the kernel's peak-RSS watermark (Linux: /proc/<pid>/clear_refs). */
  resetPeakRss(): Promise<void>
  /** Peak resident set size since the last reset, in bytes. */
  peakRss(): Promise<number>
  stop(): Promise<void>
}

const serverEntry = fileURLToPath(new URL('./server.ts', import.meta.url))

export async function startServer(mode: ServerMode, databaseUrl: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  // The parent runs under tsx: its execArgv loads TypeScript in the child too.
  const child = fork(serverEntry, [mode], {
    execArgv: [
      ...process.execArgv,
      '--expose-gc',
      ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
    ],
    env: { ...process.env, ...env, BENCH_DATABASE_URL: databaseUrl },
    // The service logs one JSON line per request, as in production; they go to /dev/null.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  })
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message: ChildMessage) =>
      message.type === 'ready' ? resolve(message.url) : reject(new Error('unexpected message')),
    )
    child.once('exit', (code) => reject(new Error(`the ${mode} server exited with ${code} before it was ready`)))
  })
  const ask = <T extends ChildMessage['type']>(message: ParentMessage, answer: T) => request(child, message, answer)
  const status = async (field: 'VmRSS' | 'VmHWM') => {
    const text = await readFile(`/proc/${child.pid}/status`, 'utf8')
    return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? NaN) * 1024
  }
  const counters = async () => ((await ask({ type: 'counters' }, 'counters')) as Extract<ChildMessage, { type: 'counters' }>).counters
  return {
    url,
    pid: child.pid!,
    counters,
    async drain(timeoutMs) {
      // Done when nothing is in flight and nothing moved for a moment: a request cut off by the end of a run
      // may still be reading its body or parsing it, before it reserves credits and counts as started.
      const deadline = Date.now() + timeoutMs
      let previous = await counters()
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 300))
        const current = await counters()
        if (current.started === current.finished && current.queries === previous.queries && current.started === previous.started) return
        if (Date.now() > deadline) throw new Error(`${current.started - current.finished} requests still in flight after ${timeoutMs} ms`)
        previous = current
      }
    },
    async collectGarbage() {
      await ask({ type: 'gc' }, 'gc')
    },
    rss: () => status('VmRSS'),
    async resetPeakRss() {
      await writeFile(`/proc/${child.pid}/clear_refs`, '5')
    },
    peakRss: () => status('VmHWM'),
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.send({ type: 'stop' } satisfies ParentMessage)
      await exited
    },
  }
}

function request(child: ChildProcess, message: ParentMessage, answer: ChildMessage['type']): Promise<ChildMessage> {
  return new Promise((resolve) => {
    const listener = (reply: ChildMessage) => {
      if (reply.type !== answer) return
      child.off('message', listener)
      resolve(reply)
    }
    child.on('message', listener)
    child.send(message)
  })
}
