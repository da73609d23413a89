import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { LargeString, parseJsonBytes } from '../../../shared/encoding/json-bytes.ts'

const encode = (text: string) => new TextEncoder().encode(text)

/** The parsed value with every LargeString read back as its string. */
function asStrings(value: unknown): unknown {
  if (value instanceof LargeString) return value.text()
  if (Array.isArray(value)) return value.map(asStrings)
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asStrings(v)]))
  return value
}

/** JSON.parse's verdict on the same bytes, as the body's text: the value, or 'SyntaxError'. */
function reference(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(bytes))
  } catch (error) {
    return (error as Error).name
  }
}

function ours(bytes: Uint8Array, largeFrom: number): unknown {
  try {
    return asStrings(parseJsonBytes(bytes, { largeFrom }))
  } catch (error) {
    return (error as Error).name
  }
}

describe('JSON read from its bytes', () => {
  it('gives what JSON.parse of the text gives, for any JSON and any size of "large"', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 0, max: 12 }), fc.boolean(), (value, largeFrom, escapeSlashes) => {
        let text = JSON.stringify(value)
        // What PHP's json_encode writes by default: every slash escaped.
        if (escapeSlashes) text = text.replace(/\//g, '\\/')
        return JSON.stringify(ours(encode(text), largeFrom)) === JSON.stringify(JSON.parse(text))
      }),
      { numRuns: 500 },
    )
  })

  it('refuses exactly what JSON.parse refuses, however the text is damaged', () => {
    const damaged = fc
      .tuple(
        fc.jsonValue(),
        fc.nat(),
        fc.constantFrom('"', '\\', '\n', '\u0001', '\\u12', '\\x', '}', ',', ':', 'é', '\\"', ''),
        fc.nat({ max: 3 }),
      )
      .map(([value, at, insert, cut]) => {
        const text = JSON.stringify({ a: value, big: 'QUJD'.repeat(8) })
        const i = at % (text.length + 1)
        return text.slice(0, i) + insert + text.slice(i + cut)
      })
    fc.assert(
      fc.property(damaged, fc.integer({ min: 0, max: 8 }), (text, largeFrom) => {
        const bytes = encode(text)
        return JSON.stringify(ours(bytes, largeFrom)) === JSON.stringify(reference(bytes))
      }),
      { numRuns: 2000 },
    )
  })

  it('leaves long values in the bytes, but never keys, and reads invalid UTF-8 as the text decoder does', () => {
    const image = 'QUJD'.repeat(50)
    const bytes = encode(`\ufeff{"userPhoto": "${image}", "${'k'.repeat(300)}": 1, "short": "x", "list": ["${image}"]}`)
    const parsed = parseJsonBytes(bytes, { largeFrom: 100 }) as Record<string, unknown>
    expect(parsed.userPhoto).toBeInstanceOf(LargeString)
    expect((parsed.userPhoto as LargeString).text()).toBe(image)
    expect((parsed.list as unknown[])[0]).toBeInstanceOf(LargeString)
    expect(parsed['k'.repeat(300)]).toBe(1)
    expect(parsed.short).toBe('x')
    // A log line shows its size, never its bytes.
    expect(JSON.stringify(parsed.userPhoto)).toBe('"[a string of 200 bytes]"')

    const broken = Uint8Array.from([...encode('{"a":"'), 0xff, 0xfe, ...encode(`${'x'.repeat(20)}"}`)])
    expect(ours(broken, 4)).toEqual(reference(broken))
  })
})
