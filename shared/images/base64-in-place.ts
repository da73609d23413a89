import type { LargeString } from '../encoding/json-bytes.ts'

/**
 * A large JSON string read as `[whitespace][data:…;base64,]base64` straight from its bytes, and decoded into
 * them: the image ends up in the request's (or answer's) own bytes, with no string and no second array.
 * It answers as decodeBase64 (and intake's size check) would for the same string, and leaves everything less
 * plain (other characters, escapes of non-ASCII, a URL) to them: `readInlineBase64` is then undefined.
 */
export interface InlineBase64 {
  /** The text before the base64: leading whitespace and a `data:…,` prefix; '' when there is none. */
  prefix: string
  /** The bytes the base64 stands for: its data characters (whitespace and padding left out) times 3/4. */
  decodedLength: number
  /** Whether decodeBase64 accepts it: one alphabet, padding only at the end and complete, no lone last character. */
  valid: boolean
  /** Decodes it into the string's own bytes and returns them; the string is gone after. Only when valid. */
  decode(): Uint8Array
}

const WHITESPACE = -2
const PAD = -3
const OTHER = -1
/** Per byte: its 6-bit value (both alphabets), WHITESPACE (what decodeBase64 skips), PAD or OTHER. */
const VALUES = new Int8Array(256).fill(OTHER)
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
for (let i = 0; i < ALPHABET.length; i++) VALUES[ALPHABET.charCodeAt(i)] = i
VALUES[0x2b] = 62 // +
VALUES[0x2f] = 63 // /
VALUES[0x2d] = 62 // -
VALUES[0x5f] = 63 // _
VALUES[0x3d] = PAD
for (const c of [0x20, 0x09, 0x0a, 0x0c, 0x0d]) VALUES[c] = WHITESPACE

const DATA = 1
/** The characters of both alphabets: the bytes the scan passes over without a second look. */
const KIND = new Uint8Array(256)
for (const c of `${ALPHABET}+/-_`) KIND[c.charCodeAt(0)] = DATA

const BACKSLASH = 0x5c
/** The character a JSON escape stands for, for the escapes a base64 string may use (`\/`, `\n`…); else -1. */
const ESCAPED = new Int16Array(256).fill(-1)
ESCAPED[0x2f] = 0x2f
ESCAPED[0x6e] = 0x0a
ESCAPED[0x72] = 0x0d
ESCAPED[0x74] = 0x09
ESCAPED[0x66] = 0x0c
const MAX_PREFIX = 300
/** What `readEscape` leaves in `escapedCode`: the character of the escape at `at`, -1 when not ASCII or not one we read. */
let escapedCode = -1

/** Reads the escape whose backslash is at `at`; answers where the next character starts. */
function readEscape(document: Uint8Array, at: number): number {
  const escaped = document[at + 1]
  if (escaped !== 0x75) {
    escapedCode = ESCAPED[escaped]
    return at + 2
  }
  const code = parseInt(String.fromCharCode(document[at + 2], document[at + 3], document[at + 4], document[at + 5]), 16)
  escapedCode = code < 128 ? code : -1
  return at + 6
}

export function readInlineBase64(value: LargeString): InlineBase64 | undefined {
  const { document, start, end } = value
  // The prefix, if any: `data:` (after whitespace) up to its first comma, which ends a data URI's prefix.
  let head = ''
  let afterComma = -1
  for (let at = start; at < end && head.length < MAX_PREFIX && afterComma === -1; ) {
    let code = document[at]
    if (code === BACKSLASH) {
      at = readEscape(document, at)
      code = escapedCode
    } else at++
    if (code < 0 || code >= 128) break
    head += String.fromCharCode(code)
    if (code === 0x2c) afterComma = at
  }
  const isDataUri = /^data:/i.test(head.trimStart())
  if (isDataUri && afterComma === -1) return undefined
  const prefix = isDataUri ? head : ''
  const payloadStart = isDataUri ? afterComma : start

  // Data characters (almost every byte) are counted at the end; the loop stops only at the others. Which
  // alphabet is in use is a search for its two extra characters (escaped as \/, '/' is still there).
  const payload = document.subarray(payloadStart, end)
  let standard = payload.includes(0x2b) || payload.includes(0x2f)
  let urlSafe = payload.includes(0x2d) || payload.includes(0x5f)
  let others = 0
  let pads = 0
  let dataAfterPad = false
  for (let at = payloadStart; at < end; ) {
    const run = at
    while (at < end && KIND[document[at]] === DATA) at++
    if (at > run && pads > 0) dataAfterPad = true
    if (at === end) break
    let code = document[at]
    const from = at
    if (code === BACKSLASH) {
      at = readEscape(document, at)
      code = escapedCode
      if (code < 0) return undefined
    } else at++
    others += at - from
    const v = VALUES[code]
    if (v >= 0) {
      // A data character spelled as an escape, or one of the alphabets' two extra characters.
      others -= 1
      if (pads > 0) dataAfterPad = true
      if (code === 0x2b || code === 0x2f) standard = true
      else if (code === 0x2d || code === 0x5f) urlSafe = true
    } else if (v === PAD) pads++
    // Anything but base64 and whitespace: not plain base64, the string's own path decides.
    else if (v !== WHITESPACE) return undefined
  }
  const data = end - payloadStart - others
  // Only whitespace is what intake calls empty: also the string's own path.
  if (prefix === '' && data + pads === 0) return undefined
  const valid = !(standard && urlSafe) && data % 4 !== 1 && (pads === 0 || (pads <= 2 && !dataAfterPad && (data + pads) % 4 === 0))
  const decodedLength = Math.floor((data * 3) / 4)

  return {
    prefix,
    decodedLength,
    valid,
    decode() {
      if (!valid) throw new Error('not valid base64')
      value.consume()
      decodeInPlace(document, payloadStart, end, start)
      return document.subarray(start, start + decodedLength)
    },
  }
}

/**
 * Decodes checked base64 from [from, end) to `write` on. The writes stay behind the reads: four characters
 * (at least four bytes) make at most three bytes. Runs of four plain characters go four at a time.
 */
function decodeInPlace(document: Uint8Array, from: number, end: number, write: number): void {
  let bits = 0
  let buffer = 0
  for (let at = from; at < end; ) {
    if (bits === 0) {
      while (at + 4 <= end) {
        const a = VALUES[document[at]]
        const b = VALUES[document[at + 1]]
        const c = VALUES[document[at + 2]]
        const d = VALUES[document[at + 3]]
        if ((a | b | c | d) < 0) break
        document[write] = (a << 2) | (b >> 4)
        document[write + 1] = ((b & 15) << 4) | (c >> 2)
        document[write + 2] = ((c & 3) << 6) | d
        write += 3
        at += 4
      }
      if (at >= end) break
    }
    let code = document[at]
    if (code === BACKSLASH) {
      at = readEscape(document, at)
      code = escapedCode
    } else at++
    const v = VALUES[code]
    if (v < 0) continue
    buffer = ((buffer << 6) | v) & 0xffffff
    bits += 6
    if (bits >= 8) {
      bits -= 8
      document[write++] = (buffer >> bits) & 0xff
    }
  }
}
