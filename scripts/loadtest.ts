// `npm run loadtest`: a soak of mixed traffic against the dev stack on a real Postgres, then every billing
// invariant checked account by account. Prints a summary table; exits non-zero when an invariant fails.
// Alongside, an attacker who copied a storefront's browser key hammers it from one address (forging the shop's
// Origin), while shoppers use the same key from their own addresses: the key's limits must hold the attacker to
// them, and every balance, the browser key's included, must still be exact.
//   LOADTEST_SECONDS (default 30), LOADTEST_CONCURRENCY (default 64), LOADTEST_ACCOUNTS (default 40),
//   LOADTEST_ATTACKERS (connections from the attacker's one address, default 16), LOADTEST_SHOPPERS (default 4)
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, fetch as fetchFrom } from 'undici'
import { encodeBase64 } from '../shared/images/base64.ts'
import { startDevStack } from '../devstack/stack.ts'
import { createKey, createTestDatabase, ledgerCheck, wellFormedUnknownKey, type CreatedKey } from '../tests/support/database.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../tests/support/images.ts'

const seconds = Number(process.env.LOADTEST_SECONDS ?? 30)
const concurrency = Number(process.env.LOADTEST_CONCURRENCY ?? 64)
const accountCount = Number(process.env.LOADTEST_ACCOUNTS ?? 40)
const attackerCount = Number(process.env.LOADTEST_ATTACKERS ?? 16)
const shopperCount = Number(process.env.LOADTEST_SHOPPERS ?? 4)

const person = encodeBase64(makeShopperPhoto({ width: 200, height: 320, format: 'jpeg' }).bytes)
const garment = encodeBase64(makeGarmentPhoto({ kind: 'tshirt', color: [40, 90, 170], width: 200, height: 200, format: 'png' }).bytes)
const gown = encodeBase64(
  makeGarmentPhoto({ kind: 'gown-with-train', color: [242, 236, 224], width: 200, height: 200, transparentBackground: true }).bytes,
)

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
  // 402 once the account is empty: the balance is checked before the images are read.
  { name: 'bad input', body: { userPhoto: 'AAAA', productImage: garment }, expected: [400, 402] },
  { name: 'wrong key', body: standard, expected: [401], badKey: true },
]

const db = await createTestDatabase('postgres')
const dataDir = await mkdtemp(join(tmpdir(), 'tryon-loadtest-'))
// Every connection may wait for the local engine: the soak checks the accounting, not the admission limit (503s).
const stack = await startDevStack({ env: { TRYON_LOCAL_QUEUE: String(concurrency) }, dataDir, port: 0, databaseUrl: db.url, log: () => {} })
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
const startedAt = Date.now()
const endAt = startedAt + seconds * 1000

function record(name: string, status: number, started: number): void {
  latencies.push(performance.now() - started)
  requests++
  const byStatus = counts.get(name) ?? new Map<number, number>()
  byStatus.set(status, (byStatus.get(status) ?? 0) + 1)
  counts.set(name, byStatus)
}

// The storefront's browser key: restricted to the shop's origin, so it has the default limits
// (10 try-ons a minute per address, 20 refunded results a day, 5 per address).
const SHOP = 'https://shop.example'
const browserInitial = 100_000
const browserKey = await createKey(db.sql, { credits: browserInitial, origins: [SHOP] })
const [{ limits: browserLimits }] = await db.sql`select tryon.show_api_key(${browserKey.keyId}) -> 'limits' as limits`
const attacker = { address: '127.0.0.66', admitted: 0, free: 0, charged: 0, refusals: new Map<string, number>() }
const shoppers = { admitted: 0, charged: 0, refusals: new Map<string, number>() }

/** One request with the browser key from a given loopback address: the dev stack reads the client from the socket. */
async function fromAddress(
  agent: Agent,
  body: unknown,
  scenario?: string,
): Promise<{
  status: number
  retryAfter: string | null
  body: { creditsCharged?: number; errorCode?: string; success?: boolean; error?: string }
}> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', 'X-API-Key': browserKey.apiKey, Origin: SHOP }
  if (scenario) headers['X-Tryon-Scenario'] = scenario
  const response = await fetchFrom(stack.functionUrl, { method: 'POST', headers, body: JSON.stringify(body), dispatcher: agent })
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as never }
}

/** Takes the key from the page source and sends as fast as it can, half of it gowns it hopes to get refunded. */
async function attackerWorker(agent: Agent): Promise<void> {
  while (Date.now() < endAt) {
    const gown = Math.random() < 0.5
    const name = gown ? 'attacker: wedding, score low' : 'attacker: standard'
    const started = performance.now()
    let status = 0
    try {
      const res = await fromAddress(agent, gown ? wedding : standard, gown ? 'train_score_low' : undefined)
      status = res.status
      if (status === 429) {
        attacker.refusals.set(res.body.errorCode ?? '', (attacker.refusals.get(res.body.errorCode ?? '') ?? 0) + 1)
        if (!['rate_limited', 'free_deliveries_exhausted'].includes(res.body.errorCode ?? '') || !(Number(res.retryAfter) >= 1)) {
          violations.push(`${name}: 429 without a limit code or Retry-After: ${JSON.stringify(res.body)} ${res.retryAfter}`)
        }
      } else {
        attacker.admitted++
        if (status === 200) {
          attacker.charged += res.body.creditsCharged ?? NaN
          if (res.body.creditsCharged === 0) attacker.free++
        } else violations.push(`${name}: unexpected status ${status}`)
      }
    } catch (error) {
      violations.push(`${name}: request failed: ${String(error)}`)
    }
    record(name, status, started)
  }
}

/** A shopper trying things on now and then, well within 10 a minute, from an address of their own. */
async function shopperWorker(agent: Agent): Promise<void> {
  while (Date.now() < endAt) {
    const gown = Math.random() < 0.3
    const name = gown ? 'shopper: wedding' : 'shopper: standard'
    const started = performance.now()
    let status = 0
    try {
      const res = await fromAddress(agent, gown ? wedding : standard)
      status = res.status
      if (status === 200) {
        shoppers.admitted++
        shoppers.charged += res.body.creditsCharged ?? NaN
      } else {
        shoppers.refusals.set(`${status} ${res.body.errorCode}`, (shoppers.refusals.get(`${status} ${res.body.errorCode}`) ?? 0) + 1)
        violations.push(`${name}: a shopper within the limits got ${status} ${res.body.errorCode}`)
      }
    } catch (error) {
      violations.push(`${name}: request failed: ${String(error)}`)
    }
    record(name, status, started)
    await new Promise((resolve) => setTimeout(resolve, 7_000))
  }
}

async function worker(): Promise<void> {
  while (Date.now() < endAt) {
    const kind = kinds[Math.floor(Math.random() * kinds.length)]
    const account = accounts[Math.floor(Math.random() * accounts.length)]
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'X-API-Key': kind.badKey ? wellFormedUnknownKey() : account.key.apiKey,
    }
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
    record(kind.name, status, started)
    if (!kind.expected.includes(status)) violations.push(`${kind.name}: unexpected status ${status}`)
  }
}

const attackerAgent = new Agent({ localAddress: attacker.address })
const shopperAgents = Array.from({ length: shopperCount }, (_, i) => new Agent({ localAddress: `127.0.1.${i + 1}` }))
const started = performance.now()
await Promise.all([
  ...Array.from({ length: concurrency }, worker),
  ...Array.from({ length: attackerCount }, () => attackerWorker(attackerAgent)),
  ...shopperAgents.map((agent) => shopperWorker(agent)),
])
const elapsed = (performance.now() - started) / 1000
const finishedAt = Date.now()

// Every request has answered: nothing may still be reserved, so the sweeper has nothing to return.
const swept = await stack.deps.billing.sweep(0)
if (swept !== 0) violations.push(`the sweeper found ${swept} reservations left pending`)
let exact = 0
for (const account of accounts) {
  const check = await ledgerCheck(db.sql, account.key.accountId)
  const predicted = account.initial - account.charged
  const ok =
    check.balance === predicted &&
    check.ledgerBalance === check.balance &&
    check.reserved === 0 &&
    check.ledgerReserved === 0 &&
    check.heldByTryOns === 0
  if (ok) exact++
  else violations.push(`account ${account.key.accountId}: ${JSON.stringify(check)}, predicted balance ${predicted}`)
}

// The browser key: exact like every account, and the attacker held to the key's limits.
const browserCheck = await ledgerCheck(db.sql, browserKey.accountId)
const browserPredicted = browserInitial - attacker.charged - shoppers.charged
const browserExact =
  browserCheck.balance === browserPredicted &&
  browserCheck.ledgerBalance === browserCheck.balance &&
  browserCheck.reserved === 0 &&
  browserCheck.heldByTryOns === 0
if (!browserExact) violations.push(`browser key account: ${JSON.stringify(browserCheck)}, predicted balance ${browserPredicted}`)
// Minute windows the run touched: the attacker may have 10 try-ons in each.
const minutes = Math.floor(finishedAt / 60_000) - Math.floor(startedAt / 60_000) + 1
const attackerCap = browserLimits.perClientPerMinute * minutes
if (attacker.admitted > attackerCap)
  violations.push(
    `the attacker had ${attacker.admitted} try-ons, more than ${attackerCap} (${browserLimits.perClientPerMinute} a minute over ${minutes} minute windows)`,
  )
if (attacker.free > browserLimits.perClientDailyRefunded)
  violations.push(`the attacker had ${attacker.free} free results, more than ${browserLimits.perClientDailyRefunded}`)
// The database's own view, minute by minute: the attacker's per-client counters (keyed by the HMAC of its address).
const attackerHash = Buffer.from(await stack.deps.clients.hash(attacker.address))
const attackerMinutes = await db.sql<{ minute: string; used: number }[]>`
  select to_char(window_start at time zone 'UTC', 'HH24:MI') as minute, used::int
    from tryon.usage_counters
   where api_key_id = ${browserKey.keyId} and metric = 'tryons' and client_hash = ${attackerHash}
   order by window_start`
for (const { minute, used } of attackerMinutes) {
  if (used > browserLimits.perClientPerMinute) violations.push(`the attacker's counter for ${minute} UTC says ${used} try-ons`)
}
if (attackerMinutes.reduce((sum, m) => sum + m.used, 0) !== attacker.admitted) {
  violations.push(
    `the attacker's counters add up to ${attackerMinutes.reduce((sum, m) => sum + m.used, 0)}, its answers to ${attacker.admitted}`,
  )
}

latencies.sort((a, b) => a - b)
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))].toFixed(0)
const statuses = [...new Set([...counts.values()].flatMap((m) => [...m.keys()]))].sort()
console.log(
  `\nSoak: ${requests} requests in ${elapsed.toFixed(1)} s (${(requests / elapsed).toFixed(0)}/s) at concurrency ${concurrency}, ${accountCount} accounts`,
)
console.log(`latency p50 ${pct(50)} ms, p99 ${pct(99)} ms; idempotent replays ${replays}\n`)
console.log(['kind'.padEnd(32), ...statuses.map((s) => String(s).padStart(6))].join(''))
for (const name of [
  ...kinds.map((k) => k.name),
  'attacker: standard',
  'attacker: wedding, score low',
  'shopper: standard',
  'shopper: wedding',
]) {
  const byStatus = counts.get(name) ?? new Map()
  console.log([name.padEnd(32), ...statuses.map((s) => String(byStatus.get(s) ?? '').padStart(6))].join(''))
}
const attackerRequests = [
  ...(counts.get('attacker: standard')?.values() ?? []),
  ...(counts.get('attacker: wedding, score low')?.values() ?? []),
].reduce((a, b) => a + b, 0)
console.log(
  `\nattacker (one address, ${attackerCount} connections, the browser key and a forged Origin): ${attackerRequests} requests, ${attacker.admitted} try-ons served ` +
    `(at most ${attackerCap}: ${browserLimits.perClientPerMinute} a minute over ${minutes} minute windows), ${attacker.free} free (at most ${browserLimits.perClientDailyRefunded}), ` +
    `${attacker.charged} credits charged; refused: ${[...attacker.refusals].map(([code, n]) => `${n} × ${code}`).join(', ') || 'none'}`,
)
console.log(
  `attacker's try-ons by minute (UTC), from its counters: ${attackerMinutes.map((m) => `${m.minute} ${m.used}`).join(', ') || 'none'}`,
)
console.log(
  `shoppers on the same key (${shopperCount} addresses): ${shoppers.admitted} try-ons, ${shoppers.charged} credits charged, refused: ${[...shoppers.refusals].map(([code, n]) => `${n} × ${code}`).join(', ') || 'none'}`,
)
console.log(
  `browser key's account: balance ${browserCheck.balance} = ${browserInitial} − ${attacker.charged} (attacker) − ${shoppers.charged} (shoppers): ${browserExact ? 'exact' : 'NOT EXACT'}`,
)
console.log(
  `accounts whose balance equals their ledger and the responses' charges: ${exact + (browserExact ? 1 : 0)}/${accounts.length + 1}`,
)
console.log(`reservations left for the sweeper: ${swept}`)
console.log(
  violations.length === 0
    ? 'invariants: all hold'
    : `VIOLATIONS (${violations.length}):\n  ${[...new Set(violations)].slice(0, 20).join('\n  ')}`,
)

await Promise.all([attackerAgent, ...shopperAgents].map((agent) => agent.close()))
await stack.stop()
await db.close()
await rm(dataDir, { recursive: true, force: true })
process.exit(violations.length === 0 ? 0 : 1)
