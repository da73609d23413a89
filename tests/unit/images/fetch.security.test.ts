import type { ServerResponse } from 'node:http'
import { type AddressInfo, createServer as createNetServer } from 'node:net'
import { Agent, fetch as undiciFetch } from 'undici'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createImageFetcher, ImageFetchError, type ImageFetcherOptions } from '../../../shared/images/fetch.ts'
import { png, startServer, type TestServer } from './fixtures.ts'

const PUBLIC_IP = '93.184.215.14'
const CAP = 64 * 1024

/** Real HTTP, but every host name connects to 127.0.0.1: stands in for public DNS. */
const toLoopback = new Agent({
  connect: {
    lookup: (_hostname, options, callback) =>
      options.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4),
  },
})
const routedFetch = vi.fn(
  (input: string | URL | Request, init?: RequestInit) =>
    undiciFetch(input as URL, { ...(init as object), dispatcher: toLoopback }) as unknown as Promise<Response>,
) as unknown as typeof fetch & ReturnType<typeof vi.fn>

function fetcher(options: Partial<ImageFetcherOptions> = {}) {
  return createImageFetcher({ fetch: routedFetch, timeoutMs: 5_000, ...options })
}

async function failure(work: Promise<unknown>): Promise<ImageFetchError> {
  const error = await work.then(
    () => {
      throw new Error('expected the fetch to fail')
    },
    (error: unknown) => error,
  )
  expect(error).toBeInstanceOf(ImageFetchError)
  return error as ImageFetchError
}

let server: TestServer | undefined
afterEach(async () => {
  routedFetch.mockClear()
  await server?.close()
  server = undefined
})

const at = (path: string) => new URL(`http://images.example:${server!.port}${path}`)

describe('image fetch refuses dangerous destinations before connecting', () => {
  it.each([
    ['http://127.0.0.1/', 'address'],
    ['http://[::1]/', 'address'],
    ['http://[::ffff:7f00:1]/', 'address'],
    ['http://[::ffff:a9fe:a9fe]/', 'address'],
    ['http://[64:ff9b::a9fe:a9fe]/', 'address'],
    ['http://[::7f00:1]/', 'address'],
    ['http://[fe80::1]/', 'address'],
    ['http://[fd00::1]/', 'address'],
    ['http://2130706433/', 'address'],
    ['http://0177.0.0.1/', 'address'],
    ['http://0x7f.1/', 'address'],
    ['http://127.1/', 'address'],
    ['http://0.0.0.0/', 'address'],
    ['http://169.254.169.254/latest/meta-data/', 'address'],
    ['http://100.100.100.200/', 'address'],
    ['http://192.0.0.192/', 'address'],
    ['http://10.0.0.1/', 'address'],
    ['http://172.16.0.1/', 'address'],
    ['http://192.168.1.1/', 'address'],
    ['http://224.0.0.1/', 'address'],
    ['http://localhost/', 'address'],
    ['http://LOCALHOST./', 'address'],
    ['http://metadata.localhost/', 'address'],
    ['file:///etc/passwd', 'scheme'],
    ['ftp://images.example/a.png', 'scheme'],
    ['gopher://images.example:70/_GET', 'scheme'],
    ['data:image/png;base64,iVBORw0KGgo=', 'scheme'],
    ['http://user:secret@images.example/a.png', 'credentials'],
    ['https://user@images.example/a.png', 'credentials'],
  ])('%s → %s', async (url, reason) => {
    const resolveHost = vi.fn(async () => [PUBLIC_IP])
    const error = await failure(fetcher({ resolveHost })(new URL(url), { maxBytes: CAP }))
    expect(error.reason).toBe(reason)
    expect(error.message).not.toMatch(/\d+\.\d+\.\d+\.\d+|::/)
    expect(routedFetch).not.toHaveBeenCalled()
  })

  it('refuses a name when any resolved address is not public', async () => {
    const resolveHost = vi.fn(async () => [PUBLIC_IP, '10.1.2.3'])
    const error = await failure(fetcher({ resolveHost })(new URL('https://images.example/a.png'), { maxBytes: CAP }))
    expect(error.reason).toBe('address')
    expect(error.message).not.toContain('10.1.2.3')
    expect(resolveHost).toHaveBeenCalledWith('images.example')
    expect(routedFetch).not.toHaveBeenCalled()
  })

  it('reports a name that does not resolve as a network failure', async () => {
    const noAnswers = await failure(fetcher({ resolveHost: async () => [] })(new URL('https://nx.example/'), { maxBytes: CAP }))
    const resolverDown = await failure(
      fetcher({ resolveHost: async () => Promise.reject(new Error('SERVFAIL')) })(new URL('https://nx.example/'), {
        maxBytes: CAP,
      }),
    )
    expect([noAnswers.reason, resolverDown.reason]).toEqual(['network', 'network'])
    expect(routedFetch).not.toHaveBeenCalled()
  })

  it('lets allowPrivateHosts reach a loopback server but keeps the scheme and credential rules', async () => {
    server = await startServer((_, response) => response.end(png(10, 10)))
    const fetchImage = fetcher({ allowPrivateHosts: true })
    expect(await fetchImage(new URL(`${server.url}/a.png`), { maxBytes: CAP })).toEqual(png(10, 10))
    expect((await failure(fetchImage(new URL('file:///etc/passwd'), { maxBytes: CAP }))).reason).toBe('scheme')
    expect((await failure(fetchImage(new URL(`http://u:p@127.0.0.1:${server.port}/`), { maxBytes: CAP }))).reason).toBe('credentials')
    expect(server.requests).toEqual(['/a.png'])
  })
})

function redirect(response: ServerResponse, location: string, status = 302) {
  response.writeHead(status, { location })
  response.end()
}

describe('image fetch follows redirects only to safe places', () => {
  it('returns the body of a 200 response byte for byte, whatever its Content-Type says', async () => {
    server = await startServer((_, response) => {
      response.writeHead(200, { 'content-type': 'text/html' })
      response.end(png(640, 480))
    })
    expect(await fetcher()(at('/photo'), { maxBytes: CAP })).toEqual(png(640, 480))
  })

  it('fails with the status on a 404', async () => {
    server = await startServer((_, response) => {
      response.writeHead(404)
      response.end('not here')
    })
    const error = await failure(fetcher()(at('/missing.png'), { maxBytes: CAP }))
    expect([error.reason, error.status]).toEqual(['status', 404])
    expect(error.message).toContain('404')
  })

  it('follows three redirects, relative and absolute, with every status that redirects', async () => {
    server = await startServer((request, response, self) => {
      if (request.url === '/1') return redirect(response, '/2', 301)
      if (request.url === '/2') return redirect(response, `http://other.example:${self.port}/3`, 307)
      if (request.url === '/3') return redirect(response, '/image.png', 308)
      response.end(png(8, 8))
    })
    expect(await fetcher()(at('/1'), { maxBytes: CAP })).toEqual(png(8, 8))
    expect(server.requests).toEqual(['/1', '/2', '/3', '/image.png'])
  })

  it('refuses a fourth redirect without requesting its target', async () => {
    server = await startServer((request, response) => redirect(response, `/${Number(request.url!.slice(1)) + 1}`))
    const error = await failure(fetcher()(at('/0'), { maxBytes: CAP }))
    expect(error.reason).toBe('redirects')
    expect(server.requests).toEqual(['/0', '/1', '/2', '/3'])
  })

  it('honours a lower maxRedirects', async () => {
    server = await startServer((request, response) => redirect(response, `${request.url}x`))
    expect((await failure(fetcher({ maxRedirects: 0 })(at('/'), { maxBytes: CAP }))).reason).toBe('redirects')
    expect(server.requests).toEqual(['/'])
  })

  it.each([
    ['the metadata service', 'http://169.254.169.254/latest/meta-data/', 'address'],
    ['IPv6 loopback', 'http://[::1]/', 'address'],
    ['localhost', 'http://localhost/admin', 'address'],
    ['a file URL (cross-scheme)', 'file:///etc/passwd', 'scheme'],
    ['gopher (cross-scheme)', 'gopher://images.example/', 'scheme'],
  ])('refuses a redirect to %s without connecting to it', async (_, location, reason) => {
    server = await startServer((_, response) => redirect(response, location))
    const error = await failure(fetcher()(at('/start.png'), { maxBytes: CAP }))
    expect(error.reason).toBe(reason)
    expect(server.requests).toEqual(['/start.png'])
    expect(routedFetch).toHaveBeenCalledTimes(1)
  })

  it('re-resolves and refuses a redirect to a name with a private address', async () => {
    server = await startServer((_, response) => redirect(response, `http://internal.example:${server!.port}/`))
    const resolveHost = vi.fn(async (name: string) => (name === 'internal.example' ? ['192.168.0.10'] : [PUBLIC_IP]))
    const error = await failure(fetcher({ resolveHost })(at('/start.png'), { maxBytes: CAP }))
    expect(error.reason).toBe('address')
    expect(resolveHost.mock.calls).toEqual([['images.example'], ['internal.example']])
    expect(server.requests).toEqual(['/start.png'])
  })
})

describe('image fetch bounds size and time', () => {
  it('accepts a body of exactly maxBytes', async () => {
    server = await startServer((_, response) => response.end(new Uint8Array(CAP).fill(7)))
    expect((await fetcher()(at('/'), { maxBytes: CAP })).length).toBe(CAP)
  })

  it('refuses a declared Content-Length above the cap without waiting for the body', async () => {
    server = await startServer((_, response) => {
      response.writeHead(200, { 'content-length': String(CAP * 100) })
      response.write(new Uint8Array(16))
    })
    const error = await failure(fetcher({ timeoutMs: 5_000 })(at('/'), { maxBytes: CAP }))
    expect(error.reason).toBe('too_large')
    await server.responseClosed(0)
  })

  it('stops reading a chunked body without a length as soon as it passes the cap, and closes it', async () => {
    let sent = 0
    server = await startServer((_, response) => {
      const pump = () => {
        while (!response.destroyed && response.write(new Uint8Array(8192))) sent += 8192
        if (!response.destroyed) response.once('drain', pump)
      }
      pump()
    })
    const error = await failure(fetcher({ timeoutMs: 30_000 })(at('/'), { maxBytes: CAP }))
    expect(error.reason).toBe('too_large')
    await server.responseClosed(0)
    expect(sent).toBeLessThan(CAP * 64)
  })

  it('stops reading a close-delimited body (no length, not chunked) past the cap', async () => {
    const raw = createNetServer((socket) => {
      socket.on('error', () => {})
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: image/png\r\nconnection: close\r\n\r\n')
        socket.end(new Uint8Array(CAP * 4))
      })
    })
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve))
    try {
      const port = (raw.address() as AddressInfo).port
      const error = await failure(fetcher()(new URL(`http://images.example:${port}/`), { maxBytes: CAP }))
      expect(error.reason).toBe('too_large')
    } finally {
      raw.close()
    }
  })

  it('gives up at the deadline on a server that trickles bytes forever', async () => {
    server = await startServer((_, response) => {
      response.writeHead(200, { 'content-type': 'image/png' })
      const timer = setInterval(() => response.write(new Uint8Array(1)), 20)
      response.on('close', () => clearInterval(timer))
    })
    const error = await failure(fetcher({ timeoutMs: 300 })(at('/'), { maxBytes: CAP }))
    expect(error.reason).toBe('timeout')
    await server.responseClosed(0)
  })

  it('gives up at the deadline on a server that never answers', async () => {
    server = await startServer(() => {})
    expect((await failure(fetcher({ timeoutMs: 200 })(at('/'), { maxBytes: CAP }))).reason).toBe('timeout')
  })

  it('stops when the caller aborts', async () => {
    server = await startServer(() => {})
    const caller = new AbortController()
    const pending = fetcher({ timeoutMs: 30_000 })(at('/'), { maxBytes: CAP, signal: caller.signal })
    setTimeout(() => caller.abort(new Error('client went away')), 50)
    expect((await failure(pending)).reason).toBe('aborted')
  })

  it('reports a refused connection as a network failure', async () => {
    server = await startServer(() => {})
    const port = server.port
    await server.close()
    server = undefined
    const error = await failure(fetcher()(new URL(`http://images.example:${port}/`), { maxBytes: CAP }))
    expect(error.reason).toBe('network')
    expect(error.message).not.toContain('127.0.0.1')
  })
})
