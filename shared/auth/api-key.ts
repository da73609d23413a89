import { base62 } from '../encoding/base62.ts'
import { crc32 } from '../encoding/crc32.ts'

export type KeyMode = 'live' | 'test'

/** A key that passed the offline checks; whether it exists is the database's call. */
export interface Credential {
  mode: KeyMode
  keyHash: Uint8Array
}

const KEY_SHAPE = /^vto_(live|test)_[0-9A-Za-z]{36}$/
const BODY_LENGTH = 'vto_test_'.length + 30

export const keyChecksum = (body: string) => base62(crc32(new TextEncoder().encode(body)), 6)

/**
 * Checks prefix, length, alphabet and checksum without a database call, so typos and
 * garbage are refused for free. Always computes the checksum of a well-shaped key,
 * so the time taken does not depend on how much of a forged key was right.
 */
export function keyModeOf(key: string): KeyMode | null {
  if (!KEY_SHAPE.test(key)) return null
  const checksumMatches = keyChecksum(key.slice(0, BODY_LENGTH)) === key.slice(BODY_LENGTH)
  return checksumMatches ? (key.slice(4, 8) as KeyMode) : null
}

export async function hashApiKey(key: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(key)))
}

export async function credentialFrom(key: string | undefined): Promise<Credential | null> {
  if (key === undefined) return null
  const mode = keyModeOf(key.trim())
  return mode ? { mode, keyHash: await hashApiKey(key.trim()) } : null
}

const KEY_PARAM = /^(x[-_]?)?api[-_]?key$|^key$/i
/** The start of a key, also percent-encoded (`%5F` for `_`) and in any case: what a scanner or a log reader would spot. */
const KEY_PREFIX = /vto(?:_|%5f)(?:live|test)(?:_|%5f)/i
const KEY_SHAPED = /vto(?:_|%5f)(live|test)(?:_|%5f)(?!\[redacted\])[0-9a-z%]*/gi

/**
 * Keys belong in the header only: one in the URL may already sit in a proxy's logs. A parameter named like a key,
 * or a key-shaped string anywhere in the query (a parameter's name or value, encoded or not), counts.
 */
export function urlCarriesKey(url: URL): boolean {
  if (KEY_PREFIX.test(url.search)) return true
  for (const [name, value] of url.searchParams) {
    if (KEY_PARAM.test(name) || KEY_PREFIX.test(name) || KEY_PREFIX.test(value)) return true
  }
  return false
}

/** The text with every key-shaped string cut to its mode: for paths, URLs and messages on their way to a log. */
export function redactKeys(text: string): string {
  return text.replace(KEY_SHAPED, (_, mode: string) => `vto_${mode.toLowerCase()}_[redacted]`)
}
