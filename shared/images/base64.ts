// Node 20 lacks Uint8Array.fromBase64; node:buffer is on Node, Deno and workerd (nodejs_compat), and Deno takes the native path.
// biome-ignore lint/correctness/noNodejsModules: the one Node module in shared/, for the reason above.
import { Buffer } from 'node:buffer'

type Alphabet = 'base64' | 'base64url'

// Uint8Array.fromBase64 / toBase64 (TC39; in Deno and newer V8) are not in TypeScript's lib yet.
interface NativeBase64 {
  fromBase64?: (text: string, options: { alphabet: Alphabet }) => Uint8Array
}
interface NativeToBase64 {
  toBase64?: (this: Uint8Array) => string
}

const nativeFromBase64 = (Uint8Array as unknown as NativeBase64).fromBase64
const nativeToBase64 = (Uint8Array.prototype as unknown as NativeToBase64).toBase64

const PAD = 0x3d
// V8 answers this without scanning when the string is stored one byte per character.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the range is every Latin-1 character, control characters included.
const BEYOND_LATIN1 = /[^\x00-\xff]/
const WHITESPACE = /[\t\n\f\r ]+/g

function hasWhitespace(text: string): boolean {
  return text.includes('\n') || text.includes('\r') || text.includes(' ') || text.includes('\t') || text.includes('\f')
}

/** Length without padding, or -1 when the padding is misplaced. */
function dataLengthOf(text: string): number {
  const firstPad = text.indexOf('=')
  if (firstPad === -1) return text.length
  if (text.length % 4 !== 0 || firstPad < text.length - 2) return -1
  return text.charCodeAt(text.length - 1) === PAD ? firstPad : -1
}

function alphabetOf(text: string): Alphabet | null {
  const standard = text.includes('+') || text.includes('/')
  const urlSafe = text.includes('-') || text.includes('_')
  if (standard && urlSafe) return null
  return urlSafe ? 'base64url' : 'base64'
}

function toPlainUint8Array(buffer: Uint8Array): Uint8Array {
  // Small Buffers are slices of a shared pool; copy so the caller never sees its neighbours.
  if (buffer.byteOffset === 0 && buffer.byteLength === buffer.buffer.byteLength) {
    return new Uint8Array(buffer.buffer, 0, buffer.byteLength)
  }
  return new Uint8Array(buffer)
}

function decodeCompact(text: string): Uint8Array | null {
  if (BEYOND_LATIN1.test(text)) return null
  const dataLength = dataLengthOf(text)
  if (dataLength === -1 || dataLength % 4 === 1) return null
  const alphabet = alphabetOf(text)
  if (alphabet === null) return null

  if (nativeFromBase64) {
    try {
      return nativeFromBase64(text, { alphabet })
    } catch {
      return null
    }
  }
  const decoded = Buffer.from(text, alphabet)
  // Buffer skips characters outside the alphabet instead of failing, so any such
  // character leaves the output shorter than the length implies. This avoids a
  // separate validation pass, which would cost more than the decode itself.
  if (decoded.length !== Math.floor((dataLength * 3) / 4)) return null
  return toPlainUint8Array(decoded)
}

/**
 * The common case in one pass over the data: no whitespace, padding (if any) only at the end. Null when
 * that does not hold or the text is not valid; the caller then takes the general path, which decides.
 */
function decodeUnwrapped(text: string): Uint8Array | null {
  if (BEYOND_LATIN1.test(text)) return null
  const pads = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0
  if (pads > 0 && text.length % 4 !== 0) return null
  const dataLength = text.length - pads
  if (dataLength % 4 === 1) return null
  const decoded = Buffer.from(text, 'base64')
  // Whitespace, misplaced padding and foreign characters are all skipped (or end the decoding), so any of
  // them leaves the output shorter than the length implies: no separate scan for them is needed.
  if (decoded.length !== Math.floor((dataLength * 3) / 4) || alphabetOf(text) === null) return null
  return toPlainUint8Array(decoded)
}

/**
 * Decodes standard or URL-safe base64 (one alphabet per payload, padding optional,
 * ASCII whitespace ignored). Returns null for anything else.
 */
export function decodeBase64(text: string): Uint8Array | null {
  // Line-wrapped text (MIME, PEM) shows it within its first line: it goes straight to the general path.
  if (!nativeFromBase64 && !hasWhitespace(text.slice(0, 1024))) {
    const decoded = decodeUnwrapped(text)
    if (decoded) return decoded
  }
  return decodeCompact(hasWhitespace(text) ? text.replace(WHITESPACE, '') : text)
}

export function encodeBase64(bytes: Uint8Array): string {
  if (nativeToBase64) return nativeToBase64.call(bytes)
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')
}

/**
 * How many bytes `text` would decode to, counting only non-whitespace characters,
 * so a size limit can be applied before decoding.
 */
export function decodedLengthOf(text: string): number {
  let characters = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code !== PAD && code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09 && code !== 0x0c) characters++
  }
  return Math.floor((characters * 3) / 4)
}
