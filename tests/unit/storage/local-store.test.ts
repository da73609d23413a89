import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createLocalStore, objectFile } from '../../../adapters/local-store.ts'

describe('the local disk store', async () => {
  const root = await mkdtemp(join(tmpdir(), 'tryon-store-'))
  afterAll(() => rm(root, { recursive: true, force: true }))
  const store = createLocalStore({ root, bucket: 'tryon-results', baseUrl: () => 'http://127.0.0.1:1' })
  const small = Uint8Array.from({ length: 2048 }, (_, i) => i & 255)

  it('writes a small result in one synchronous call: on disk before put() yields', async () => {
    await store.put('2026/11/first.jpg', small, 'image/jpeg')
    const second = store.put('2026/11/second.jpg', small, 'image/jpeg')
    // Written whole before the event loop turns: an asynchronous write could not have put its bytes there yet.
    const file = objectFile(root, 'tryon-results', '2026/11/second.jpg')!
    expect(existsSync(file) && readFileSync(file)).toEqual(Buffer.from(small))
    expect(await second).toBe('http://127.0.0.1:1/storage/v1/object/public/tryon-results/2026/11/second.jpg')
  })

  it('never replaces a result, small or large', async () => {
    await expect(store.put('2026/11/first.jpg', small, 'image/jpeg')).rejects.toThrow(/EEXIST/)
    const large = new Uint8Array(600 * 1024).fill(7)
    await store.put('2026/11/large.jpg', large, 'image/jpeg')
    await expect(store.put('2026/11/large.jpg', large, 'image/jpeg')).rejects.toThrow(/EEXIST/)
    expect(readFileSync(objectFile(root, 'tryon-results', '2026/11/first.jpg')!)).toEqual(Buffer.from(small))
  })
})
