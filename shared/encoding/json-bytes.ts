/**
 * JSON read from its bytes, where strings of `largeFrom` bytes or more (base64 images, in practice) stay in
 * the bytes as LargeString values instead of becoming JS strings: a 27 MB body of two images is then held
 * once, as bytes, not again as its text and as the two strings parsed out of it.
 */

/** A JSON string value left in the document's bytes: its escaped content, between the quotes. */
export class LargeString {
  #consumed = false

  constructor(
    readonly document: Uint8Array,
    readonly start: number,
    readonly end: number,
  ) {}

  /** Its length in the document, escapes included. */
  get byteLength(): number {
    return this.end - this.start
  }

  /** The string as JSON.parse would give it. */
  text(): string {
    if (this.#consumed) throw new Error('this string was decoded in place and is gone')
    return JSON.parse(new TextDecoder().decode(this.document.subarray(this.start - 1, this.end + 1))) as string
  }

  /** Marks the bytes as reused (decoded in place): the text is gone. */
  consume(): void {
    if (this.#consumed) throw new Error('this string was already decoded in place')
    this.#consumed = true
  }

  /** What a log line shows instead of the string. */
  toJSON(): string {
    return `[a string of ${this.byteLength} bytes]`
  }
}

export function isText(value: unknown): value is string | LargeString {
  return typeof value === 'string' || value instanceof LargeString
}

const QUOTE = 0x22
const BACKSLASH = 0x5c

/**
 * Parses UTF-8 JSON as JSON.parse(new TextDecoder().decode(bytes)) would, except that string values (not keys)
 * of `largeFrom` bytes or more come back as LargeString. Throws SyntaxError for anything that is not JSON.
 */
export function parseJsonBytes(bytes: Uint8Array, options: { largeFrom?: number } = {}): unknown {
  const largeFrom = options.largeFrom ?? 64 * 1024
  // No string can be that long: the runtime's parser alone, with nothing to look for.
  if (bytes.length < largeFrom) return JSON.parse(new TextDecoder().decode(bytes))
  const large: LargeString[] = []
  // Each large string is replaced by a placeholder string no other string in the document can equal.
  const marker = `\u0000${crypto.randomUUID()}:`
  const decoder = new TextDecoder()
  const pieces: string[] = []
  let copiedTo = 0
  for (let at = 0; ; ) {
    const open = bytes.indexOf(QUOTE, at)
    if (open === -1) break
    const close = closingQuote(bytes, open + 1)
    if (close === -1) break
    if (close - open - 1 >= largeFrom && !isKey(bytes, close + 1) && isValidContent(bytes, open + 1, close)) {
      pieces.push(decoder.decode(bytes.subarray(copiedTo, open), { stream: true }), `"\\u0000${marker.slice(1)}${large.length}"`)
      large.push(new LargeString(bytes, open + 1, close))
      copiedTo = close + 1
    }
    at = close + 1
  }
  pieces.push(decoder.decode(bytes.subarray(copiedTo)))
  const skeleton = pieces.join('')
  if (large.length === 0) return JSON.parse(skeleton)
  return JSON.parse(skeleton, (_, value) =>
    typeof value === 'string' && value.startsWith(marker) ? large[Number(value.slice(marker.length))] : value,
  )
}

/** The quote that ends the string starting at `from`: the first one not escaped. -1 when there is none. */
function closingQuote(bytes: Uint8Array, from: number): number {
  for (let at = from; ; ) {
    const quote = bytes.indexOf(QUOTE, at)
    if (quote === -1) return -1
    let backslashes = 0
    while (quote - backslashes - 1 >= from && bytes[quote - backslashes - 1] === BACKSLASH) backslashes++
    if (backslashes % 2 === 0) return quote
    at = quote + 1
  }
}

/** A string followed by a colon is an object's key. */
function isKey(bytes: Uint8Array, from: number): boolean {
  let at = from
  while (at < bytes.length && (bytes[at] === 0x20 || bytes[at] === 0x09 || bytes[at] === 0x0a || bytes[at] === 0x0d)) at++
  return bytes[at] === 0x3a
}

/** Per byte, in a JSON string: 0 where it may stand as it is, 1 for a backslash, 2 for a control character. */
const CONTENT = new Uint8Array(256)
CONTENT.fill(2, 0, 0x20)
CONTENT[BACKSLASH] = 1
/** The escapes JSON has besides \u: \" \\ \/ \b \f \n \r \t. */
const SIMPLE_ESCAPES = new Uint8Array(256)
for (const c of [0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]) SIMPLE_ESCAPES[c] = 1

/**
 * What JSON allows between the quotes (RFC 8259 §7): no control characters, and only its escapes. A large
 * string that breaks this stays in the text, for JSON.parse to refuse.
 */
function isValidContent(bytes: Uint8Array, start: number, end: number): boolean {
  for (let at = start; at < end; at++) {
    const kind = CONTENT[bytes[at]]
    if (kind === 0) continue
    if (kind === 2) return false
    const escaped = bytes[++at]
    if (SIMPLE_ESCAPES[escaped] === 1) continue
    if (escaped !== 0x75 || at + 4 >= end) return false
    for (let digit = 1; digit <= 4; digit++) if (!isHexDigit(bytes[at + digit])) return false
    at += 4
  }
  return true
}

function isHexDigit(byte: number): boolean {
  return (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
}
