import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Page } from 'playwright-core'
import { makeGarmentPhoto } from '../support/images.ts'
import type { Chromium } from './chromium.ts'

/** A product image inline: the service refuses to fetch loopback URLs (unless told), and a shop's CDN is not at hand. */
export const tshirtDataUri = `data:image/png;base64,${Buffer.from(makeGarmentPhoto({ kind: 'tshirt', color: [30, 90, 160], format: 'png' }).bytes).toString('base64')}`
/** A wedding gown with its train, for the bridal mode. */
export const gownDataUri = `data:image/png;base64,${Buffer.from(makeGarmentPhoto({ kind: 'gown-with-train', color: [245, 242, 236], format: 'png' }).bytes).toString('base64')}`

export interface ProductPages {
  /** http://localhost:<port>: another origin than the API's http://127.0.0.1:<port>, so every call is cross-origin. */
  origin: string
  /**
   * Opens a new page: the widget from `script`, one <tryon-button> with these attributes (`true` for a bare one);
   * `beforeGoto` prepares the page before it loads (e.g. installs Playwright's clock).
   */
  open(
    browser: Chromium,
    attributes: Record<string, string | true>,
    beforeGoto?: (page: Page) => Promise<void>,
  ): Promise<{ page: Page; errors: string[] }>
  close(): Promise<void>
}

const escapeAttribute = (value: string) => value.replaceAll('&', '&amp;').replaceAll('"', '&quot;')

/** A shop's product pages, as a shop would write them by hand: no playground, no `debug` unless asked for. */
export async function startProductPages(script: string): Promise<ProductPages> {
  const pages = new Map<string, string>()
  const server: Server = createServer((request, response) => {
    const html = pages.get(request.url ?? '')
    if (html === undefined) return response.writeHead(404).end()
    response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(html)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://localhost:${(server.address() as AddressInfo).port}`
  return {
    origin,
    async open(browser, attributes, beforeGoto) {
      const path = `/product-${pages.size}`
      const tag = Object.entries(attributes)
        .map(([name, value]) => (value === true ? ` ${name}` : ` ${name}="${escapeAttribute(value)}"`))
        .join('')
      pages.set(
        path,
        `<!doctype html><html lang="en"><meta charset="utf-8"><title>A product</title>` +
          `<script type="module" src="${script}"></script><h1>A product</h1><tryon-button${tag}></tryon-button>`,
      )
      const { page, errors } = await browser.newPage()
      await beforeGoto?.(page)
      await page.goto(`${origin}${path}`)
      await page.waitForFunction(() => customElements.get('tryon-button') !== undefined)
      return { page, errors }
    },
    async close() {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

/** What the dialog shows, as a shopper would read it (text of visible elements only). */
export const dialogText = (page: Page) => page.locator('tryon-button').getByRole('dialog').innerText()
