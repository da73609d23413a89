import { afterEach, describe, expect, it, vi } from 'vitest'
import { createGuardedFetch } from '../../../adapters/guarded-fetch.ts'
import { TryOnFailure } from '../../../shared/failure.ts'
import { type ApiError, toApiError } from '../../../shared/http/errors.ts'
import { type LargeString, parseJsonBytes } from '../../../shared/encoding/json-bytes.ts'
import { createImageFetcher, type ImageFetcher, ImageFetchError } from '../../../shared/images/fetch.ts'
import { intakeImage } from '../../../shared/images/intake.ts'
import { defaultImageLimits, type ImageField, type ImageLimits } from '../../../shared/images/types.ts'
import { base64Of, jpeg, notImages, png, startServer, type TestServer, webpVp8, webpVp8l, webpVp8x } from './fixtures.ts'

const smallLimits: ImageLimits = { minBytes: 1024, maxBytes: 8 * 1024, maxPixels: 40_000_000 }

function unusedFetcher() {
  return vi.fn<ImageFetcher>(async () => {
    throw new Error('no URL should be fetched')
  })
}

function fetcherReturning(bytes: Uint8Array) {
  return vi.fn<ImageFetcher>(async () => bytes)
}

async function apiError(work: Promise<unknown>): Promise<ApiError> {
  const error = await work.then(
    () => {
      throw new Error('expected the intake to fail')
    },
    (error: unknown) => error,
  )
  // The intake refuses with the domain's failure; the caller is answered what toApiError makes of it.
  expect(error).toBeInstanceOf(TryOnFailure)
  return toApiError(error as TryOnFailure)
}

/** The value as a request body holds it when it is large: still in the body's bytes (escaped as PHP would). */
function leftInBody(value: string): LargeString {
  const json = JSON.stringify({ value }).replace(/\//g, '\\/')
  return (parseJsonBytes(new TextEncoder().encode(json), { largeFrom: 0 }) as { value: LargeString }).value
}

const settle = (work: Promise<unknown>) =>
  work.then(
    (value) => ({ value }),
    (error: TryOnFailure) => {
      const answer = toApiError(error)
      return { error: { code: answer.code, message: answer.message } }
    },
  )

/**
 * Intake of the value as a string; unless it is a URL (fetched once, as each test counts), the same value left
 * in the request's bytes must get exactly the same answer, image or error.
 */
async function intake(value: string, options: { fetchImage?: ImageFetcher; limits?: ImageLimits; field?: ImageField } = {}) {
  const deps = { fetchImage: options.fetchImage ?? unusedFetcher(), limits: options.limits ?? defaultImageLimits }
  const field = options.field ?? 'userPhoto'
  const asString = intakeImage(field, value, deps)
  if (/^\s*[a-z][a-z0-9+.-]*:/i.test(value) && !/^\s*data:/i.test(value)) return asString
  const inBytes = await settle(intakeImage(field, leftInBody(value), deps))
  expect(inBytes).toEqual(await settle(asString))
  return asString
}

describe('image intake forms', () => {
  it('accepts raw base64 and reports what the bytes are', async () => {
    const bytes = png(640, 480)
    expect(await intake(base64Of(bytes))).toEqual({ format: 'png', width: 640, height: 480, bytes })
  })

  it('accepts a data URI and trusts the bytes, not its subtype', async () => {
    const bytes = jpeg(1200, 1600)
    const image = await intake(`data:image/gif;base64,${base64Of(bytes)}`)
    expect(image).toEqual({ format: 'jpeg', width: 1200, height: 1600, bytes })
  })

  it('accepts URL-safe, unpadded and line-wrapped base64, with surrounding whitespace', async () => {
    const bytes = webpVp8(300, 300, 2050)
    const standard = base64Of(bytes)
    const urlSafe = standard.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
    expect((await intake(urlSafe)).bytes).toEqual(bytes)
    expect((await intake(`  data:IMAGE/webp;base64,${standard.replace(/.{76}/g, '$&\n')}\n`)).bytes).toEqual(bytes)
  })

  it.each([
    ['VP8', webpVp8(100, 50)],
    ['VP8L', webpVp8l(100, 50)],
    ['VP8X', webpVp8x(100, 50)],
  ])('accepts WebP %s', async (_, bytes) => {
    expect(await intake(base64Of(bytes))).toMatchObject({ format: 'webp', width: 100, height: 50 })
  })

  it('fetches an http(s) URL with the byte cap and the caller signal', async () => {
    const bytes = png(64, 64)
    const fetchImage = fetcherReturning(bytes)
    const caller = new AbortController()
    const image = await intakeImage(
      'productImage',
      'https://shop.example/dress.png?v=2',
      { fetchImage, limits: defaultImageLimits },
      caller.signal,
    )
    expect(image).toEqual({ format: 'png', width: 64, height: 64, bytes })
    expect(fetchImage).toHaveBeenCalledWith(new URL('https://shop.example/dress.png?v=2'), {
      maxBytes: defaultImageLimits.maxBytes,
      signal: caller.signal,
    })
  })

  it.each(['file:///etc/passwd', 'ftp://files.example/a.png', 'gopher://old.example:70/_x', 'javascript:alert(1)'])(
    'refuses %s as an unreachable URL, not as bad base64, without fetching',
    async (value) => {
      const fetchImage = unusedFetcher()
      const error = await apiError(intake(value, { fetchImage }))
      expect(error.code).toBe('image_unreachable')
      expect(error.message).toBe('userPhoto: only http and https image URLs can be fetched')
      expect(fetchImage).not.toHaveBeenCalled()
    },
  )

  it.each([
    ['an empty string', '   ', /^userPhoto: is empty; send an http\(s\) URL/],
    ['an unparsable URL', 'http://[not-an-ip/', /^userPhoto: is not a valid URL/],
    ['text that is not base64', 'this is not an image!', /^userPhoto: is neither a URL nor valid base64/],
    ['a data URI without ;base64', 'data:image/png,AAAA', /^userPhoto: malformed data URI/],
    ['a data URI for text', `data:text/plain;base64,${base64Of(png(10, 10))}`, /^userPhoto: malformed data URI/],
    ['a data URI without a comma', 'data:image/png;base64', /^userPhoto: malformed data URI/],
    ['a data URI with a bad payload', 'data:image/png;base64,AAAA*AAA', /^userPhoto: the data URI payload is not valid/],
    ['a data URI with padding inside', 'data:image/png;base64,AA==AAAA', /^userPhoto: the data URI payload is not valid/],
    ['base64 mixing both alphabets', 'AAA+AAA_', /^userPhoto: is neither a URL nor valid base64/],
    ['base64 with one character too many', 'AAAAA', /^userPhoto: is neither a URL nor valid base64/],
  ])('refuses %s as invalid_request', async (_, value, message) => {
    const error = await apiError(intake(value))
    expect(error.code).toBe('invalid_request')
    expect(error.status).toBe(400)
    expect(error.message).toMatch(message)
  })
})

describe('image intake limits', () => {
  it('refuses an image under 1 KB, saying how small it is', async () => {
    const error = await apiError(intake(base64Of(png(10, 10, 512))))
    expect(error.code).toBe('image_too_small')
    expect(error.message).toBe('userPhoto: image is smaller than 1 KB (512 bytes); images must be at least 1 KB')
  })

  it('accepts exactly the minimum and exactly the maximum size', async () => {
    expect((await intake(base64Of(png(10, 10, 1024)), { limits: smallLimits })).bytes.length).toBe(1024)
    expect((await intake(base64Of(png(10, 10, 8192)), { limits: smallLimits })).bytes.length).toBe(8192)
  })

  it('refuses a decoded image over the maximum', async () => {
    const error = await apiError(intake(base64Of(png(10, 10, 8193)), { limits: smallLimits }))
    expect(error.code).toBe('image_too_large')
    expect(error.message).toBe('userPhoto: image is larger than 8 KB (8,193 bytes); images may be at most 8 KB')
  })

  it('refuses an oversized base64 payload from its length, before decoding it', async () => {
    // Not valid base64 at all: only a length check that runs first can call it too large.
    const error = await apiError(intake('!'.repeat(12_000), { limits: smallLimits }))
    expect(error.code).toBe('image_too_large')
    const dataUri = await apiError(intake(`data:image/png;base64,${'*'.repeat(12_000)}`, { limits: smallLimits }))
    expect(dataUri.code).toBe('image_too_large')
  })

  it('does not count line breaks against the size limit', async () => {
    const wrapped = base64Of(png(10, 10, 8192)).replace(/.{4}/g, '$&\r\n')
    expect(wrapped.length * 0.75).toBeGreaterThan(smallLimits.maxBytes)
    expect((await intake(wrapped, { limits: smallLimits })).bytes.length).toBe(8192)
  })

  it('refuses more than 40 megapixels, read from the header', async () => {
    const error = await apiError(intake(base64Of(png(8000, 6000))))
    expect(error.code).toBe('image_too_large')
    expect(error.message).toBe('userPhoto: image is 8000×6000 (48.0 megapixels); images may have at most 40 megapixels')
    expect(await intake(base64Of(jpeg(8000, 5000)))).toMatchObject({ width: 8000, height: 5000 })
  })

  it('refuses a PNG over 12 megapixels as image_too_complex: it is decoded whole', async () => {
    const error = await apiError(intake(base64Of(png(8000, 5000))))
    expect(error.code).toBe('image_too_complex')
    expect(error.message).toMatch(/^userPhoto: a PNG of 8000×5000 \(40\.0 megapixels\) is decoded whole/)
    expect(await intake(base64Of(png(4000, 3000)))).toMatchObject({ width: 4000, height: 3000 })
  })

  // A format recognised by its signature is named; anything else is "not a readable" image.
  const named: Record<string, string> = { gif: 'is GIF, which is not accepted', bmp: 'is BMP, which is not accepted' }
  it.each(Object.entries(notImages))('refuses %s bytes as unsupported_image', async (name, bytes) => {
    const error = await apiError(intake(`data:image/png;base64,${base64Of(bytes)}`))
    expect(error.code).toBe('unsupported_image')
    const sent = named[name] ?? 'is not a readable JPEG, PNG or WebP'
    expect(error.message).toMatch(new RegExp(`^userPhoto: image ${sent} .*send a JPEG, PNG or WebP`))
  })

  it.each<ImageField>(['userPhoto', 'productImage'])('names the field %s in every error', async (field) => {
    const failures = [
      intake('', { field }),
      intake('file:///x', { field }),
      intake(base64Of(png(1, 1, 100)), { field }),
      intake(base64Of(notImages.gif), { field }),
    ]
    for (const failure of failures) expect((await apiError(failure)).message.startsWith(`${field}: `)).toBe(true)
  })
})

describe('image intake of fetched URLs', () => {
  it.each([
    [new ImageFetchError('address', 'the image URL points to a private, local or reserved address'), /private, local/],
    [new ImageFetchError('status', 'the image URL answered HTTP 404', { status: 404 }), /HTTP 404/],
    [new ImageFetchError('redirects', 'the image URL redirected more than 3 times'), /more than 3 times/],
    [new ImageFetchError('timeout', 'the image URL did not answer within 10 s'), /within 10 s/],
    [new ImageFetchError('network', 'the image host could not be reached'), /could not be reached/],
    [new Error('connect ECONNREFUSED 10.0.0.5:80'), /^userPhoto: could not fetch the image$/],
  ])('turns a fetch failure into image_unreachable: %s', async (failure, message) => {
    const fetchImage: ImageFetcher = async () => Promise.reject(failure)
    const error = await apiError(intake('https://cdn.example/p.png?token=secret-123', { fetchImage }))
    expect(error.code).toBe('image_unreachable')
    expect(error.message).toMatch(/^userPhoto: could not fetch the image/)
    expect(error.message).toMatch(message)
    expect(error.message).not.toMatch(/10\.0\.0\.5|secret-123|cdn\.example/)
  })

  it('turns a body over the cap into image_too_large', async () => {
    const error = await apiError(
      intake('https://cdn.example/huge.png', {
        fetchImage: async () => Promise.reject(new ImageFetchError('too_large', 'too large')),
      }),
    )
    expect(error.code).toBe('image_too_large')
    expect(error.message).toBe('userPhoto: image is larger than 10 MB; images may be at most 10 MB')
  })

  it('applies the size, format and pixel rules to fetched bytes', async () => {
    const fetched = (bytes: Uint8Array) => apiError(intake('https://cdn.example/a.png', { fetchImage: fetcherReturning(bytes) }))
    const tooSmall = await fetched(png(5, 5, 100))
    const notAnImage = await fetched(notImages.html)
    const tooManyPixels = await fetched(png(9000, 9000))
    expect([tooSmall.code, notAnImage.code, tooManyPixels.code]).toEqual(['image_too_small', 'unsupported_image', 'image_too_large'])
  })

  it("passes on the caller's abort instead of blaming the image", async () => {
    const caller = new AbortController()
    const reason = new Error('client disconnected')
    const fetchImage: ImageFetcher = async () => {
      caller.abort(reason)
      throw new ImageFetchError('aborted', 'the fetch was cancelled')
    }
    await expect(
      intakeImage('userPhoto', 'https://cdn.example/a.png', { fetchImage, limits: defaultImageLimits }, caller.signal),
    ).rejects.toBe(reason)
  })
})

describe('image intake over real HTTP', () => {
  let server: TestServer | undefined
  afterEach(async () => {
    await server?.close()
    server = undefined
  })

  const realFetcher = () => createImageFetcher({ fetch: createGuardedFetch({ allowPrivateHosts: true }), allowPrivateHosts: true })

  it('believes the bytes, not a Content-Type that calls a PNG text', async () => {
    server = await startServer((_, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' })
      response.end(png(320, 240))
    })
    expect(await intake(`${server.url}/photo.txt`, { fetchImage: realFetcher() })).toMatchObject({
      format: 'png',
      width: 320,
      height: 240,
    })
  })

  it('refuses HTML served as image/png from a .png URL', async () => {
    server = await startServer((_, response) => {
      response.writeHead(200, { 'content-type': 'image/png' })
      response.end(notImages.html)
    })
    const error = await apiError(intake(`${server.url}/photo.png`, { fetchImage: realFetcher() }))
    expect(error.code).toBe('unsupported_image')
  })

  it('refuses a loopback URL when private hosts are not allowed, without a request', async () => {
    server = await startServer((_, response) => response.end(png(10, 10)))
    const fetchImage = createImageFetcher({ fetch: createGuardedFetch() })
    const error = await apiError(intake(`${server.url}/a.png`, { fetchImage }))
    expect(error.code).toBe('image_unreachable')
    expect(error.message).not.toContain('127.0.0.1')
    expect(server.requests).toEqual([])
  })
})
