import { isIpLiteral, isLocalHostname, isPublicAddress } from './address.ts'
import { untilAborted } from '../abort.ts'
import { readCapped } from '../streams/read-capped.ts'

export interface ImageFetchOptions {
  maxBytes: number
  signal?: AbortSignal
  timeoutMs?: number
}

export type ImageFetcher = (url: URL, options: ImageFetchOptions) => Promise<Uint8Array>

/** An image download under way: its guards (size cap, timeout, caller's signal) hold until its stream ends. */
export interface OpenedImage {
  /** The body, cut off with an ImageFetchError (too_large, timeout, aborted, network) when a guard trips. */
  stream: ReadableStream<Uint8Array>
  /** The length the server declared, when it did (a declared length over the cap is refused before). */
  length: number | null
}

/** The same fetch, answered as soon as the headers are in, the body still to come. */
export type ImageOpener = (url: URL, options: ImageFetchOptions) => Promise<OpenedImage>

/** The guarded fetch both ways: whole (image intake) or as a stream (a provider's result, into storage). */
export type GuardedImageFetcher = ImageFetcher & { open: ImageOpener }

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

/** Thrown by a platform fetch that refused to connect to a non-public address (see adapters/guarded-fetch.ts). */
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

export function createImageFetcher(options: ImageFetcherOptions): GuardedImageFetcher {
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

  /** The response of the last hop, checked: address, redirects, status and declared length. */
  async function fetchFollowingRedirects(start: URL, maxBytes: number, signal: AbortSignal): Promise<Response> {
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
      const declared = declaredLength(response)
      if (declared !== null && declared > maxBytes) {
        discard(response)
        throw tooLarge(maxBytes)
      }
      return response
    }
  }

  /**
   * Runs `work` under one deadline for the whole fetch (DNS, connect, headers, redirects and body) and the
   * caller's signal; `work` answers when its guards may go (at once, or when a stream it hands on ends).
   */
  async function guarded<T>(
    url: URL,
    fetchOptions: ImageFetchOptions,
    work: (response: Response, signal: AbortSignal, done: () => void) => Promise<T>,
  ): Promise<T> {
    const { maxBytes, signal, timeoutMs = defaultTimeoutMs } = fetchOptions
    if (signal?.aborted) throw new ImageFetchError('aborted', 'the fetch was cancelled', { cause: signal.reason })
    const deadline = new AbortController()
    const timer = setTimeout(
      () => deadline.abort(new ImageFetchError('timeout', `the image URL did not answer within ${timeoutMs / 1000} s`)),
      timeoutMs,
    )
    const onCallerAbort = () => deadline.abort(new ImageFetchError('aborted', 'the fetch was cancelled', { cause: signal?.reason }))
    signal?.addEventListener('abort', onCallerAbort, { once: true })
    let handedOn = false
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onCallerAbort)
    }
    try {
      const response = await fetchFollowingRedirects(url, maxBytes, deadline.signal)
      const result = await work(response, deadline.signal, done)
      handedOn = true
      return result
    } catch (error) {
      throw fetchFailure(error, deadline.signal)
    } finally {
      if (!handedOn) done()
    }
  }

  const defaultTimeoutMs = options.timeoutMs ?? 10_000
  const fetchImage: ImageFetcher = (url, fetchOptions) =>
    guarded(url, fetchOptions, async (response, signal, done) => {
      try {
        return await readCapped(response, fetchOptions.maxBytes, signal, () => tooLarge(fetchOptions.maxBytes))
      } finally {
        done()
      }
    })
  const open: ImageOpener = (url, fetchOptions) =>
    guarded(url, fetchOptions, async (response, signal, done) => ({
      stream: cappedStream(response, fetchOptions.maxBytes, signal, done),
      length: declaredLength(response),
    }))
  return Object.assign(fetchImage, { open })
}

/** The body, counted as it goes: past `maxBytes`, or once `signal` aborts, it errors and the download stops. */
function cappedStream(response: Response, maxBytes: number, signal: AbortSignal, done: () => void): ReadableStream<Uint8Array> {
  if (!response.body) {
    done()
    return new ReadableStream({ start: (controller) => controller.close() })
  }
  const reader = response.body.getReader()
  let total = 0
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: ended, value } = await untilAborted(reader.read(), signal)
        if (ended) {
          done()
          controller.close()
          return
        }
        total += value.byteLength
        if (total > maxBytes) throw tooLarge(maxBytes)
        controller.enqueue(value)
      } catch (error) {
        done()
        reader.cancel().catch(() => {})
        controller.error(fetchFailure(error, signal))
      }
    },
    cancel(reason) {
      done()
      return reader.cancel(reason)
    },
  })
}

function tooLarge(maxBytes: number): ImageFetchError {
  return new ImageFetchError('too_large', `the image is larger than ${maxBytes} bytes`)
}

function declaredLength(response: Response): number | null {
  const declared = response.headers.get('content-length')?.trim()
  return declared !== undefined && /^\d+$/.test(declared) ? Number(declared) : null
}

/** Any failure of a fetch, as the ImageFetchError it amounts to. */
function fetchFailure(error: unknown, deadline: AbortSignal): unknown {
  if (error instanceof ImageFetchError) return error
  if (deadline.aborted) return deadline.reason
  if (isBlockedAddress(error)) {
    return new ImageFetchError('address', 'the image URL points to a private, local or reserved address', { cause: error })
  }
  return new ImageFetchError('network', 'the image host could not be reached', { cause: error })
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
