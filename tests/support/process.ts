import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'

export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

export interface RunningProcess {
  child: ChildProcess
  output(): string
  /** Resolves with the output so far once `pattern` appears in it; rejects if the process exits first. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>
  stop(): Promise<void>
}

export function startProcess(command: string, args: string[], env: Record<string, string | undefined>): RunningProcess {
  const child = spawn(command, args, { env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))

  return {
    child,
    output: () => output,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => finish(new Error(`timed out waiting for ${pattern}; output:\n${output}`)), timeoutMs)
        const check = () => pattern.test(output) && finish()
        const onExit = (code: number | null) => finish(new Error(`process exited (${code}) before ${pattern}; output:\n${output}`))
        function finish(error?: Error) {
          clearTimeout(timer)
          child.stdout!.off('data', check)
          child.stderr!.off('data', check)
          child.off('exit', onExit)
          if (error) reject(error)
          else resolve(output)
        }
        child.stdout!.on('data', check)
        child.stderr!.on('data', check)
        child.once('exit', onExit)
        check()
      })
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
    },
  }
}
