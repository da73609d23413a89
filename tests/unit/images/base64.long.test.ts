import { describe, expect, it } from 'vitest'
import { decodeBase64, encodeBase64 } from '../../../shared/images/base64.ts'

// Long payloads take a one-pass path (no whitespace near the start): whatever is wrong further in must still
// be found, and whitespace further in must still be ignored.
const bytes = Uint8Array.from({ length: 30_000 }, (_, i) => (i * 7919 + (i >> 5)) & 255)
const standard = encodeBase64(bytes)
const at = (text: string, index: number, insert: string, remove = 0) => text.slice(0, index) + insert + text.slice(index + remove)

describe('base64 decoding of long payloads', () => {
  it('decodes a long standard payload, and its URL-safe unpadded form', () => {
    expect(decodeBase64(standard)).toEqual(bytes)
    expect(decodeBase64(standard.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''))).toEqual(bytes)
  })

  it('ignores whitespace that first appears far from the start', () => {
    expect(decodeBase64(at(standard, 20_000, '\r\n'))).toEqual(bytes)
    expect(decodeBase64(`${standard}\n`)).toEqual(bytes)
    expect(decodeBase64(standard.slice(0, 4000) + standard.slice(4000).replace(/.{76}/g, '$&\n'))).toEqual(bytes)
  })

  it.each([
    ['a foreign character near the end', at(standard, standard.length - 10, '*', 1)],
    ['a character beyond Latin-1 near the end', at(standard, standard.length - 10, 'ī', 1)],
    ['padding in the middle', at(standard, 20_000, '==', 2)],
    ['the other alphabet far from its first use', at(at(standard.replace(/[-_]/g, 'A'), 3, '+', 1), 25_000, '-', 1)],
    ['one character too many', `${standard.replace(/=+$/, '')}QUJDR`],
  ])('rejects %s', (_, text) => {
    expect(decodeBase64(text)).toBeNull()
  })
})
