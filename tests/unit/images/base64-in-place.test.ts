import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type LargeString, parseJsonBytes } from '../../../shared/encoding/json-bytes.ts'
import { decodeBase64, decodedLengthOf, encodeBase64 } from '../../../shared/images/base64.ts'
import { readInlineBase64 } from '../../../shared/images/base64-in-place.ts'

/** The string as it sits in a JSON body: `spelling` picks how the encoder wrote it. */
function inBody(text: string, spelling: 'plain' | 'slashes' | 'unicode'): LargeString {
  let json = JSON.stringify({ v: text })
  if (spelling === 'slashes') json = json.replace(/\//g, '\\/')
  if (spelling === 'unicode') json = json.replace(/[+/=]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
  return (parseJsonBytes(new TextEncoder().encode(json), { largeFrom: 0 }) as { v: LargeString }).v
}

/** What intake does with the string: trim, take a data URI's prefix off, then decodeBase64 and decodedLengthOf. */
function asString(text: string): { prefix: string; valid: boolean; decodedLength: number; bytes: Uint8Array | null } | 'string path' {
  const trimmed = text.trim()
  if (trimmed === '') return 'string path'
  const dataUri = /^data:[^,]*,/i.exec(trimmed)
  if (/^data:/i.test(trimmed) && !dataUri) return 'string path'
  const payload = dataUri ? trimmed.slice(dataUri[0].length) : trimmed
  if (!/^[A-Za-z0-9+/=_\-\t\n\f\r ]*$/.test(payload)) return 'string path'
  const bytes = decodeBase64(payload)
  return {
    prefix: dataUri ? text.slice(0, text.indexOf(',') + 1) : '',
    valid: bytes !== null,
    decodedLength: decodedLengthOf(payload),
    bytes,
  }
}

const base64ish = fc.string({ unit: fc.constantFrom(...'AQgw+/-_=  \n\r\t\fxyz09'.split('')), maxLength: 40 })

describe('base64 decoded in the body’s own bytes', () => {
  it('answers as decodeBase64 does for the same string, or leaves it to the string path', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          base64ish,
          fc.uint8Array({ maxLength: 40 }).map((b) => encodeBase64(b)),
          fc.string({ maxLength: 12 }),
        ),
        fc.constantFrom('', 'data:image/png;base64,', ' DATA:image/jpeg;base64,', 'data:image/png;base64', 'https:', '\u000b'),
        fc.constantFrom('plain', 'slashes', 'unicode'),
        (payload, prefix, spelling) => {
          const text = prefix + payload
          const expected = asString(text)
          const inline = readInlineBase64(inBody(text, spelling as 'plain'))
          // Plain base64 (after whitespace and a data URI's prefix) always takes this path; anything else may not.
          const plain = /^[\t\n\f\r ]*(data:[^,"\\]*,)?[A-Za-z0-9+/=_\-\t\n\f\r ]*$/i.test(text) && text.trim() !== ''
          if (inline === undefined) return !plain
          if (expected === 'string path') return false
          if (inline.prefix !== expected.prefix || inline.valid !== expected.valid || inline.decodedLength !== expected.decodedLength)
            return false
          return !inline.valid || Buffer.from(inline.decode()).equals(Buffer.from(expected.bytes!))
        },
      ),
      { numRuns: 3000 },
    )
  })

  it.each([
    ['plain (searched and decoded a chunk at a time)', (b64: string) => b64, 'plain'],
    ['URL-safe, unpadded', (b64: string) => b64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''), 'plain'],
    ['line-wrapped, slashes escaped (byte by byte)', (b64: string) => b64.replace(/.{76}/g, '$&\n'), 'slashes'],
    ['with spaces', (b64: string) => b64.replace(/.{1000}/g, '$& '), 'plain'],
  ] as const)('decodes a large image in place, %s, and the string is gone after', (_, spell, spelling) => {
    const image = Uint8Array.from({ length: 300_001 }, (_, i) => (i * 7 + (i >> 9)) & 255)
    const value = inBody(`data:image/jpeg;base64,${spell(encodeBase64(image))}`, spelling)
    const inline = readInlineBase64(value)!
    expect(inline).toMatchObject({ prefix: 'data:image/jpeg;base64,', valid: true, decodedLength: image.byteLength })
    const decoded = inline.decode()
    expect(decoded.buffer).toBe(value.document.buffer)
    expect(Buffer.from(decoded).equals(Buffer.from(image))).toBe(true)
    expect(() => value.text()).toThrow(/decoded in place/)
  })

  it('finds padding or a stray character anywhere in a large string', () => {
    const body = encodeBase64(Uint8Array.from({ length: 200_000 }, (_, i) => i & 255))
    for (const at of [12, 70_000, body.length - 12]) {
      expect(readInlineBase64(inBody(`${body.slice(0, at)}=${body.slice(at)}`, 'plain'))?.valid).toBe(false)
      expect(readInlineBase64(inBody(`${body.slice(0, at)}*${body.slice(at)}`, 'plain'))).toBeUndefined()
    }
    expect(readInlineBase64(inBody(`${body}\u00a0`, 'plain'))).toBeUndefined()
  })

  it('leaves URLs, empty strings and non-ASCII to the string path', () => {
    expect(readInlineBase64(inBody('https://shop.example/a.jpg', 'plain'))).toBeUndefined()
    expect(readInlineBase64(inBody('   \n ', 'plain'))).toBeUndefined()
    expect(readInlineBase64(inBody('QUJD\u00a0', 'plain'))).toBeUndefined()
    expect(readInlineBase64(inBody('data:image/png;base64', 'plain'))).toBeUndefined()
  })
})
