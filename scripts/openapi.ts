// `npm run openapi`: writes openapi.json from the routes the handler serves (shared/http/tryon.ts, shared/http/share.ts).
import { writeFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { createApp } from '../shared/app.ts'
import { connectDatabase } from '../shared/billing/store.ts'
import { readSettings } from '../shared/config.ts'
import { openApiText } from '../shared/http/openapi.ts'
import { createDeps } from '../shared/service.ts'

export const OPENAPI_FILE = fileURLToPath(new URL('../openapi.json', import.meta.url))

/** The app as an entry point builds it; it serves nothing here, so its database and store are never reached. */
export function documentedApp() {
  const settings = readSettings({ TRYON_STORAGE: 'local', TRYON_CLIENT_ADDRESS_SECRET: 'documentation-only-never-serves-requests' })
  const unreachable = () => Promise.reject(new Error('the documented app serves no requests'))
  const store = { put: unreachable, remove: unreachable, urlOf: () => '' }
  return createApp(createDeps(settings, { sql: connectDatabase('postgres://127.0.0.1:1/unused'), store, fetch, log: () => {} }))
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(OPENAPI_FILE, openApiText(documentedApp()))
  console.log(`wrote ${OPENAPI_FILE}`)
}
