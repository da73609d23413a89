// `npm start`: the whole service in one Node process (DESIGN.md §5).
import { relative, resolve } from 'node:path'
import { demoBanner, ensureDemoKey, writeDemoRequest } from './demo.ts'
import { startDevStack } from './stack.ts'

const env = process.env
const dataDir = resolve(env.TRYON_DATA_DIR || '.tryon')

const stack = await startDevStack({
  env,
  dataDir,
  host: env.HOST || '127.0.0.1',
  port: Number(env.PORT || 54321),
  dbPort: Number(env.DB_PORT || 54322),
  databaseUrl: env.DATABASE_URL || undefined,
})

const key = await ensureDemoKey(stack.sql, dataDir)
const requestFile = await writeDemoRequest(dataDir)
const shownFile = relative(process.cwd(), requestFile).startsWith('..') ? requestFile : relative(process.cwd(), requestFile)
console.log(demoBanner({ functionUrl: stack.functionUrl, key, requestFile: shownFile, databaseUrl: stack.databaseUrl }))

let stopping = false
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    if (stopping) return
    stopping = true
    await stack.stop()
    process.exit(0)
  })
}
