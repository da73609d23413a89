import { constants } from 'node:fs'
import { access, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type BrowserContext, type Page } from 'playwright-core'

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium'

export const ARTIFACTS_DIR = fileURLToPath(new URL('../../test-artifacts/browser/', import.meta.url))

export interface Chromium {
  context: BrowserContext
  /** A fresh page whose uncaught errors are collected in `errors`. */
  newPage(): Promise<{ page: Page; errors: string[] }>
  close(): Promise<void>
}

/**
 * Headless Chromium on a new, empty profile, with nothing running in the background.
 * `hostRules` maps host names to addresses (`--host-resolver-rules`, e.g. `MAP shop.example.com 127.0.0.1`);
 * a page on such a host is served with a test certificate, which `hostRules` makes Chromium accept.
 */
export async function launchChromium(options: { hostRules?: string } = {}): Promise<Chromium> {
  await access(CHROMIUM_PATH, constants.X_OK).catch(() => {
    throw new Error(`No Chromium at ${CHROMIUM_PATH}: run \`apt-get install chromium\` (.ci/run does) or set CHROMIUM_PATH`)
  })
  const profile = await mkdtemp(join(tmpdir(), 'tryon-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    viewport: { width: 1280, height: 900 },
    ignoreHTTPSErrors: Boolean(options.hostRules),
    args: [
      ...(options.hostRules ? [`--host-resolver-rules=${options.hostRules}`] : []),
      '--no-sandbox', // CI runs as root
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  return {
    context,
    async newPage() {
      const page = await context.newPage()
      const errors: string[] = []
      page.on('pageerror', (error) => errors.push(error.message))
      return { page, errors }
    },
    async close() {
      await context.close()
      await rm(profile, { recursive: true, force: true })
    },
  }
}

/** Saves a full-page screenshot under test-artifacts/browser/ and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(ARTIFACTS_DIR, { recursive: true })
  const path = join(ARTIFACTS_DIR, `${name}.png`)
  await page.screenshot({ path, fullPage: true })
  return path
}
