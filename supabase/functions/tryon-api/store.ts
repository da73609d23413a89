import type { Env, Settings } from '../../../shared/config.ts'
import type { ResultStore } from '../../../shared/storage/result-store.ts'
import { createSupabaseStore, storageKeyFrom } from '../../../shared/storage/supabase-store.ts'

/** Results go to Supabase Storage in production; `local` writes to disk (self-hosting and tests). */
export async function createResultStore(settings: Settings, env: Env): Promise<ResultStore> {
  if (settings.storage === 'supabase') {
    const key = storageKeyFrom(env)
    if (!env.SUPABASE_URL || !key) {
      throw new Error(
        'TRYON_STORAGE=supabase needs SUPABASE_URL and a secret key ' +
          '(SUPABASE_SECRET_KEYS, SUPABASE_SECRET_KEY or SUPABASE_SERVICE_ROLE_KEY)',
      )
    }
    return createSupabaseStore({ url: env.SUPABASE_URL, key, bucket: settings.bucket, publicBaseUrl: settings.publicBaseUrl })
  }
  const { createLocalStore, storageRoot } = await import('./local-store.ts')
  const baseUrl = settings.publicBaseUrl ?? `http://127.0.0.1:${env.PORT ?? 8000}`
  return createLocalStore({ root: storageRoot(env.TRYON_DATA_DIR ?? '.tryon'), bucket: settings.bucket, baseUrl: () => baseUrl })
}
