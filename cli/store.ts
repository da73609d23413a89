import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { readSettings, type Env } from '../shared/config.ts'
import { resultStoreFrom, StoreSettingsError } from '../shared/storage/from-settings.ts'
import type { ResultStore } from '../shared/storage/result-store.ts'
import { createLocalStore, storageRoot } from '../adapters/local-store.ts'
import { UsageError } from './args.ts'

/**
 * The store the service writes results to, for removing deleted ones: Supabase Storage when TRYON_STORAGE says
 * so (or, unset, when SUPABASE_URL is set), else the dev stack's folder under TRYON_DATA_DIR (.tryon).
 */
export function resultStoreFromEnv(env: Env): ResultStore {
  const storage = env.TRYON_STORAGE || (env.SUPABASE_URL ? 'supabase' : 'local')
  const settings = readSettings({ ...env, TRYON_STORAGE: storage })
  try {
    return resultStoreFrom(settings, env, () => {
      const root = storageRoot(resolve(env.TRYON_DATA_DIR || '.tryon'))
      // The dev stack makes this folder when it starts; without it this is the wrong folder, and an image "removed"
      // from it would stay where it is.
      if (!existsSync(root)) {
        throw new UsageError(
          `no results folder at ${root}: set TRYON_DATA_DIR to the dev stack's, ` +
            'or TRYON_STORAGE=supabase with SUPABASE_URL and a secret key',
        )
      }
      return createLocalStore({
        root,
        bucket: settings.bucket,
        baseUrl: () => settings.publicBaseUrl ?? `http://127.0.0.1:${env.PORT || 54321}`,
      })
    })
  } catch (error) {
    if (error instanceof StoreSettingsError) throw new UsageError(error.message)
    throw error
  }
}
