import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface StorageRequest {
  method: string
  path: string
  headers: IncomingHttpHeaders
  body: Buffer
}

export interface StoredObject {
  bytes: Buffer
  contentType: string
  cacheControl: string
}

export interface FakeStorage {
  /** What a function gets as SUPABASE_URL. */
  url: string
  /** The key it accepts, in `apikey` and as the bearer token. */
  key: string
  requests: StorageRequest[]
  /** Objects by `<bucket>/<path>`. */
  objects: Map<string, StoredObject>
  /** Answer uploads with this status (e.g. 500) until set back to null. */
  failUploadsWith: number | null
  close(): Promise<void>
}

const json = (status: number, body: unknown) => ({ status, body: JSON.stringify(body) })

/**
 * Supabase Storage's REST API as supabase-js calls it, on 127.0.0.1: `POST /storage/v1/object/<bucket>/<path>`
 * uploads (raw body, `x-upsert`, `cache-control`, `content-type`; `{ Key, Id }` back; a second upload to the
 * same path without upsert is refused like Storage does), `DELETE /storage/v1/object/<bucket>` with
 * `{ prefixes: [paths] }` removes objects (answering the list of those it removed; a missing one is left out), and
 * `GET /storage/v1/object/public/<bucket>/<path>` serves a public object. Errors use Storage's body `{ statusCode, error, message }`.
 */
export async function startFakeStorage(options: { buckets?: string[]; key?: string } = {}): Promise<FakeStorage> {
  const buckets = new Set(options.buckets ?? ['tryon-results'])
  const key = options.key ?? 'sb_secret_fake-storage-key'
  const requests: StorageRequest[] = []
  const objects = new Map<string, StoredObject>()
  const state = { failUploadsWith: null as number | null }

  const handle = (method: string, path: string, headers: IncomingHttpHeaders, body: Buffer) => {
    const publicObject = /^\/storage\/v1\/object\/public\/([^/]+)\/(.+)$/.exec(path)
    if (publicObject && (method === 'GET' || method === 'HEAD')) {
      const object = objects.get(`${publicObject[1]}/${decodeURIComponent(publicObject[2])}`)
      if (!object) return json(400, { statusCode: '404', error: 'not_found', message: 'Object not found' })
      // Public objects are readable from any page, as a module script from a shop needs: Supabase's gateway runs
      // Kong's cors plugin (default origin *) on /storage/v1/ (supabase/cli internal/start/templates/kong.yml).
      const cors = { 'access-control-allow-origin': '*' }
      return {
        status: 200,
        body: object.bytes,
        headers: { 'content-type': object.contentType, 'cache-control': object.cacheControl, ...cors },
      }
    }

    const removal = /^\/storage\/v1\/object\/([^/]+)$/.exec(path)
    if (removal && method === 'DELETE') {
      if (headers.apikey !== key || headers.authorization !== `Bearer ${key}`) {
        return json(400, { statusCode: '403', error: 'Unauthorized', message: 'Invalid Compact JWS' })
      }
      const bucket = removal[1]
      if (!buckets.has(bucket)) return json(400, { statusCode: '404', error: 'Bucket not found', message: 'Bucket not found' })
      const { prefixes } = JSON.parse(body.toString('utf8')) as { prefixes: string[] }
      const removed = prefixes.filter((name) => objects.delete(`${bucket}/${name}`))
      return json(
        200,
        removed.map((name) => ({ name, bucket_id: bucket, id: crypto.randomUUID() })),
      )
    }

    const upload = /^\/storage\/v1\/object\/([^/]+)\/(.+)$/.exec(path)
    if (upload && method === 'POST') {
      if (headers.apikey !== key || headers.authorization !== `Bearer ${key}`) {
        return json(400, { statusCode: '403', error: 'Unauthorized', message: 'Invalid Compact JWS' })
      }
      if (state.failUploadsWith !== null) {
        return json(state.failUploadsWith, {
          statusCode: String(state.failUploadsWith),
          error: 'internal',
          message: 'Internal Server Error',
        })
      }
      const [, bucket, encodedPath] = upload
      if (!buckets.has(bucket)) return json(400, { statusCode: '404', error: 'Bucket not found', message: 'Bucket not found' })
      const objectKey = `${bucket}/${decodeURIComponent(encodedPath)}`
      if (objects.has(objectKey) && headers['x-upsert'] !== 'true') {
        return json(400, { statusCode: '409', error: 'Duplicate', message: 'The resource already exists' })
      }
      objects.set(objectKey, {
        bytes: body,
        contentType: String(headers['content-type'] ?? 'application/octet-stream'),
        cacheControl: String(headers['cache-control'] ?? 'no-cache'),
      })
      return json(200, { Key: objectKey, Id: crypto.randomUUID() })
    }
    return json(404, { statusCode: '404', error: 'not_found', message: 'Route not found' })
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const path = new URL(req.url ?? '/', 'http://storage').pathname
      requests.push({ method: req.method ?? '', path, headers: req.headers, body })
      const answer = handle(req.method ?? '', path, req.headers, body)
      const headers = 'headers' in answer && answer.headers ? answer.headers : { 'content-type': 'application/json' }
      res.writeHead(answer.status, headers).end(answer.body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}`,
    key,
    requests,
    objects,
    get failUploadsWith() {
      return state.failUploadsWith
    },
    set failUploadsWith(status) {
      state.failUploadsWith = status
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
