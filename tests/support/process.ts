import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'

/** TRYON_CLIENT_ADDRESS_SECRET for services the tests start outside the dev stack (which makes its own). */
export const TEST_CLIENT_ADDRESS_SECRET = 'tests-only-client-address-secret-0123456789'

const NETWORK_SETTINGS = /^(DENO_DIR|DENO_CERT|DENO_TLS_CA_STORE|NODE_EXTRA_CA_CERTS|NPM_CONFIG_REGISTRY|HTTPS?_PROXY|NO_PROXY)$/i

/** This machine's registry, proxy and certificate settings, for a Deno that may fetch npm: packages itself. */
export function denoNetworkEnv(): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => NETWORK_SETTINGS.test(name)))
}

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
