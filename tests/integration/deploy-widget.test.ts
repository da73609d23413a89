import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ASSETS_BUCKET, deployWidget, readWidget, widgetPath } from '../../scripts/deploy-widget.ts'
import { startFakeStorage, type FakeStorage } from '../support/fake-storage.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** `npm run deploy:widget` as a person runs it, with only the given environment. */
async function runDeployScript(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url))
  try {
    const { stdout, stderr } = await promisify(execFile)(tsx, ['scripts/deploy-widget.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
    })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string }
    return { code, stdout, stderr }
  }
}

describe('deploying the widget to a public Storage bucket', () => {
  let storage: FakeStorage
  beforeEach(async () => {
    storage = await startFakeStorage({ buckets: [ASSETS_BUCKET] })
  })
  afterEach(() => storage?.close())

  const uploads = () => storage.requests.filter((request) => request.method === 'POST')

  it('uploads the npm package file under its version as application/javascript, and the public URL serves it', async () => {
    const { version, bytes } = await readWidget()
    expect(version).toBe(JSON.parse(await readFile(new URL('../../web/package.json', import.meta.url), 'utf8')).version)
    const result = await runDeployScript({ SUPABASE_URL: storage.url, SUPABASE_SECRET_KEY: storage.key })

    const url = `${storage.url}/storage/v1/object/public/tryon-assets/tryon-widget/${version}/tryon-widget.js`
    expect(result).toMatchObject({ code: 0, stderr: '' })
    expect(result.stdout).toContain(`Uploaded (${bytes.byteLength} bytes, application/javascript): tryon-widget ${version}\n${url}\n`)
    expect(result.stdout).toContain(`<script type="module" src="${url}"></script>`)

    const [upload] = uploads()
    expect(uploads()).toHaveLength(1)
    expect(upload.path).toBe(`/storage/v1/object/tryon-assets/tryon-widget/${version}/tryon-widget.js`)
    expect(upload.headers).toMatchObject({
      'content-type': 'application/javascript',
      'cache-control': 'max-age=31536000',
      'x-upsert': 'false',
    })
    const stored = storage.objects.get(`tryon-assets/${widgetPath(version)}`)!
    expect(Buffer.compare(stored.bytes, Buffer.from(bytes))).toBe(0)
    expect(Buffer.compare(stored.bytes, await readFile(new URL('../../web/tryon-widget.js', import.meta.url)))).toBe(0)

    const served = await fetch(url)
    expect(served.status).toBe(200)
    expect(served.headers.get('content-type')).toBe('application/javascript')
    expect(served.headers.get('access-control-allow-origin')).toBe('*')
    expect(Buffer.compare(Buffer.from(await served.arrayBuffer()), Buffer.from(bytes))).toBe(0)
  })

  it('leaves an uploaded version as it is when the same file is deployed again', async () => {
    const first = await deployWidget({ url: storage.url, key: storage.key })
    const second = await deployWidget({ url: storage.url, key: storage.key })
    expect(first).toMatchObject({ unchanged: false, bucket: 'tryon-assets' })
    expect(second).toEqual({ ...first, unchanged: true })
    expect(uploads()).toHaveLength(2)
    expect(uploads().every((request) => request.headers['x-upsert'] === 'false')).toBe(true)
  })

  it('refuses to replace an uploaded version with another file, and leaves it untouched', async () => {
    const { version } = await readWidget()
    const other = { bytes: Buffer.from('export const old = 1\n'), contentType: 'application/javascript', cacheControl: 'max-age=31536000' }
    storage.objects.set(`tryon-assets/${widgetPath(version)}`, other)
    await expect(deployWidget({ url: storage.url, key: storage.key })).rejects.toThrow(
      `tryon-assets/tryon-widget/${version}/tryon-widget.js already holds another tryon-widget.js: a version's URL never changes; bump "version" in web/package.json`,
    )
    expect(storage.objects.get(`tryon-assets/${widgetPath(version)}`)).toBe(other)
  })

  it('says how to create the bucket when it does not exist', async () => {
    const result = await runDeployScript({
      SUPABASE_URL: storage.url,
      SUPABASE_SECRET_KEY: storage.key,
      TRYON_ASSETS_BUCKET: 'missing-bucket',
    })
    expect(result.code).toBe(1)
    expect(result.stderr.trim()).toBe(
      'Supabase Storage has no bucket missing-bucket: run `supabase db push` (it creates tryon-assets), or create it public',
    )
    expect(storage.objects.size).toBe(0)
  })

  it('fails with the wrong key, and names the variables it needs when they are missing', async () => {
    await expect(deployWidget({ url: storage.url, key: 'sb_secret_wrong' })).rejects.toThrow(
      /Supabase Storage refused tryon-assets\/tryon-widget\//,
    )
    expect(storage.objects.size).toBe(0)
    const result = await runDeployScript({ SUPABASE_URL: storage.url })
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: 'Set SUPABASE_URL (https://<project-ref>.supabase.co) and SUPABASE_SECRET_KEY (or SUPABASE_SERVICE_ROLE_KEY).\n',
    })
  })
})
