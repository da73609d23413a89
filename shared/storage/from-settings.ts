import type { Env, Settings } from '../config.ts'
import type { ResultStore } from './result-store.ts'
import { createSupabaseStore, storageKeyFrom } from './supabase-store.ts'

/** A setting that names a store this runtime cannot build: the entry stops with this message. */
export class StoreSettingsError extends Error {}

/** Builds the on-disk store (adapters/local-store.ts) where the runtime has a disk: the function under Deno, the CLI. */
export type LocalStoreMaker = (settings: Settings, env: Env) => ResultStore

/**
 * The result store TRYON_STORAGE names: Supabase Storage, or (`local`) files on disk through `localStore`, which a
 * runtime without a disk (the Cloudflare Worker) does not pass. One choice and one set of messages for the function,
 * the Worker and the admin CLI.
 */
export function resultStoreFrom(settings: Settings, env: Env, localStore?: LocalStoreMaker): ResultStore {
  if (settings.storage === 'supabase') {
    const key = storageKeyFrom(env)
    if (!env.SUPABASE_URL || !key) {
      throw new StoreSettingsError(
        'TRYON_STORAGE=supabase needs SUPABASE_URL and a secret key ' +
          '(SUPABASE_SECRET_KEYS, SUPABASE_SECRET_KEY or SUPABASE_SERVICE_ROLE_KEY)',
      )
    }
    return createSupabaseStore({ url: env.SUPABASE_URL, key, bucket: settings.bucket, publicBaseUrl: settings.publicBaseUrl })
  }
  if (!localStore) {
    throw new StoreSettingsError(
      'TRYON_STORAGE=local keeps results on a disk this runtime does not have: ' +
        'set TRYON_STORAGE=supabase with SUPABASE_URL and a secret key',
    )
  }
  return localStore(settings, env)
}
