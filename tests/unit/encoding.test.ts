import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { base62, randomBase62 } from '../../shared/encoding/base62.ts'
import { crc32 } from '../../shared/encoding/crc32.ts'

describe('crc32', () => {
  it('gives the published check values', () => {
    // The CRC-32/ISO-HDLC check value of "123456789", and PNG's IEND chunk CRC (over "IEND").
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926)
    expect(crc32(new TextEncoder().encode('IEND'))).toBe(0xae426082)
    expect(crc32(new Uint8Array())).toBe(0)
  })

  it('checks a slice exactly as it checks a copy of that slice', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(300), fc.nat(300), (bytes, a, b) => {
        const [start, end] = [Math.min(a, b, bytes.length), Math.min(Math.max(a, b), bytes.length)]
        expect(crc32(bytes, start, end)).toBe(crc32(bytes.slice(start, end)))
      }),
    )
  })
})

describe('base62', () => {
  it('writes numbers with left padding, and reads back to the same number', () => {
    expect(base62(0, 3)).toBe('000')
    expect(base62(61, 1)).toBe('z')
    expect(base62(62, 1)).toBe('10')
    fc.assert(
      fc.property(fc.nat(), (n) => {
        const text = base62(n, 6)
        const back = [...text].reduce((v, ch) => v * 62 + '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'.indexOf(ch), 0)
        expect(back).toBe(n)
      }),
    )
  })

  it('draws random ids of the asked length from the whole alphabet', () => {
    const ids = Array.from({ length: 400 }, () => randomBase62(10))
    for (const id of ids) expect(id).toMatch(/^[0-9A-Za-z]{10}$/)
    expect(new Set(ids).size).toBe(ids.length)
    expect(new Set(ids.join('')).size).toBe(62)
  })
})
