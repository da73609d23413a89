import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** Minimal image headers, hand-built and zero-padded: sniffing never decodes pixels. */
function padded(header: number[], size: number): Uint8Array {
  const bytes = new Uint8Array(Math.max(size, header.length))
  bytes.set(header)
  return bytes
}

const be32 = (n: number) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]
const be16 = (n: number) => [(n >>> 8) & 0xff, n & 0xff]
const le16 = (n: number) => [n & 0xff, (n >>> 8) & 0xff]
const le24 = (n: number) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff]
const le32 = (n: number) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff]
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0))

export const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]

export function png(width: number, height: number, size = 2048): Uint8Array {
  return padded([...PNG_SIGNATURE, ...be32(13), ...ascii('IHDR'), ...be32(width), ...be32(height), 8, 6, 0, 0, 0], size)
}

export function jpegSegment(marker: number, payload: number[]): number[] {
  return [0xff, marker, ...be16(payload.length + 2), ...payload]
}

export function sof(width: number, height: number, marker = 0xc0): number[] {
  return jpegSegment(marker, [8, ...be16(height), ...be16(width), 3, 1, 0x11, 0, 2, 0x11, 1, 3, 0x11, 1])
}

export const APP0_JFIF = jpegSegment(0xe0, [...ascii('JFIF'), 0, 1, 1, 0, 0, 1, 0, 1, 0, 0])

export function jpeg(width: number, height: number, size = 2048, options: { marker?: number; before?: number[] } = {}) {
  const before = options.before ?? APP0_JFIF
  return padded([0xff, 0xd8, ...before, ...sof(width, height, options.marker)], size)
}

function riff(chunk: string, data: number[], size: number): Uint8Array {
  const header = [...ascii('RIFF'), ...le32(size - 8), ...ascii('WEBP'), ...ascii(chunk), ...le32(data.length)]
  return padded([...header, ...data], size)
}

export function webpVp8(width: number, height: number, size = 2048): Uint8Array {
  return riff('VP8 ', [0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a, ...le16(width), ...le16(height)], size)
}

export function webpVp8l(width: number, height: number, size = 2048): Uint8Array {
  const bits = ((width - 1) & 0x3fff) | (((height - 1) & 0x3fff) << 14)
  return riff('VP8L', [0x2f, ...le32(bits >>> 0)], size)
}

export function webpVp8x(width: number, height: number, size = 2048): Uint8Array {
  return riff('VP8X', [0x10, 0, 0, 0, ...le24(width - 1), ...le24(height - 1)], size)
}

export const notImages: Record<string, Uint8Array> = {
  gif: padded(ascii('GIF89a\x40\x01\xf0\x00'), 2048),
  svg: padded(ascii('<svg xmlns="http://www.w3.org/2000/svg" width="640" height="480"></svg>'), 2048),
  bmp: padded([...ascii('BM'), ...le32(2048), 0, 0, 0, 0, ...le32(54), ...le32(40), ...le32(640), ...le32(480)], 2048),
  html: padded(ascii('<!doctype html><html><body>not an image</body></html>'), 2048),
}

export const base64Of = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')

export interface TestServer {
  url: string
  port: number
  /** Paths requested so far, in order. */
  requests: string[]
  /** Resolves when the response to the nth request (0-based) has closed, finished or not. */
  responseClosed: (index: number) => Promise<void>
  close: () => Promise<void>
}

/** A real HTTP server on 127.0.0.1 for fetch tests. */
export async function startServer(
  handler: (request: IncomingMessage, response: ServerResponse, server: TestServer) => void,
): Promise<TestServer> {
  const requests: string[] = []
  const closed: Promise<void>[] = []
  const server: Server = createServer((request, response) => {
    requests.push(request.url ?? '')
    closed.push(new Promise((resolve) => response.on('close', () => resolve())))
    handler(request, response, testServer)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  const testServer: TestServer = {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    responseClosed: (index) => closed[index] ?? Promise.reject(new Error(`no request #${index}`)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  return testServer
}
