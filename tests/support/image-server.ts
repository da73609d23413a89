import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ImageServer {
  url(path: string): string
  /** Paths requested so far, in order. */
  requests: string[]
  close(): Promise<void>
}

export interface ServedFile {
  bytes: Uint8Array
  contentType?: string
  /** Awaited before answering: lets a test hold a request in flight. */
  before?: () => Promise<void>
  /** Answer 503 instead while this returns true. */
  unavailable?: () => boolean
}

/** A plain HTTP server on 127.0.0.1 serving fixed bytes per path; anything else is 404. */
export async function startImageServer(files: Record<string, ServedFile>): Promise<ImageServer> {
  const requests: string[] = []
  const server: Server = createServer(async (req, res) => {
    requests.push(req.url ?? '')
    const file = files[req.url ?? '']
    if (!file) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
      return
    }
    await file.before?.()
    if (file.unavailable?.()) {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('try later')
      return
    }
    res.writeHead(200, { 'content-type': file.contentType ?? 'application/octet-stream', 'content-length': file.bytes.byteLength })
    res.end(file.bytes)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}
