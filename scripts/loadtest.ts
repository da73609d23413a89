// `npm run loadtest`: a soak of mixed traffic against the dev stack on a real Postgres, then every billing
// invariant checked account by account. Prints a summary table; exits non-zero when an invariant fails.
//   LOADTEST_SECONDS (default 30), LOADTEST_CONCURRENCY (default 64), LOADTEST_ACCOUNTS (default 40)
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { encodeBase64 } from '../shared/images/base64.ts'
import { startDevStack } from '../devstack/stack.ts'
import { createKey, createTestDatabase, ledgerCheck, wellFormedUnknownKey, type CreatedKey } from '../tests/support/database.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../tests/support/images.ts'

const seconds = Number(process.env.LOADTEST_SECONDS ?? 30)
const concurrency = Number(process.env.LOADTEST_CONCURRENCY ?? 64)
const accountCount = Number(process.env.LOADTEST_ACCOUNTS ?? 40)

const person = encodeBase64(makeShopperPhoto({ width: 200, height: 320, format: 'jpeg' }).bytes)
const garment = encodeBase64(makeGarmentPhoto({ kind: 'tshirt', color: [40, 90, 170], width: 200, height: 200, format: 'png' }).bytes)
const gown = encodeBase64(makeGarmentPhoto({ kind: 'gown-with-train', color: [242, 236, 224], width: 200, height: 200, transparentBackground: true }).bytes)

interface Kind {
  name: string
  body: Record<string, unknown>
  scenario?: string
  /** Statuses this kind may get: 5xx only where the scenario injects them. */
  expected: number[]
  badKey?: boolean
  idempotent?: boolean
}

const wedding = { userPhoto: person, productImage: gown, productType: 'wedding-dress' }
const standard = { userPhoto: person, productImage: garment }
const kinds: Kind[] = [
  { name: 'standard', body: standard, expected: [200, 402] },
  { name: 'standard, idempotent retry', body: standard, expected: [200, 402, 409], idempotent: true },
  { name: 'wedding, local verdict', body: wedding, expected: [200, 402] },
  { name: 'wedding, score low', body: wedding, scenario: 'train_score_low', expected: [200, 402] },
  { name: 'wedding, score unavailable', body: wedding, scenario: 'train_score_unavailable', expected: [200, 402] },
  { name: 'wedding, no pre-treatment', body: wedding, scenario: 'train_pretreatment_unavailable', expected: [200, 402] },
  { name: 'wedding, pre-processing crash', body: wedding, scenario: 'bridal_preprocessing_crash', expected: [503, 402] },
  { name: 'content rejected', body: standard, scenario: 'content_rejected', expected: [422, 402] },
  { name: 'generation failed', body: standard, scenario: 'generation_failed', expected: [500, 402] },
  { name: 'bad input', body: { userPhoto: 'AAAA', productImage: garment }, expected: [400] },
  { name: 'wrong key', body: standard, expected: [401], badKey: true },
]

const db = await createTestDatabase('postgres')
const dataDir = await mkdtemp(join(tmpdir(), 'tryon-loadtest-'))
const stack = await startDevStack({ env: {}, dataDir, port: 0, databaseUrl: db.url, log: () => {} })
const accounts: { key: CreatedKey; initial: number; charged: number; idempotencyKeys: string[] }[] = []
for (let i = 0; i < accountCount; i++) {
  const initial = 5 + Math.floor(Math.random() * 60)
  accounts.push({ key: await createKey(db.sql, { credits: initial }), initial, charged: 0, idempotencyKeys: [] })
}

const counts = new Map<string, Map<number, number>>()
const latencies: number[] = []
const violations: string[] = []
let requests = 0
let replays = 0
const endAt = Date.now() + seconds * 1000

async function worker(): Promise<void> {
  while (Date.now() < endAt) {
    const kind = kinds[Math.floor(Math.random() * kinds.length)]
    const account = accounts[Math.floor(Math.random() * accounts.length)]
    const headers: Record<string, string> = { 'Content-Type': 'application/json', 'X-API-Key': kind.badKey ? wellFormedUnknownKey() : account.key.apiKey }
    if (kind.scenario) headers['X-Tryon-Scenario'] = kind.scenario
    if (kind.idempotent) {
      // Half the time a fresh key, half the time a retry of one already used on this account.
      const reuse = account.idempotencyKeys.length > 0 && Math.random() < 0.5
      const key = reuse ? account.idempotencyKeys[Math.floor(Math.random() * account.idempotencyKeys.length)] : crypto.randomUUID()
      if (!reuse) account.idempotencyKeys.push(key)
      headers['Idempotency-Key'] = key
    }
    const started = performance.now()
    let status = 0
    try {
      const response = await fetch(stack.functionUrl, { method: 'POST', headers, body: JSON.stringify(kind.body) })
      status = response.status
      const body = (await response.json()) as { creditsCharged?: number; success?: boolean; errorCode?: string; error?: string }
      if (status === 200) {
        if (response.headers.get('idempotent-replayed') === 'true') replays++
        else account.charged += body.creditsCharged ?? NaN
      } else if (body.success !== false || typeof body.error !== 'string' || typeof body.errorCode !== 'string') {
        violations.push(`${kind.name}: error body of the wrong shape: ${JSON.stringify(body)}`)
      }
    } catch (error) {
      violations.push(`${kind.name}: request failed: ${String(error)}`)
    }
    latencies.push(performance.now() - started)
    requests++
    if (!kind.expected.includes(status)) violations.push(`${kind.name}: unexpected status ${status}`)
    const byStatus = counts.get(kind.name) ?? new Map<number, number>()
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1)
    counts.set(kind.name, byStatus)
  }
}

const started = performance.now()
await Promise.all(Array.from({ length: concurrency }, worker))
const elapsed = (performance.now() - started) / 1000

// Every request has answered: nothing may still be reserved, so the sweeper has nothing to return.
const swept = await stack.deps.billing.sweep(0)
if (swept !== 0) violations.push(`the sweeper found ${swept} reservations left pending`)
let exact = 0
for (const account of accounts) {
  const check = await ledgerCheck(db.sql, account.key.accountId)
  const predicted = account.initial - account.charged
  const ok = check.balance === predicted && check.ledgerBalance === check.balance && check.reserved === 0 && check.ledgerReserved === 0 && check.heldByTryOns === 0
  if (ok) exact++
  else violations.push(`account ${account.key.accountId}: ${JSON.stringify(check)}, predicted balance ${predicted}`)
}

latencies.sort((a, b) => a - b)
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))].toFixed(0)
const statuses = [...new Set([...counts.values()].flatMap((m) => [...m.keys()]))].sort()
console.log(`\nSoak: ${requests} requests in ${elapsed.toFixed(1)} s (${(requests / elapsed).toFixed(0)}/s) at concurrency ${concurrency}, ${accountCount} accounts`)
console.log(`latency p50 ${pct(50)} ms, p99 ${pct(99)} ms; idempotent replays ${replays}\n`)
console.log(['kind'.padEnd(32), ...statuses.map((s) => String(s).padStart(6))].join(''))
for (const kind of kinds) {
  const byStatus = counts.get(kind.name) ?? new Map()
  console.log([kind.name.padEnd(32), ...statuses.map((s) => String(byStatus.get(s) ?? '').padStart(6))].join(''))
}
console.log(`\naccounts whose balance equals their ledger and the responses' charges: ${exact}/${accounts.length}`)
console.log(`reservations left for the sweeper: ${swept}`)
console.log(violations.length === 0 ? 'invariants: all hold' : `VIOLATIONS (${violations.length}):\n  ${[...new Set(violations)].slice(0, 20).join('\n  ')}`)

await stack.stop()
await db.close()
await rm(dataDir, { recursive: true, force: true })
process.exit(violations.length === 0 ? 0 : 1)
