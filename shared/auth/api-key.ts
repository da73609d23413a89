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
 * Percent-decodings of a query tried, the text as sent included: a key encoded once more per round (`%2574` for `t`)
 * is still found within them, and each round costs one pass over a query the server already capped in length.
 */
const DECODE_ROUNDS = 8

/**
 * Keys belong in the header only: one in the URL may already sit in a proxy's logs. A parameter named like a key,
 * or a key-shaped string anywhere in the query (a parameter's name or value), counts, as sent or percent-decoded
 * up to DECODE_ROUNDS times: whatever decodes the query next (a proxy, a framework, a log viewer) may decode again.
 */
export function urlCarriesKey(url: URL): boolean {
  for (const query of decodings(url.search)) {
    if (KEY_PREFIX.test(query)) return true
    for (const [name] of new URLSearchParams(query)) if (KEY_PARAM.test(name)) return true
  }
  return false
}

/** The text and its successive percent-decodings, until one changes nothing or the rounds run out. */
function decodings(text: string): string[] {
  const found = [text]
  for (let round = 1; round < DECODE_ROUNDS; round++) {
    // Byte by byte, as Latin-1: never throws on a malformed sequence, and a key is ASCII either way.
    const next = found[found.length - 1].replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    if (next === found[found.length - 1]) break
    found.push(next)
  }
  return found
}

/** The text with every key-shaped string cut to its mode: for paths, URLs and messages on their way to a log. */
export function redactKeys(text: string): string {
  return text.replace(KEY_SHAPED, (_, mode: string) => `vto_${mode.toLowerCase()}_[redacted]`)
}
