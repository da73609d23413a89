import { readFile } from 'node:fs/promises'
import { pathToFileURL } from 'node:url'
import { createSupabaseStore, storageKeyFrom } from '../shared/storage/supabase-store.ts'

/**
 * Uploads web/tryon-widget.js, the file the npm package holds, to a public Supabase Storage bucket under its
 * version: `<bucket>/tryon-widget/<version>/tryon-widget.js`, as `application/javascript`, cached for a year.
 * A version's URL never changes content: a second upload of the same file is a no-op, a different file under
 * an uploaded version is refused (bump "version" in web/package.json).
 *
 *   SUPABASE_URL=https://<ref>.supabase.co SUPABASE_SECRET_KEY=sb_secret_… npm run deploy:widget
 */

/** Created public by supabase/migrations/20261123000600_storage_buckets.sql. */
export const ASSETS_BUCKET = 'tryon-assets'
export const WIDGET_CONTENT_TYPE = 'application/javascript'

const WIDGET_FILE = new URL('../web/tryon-widget.js', import.meta.url)
const PACKAGE_FILE = new URL('../web/package.json', import.meta.url)
const VERSION = /^\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?$/

export interface Widget {
  version: string
  bytes: Uint8Array
}

export interface DeployedWidget {
  version: string
  bucket: string
  path: string
  url: string
  size: number
  /** The same file was already there: nothing was written. */
  unchanged: boolean
}

export const widgetPath = (version: string) => `tryon-widget/${version}/tryon-widget.js`

/** The widget as the npm package publishes it: web/tryon-widget.js under web/package.json's version. */
export async function readWidget(): Promise<Widget> {
  const { version } = JSON.parse(await readFile(PACKAGE_FILE, 'utf8')) as { version?: unknown }
  if (typeof version !== 'string' || !VERSION.test(version)) throw new Error(`web/package.json has no usable version: ${String(version)}`)
  return { version, bytes: new Uint8Array(await readFile(WIDGET_FILE)) }
}

export async function deployWidget(options: { url: string; key: string; bucket?: string; fetch?: typeof fetch }): Promise<DeployedWidget> {
  const bucket = options.bucket || ASSETS_BUCKET
  const { version, bytes } = await readWidget()
  const path = widgetPath(version)
  const deployed = { version, bucket, path, size: bytes.byteLength }
  const store = createSupabaseStore({ url: options.url, key: options.key, bucket, fetch: options.fetch })
  try {
    return { ...deployed, url: await store.put(path, bytes, WIDGET_CONTENT_TYPE), unchanged: false }
  } catch (error) {
    const cause = error instanceof Error ? error.cause : undefined
    if (storageStatus(cause) === 404) {
      throw new Error(
        `Supabase Storage has no bucket ${bucket}: run \`supabase db push\` (it creates ${ASSETS_BUCKET}), or create it public`,
        { cause },
      )
    }
    if (storageStatus(cause) !== 409) throw error
  }

  // The version is already uploaded (the upload never overwrites): fine only if it is this very file.
  const url = `${options.url.replace(/\/+$/, '')}/storage/v1/object/public/${bucket}/${path}`
  const existing = await (options.fetch ?? fetch)(url)
  if (existing.ok && sameBytes(new Uint8Array(await existing.arrayBuffer()), bytes)) return { ...deployed, url, unchanged: true }
  throw new Error(
    `${bucket}/${path} already holds another tryon-widget.js: a version's URL never changes; bump "version" in web/package.json`,
  )
}

/** Storage answers some errors as HTTP 400 with the real status in the body's `statusCode` (a string). */
function storageStatus(error: unknown): number | undefined {
  if (!error || typeof error !== 'object') return undefined
  const { status, statusCode } = error as { status?: unknown; statusCode?: unknown }
  const fromBody = Number(statusCode)
  return Number.isInteger(fromBody) && fromBody > 0 ? fromBody : typeof status === 'number' ? status : undefined
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && a.every((byte, i) => byte === b[i])
}

async function main(): Promise<number> {
  const url = process.env.SUPABASE_URL
  const key = storageKeyFrom(process.env)
  if (!url || !key) {
    console.error('Set SUPABASE_URL (https://<project-ref>.supabase.co) and SUPABASE_SECRET_KEY (or SUPABASE_SERVICE_ROLE_KEY).')
    return 1
  }
  try {
    const deployed = await deployWidget({ url, key, bucket: process.env.TRYON_ASSETS_BUCKET })
    const what = deployed.unchanged ? 'Already uploaded, unchanged' : `Uploaded (${deployed.size} bytes, ${WIDGET_CONTENT_TYPE})`
    console.log(`${what}: tryon-widget ${deployed.version}\n${deployed.url}\n\n<script type="module" src="${deployed.url}"></script>`)
    return 0
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error))
    return 1
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = await main()
