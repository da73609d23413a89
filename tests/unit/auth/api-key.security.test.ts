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

  it('lets an ordinary query through', () => {
    for (const query of ['', '?a=1', '?locale=fr&ref=vto', '?vto=test', '?q=vtotest_x']) {
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
