import type dns from 'node:dns'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createGuardedFetch } from '../../../adapters/guarded-fetch.ts'
import { BlockedAddressError, createImageFetcher, ImageFetchError } from '../../../shared/images/fetch.ts'
import { png, startServer, type TestServer } from './fixtures.ts'

const PUBLIC_IP = '93.184.215.14'
const MADE_UP = 'photos.made-up.test'

/** A resolver that answers each call with the next list of addresses (the last one repeats). */
function fakeDns(...answers: string[][]) {
  const calls: string[] = []
  const lookup = vi.fn((hostname: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
    calls.push(hostname)
    const answer = answers[Math.min(calls.length - 1, answers.length - 1)]
    const entries = answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
    const [first] = entries
    setImmediate(() => (options.all ? callback(null, entries) : callback(null, first.address, first.family)))
  })
  return { lookup: lookup as unknown as typeof dns.lookup, calls }
}

function causes(error: unknown): unknown[] {
  const chain: unknown[] = []
  for (let current = error; current !== undefined && chain.length < 6; current = (current as Error).cause) {
    chain.push(current)
  }
  return chain
}

async function rejection(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => {
      throw new Error('expected the request to be refused')
    },
    (error: unknown) => error,
  )
}

let server: TestServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

async function imageServer() {
  server = await startServer((request, response) => {
    response.writeHead(200, { 'content-type': 'image/png', 'x-seen-host': request.headers.host ?? '' })
    response.end(png(10, 10))
  })
  return server
}

describe('guarded fetch checks the address it connects to', () => {
  it.each([
    ['loopback', ['127.0.0.1']],
    ['a private network', ['10.20.30.40']],
    ['IPv4-mapped loopback', ['::ffff:127.0.0.1']],
    ['a public address followed by a private one', [PUBLIC_IP, '127.0.0.1']],
  ])('refuses a name that resolves to %s', async (_, addresses) => {
    const { port, requests } = await imageServer()
    const dnsServer = fakeDns(addresses)
    const error = await rejection(createGuardedFetch({ lookup: dnsServer.lookup })(`http://${MADE_UP}:${port}/a.png`))
    expect(causes(error).some((cause) => cause instanceof BlockedAddressError)).toBe(true)
    expect(dnsServer.calls).toEqual([MADE_UP])
    expect(requests).toEqual([])
  })

  it('closes DNS rebinding: a name that was public when checked but private at connect is refused', async () => {
    const { port, requests } = await imageServer()
    const dnsServer = fakeDns([PUBLIC_IP], ['127.0.0.1'])
    const resolveHost = async (hostname: string) =>
      new Promise<string[]>((resolve) =>
        dnsServer.lookup(hostname, { all: true }, (_error, addresses) => resolve(addresses.map((a) => a.address))),
      )
    const fetchImage = createImageFetcher({ fetch: createGuardedFetch({ lookup: dnsServer.lookup }), resolveHost })
    const error = await fetchImage(new URL(`http://${MADE_UP}:${port}/a.png`), { maxBytes: 4096 }).catch((e) => e)
    expect(error).toBeInstanceOf(ImageFetchError)
    expect((error as ImageFetchError).reason).toBe('address')
    expect((error as ImageFetchError).message).not.toContain('127.0.0.1')
    expect(dnsServer.calls).toEqual([MADE_UP, MADE_UP])
    expect(requests).toEqual([])
  })

  it.each(['127.0.0.1', '[::1]', '[::ffff:127.0.0.1]', '169.254.169.254'])(
    'refuses the IP literal %s, which never goes through the lookup',
    async (host) => {
      const { port, requests } = await imageServer()
      const dnsServer = fakeDns([PUBLIC_IP])
      const error = await rejection(createGuardedFetch({ lookup: dnsServer.lookup })(`http://${host}:${port}/`))
      expect(causes(error).some((cause) => cause instanceof BlockedAddressError)).toBe(true)
      expect(dnsServer.calls).toEqual([])
      expect(requests).toEqual([])
    },
  )

  it('refuses non-http schemes that undici would otherwise serve', async () => {
    const guardedFetch = createGuardedFetch()
    await expect(guardedFetch('data:image/png;base64,iVBORw0KGgo=')).rejects.toThrow(/refuses data:/)
    await expect(guardedFetch('file:///etc/passwd')).rejects.toThrow(/refuses file:/)
  })
})

describe('guarded fetch with allowPrivateHosts', () => {
  it('reaches a local server through the injected lookup', async () => {
    const { port, requests } = await imageServer()
    const dnsServer = fakeDns(['127.0.0.1'])
    const response = await createGuardedFetch({ allowPrivateHosts: true, lookup: dnsServer.lookup })(`http://${MADE_UP}:${port}/a.png`)
    expect(response.status).toBe(200)
    expect(response.headers.get('x-seen-host')).toBe(`${MADE_UP}:${port}`)
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(png(10, 10))
    expect(dnsServer.calls).toEqual([MADE_UP])
    expect(requests).toEqual(['/a.png'])
  })

  it('ignores proxy settings in the environment', async () => {
    const { port } = await imageServer()
    vi.stubEnv('HTTP_PROXY', 'http://127.0.0.1:9')
    vi.stubEnv('http_proxy', 'http://127.0.0.1:9')
    try {
      const response = await createGuardedFetch({ allowPrivateHosts: true })(`http://127.0.0.1:${port}/`)
      expect(response.status).toBe(200)
      await response.arrayBuffer()
    } finally {
      vi.unstubAllEnvs()
    }
  })

  it('times out a server that never sends headers', async () => {
    server = await startServer(() => {})
    const error = await rejection(createGuardedFetch({ allowPrivateHosts: true, timeoutMs: 200 })(`${server.url}/`))
    expect(causes(error).map((cause) => (cause as { code?: string }).code)).toContain('UND_ERR_HEADERS_TIMEOUT')
  })

  it('times out a body that stops arriving', async () => {
    server = await startServer((_, response) => {
      response.writeHead(200, { 'content-type': 'image/png' })
      response.write(new Uint8Array(10))
    })
    const response = await createGuardedFetch({ allowPrivateHosts: true, timeoutMs: 200 })(`${server.url}/`)
    const error = await rejection(response.arrayBuffer())
    expect(causes(error).map((cause) => (cause as { code?: string }).code)).toContain('UND_ERR_BODY_TIMEOUT')
  })
})
