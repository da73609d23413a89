import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { keyChecksum, redactKeys, urlCarriesKey } from '../../../shared/auth/api-key.ts'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const keyArb = fc
  .tuple(fc.constantFrom('live', 'test'), fc.array(fc.constantFrom(...BASE62), { minLength: 30, maxLength: 30 }))
  .map(([mode, chars]) => {
    const body = `vto_${mode}_${chars.join('')}`
    return body + keyChecksum(body)
  })
const secretOf = (key: string) => key.slice(9, 39)

describe('keys in URLs', () => {
  it('finds a key anywhere in the query: a name, a value, encoded or not, in any case (fast-check)', () => {
    fc.assert(
      fc.property(
        keyArb,
        fc.constantFrom('name', 'name=', 'value', 'encoded', 'upper', 'semicolon'),
        fc.array(fc.tuple(fc.stringMatching(/^[a-z]{1,8}$/), fc.stringMatching(/^[a-z0-9]{0,8}$/)), { maxLength: 3 }),
        (key, where, others) => {
          const placed = {
            name: key,
            'name=': `${key}=1`,
            value: `ref=${key}`,
            encoded: `p=${key.replaceAll('_', '%5F')}`,
            upper: key.toUpperCase(),
            semicolon: `a=1;${key}`,
          }[where]
          const query = [...others.map(([n, v]) => `${n}=${v}`), placed].join('&')
          expect(urlCarriesKey(new URL(`https://api.example/functions/v1/tryon-api?${query}`)), query).toBe(true)
        },
      ),
      { numRuns: 300, seed: 3 },
    )
  })

  it('finds a key, or a parameter named like one, percent-encoded again and again (fast-check)', () => {
    // Encodes the characters `pick` chooses, once per round: `t` → `%74` → `%2574` → `%252574`.
    const encodeRounds = (text: string, rounds: number, pick: (i: number) => boolean) => {
      let out = text
      for (let r = 0; r < rounds; r++) {
        out = Array.from(out, (c, i) =>
          r === 0 ? (pick(i) ? `%${c.charCodeAt(0).toString(16).padStart(2, '0')}` : c) : c === '%' ? '%25' : c,
        ).join('')
      }
      return out
    }
    fc.assert(
      fc.property(
        keyArb,
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.boolean(), { minLength: 45, maxLength: 45 }),
        fc.constantFrom('name', 'value', 'param'),
        (key, rounds, picks, where) => {
          const pick = (i: number) => picks[i % picks.length]
          const query = {
            name: `${encodeRounds(key, rounds, pick)}=1`,
            value: `ref=${encodeRounds(key, rounds, pick)}`,
            param: `${encodeRounds('api_key', rounds, pick)}=x`,
          }[where]
          expect(urlCarriesKey(new URL(`https://api.example/functions/v1/tryon-api?a=1&${query}`)), query).toBe(true)
        },
      ),
      { numRuns: 300, seed: 5 },
    )
    expect(urlCarriesKey(new URL('https://api.example/x?v%2574o_test_abc'))).toBe(true)
    expect(urlCarriesKey(new URL('https://api.example/x?api%25255Fkey=1'))).toBe(true)
  })

  it('stops decoding after a bounded number of rounds, on any input (fast-check)', () => {
    // Encoded 9 times over: past the rounds tried, so it reads as the harmless text it then is.
    let deep = 'vto_test_'
    for (let r = 0; r < 9; r++) deep = r === 0 ? deep.replaceAll('_', '%5F') : deep.replaceAll('%', '%25')
    expect(urlCarriesKey(new URL(`https://api.example/x?q=${deep}`))).toBe(false)
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('%', '2', '5', 'a', 'F', '_', '=', '&', 'v'), maxLength: 200 }), (query) => {
        expect(typeof urlCarriesKey(new URL(`https://api.example/x?${query}`))).toBe('boolean')
      }),
      { numRuns: 300, seed: 6 },
    )
  })

  it('lets an ordinary query through', () => {
    for (const query of ['', '?a=1', '?locale=fr&ref=vto', '?vto=test', '?q=vtotest_x', '?q=%25%25%2', '?p=100%25']) {
      expect(urlCarriesKey(new URL(`https://api.example/x${query}`)), query).toBe(false)
    }
  })

  it('redacts every key-shaped string from a text, whatever surrounds it (fast-check)', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(keyArb, fc.string({ maxLength: 20 })), { minLength: 1, maxLength: 6 }), (parts) => {
        const text = parts.join('/')
        const redacted = redactKeys(text)
        for (const part of parts) if (part.startsWith('vto_')) expect(redacted).not.toContain(secretOf(part))
        expect(redactKeys(redacted)).toBe(redacted)
      }),
      { numRuns: 300, seed: 4 },
    )
    expect(redactKeys('/tryon-api/vto_live_abc%5Fdef?x=VTO%5FTEST%5Fzz')).toBe('/tryon-api/vto_live_[redacted]?x=vto_test_[redacted]')
  })
})
