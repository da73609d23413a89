import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createSupabaseStore, RESULT_CACHE_SECONDS, storageKeyFrom } from '../../shared/storage/supabase-store.ts'
import { makeShopperPhoto } from '../support/images.ts'
import { startFakeStorage, type FakeStorage } from '../support/fake-storage.ts'

describe('the Supabase Storage result store', () => {
  let storage: FakeStorage

  beforeAll(async () => {
    storage = await startFakeStorage()
  })
  afterAll(() => storage?.close())
  beforeEach(() => {
    storage.requests.length = 0
    storage.failUploadsWith = null
  })

  const store = (options: { bucket?: string; publicBaseUrl?: string; key?: string } = {}) =>
    createSupabaseStore({
      url: storage.url,
      key: options.key ?? storage.key,
      bucket: options.bucket ?? 'tryon-results',
      publicBaseUrl: options.publicBaseUrl,
    })

  it('uploads the bytes once with their type and a one-year cache, and returns the public object URL', async () => {
    const image = makeShopperPhoto({ width: 120, height: 200, format: 'jpeg' }).bytes
    const path = '2026/11/6f1c2a4e-7d1b-4c8e-9a51-0d2f3b4c5a6e.jpg'

    const url = await store().put(path, image, 'image/jpeg')

    expect(url).toBe(`${storage.url}/storage/v1/object/public/tryon-results/${path}`)
    expect(storage.requests).toHaveLength(1)
    const [upload] = storage.requests
    expect(upload.method).toBe('POST')
    expect(upload.path).toBe(`/storage/v1/object/tryon-results/${path}`)
    expect(upload.headers).toMatchObject({
      authorization: `Bearer ${storage.key}`,
      apikey: storage.key,
      'content-type': 'image/jpeg',
      'cache-control': `max-age=${RESULT_CACHE_SECONDS}`,
      'x-upsert': 'false',
    })
    expect(RESULT_CACHE_SECONDS).toBe(365 * 24 * 3600)
    expect(Buffer.compare(upload.body, Buffer.from(image))).toBe(0)

    const served = await fetch(url)
    expect(served.status).toBe(200)
    expect(served.headers.get('content-type')).toBe('image/jpeg')
    expect(Buffer.compare(Buffer.from(await served.arrayBuffer()), Buffer.from(image))).toBe(0)
  })

  it('uploads a stream as it arrives; one that breaks off fails the put and stores nothing', async () => {
    const image = makeShopperPhoto({ width: 300, height: 500, format: 'jpeg' }).bytes
    const streamOf = (parts: Uint8Array[], error?: Error) => {
      let next = 0
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          if (next < parts.length) controller.enqueue(parts[next++])
          else if (error) controller.error(error)
          else controller.close()
        },
      })
    }
    const half = Math.floor(image.byteLength / 2)
    await store().put('2026/11/streamed.jpg', streamOf([image.subarray(0, half), image.subarray(half)]), 'image/jpeg')
    expect(Buffer.compare(storage.objects.get('tryon-results/2026/11/streamed.jpg')!.bytes, Buffer.from(image))).toBe(0)

    await expect(
      store().put('2026/11/broken.jpg', streamOf([image.subarray(0, half)], new Error('the download passed its cap')), 'image/jpeg'),
    ).rejects.toThrow()
    expect(storage.objects.has('tryon-results/2026/11/broken.jpg')).toBe(false)
  })

  it('keeps PNG and WebP results typed as they are', async () => {
    await store().put('2026/11/a.png', new Uint8Array(2048).fill(7), 'image/png')
    await store().put('2026/11/b.webp', new Uint8Array(2048).fill(9), 'image/webp')
    expect(storage.requests.map((r) => r.headers['content-type'])).toEqual(['image/png', 'image/webp'])
    expect(storage.objects.get('tryon-results/2026/11/b.webp')?.bytes.byteLength).toBe(2048)
  })

  it('writes result URLs on PUBLIC_BASE_URL when one is set', async () => {
    const url = await store({ publicBaseUrl: 'https://media.shop.example/' }).put('2026/11/c.jpg', new Uint8Array(1500), 'image/jpeg')
    expect(url).toBe('https://media.shop.example/storage/v1/object/public/tryon-results/2026/11/c.jpg')
  })

  it('throws when Storage answers an error, so the request fails as storage_failed and is refunded', async () => {
    storage.failUploadsWith = 500
    await expect(store().put('2026/11/d.jpg', new Uint8Array(1500), 'image/jpeg')).rejects.toThrow(
      /Supabase Storage refused tryon-results\/2026\/11\/d\.jpg/,
    )
    expect(storage.objects.has('tryon-results/2026/11/d.jpg')).toBe(false)
  })

  it('never replaces a stored result', async () => {
    await store().put('2026/11/e.jpg', new Uint8Array(1500).fill(1), 'image/jpeg')
    await expect(store().put('2026/11/e.jpg', new Uint8Array(1500).fill(2), 'image/jpeg')).rejects.toThrow(/already exists/)
    expect(storage.objects.get('tryon-results/2026/11/e.jpg')?.bytes[0]).toBe(1)
  })

  it('removes an object through the Storage API, so its public URL stops serving it, and removing it again is no error', async () => {
    const path = '2026/11/f.jpg'
    const url = await store().put(path, new Uint8Array(1500).fill(3), 'image/jpeg')
    expect(store().urlOf(path)).toBe(url)
    storage.requests.length = 0

    expect(await store().remove(path)).toBe(true)

    expect(storage.requests).toHaveLength(1)
    expect(storage.requests[0]).toMatchObject({
      method: 'DELETE',
      path: '/storage/v1/object/tryon-results',
      headers: { apikey: storage.key },
    })
    expect(JSON.parse(storage.requests[0].body.toString('utf8'))).toEqual({ prefixes: [path] })
    expect(storage.objects.has(`tryon-results/${path}`)).toBe(false)
    expect((await fetch(url)).ok).toBe(false)
    await expect(store().remove(path)).resolves.toBe(false)
  })

  it('throws when Storage refuses a removal, so the image stays queued for the next run', async () => {
    await expect(store({ key: 'sb_secret_wrong' }).remove('2026/11/g.jpg')).rejects.toThrow(
      /did not remove tryon-results\/2026\/11\/g\.jpg/,
    )
    await expect(store({ bucket: 'no-such-bucket' }).remove('2026/11/g.jpg')).rejects.toThrow(/Bucket not found/)
  })

  it('throws for a missing bucket, a wrong key and an unreachable server', async () => {
    await expect(store({ bucket: 'no-such-bucket' }).put('x.jpg', new Uint8Array(1500), 'image/jpeg')).rejects.toThrow(/Bucket not found/)
    await expect(store({ key: 'sb_secret_wrong' }).put('x.jpg', new Uint8Array(1500), 'image/jpeg')).rejects.toThrow(/refused/)
    const unreachable = createSupabaseStore({ url: 'http://127.0.0.1:9', key: 'k', bucket: 'tryon-results' })
    await expect(unreachable.put('x.jpg', new Uint8Array(1500), 'image/jpeg')).rejects.toThrow(/refused/)
  })
})

describe('the key the store uploads with', () => {
  it('prefers the default of the new secret keys, then a single secret key, then the legacy service-role key', () => {
    expect(
      storageKeyFrom({ SUPABASE_SECRET_KEYS: '{"default":"sb_secret_a","ci":"sb_secret_b"}', SUPABASE_SERVICE_ROLE_KEY: 'eyJ.legacy' }),
    ).toBe('sb_secret_a')
    expect(storageKeyFrom({ SUPABASE_SECRET_KEYS: '{"ci":"sb_secret_b"}' })).toBe('sb_secret_b')
    expect(storageKeyFrom({ SUPABASE_SECRET_KEYS: '{}', SUPABASE_SERVICE_ROLE_KEY: 'eyJ.legacy' })).toBe('eyJ.legacy')
    expect(storageKeyFrom({ SUPABASE_SECRET_KEY: 'sb_secret_c', SUPABASE_SERVICE_ROLE_KEY: 'eyJ.legacy' })).toBe('sb_secret_c')
    expect(storageKeyFrom({ SUPABASE_SERVICE_ROLE_KEY: 'eyJ.legacy' })).toBe('eyJ.legacy')
    expect(storageKeyFrom({})).toBeUndefined()
  })

  it('refuses SUPABASE_SECRET_KEYS that is not JSON', () => {
    expect(() => storageKeyFrom({ SUPABASE_SECRET_KEYS: 'sb_secret_a' })).toThrow(/JSON object/)
  })
})
