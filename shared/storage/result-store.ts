/** Where generated images go: a public bucket whose URLs never expire by themselves. */
export interface ResultStore {
  /**
   * Stores the image at `path` inside the bucket and returns its permanent public URL. A stream (a provider's
   * result still downloading) is written as it arrives; if it errors, the put fails and nothing is stored.
   */
  put(path: string, body: Uint8Array | ReadableStream<Uint8Array>, contentType: string): Promise<string>
  /** The public URL of the object at `path`, the one `put` returned. */
  urlOf(path: string): string
  /**
   * Removes the object at `path` (a shopper's erasure request, or what a failed try-on may have left) and says whether
   * one was there; removing one that is not there is not an error.
   */
  remove(path: string): Promise<boolean>
}

const extensionOf: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
}

/** `<yyyy>/<mm>/<tryOnId>.<ext>` (docs/api.md, "Success"), dated in UTC. */
export function resultPath(tryOnId: string, contentType: string, at: Date): string {
  const year = at.getUTCFullYear()
  const month = String(at.getUTCMonth() + 1).padStart(2, '0')
  return `${year}/${month}/${tryOnId}.${extensionOf[contentType] ?? 'bin'}`
}

/** Results are immutable: a try-on id is never reused. */
export const RESULT_CACHE_CONTROL = 'public, max-age=31536000, immutable'

/** Supabase's public-object URL shape, which the dev stack serves too. */
export function publicObjectUrl(baseUrl: string, bucket: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/storage/v1/object/public/${bucket}/${path}`
}
