import type { Env, Settings } from '../../../shared/config.ts'
import type { ResultStore } from '../../../shared/storage/result-store.ts'

/** Results go to Supabase Storage in production; `local` writes to disk (self-hosting and tests). */
export async function createResultStore(settings: Settings, env: Env): Promise<ResultStore> {
  if (settings.storage === 'local') {
    const { createLocalStore, storageRoot } = await import('../../../devstack/local-store.ts')
    const baseUrl = settings.publicBaseUrl ?? `http://127.0.0.1:${env.PORT ?? 8000}`
    return createLocalStore({ root: storageRoot(env.TRYON_DATA_DIR ?? '.tryon'), bucket: settings.bucket, baseUrl: () => baseUrl })
  }
  throw new Error('TRYON_STORAGE=supabase is not available yet; use TRYON_STORAGE=local')
}
