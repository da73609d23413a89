import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { clientBucketOf, createClientIdentity, headerAddress } from '../../../shared/limits/client-address.ts'

const SECRET = 'unit-test-secret-0123456789abcdefghij'
const request = (headers: Record<string, string> = {}) => new Request('http://127.0.0.1/tryon-api', { method: 'POST', headers })

const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((parts) => parts.join('.'))
const hextet = fc.nat(0xffff).map((n) => n.toString(16))
/** Eight hextets whose first is not 0, so never an IPv4-mapped address (::ffff:a.b.c.d counts as its IPv4). */
const ipv6Parts = fc
  .tuple(
    fc.integer({ min: 1, max: 0xffff }).map((n) => n.toString(16)),
    fc.array(hextet, { minLength: 7, maxLength: 7 }),
  )
  .map(([first, rest]) => [first, ...rest])

describe('client address from a header', () => {
  it('takes the last entry of a list, the one the nearest proxy added', () => {
    const read = headerAddress('x-forwarded-for')
    expect(read(request({ 'X-Forwarded-For': '6.6.6.6, 203.0.113.9' }), undefined)).toBe('203.0.113.9')
    expect(read(request({ 'X-Forwarded-For': '203.0.113.9' }), undefined)).toBe('203.0.113.9')
    expect(read(request({ 'X-Forwarded-For': ' , ' }), undefined)).toBeNull()
    expect(read(request(), undefined)).toBeNull()
    expect(headerAddress('x-real-ip')(request({ 'X-Forwarded-For': '6.6.6.6', 'X-Real-IP': '198.51.100.4' }), undefined)).toBe(
      '198.51.100.4',
    )
  })
})

describe('the bucket a client address counts in', () => {
  it.each([
    ['203.0.113.9', 'ipv4:203.0.113.9'],
    ['203.0.113.9:443', 'ipv4:203.0.113.9'],
    ['::ffff:203.0.113.9', 'ipv4:203.0.113.9'],
    ['[::ffff:cb00:7109]:8080', 'ipv4:203.0.113.9'],
    ['2001:db8:aaaa:bbbb:1:2:3:4', 'ipv6:2001:db8:aaaa:bbbb::/64'],
    ['[2001:DB8:AAAA:BBBB::99]:443', 'ipv6:2001:db8:aaaa:bbbb::/64'],
    ['fe80::1%eth0', 'ipv6:fe80::/64'],
    ['::1', 'ipv6:::/64'],
    ['', 'unknown'],
    ['unknown', 'unknown'],
    ['203.0.113.999', 'unknown'],
    ['0', 'unknown'],
    ['127.1', 'unknown'],
    ['0x7f.0.0.1', 'unknown'],
    ['203.0.113.9%eth0', 'unknown'],
    ['not an address', 'unknown'],
  ])('%j counts as %s', (address, bucket) => {
    expect(clientBucketOf(address)).toBe(bucket)
  })

  it('puts every spelling of an IPv4 address in one bucket and different addresses in different ones', () => {
    fc.assert(
      fc.property(ipv4, ipv4, fc.integer({ min: 1, max: 65535 }), (a, b, port) => {
        const bucket = clientBucketOf(a)
        expect(clientBucketOf(`::ffff:${a}`)).toBe(bucket)
        expect(clientBucketOf(`${a}:${port}`)).toBe(bucket)
        expect(clientBucketOf(` ${a} `)).toBe(bucket)
        expect(clientBucketOf(b) === bucket).toBe(a === b)
      }),
      { seed: 13, numRuns: 500 },
    )
  })

  it('counts an IPv6 /64 as one client, whatever the interface part', () => {
    fc.assert(
      fc.property(ipv6Parts, ipv6Parts, ipv6Parts, (a, b, other) => {
        const sameNetwork = [...a.slice(0, 4), ...b.slice(4)]
        expect(clientBucketOf(sameNetwork.join(':'))).toBe(clientBucketOf(a.join(':')))
        expect(clientBucketOf(`[${a.join(':')}]:443`)).toBe(clientBucketOf(a.join(':')))
        const otherNetwork = [...other.slice(0, 4), ...a.slice(4)]
        const differs = other.slice(0, 4).some((h, i) => parseInt(h, 16) !== parseInt(a[i], 16))
        expect(clientBucketOf(otherNetwork.join(':')) === clientBucketOf(a.join(':'))).toBe(!differs)
      }),
      { seed: 13, numRuns: 300 },
    )
    fc.assert(
      fc.property(ipv6Parts, ipv6Parts, (a, b) => {
        expect(clientBucketOf([...a.slice(0, 4), ...b.slice(4)].join(':'))).toBe(clientBucketOf(a.join(':')))
      }),
      { numRuns: 300 },
    )
  })

  it('takes nothing but an address for one', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (text) => {
        const bucket = clientBucketOf(text)
        // Whatever it accepts is an address in one of the two standard forms, perhaps with a port, brackets or zone.
        if (bucket !== 'unknown') expect(text, bucket).toMatch(/^\s*\[?[0-9a-fA-F:.]+(%[\w.-]+)?\]?(:\d{1,5})?\s*$/)
      }),
      { numRuns: 500 },
    )
  })
})

describe('the HMAC of a client', () => {
  it('is 32 bytes, the same for one bucket, different across buckets and secrets, and carries no address', async () => {
    const identity = createClientIdentity({ source: () => null, secret: SECRET })
    const other = createClientIdentity({ source: () => null, secret: `${SECRET}-rotated` })
    const hex = async (id: typeof identity, address: string | null) => Buffer.from(await id.hash(address)).toString('hex')
    const a = await hex(identity, '203.0.113.9')
    expect(a).toMatch(/^[0-9a-f]{64}$/)
    expect(await hex(identity, '::ffff:203.0.113.9')).toBe(a)
    expect(await hex(identity, '203.0.113.10')).not.toBe(a)
    expect(await hex(other, '203.0.113.9')).not.toBe(a)
    expect(await hex(identity, null)).toBe(await hex(identity, 'garbage'))
    expect(Buffer.from(a, 'hex').toString('latin1')).not.toContain('203.0.113.9')
  })

  it('refuses a short secret', () => {
    expect(() => createClientIdentity({ source: () => null, secret: 'short' })).toThrow(/TRYON_CLIENT_ADDRESS_SECRET/)
  })

  it('says once, in the log, that requests arrive without a usable address', () => {
    const logs: Record<string, unknown>[] = []
    const identity = createClientIdentity({
      source: headerAddress('x-real-ip'),
      secret: SECRET,
      log: (e) => logs.push(e),
      describeSource: 'the x-real-ip header',
    })
    expect(identity.addressOf(request({ 'X-Real-IP': '198.51.100.4' }), undefined)).toBe('198.51.100.4')
    expect(logs).toEqual([])
    identity.addressOf(request(), undefined)
    identity.addressOf(request(), undefined)
    expect(logs).toHaveLength(1)
    expect(logs[0]).toMatchObject({ level: 'warn', msg: expect.stringContaining('x-real-ip') })
  })
})
