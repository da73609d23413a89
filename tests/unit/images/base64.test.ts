import { describe, expect, it } from 'vitest'
import { decodeBase64, decodedLengthOf, encodeBase64 } from '../../../shared/images/base64.ts'

const STANDARD_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
const WHATWG_WHITESPACE = '\t\n\f\r '

function randomBytes(size: number, seed: number): Uint8Array {
  let state = seed
  return Uint8Array.from({ length: size }, () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff
    return state >> 16
  })
}

/** Strict reference: validate everything with regular expressions, then decode. */
function referenceDecode(text: string): Uint8Array | null {
  const compact = text.replace(/[\t\n\f\r ]/g, '')
  const valid =
    (/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || /^[A-Za-z0-9_-]*={0,2}$/.test(compact)) &&
    (compact.includes('=') ? compact.length % 4 === 0 : compact.length % 4 !== 1)
  return valid ? new Uint8Array(Buffer.from(compact, 'base64')) : null
}

describe('base64 decoding', () => {
  it('round-trips every length from 0 to 300 bytes', () => {
    for (let size = 0; size <= 300; size++) {
      const bytes = randomBytes(size, size + 1)
      const text = encodeBase64(bytes)
      expect(text).toBe(Buffer.from(bytes).toString('base64'))
      expect(decodeBase64(text)).toEqual(bytes)
    }
  })

  it('accepts the URL-safe alphabet with or without padding', () => {
    const bytes = Uint8Array.from([0xfb, 0xff, 0xbf, 0xfe, 0x0f])
    expect(encodeBase64(bytes)).toBe('+/+//g8=')
    expect(decodeBase64('-_-__g8=')).toEqual(bytes)
    expect(decodeBase64('-_-__g8')).toEqual(bytes)
    expect(decodeBase64('+/+//g8')).toEqual(bytes)
  })

  it('ignores ASCII whitespace, including MIME line wrapping', () => {
    const bytes = randomBytes(1000, 7)
    const text = encodeBase64(bytes)
    expect(decodeBase64(text.replace(/.{76}/g, '$&\r\n'))).toEqual(bytes)
    expect(decodeBase64(`\n  ${text.replace(/.{10}/g, '$& \t')}\f\n`)).toEqual(bytes)
  })

  it('returns a plain Uint8Array that owns its memory', () => {
    const decoded = decodeBase64('QUJD')
    expect(decoded).not.toBeNull()
    expect(Buffer.isBuffer(decoded)).toBe(false)
    expect(decoded!.byteOffset).toBe(0)
    expect(decoded!.buffer.byteLength).toBe(3)
  })

  it.each([
    ['a character outside both alphabets', 'QUJD*EVG'],
    ['a dot', 'QUJD.EVG'],
    ['an accented letter', 'QUJDéEVG'],
    ['a character that truncates to "+" in Latin-1', 'QUJDīEVG'],
    ['an emoji', 'QUJD😀EV'],
    ['a NUL byte', 'QUJD\u0000EVG'],
    ['a vertical tab (not ASCII whitespace)', 'QUJD\vREVG'],
    ['a non-breaking space', 'QUJD\u00a0REVG'],
    ['a line separator', 'QUJD\u2028REVG'],
    ['both alphabets mixed', 'QU+D-EVG'],
    ['padding in the middle', 'QQ==QUJD'],
    ['padding at the start', '=QUJ'],
    ['three padding characters', 'Q==='],
    ['padding on a group that is not complete', 'QQ='],
    ['one character too many', 'QUJDR'],
    ['a data-URI prefix', 'data:image/png;base64,QUJD'],
    ['a URL', 'https://example.com/a.png'],
  ])('rejects %s', (_, text) => {
    expect(decodeBase64(text)).toBeNull()
  })

  it('rejects every code unit outside the alphabets and whitespace, wherever it appears', () => {
    const allowed = new Set([...STANDARD_ALPHABET, '-', '_', '=', ...WHATWG_WHITESPACE])
    const accepted: string[] = []
    for (let code = 0; code <= 0xffff; code++) {
      const character = String.fromCharCode(code)
      if (allowed.has(character)) continue
      for (const text of [`${character}QUJD`, `QU${character}JDRA`, `QUJDREU${character}`]) {
        if (decodeBase64(text) !== null) accepted.push(text)
      }
    }
    expect(accepted).toEqual([])
  })

  it('agrees with a strict reference decoder on random near-base64 strings', () => {
    const characters = `${STANDARD_ALPHABET}-_=  \n*.é`
    let state = 42
    const next = (n: number) => {
      state = (state * 1103515245 + 12345) & 0x7fffffff
      return state % n
    }
    for (let i = 0; i < 5000; i++) {
      const length = next(24)
      let text = ''
      for (let j = 0; j < length; j++) {
        // Mostly standard-alphabet characters, so valid strings are common.
        text += next(4) === 0 ? characters[next(characters.length)] : STANDARD_ALPHABET[next(64)]
      }
      expect({ text, decoded: decodeBase64(text) }).toEqual({ text, decoded: referenceDecode(text) })
    }
  })
})

describe('base64 decoded length', () => {
  it('matches the decoded size without counting whitespace', () => {
    for (const size of [0, 1, 2, 3, 4, 100, 1001]) {
      const text = encodeBase64(randomBytes(size, size))
      expect(decodedLengthOf(text)).toBe(size)
      expect(decodedLengthOf(text.replace(/=+$/, ''))).toBe(size)
      expect(decodedLengthOf(text.replace(/.{8}/g, '$&\r\n'))).toBe(size)
    }
  })
})
