/** Digits then upper then lower case: the alphabet of API keys, their checksums and share ids. */
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** `value` (a non-negative integer) in base62, left-padded with zeros to `width`. */
export function base62(value: number, width: number): string {
  let out = ''
  for (let v = value; v > 0; v = Math.floor(v / 62)) out = ALPHABET[v % 62] + out
  return out.padStart(width, '0')
}

/** Uniform base62 from the platform's CSPRNG (bytes ≥ 248 are rejected to avoid bias). */
export function randomBase62(length: number): string {
  let out = ''
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < 248) out += ALPHABET[byte % 62]
      if (out.length === length) break
    }
  }
  return out
}
