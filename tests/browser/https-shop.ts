import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import type { RequestListener } from 'node:http'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

/** The shop's host name in the browser tests; Chromium resolves it to loopback through `SHOP_HOST_RULES`. */
export const SHOP_HOST = 'shop.example.com'
export const SHOP_HOST_RULES = `MAP ${SHOP_HOST} 127.0.0.1`

export interface HttpsShop {
  /** `https://shop.example.com:<port>`: the Origin its pages send, the form keys are restricted with. */
  origin: string
  close(): Promise<void>
}

/**
 * A shop served over HTTPS, because keys can only be restricted to https:// origins. The server listens on
 * 127.0.0.1, so Chromium sees a loopback page calling a loopback API: no Local Network Access prompt, and every
 * CORS preflight is real (intercepting requests with Playwright's page.route would answer preflights itself).
 * The certificate is a throwaway one made by openssl for this run.
 */
export async function startHttpsShop(handler: RequestListener): Promise<HttpsShop> {
  const dir = await mkdtemp(join(tmpdir(), 'tryon-shop-tls-'))
  try {
    await promisify(execFile)('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      `/CN=${SHOP_HOST}`,
      '-addext',
      `subjectAltName=DNS:${SHOP_HOST}`,
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ])
  } catch (error) {
    await rm(dir, { recursive: true, force: true })
    throw new Error('The browser tests make a test certificate with openssl: `apt-get install openssl`', { cause: error })
  }
  const [key, cert] = await Promise.all([readFile(join(dir, 'key.pem')), readFile(join(dir, 'cert.pem'))])
  await rm(dir, { recursive: true, force: true })
  const server = createServer({ key, cert }, handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    origin: `https://${SHOP_HOST}:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
