import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ImageServer {
  url(path: string): string
  /** Paths requested so far, in order. */
  requests: string[]
  close(): Promise<void>
}

/** A plain HTTP server on 127.0.0.1 serving fixed bytes per path; anything else is 404. */
export async function startImageServer(files: Record<string, { bytes: Uint8Array; contentType?: string }>): Promise<ImageServer> {
  const requests: string[] = []
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '')
    const file = files[req.url ?? '']
    if (!file) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
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
