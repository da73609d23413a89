import type { Env, Settings } from '../../../shared/config.ts'
import type { ResultStore } from '../../../shared/storage/result-store.ts'
import { resultStoreFrom } from '../../../shared/storage/from-settings.ts'

/** Results go to Supabase Storage in production; `local` writes to disk (self-hosting and tests). */
export async function createResultStore(settings: Settings, env: Env): Promise<ResultStore> {
  if (settings.storage === 'supabase') return resultStoreFrom(settings, env)
  const { createLocalStore, storageRoot } = await import('../../../adapters/local-store.ts')
  return resultStoreFrom(settings, env, () => {
    const baseUrl = settings.publicBaseUrl ?? `http://127.0.0.1:${env.PORT ?? 8000}`
    return createLocalStore({ root: storageRoot(env.TRYON_DATA_DIR ?? '.tryon'), bucket: settings.bucket, baseUrl: () => baseUrl })
  })
}
