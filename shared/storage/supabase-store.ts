import { createClient } from '@supabase/supabase-js'
import type { ResultStore } from './result-store.ts'

/** Results never change (a try-on id is never reused), so browsers and the CDN may keep them a year. */
export const RESULT_CACHE_SECONDS = 31_536_000

export interface SupabaseStoreOptions {
  /** The project URL, `https://<ref>.supabase.co` (SUPABASE_URL). */
  url: string
  /** A secret or service-role key: uploads bypass row-level security. */
  key: string
  bucket: string
  /** Writes result URLs on this origin instead of the project URL (a custom domain or proxy). */
  publicBaseUrl?: string
  /** The runtime's fetch; the global one by default. */
  fetch?: typeof fetch
}

/** Results in a public Supabase Storage bucket, uploaded with supabase-js. */
export function createSupabaseStore(options: SupabaseStoreOptions): ResultStore {
  const client = createClient(options.url, options.key, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    global: options.fetch ? { fetch: options.fetch } : undefined,
    realtime: { transport: NoRealtimeSocket },
  })
  const bucket = client.storage.from(options.bucket)
  const urlOf = (path: string) => {
    const { publicUrl } = bucket.getPublicUrl(path).data
    return options.publicBaseUrl ? rebase(publicUrl, options.publicBaseUrl) : publicUrl
  }

  return {
    async put(path, body, contentType) {
      // supabase-js sends a ReadableStream as it is read (with `duplex: 'half'`); Storage writes nothing from an
      // upload that breaks off.
      const { error } = await bucket.upload(path, body, {
        contentType,
        cacheControl: String(RESULT_CACHE_SECONDS),
        // A second write to the same path is a bug: never replace a delivered result.
        upsert: false,
      })
      if (error) throw new Error(`Supabase Storage refused ${options.bucket}/${path}: ${error.message}`, { cause: error })
      return urlOf(path)
    },
    urlOf,
    // Through the Storage API, never by deleting the storage.objects row, which would leave the file behind
    // (supabase.com/docs/guides/storage/management/delete-objects). It answers the objects it removed: a missing
    // one is simply not listed.
    async remove(path) {
      const { data, error } = await bucket.remove([path])
      if (error) throw new Error(`Supabase Storage did not remove ${options.bucket}/${path}: ${error.message}`, { cause: error })
      return (data ?? []).length > 0
    },
  }
}

type RealtimeTransport = NonNullable<NonNullable<Parameters<typeof createClient>[2]>['realtime']>['transport']

/**
 * The store never opens Realtime's socket. Naming a transport keeps supabase-js from requiring a native
 * WebSocket when the client is built (Node 20 has none); this one refuses if anything ever tries.
 */
const NoRealtimeSocket = class {
  constructor() {
    throw new Error('the result store does not use Supabase Realtime')
  }
} as unknown as RealtimeTransport

function rebase(url: string, baseUrl: string): string {
  const { pathname, search } = new URL(url)
  return `${baseUrl.replace(/\/+$/, '')}${pathname}${search}`
}

/**
 * The key uploads use: the project's default secret key where Supabase injects the new API keys
 * (`SUPABASE_SECRET_KEYS`, a JSON object of named keys), else one set by hand elsewhere
 * (`SUPABASE_SECRET_KEY`, e.g. on Cloudflare), else the legacy service-role key.
 */
export function storageKeyFrom(env: Record<string, string | undefined>): string | undefined {
  const secretKeys = env.SUPABASE_SECRET_KEYS
  if (secretKeys) {
    let named: unknown
    try {
      named = JSON.parse(secretKeys)
    } catch {
      throw new Error('SUPABASE_SECRET_KEYS is not a JSON object of named keys')
    }
    if (named && typeof named === 'object') {
      const keys = named as Record<string, unknown>
      const key = keys.default ?? Object.values(keys)[0]
      if (typeof key === 'string' && key !== '') return key
    }
  }
  return env.SUPABASE_SECRET_KEY || env.SUPABASE_SERVICE_ROLE_KEY || undefined
}
