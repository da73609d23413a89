import { writeFileSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { dirname, join, resolve, sep } from 'node:path'
import { publicObjectUrl, type ResultStore } from '../shared/storage/result-store.ts'

/** Results up to this size are written in one synchronous call. */
const SYNC_WRITE_BYTES = 256 * 1024

/**
 * Results on local disk, under `<root>/<bucket>/<path>` (TRYON_STORAGE=local): the function's own store under Deno,
 * and the Node dev stack's, whose gateway serves the files (node:fs, which both runtimes have).
 */
export function createLocalStore(options: { root: string; bucket: string; baseUrl: () => string }): ResultStore {
  // Results go to one folder per month: create each once, not on every write (mkdir contends under load).
  const made = new Set<string>()
  const fileOf = (path: string) => {
    const file = objectFile(options.root, options.bucket, path)
    if (!file) throw new Error(`invalid object path ${path}`)
    return file
  }
  return {
    async put(path, body) {
      const file = fileOf(path)
      const dir = dirname(file)
      if (!made.has(dir)) {
        await mkdir(dir, { recursive: true })
        made.add(dir)
      }
      // wx: a result is written once and never replaced (ids are unique).
      try {
        // A small result in one synchronous write: a few system calls, where the promise API's file handle and its
        // hops through the thread pool cost more CPU than the write (about 15% of an instant try-on's).
        if (body instanceof Uint8Array && body.byteLength <= SYNC_WRITE_BYTES) writeFileSync(file, body, { flag: 'wx' })
        else await writeFile(file, body instanceof Uint8Array ? body : (body as unknown as AsyncIterable<Uint8Array>), { flag: 'wx' })
      } catch (error) {
        // A stream that broke off leaves no half-written result (a file that was there already stays).
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') await rm(file, { force: true })
        throw error
      }
      return publicObjectUrl(options.baseUrl(), options.bucket, path)
    },
    urlOf: (path) => publicObjectUrl(options.baseUrl(), options.bucket, path),
    async remove(path) {
      try {
        await rm(fileOf(path))
        return true
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
        throw error
      }
    },
  }
}

/** The file behind an object path, or null when the path would escape the bucket. */
export function objectFile(root: string, bucket: string, path: string): string | null {
  const bucketDir = resolve(root, bucket)
  const file = resolve(bucketDir, path)
  return file.startsWith(bucketDir + sep) ? file : null
}

const contentTypes: Record<string, string> = { jpg: 'image/jpeg', png: 'image/png', webp: 'image/webp' }

export async function readObject(root: string, bucket: string, path: string): Promise<{ bytes: Uint8Array; contentType: string } | null> {
  const file = objectFile(root, bucket, path)
  const contentType = contentTypes[path.split('.').pop() ?? '']
  if (!file || !contentType) return null
  try {
    return { bytes: await readFile(file), contentType }
  } catch {
    return null
  }
}

export const storageRoot = (dataDir: string) => join(dataDir, 'storage')
