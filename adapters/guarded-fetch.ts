import dns from 'node:dns'
import type { LookupAddress, LookupOptions } from 'node:dns'
import { Agent, buildConnector, fetch as undiciFetch } from 'undici'
import { isIpLiteral, isPublicAddress } from '../shared/images/address.ts'
import { BlockedAddressError } from '../shared/images/fetch.ts'

export interface GuardedFetchOptions {
  /** TRYON_ALLOW_PRIVATE_IMAGE_HOSTS=1, local testing only. */
  allowPrivateHosts?: boolean
  /** Injectable for tests; defaults to the system resolver. */
  lookup?: typeof dns.lookup
  /** Connect, headers and body-idle timeouts; undici's own defaults are 300 s. */
  timeoutMs?: number
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/**
 * A fetch for Node that only ever connects to public addresses. The check runs in
 * the connection's own DNS lookup and again on the connected socket, so the address
 * checked is the address used (no DNS-rebinding window), on every redirect hop too.
 * It always uses its own dispatcher, so proxy settings from the environment never apply.
 */
export function createGuardedFetch(options: GuardedFetchOptions = {}): typeof fetch {
  const { allowPrivateHosts = false, lookup = dns.lookup, timeoutMs = 10_000 } = options

  function guardedLookup(hostname: string, lookupOptions: LookupOptions, callback: LookupCallback): void {
    lookup(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error) return callback(error, [])
      if (addresses.length === 0) return callback(Object.assign(new Error('no addresses'), { code: 'ENOTFOUND' }), [])
      if (!allowPrivateHosts && addresses.some((entry) => !isPublicAddress(entry.address))) {
        return callback(new BlockedAddressError(), [])
      }
      if (lookupOptions.all) return callback(null, addresses)
      callback(null, addresses[0].address, addresses[0].family)
    })
  }

  const connectSocket = buildConnector({ lookup: guardedLookup, timeout: timeoutMs })
  const connect: buildConnector.connector = (connectOptions, callback) => {
    // IP-literal hosts never reach the lookup, so they are checked here.
    if (!allowPrivateHosts && isIpLiteral(connectOptions.hostname) && !isPublicAddress(connectOptions.hostname)) {
      return callback(new BlockedAddressError(), null)
    }
    connectSocket(connectOptions, (...result) => {
      const [error, socket] = result
      if (error !== null) return callback(error, null)
      if (!allowPrivateHosts && !isPublicAddress(socket.remoteAddress ?? '')) {
        socket.destroy()
        return callback(new BlockedAddressError(), null)
      }
      callback(null, socket)
    })
  }

  const dispatcher = new Agent({ connect, headersTimeout: timeoutMs, bodyTimeout: timeoutMs })

  const guardedFetch = (input: string | URL, init?: RequestInit): Promise<Response> => {
    if (typeof input !== 'string' && !(input instanceof URL)) {
      return Promise.reject(new TypeError('guarded fetch takes a URL or a string, not a Request'))
    }
    const url = new URL(input)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return Promise.reject(new TypeError(`guarded fetch refuses ${url.protocol} URLs`))
    }
    return undiciFetch(url, { ...(init as object), dispatcher }) as unknown as Promise<Response>
  }
  return guardedFetch as unknown as typeof fetch
}
