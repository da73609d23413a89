import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Sql } from 'postgres'
import { encodeBase64 } from '../shared/images/base64.ts'
import { demoBrideShopperPhoto, demoGarmentPhoto, demoGownPhoto, demoShopperPhoto } from './sample-images.ts'

export interface DemoKey {
  apiKey: string
  keyId: string
  credits: number
}

const DEMO_CREDITS = 100

/**
 * The demo test key is created on first start and kept (plaintext, dev only) in the data
 * directory, so every start prints the same key; a reset database gets a new one.
 */
export async function ensureDemoKey(sql: Sql, dataDir: string): Promise<DemoKey & { created: boolean }> {
  const file = join(dataDir, 'demo-key.json')
  const saved = await readFile(file, 'utf8').then(
    (text) => JSON.parse(text) as DemoKey,
    () => null,
  )
  if (saved) {
    const [row] = await sql`
      select a.balance::float8 as credits from tryon.api_keys k join tryon.accounts a on a.id = k.account_id
       where k.id = ${saved.keyId}`
    if (row) return { ...saved, credits: row.credits, created: false }
  }
  const [row] = await sql`
    select api_key, key_id, credits::float8 as credits
      from tryon.create_api_key(${DEMO_CREDITS}, 'test', '{}'::text[], true, 'dev stack demo', null)`
  const key: DemoKey = { apiKey: row.api_key, keyId: row.key_id, credits: row.credits }
  await mkdir(dataDir, { recursive: true })
  await writeFile(file, JSON.stringify({ apiKey: key.apiKey, keyId: key.keyId }), { mode: 0o600 })
  return { ...key, created: true }
}

export interface DemoRequests {
  standard: string
  wedding: string
}

/** Ready-to-send request bodies (generated photos as data URIs) for the printed curls. */
export async function writeDemoRequests(dataDir: string): Promise<DemoRequests> {
  const files = { standard: join(dataDir, 'demo-request.json'), wedding: join(dataDir, 'demo-wedding-request.json') }
  const dataUri = (type: string, bytes: Uint8Array) => `data:image/${type};base64,${encodeBase64(bytes)}`
  await writeFile(
    files.standard,
    JSON.stringify({
      userPhoto: dataUri('jpeg', demoShopperPhoto()),
      productImage: dataUri('png', demoGarmentPhoto()),
      clothingType: 'T-shirt',
    }),
  )
  await writeFile(
    files.wedding,
    JSON.stringify({
      userPhoto: dataUri('jpeg', demoBrideShopperPhoto()),
      productImage: dataUri('png', demoGownPhoto()),
      productType: 'wedding-dress',
    }),
  )
  return files
}

export function demoBanner(options: {
  functionUrl: string
  key: DemoKey & { created: boolean }
  requests: DemoRequests
  databaseUrl: string
}): string {
  const { functionUrl, key, requests, databaseUrl } = options
  const curl = (file: string) => `curl -sS ${functionUrl} -H 'X-API-Key: ${key.apiKey}' -H 'Content-Type: application/json' -d @${file}`
  return [
    '',
    `Try-on API listening at ${functionUrl}`,
    `Database: ${databaseUrl}`,
    '',
    `Demo test key (${key.created ? 'new' : 'kept from an earlier start'}, ${key.credits} credits): ${key.apiKey}`,
    `Key id (for the admin CLI): ${key.keyId}`,
    '',
    'Try it (a T-shirt, 1 credit):',
    curl(requests.standard),
    '',
    'A wedding dress with its train (2 credits, refunded if the train does not come out):',
    curl(requests.wedding),
    '',
  ].join('\n')
}
