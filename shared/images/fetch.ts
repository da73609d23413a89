import { isIpLiteral, isLocalHostname, isPublicAddress } from './address.ts'
import { untilAborted } from '../abort.ts'
import { readCapped } from '../http/read-capped.ts'

export type ImageFetcher = (url: URL, options: { maxBytes: number; signal?: AbortSignal; timeoutMs?: number }) => Promise<Uint8Array>

export type ImageFetchFailure =
  | 'scheme'
  | 'credentials'
  | 'address'
  | 'status'
  | 'redirects'
  | 'timeout'
  | 'too_large'
  | 'network'
  | 'aborted'

/** Why an image URL was not fetched. The message is ours, safe to show: it never names an address. */
export class ImageFetchError extends Error {
  readonly reason: ImageFetchFailure
  readonly status: number | undefined

  constructor(reason: ImageFetchFailure, message: string, options: { status?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause })
    this.name = 'ImageFetchError'
    this.reason = reason
    this.status = options.status
  }
}

/** Thrown by a platform fetch that refused to connect to a non-public address (see devstack/guarded-fetch.ts). */
export class BlockedAddressError extends Error {
  constructor(message = 'refused to connect to a non-public address') {
    super(message)
    this.name = 'BlockedAddressError'
  }
}

export interface ImageFetcherOptions {
  /** The platform's fetch; on Node the guarded one, which re-checks the address it connects to. */
  fetch: typeof fetch
  /** All A and AAAA answers for a name; every one must be public. */
  resolveHost?: (hostname: string) => Promise<string[]>
  /** Lifts the address rules only (TRYON_ALLOW_PRIVATE_IMAGE_HOSTS=1, local testing). */
  allowPrivateHosts?: boolean
  /** One deadline for the whole fetch: DNS, connect, headers, redirects and body. */
  timeoutMs?: number
  maxRedirects?: number
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])
const ACCEPT = 'image/jpeg, image/png, image/webp;q=0.9, */*;q=0.1'

export function createImageFetcher(options: ImageFetcherOptions): ImageFetcher {
  const { resolveHost, allowPrivateHosts = false, maxRedirects = 3 } = options
  const platformFetch = options.fetch

  async function checkDestination(url: URL, signal: AbortSignal): Promise<void> {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new ImageFetchError('scheme', 'only http and https URLs can be fetched')
    }
    if (url.username !== '' || url.password !== '') {
      throw new ImageFetchError('credentials', 'image URLs must not contain a username or password')
    }
    if (allowPrivateHosts) return
    const host = url.hostname
    const refused = new ImageFetchError('address', 'the image URL points to a private, local or reserved address')
    if (isIpLiteral(host)) {
      if (!isPublicAddress(host)) throw refused
      return
    }
    if (isLocalHostname(host)) throw refused
    if (!resolveHost) return
    let addresses: string[]
    try {
      addresses = await untilAborted(resolveHost(host), signal)
    } catch (error) {
      if (signal.aborted) throw error
      throw new ImageFetchError('network', 'the image host name could not be resolved', { cause: error })
    }
    if (addresses.length === 0) throw new ImageFetchError('network', 'the image host name could not be resolved')
    if (!addresses.every(isPublicAddress)) throw refused
  }

  async function fetchFollowingRedirects(start: URL, maxBytes: number, signal: AbortSignal): Promise<Uint8Array> {
    let url = start
    for (let redirects = 0; ; redirects++) {
      await checkDestination(url, signal)
      const response = await platformFetch(url, { redirect: 'manual', signal, headers: { accept: ACCEPT } })
      if (REDIRECT_STATUSES.has(response.status) || response.type === 'opaqueredirect') {
        const location = response.headers.get('location')
        discard(response)
        if (redirects >= maxRedirects) {
          throw new ImageFetchError('redirects', `the image URL redirected more than ${maxRedirects} times`)
        }
        url = nextHop(location, url)
        continue
      }
      if (response.status < 200 || response.status > 299) {
        discard(response)
        throw new ImageFetchError('status', `the image URL answered HTTP ${response.status}`, {
          status: response.status,
        })
      }
      return readCapped(response, maxBytes, signal, () => new ImageFetchError('too_large', `the image is larger than ${maxBytes} bytes`))
    }
  }

  return async (url, { maxBytes, signal, timeoutMs = options.timeoutMs ?? 10_000 }) => {
    if (signal?.aborted) throw new ImageFetchError('aborted', 'the fetch was cancelled', { cause: signal.reason })
    const deadline = new AbortController()
    const timer = setTimeout(
      () => deadline.abort(new ImageFetchError('timeout', `the image URL did not answer within ${timeoutMs / 1000} s`)),
      timeoutMs,
    )
    const onCallerAbort = () =>
      deadline.abort(new ImageFetchError('aborted', 'the fetch was cancelled', { cause: signal?.reason }))
    signal?.addEventListener('abort', onCallerAbort, { once: true })
    try {
      return await fetchFollowingRedirects(url, maxBytes, deadline.signal)
    } catch (error) {
      if (error instanceof ImageFetchError) throw error
      if (deadline.signal.aborted) throw deadline.signal.reason
      if (isBlockedAddress(error)) {
        throw new ImageFetchError('address', 'the image URL points to a private, local or reserved address', {
          cause: error,
        })
      }
      throw new ImageFetchError('network', 'the image host could not be reached', { cause: error })
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onCallerAbort)
    }
  }
}

function nextHop(location: string | null, from: URL): URL {
  if (!location) throw new ImageFetchError('redirects', 'the image URL redirected without a Location')
  try {
    return new URL(location, from)
  } catch (error) {
    throw new ImageFetchError('redirects', 'the image URL redirected to an invalid URL', { cause: error })
  }
}

function discard(response: Response): void {
  response.body?.cancel().catch(() => {})
}

/** Platform fetches wrap connection errors ("fetch failed"), so look down the cause chain. */
function isBlockedAddress(error: unknown): boolean {
  let current: unknown = error
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current.name === 'BlockedAddressError') return true
    current = current.cause
  }
  return false
}
