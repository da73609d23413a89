import ipaddr from 'ipaddr.js'
import type { Logger } from '../log.ts'

/**
 * Where the caller's address comes from, per request: the connection (`socket`, read by the platform's adapter
 * from what its server passes as the request's env) or a header set by the proxy in front of the service.
 */
export type ClientAddressSource = (request: Request, env: unknown) => string | null

/** Who is calling, as far as the per-client limits are concerned. */
export interface ClientIdentity {
  /** The caller's address, or null when it cannot be told. */
  addressOf: ClientAddressSource
  /** An HMAC-SHA-256 of the address's bucket with the server secret: the only form in which a client is stored. */
  hash(address: string | null): Promise<Uint8Array>
}

/**
 * Reads the address from a header the proxy in front of the service sets and a client cannot forge through it.
 * A list (X-Forwarded-For) gives its last entry: the one the nearest proxy appended, as it saw the connection.
 */
export function headerAddress(name: string): ClientAddressSource {
  return (request) => {
    const value = request.headers.get(name)
    if (value === null) return null
    const last = value.split(',').at(-1)?.trim()
    return last || null
  }
}

/**
 * The unit a per-client limit counts: an IPv4 address, or the /64 network of an IPv6 address (one subscriber
 * line or host usually holds a whole /64 and can use any address in it). Other spellings of the same address
 * (IPv4-mapped IPv6, a port, brackets, an IPv6 zone id, upper case) land in the same bucket; anything else is
 * `unknown`, one bucket shared by every request whose address cannot be told. Only the two standard forms are
 * addresses here (dotted-quad IPv4, colon-separated IPv6): a proxy writes nothing else.
 */
export function clientBucketOf(address: string | null): string {
  if (!address) return 'unknown'
  let text = address.trim()
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(text)
  if (bracketed) text = bracketed[1]
  else text = text.replace(/^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/, '$1')
  let parsed: ipaddr.IPv4 | ipaddr.IPv6
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) {
    parsed = ipaddr.IPv4.parse(text)
  } else {
    text = text.replace(/%[\w.-]+$/, '')
    if (!text.includes(':') || !ipaddr.IPv6.isValid(text)) return 'unknown'
    parsed = ipaddr.process(text)
  }
  if (parsed.kind() === 'ipv4') return `ipv4:${parsed.toString()}`
  const network = parsed.toByteArray().slice(0, 8).concat([0, 0, 0, 0, 0, 0, 0, 0])
  return `ipv6:${ipaddr.fromByteArray(network).toString()}/64`
}

/** The smallest secret accepted: 32 characters, e.g. `openssl rand -hex 32` gives 64. */
export const MIN_SECRET_LENGTH = 32

export function createClientIdentity(options: {
  source: ClientAddressSource
  secret: string
  /** Where it says, once, that requests arrive without a usable address. */
  log?: Logger
  describeSource?: string
}): ClientIdentity {
  if (options.secret.length < MIN_SECRET_LENGTH) {
    throw new Error(`TRYON_CLIENT_ADDRESS_SECRET must be at least ${MIN_SECRET_LENGTH} characters`)
  }
  const key = crypto.subtle.importKey('raw', new TextEncoder().encode(options.secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  let warned = false
  return {
    addressOf(request, env) {
      const address = options.source(request, env)
      if (!warned && clientBucketOf(address) === 'unknown') {
        warned = true
        options.log?.({
          level: 'warn',
          msg:
            `a request came without a usable client address (${options.describeSource ?? 'source'}); ` +
            'per-client limits count all such requests as one client',
        })
      }
      return address
    },
    async hash(address) {
      const bucket = new TextEncoder().encode(clientBucketOf(address))
      return new Uint8Array(await crypto.subtle.sign('HMAC', await key, bucket))
    },
  }
}
