// `npm start`: the whole service in one Node process (docs/deployment.md, "Dev stack").
import { relative, resolve } from 'node:path'
import { demoBanner, ensureDemoKey, writeDemoRequests } from './demo.ts'
import { MigrationHistoryError } from './migrations.ts'
import { startDevStack } from './stack.ts'

const env = process.env
const dataDir = resolve(env.TRYON_DATA_DIR || '.tryon')

let playgroundKey: string | undefined
const stack = await startDevStack({
  env,
  dataDir,
  host: env.HOST || '127.0.0.1',
  port: Number(env.PORT || 54321),
  dbPort: Number(env.DB_PORT || 54322),
  databaseUrl: env.DATABASE_URL || undefined,
  playgroundKey: () => playgroundKey,
}).catch((error) => {
  if (!(error instanceof MigrationHistoryError)) throw error
  console.error(error.message)
  process.exit(1)
})

const key = await ensureDemoKey(stack.sql, dataDir)
playgroundKey = key.apiKey
const files = await writeDemoRequests(dataDir)
const shown = (file: string) => (relative(process.cwd(), file).startsWith('..') ? file : relative(process.cwd(), file))
const requests = { standard: shown(files.standard), wedding: shown(files.wedding) }
console.log(demoBanner({ functionUrl: stack.functionUrl, key, requests, databaseUrl: stack.databaseUrl }))
console.log(`Playground (widget + demo key): ${stack.url}/\nAPI reference: ${stack.url}/docs (OpenAPI: ${stack.url}/openapi.json)\n`)

let stopping = false
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    if (stopping) return
    stopping = true
    await stack.stop()
    process.exit(0)
  })
}
