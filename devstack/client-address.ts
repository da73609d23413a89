import type { HttpBindings } from '@hono/node-server'
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ClientAddressSource } from '../shared/limits/client-address.ts'

/** The connection's remote address: @hono/node-server passes Node's request as the env (`incoming`). */
export const socketAddress: ClientAddressSource = (_request, env) =>
  (env as Partial<HttpBindings> | undefined)?.incoming?.socket?.remoteAddress ?? null

/**
 * The dev stack's HMAC secret for client addresses, made once and kept in the data directory (like the demo key),
 * so the counters of one client stay its own across restarts. TRYON_CLIENT_ADDRESS_SECRET overrides it.
 */
export async function ensureClientAddressSecret(dataDir: string): Promise<string> {
  const file = join(dataDir, 'client-address-secret')
  const saved = await readFile(file, 'utf8').then(
    (text) => text.trim(),
    () => '',
  )
  if (saved.length >= 32) return saved
  const secret = randomBytes(32).toString('hex')
  await mkdir(dataDir, { recursive: true })
  await writeFile(file, `${secret}\n`, { mode: 0o600 })
  return secret
}
