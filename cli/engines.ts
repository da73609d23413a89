import { readSettings, type Env } from '../shared/config.ts'
import { apiError } from '../shared/engine/providers/gemini-wire.ts'
import { serviceAccountTokens, staticAccessToken, type AccessTokenSource } from '../shared/engine/providers/google-auth.ts'
import { ProviderError, requestJson, type JsonAnswer, type JsonCall } from '../shared/engine/providers/http.ts'
import { configuredModelOf, providerRuntime, type ProviderRuntime } from '../shared/engine/providers/index.ts'
import { asArray, asRecord } from '../shared/engine/providers/json.ts'
import { lifecycleNotice, lifecycleVerdict, type ConfiguredModel, type LifecycleVerdict } from '../shared/engine/providers/lifecycle.ts'
import { vertexModelKind, type ProviderSettings } from '../shared/engine/providers/settings.ts'

/** One configured engine or judge, as `engines check` found it. */
export interface EngineCheck {
  role: 'engine' | 'judge'
  engine: 'gemini' | 'vertex' | 'fashn'
  setting: string
  model: string
  /** Whether the provider took the credentials: `unreachable` when it did not answer. */
  credentials: 'accepted' | 'refused' | 'unreachable' | 'error'
  /** Whether the provider serves the model; null where it has no free call that says (FASHN). */
  modelServed: boolean | null
  lifecycle: { state: LifecycleVerdict['state']; day?: string; daysLeft?: number; successor?: string; source?: string; readOn?: string }
  /** FASHN's credit balance (GET /v1/credits). */
  balance?: { total: number; subscription: number; onDemand: number }
  /** What was seen, in words, and what to do. */
  detail: string
  canServe: boolean
}

const CALL: Pick<JsonCall, 'attemptTimeoutMs' | 'maxResponseBytes' | 'retry'> = {
  attemptTimeoutMs: 15_000,
  maxResponseBytes: 1024 * 1024,
  retry: { attempts: 2, baseDelayMs: 500, maxDelayMs: 1_000 },
}

/** A call's answer, or how it failed to come: the check reports either. */
async function ask(runtime: ProviderRuntime, call: Omit<JsonCall, keyof typeof CALL>): Promise<JsonAnswer | ProviderError> {
  try {
    return await requestJson(runtime, { ...CALL, ...call })
  } catch (error) {
    if (error instanceof ProviderError) return error
    throw error
  }
}

interface Probe {
  credentials: EngineCheck['credentials']
  modelServed: boolean | null
  detail: string
  balance?: EngineCheck['balance']
}

/** How an answer of a Google API reads: the model's metadata, no such model, or credentials refused. */
function googleProbe(answer: JsonAnswer | ProviderError, served: (body: unknown) => boolean): Probe {
  if (answer instanceof ProviderError) return { credentials: 'unreachable', modelServed: null, detail: answer.message }
  const error = apiError(answer)
  const said = typeof error.message === 'string' ? `: ${error.message}` : ''
  if (answer.status === 200) {
    const ok = served(answer.body)
    return { credentials: 'accepted', modelServed: ok, detail: ok ? 'model metadata read' : 'the model does not offer generateContent' }
  }
  if (answer.status === 404) return { credentials: 'accepted', modelServed: false, detail: `404 ${error.status ?? ''}${said}`.trim() }
  // An invalid API key is a 400 INVALID_ARGUMENT (API_KEY_INVALID) on the Gemini API; a token refused is 401 or 403.
  if (answer.status === 400 || answer.status === 401 || answer.status === 403)
    return { credentials: 'refused', modelServed: null, detail: `HTTP ${answer.status} ${error.status ?? ''}${said}` }
  return { credentials: 'error', modelServed: null, detail: `HTTP ${answer.status}${said}` }
}

/** Gemini API: GET /v1beta/models/{model} (ai.google.dev/api/models#method:-models.get) costs nothing. */
async function probeGemini(runtime: ProviderRuntime, gemini: NonNullable<ProviderSettings['gemini']>, model: string): Promise<Probe> {
  const answer = await ask(runtime, {
    provider: 'gemini',
    url: `${gemini.baseUrl.replace(/\/+$/, '')}/v1beta/models/${encodeURIComponent(model)}`,
    headers: { 'x-goog-api-key': gemini.apiKey },
  })
  return googleProbe(answer, (body) => {
    const methods = asArray(asRecord(body).supportedGenerationMethods)
    return methods.length === 0 || methods.includes('generateContent')
  })
}

/**
 * Vertex AI: an access token (the service account's exchange, or VERTEX_ACCESS_TOKEN), then the model's metadata,
 * `GET /v1/publishers/google/models/{model}` (ModelGardenService.GetPublisherModel), on the host of the location
 * the model is called at. Neither costs anything.
 */
async function probeVertex(
  runtime: ProviderRuntime,
  vertex: NonNullable<ProviderSettings['vertex']>,
  model: string,
  tokens: AccessTokenSource,
): Promise<Probe> {
  let token: string
  try {
    token = await tokens.token()
  } catch (error) {
    const refused = error instanceof ProviderError && error.kind === 'auth'
    return { credentials: refused ? 'refused' : 'unreachable', modelServed: null, detail: (error as Error).message }
  }
  const location = vertexModelKind(model) === 'gemini' ? vertex.geminiLocation : vertex.location
  const host = location === 'global' ? 'https://aiplatform.googleapis.com' : `https://${location}-aiplatform.googleapis.com`
  const answer = await ask(runtime, {
    provider: 'vertex',
    url: `${(vertex.baseUrl ?? host).replace(/\/+$/, '')}/v1/publishers/google/models/${encodeURIComponent(model)}`,
    headers: { authorization: `Bearer ${token}` },
  })
  const probe = googleProbe(answer, () => true)
  return { ...probe, detail: `token obtained; ${probe.detail} (location ${location})` }
}

/** FASHN: GET /v1/credits proves the key and shows the balance; FASHN has no call that lists its models. */
async function probeFashn(runtime: ProviderRuntime, fashn: NonNullable<ProviderSettings['fashn']>): Promise<Probe> {
  const answer = await ask(runtime, {
    provider: 'fashn',
    url: `${fashn.baseUrl.replace(/\/+$/, '')}/v1/credits`,
    headers: { authorization: `Bearer ${fashn.apiKey}` },
  })
  if (answer instanceof ProviderError) return { credentials: 'unreachable', modelServed: null, detail: answer.message }
  const body = asRecord(answer.body)
  if (answer.status === 401) return { credentials: 'refused', modelServed: null, detail: `HTTP 401 ${String(body.message ?? '')}`.trim() }
  const credits = asRecord(body.credits)
  if (answer.status !== 200 || typeof credits.total !== 'number')
    return { credentials: 'error', modelServed: null, detail: `HTTP ${answer.status} ${String(body.message ?? '')}`.trim() }
  const balance = { total: credits.total, subscription: Number(credits.subscription ?? 0), onDemand: Number(credits.on_demand ?? 0) }
  return { credentials: 'accepted', modelServed: null, balance, detail: `${balance.total} FASHN credits left` }
}

function vertexTokens(vertex: NonNullable<ProviderSettings['vertex']>, runtime: ProviderRuntime): AccessTokenSource {
  return vertex.serviceAccount ? serviceAccountTokens(vertex.serviceAccount, runtime) : staticAccessToken(vertex.accessToken ?? '')
}

function verdictOf(configured: ConfiguredModel, now: number): { lifecycle: EngineCheck['lifecycle']; notice?: string } {
  const verdict = lifecycleVerdict(configured.platform, configured.model, now)
  const notice = lifecycleNotice(configured, verdict)
  if (verdict.state === 'unknown') return { lifecycle: { state: 'unknown' } }
  const { successor, source, readOn } = verdict.entry
  const day = verdict.state === 'retired' ? verdict.since : verdict.state === 'retiring' ? verdict.on : undefined
  const daysLeft = verdict.state === 'retiring' ? verdict.daysLeft : undefined
  return { lifecycle: { state: verdict.state, day, daysLeft, successor, source, readOn }, notice }
}

/**
 * Every configured engine and judge: free calls that prove the credentials and that the model is served, with the
 * lifecycle table's verdict. A row cannot serve when the credentials are refused, the provider is unreachable, the
 * model is not served or past its shutdown day, or FASHN has no credits left.
 */
export async function checkEngines(env: Env, options: { fetch?: typeof fetch; now?: () => number } = {}): Promise<EngineCheck[]> {
  const now = options.now ?? Date.now
  const settings = readSettings(env, now()).providers
  const runtime = providerRuntime({ log: () => {}, now, ...(options.fetch && { fetch: options.fetch }) })
  const vertexToken = settings.vertex ? vertexTokens(settings.vertex, runtime) : undefined
  const rows: { role: EngineCheck['role']; engine: EngineCheck['engine']; configured: ConfiguredModel; probe: () => Promise<Probe> }[] = []
  for (const name of settings.engines) {
    if (name === 'local') continue
    const configured = configuredModelOf(name, settings)
    const probe = () =>
      name === 'fashn'
        ? probeFashn(runtime, settings.fashn!)
        : name === 'gemini'
          ? probeGemini(runtime, settings.gemini!, configured.model)
          : probeVertex(runtime, settings.vertex!, configured.model, vertexToken!)
    rows.push({ role: 'engine', engine: name, configured, probe })
  }
  if (settings.trainScorer === 'gemini' && settings.gemini) {
    const model = settings.gemini.scorerModel
    rows.push({
      role: 'judge',
      engine: 'gemini',
      configured: { setting: 'GEMINI_SCORER_MODEL', platform: 'gemini-api', model },
      probe: () => probeGemini(runtime, settings.gemini!, model),
    })
  }
  if (settings.trainScorer === 'vertex' && settings.vertex) {
    const model = settings.vertex.scorerModel
    const vertex = settings.vertex
    rows.push({
      role: 'judge',
      engine: 'vertex',
      configured: { setting: 'VERTEX_SCORER_MODEL', platform: 'vertex-ai', model },
      probe: () => probeVertex(runtime, { ...vertex, location: vertex.geminiLocation }, model, vertexToken!),
    })
  }
  const checks: EngineCheck[] = []
  for (const row of rows) {
    const probe = await row.probe()
    const { lifecycle, notice } = verdictOf(row.configured, now())
    const canServe =
      probe.credentials === 'accepted' &&
      probe.modelServed !== false &&
      lifecycle.state !== 'retired' &&
      (probe.balance === undefined || probe.balance.total > 0)
    const judgeGone = row.role === 'judge' && !canServe ? '; wedding dresses are billed without a train score until this is fixed' : ''
    checks.push({
      role: row.role,
      engine: row.engine,
      setting: row.configured.setting,
      model: row.configured.model,
      credentials: probe.credentials,
      modelServed: probe.modelServed,
      lifecycle,
      ...(probe.balance && { balance: probe.balance }),
      detail: [probe.detail, notice].filter(Boolean).join('; ') + judgeGone,
      canServe,
    })
  }
  return checks
}

function lifecycleText(lifecycle: EngineCheck['lifecycle']): string {
  switch (lifecycle.state) {
    case 'retired':
      return `retired ${lifecycle.day}`
    case 'retiring':
      return (lifecycle.daysLeft ?? 0) > 0 ? `retires ${lifecycle.day} (${lifecycle.daysLeft} d)` : `may retire since ${lifecycle.day}`
    case 'served':
      return 'served'
    case 'unknown':
      return 'not in the table'
  }
}

/** The checks as a table for the terminal, each row's detail under it. */
export function enginesTable(checks: EngineCheck[]): string {
  if (checks.length === 0) return 'No remote engine or judge is configured (TRYON_ENGINE=local, local train scorer).\n'
  const header = ['ROLE', 'ENGINE', 'SETTING', 'MODEL', 'CREDENTIALS', 'MODEL SERVED', 'LIFECYCLE', 'VERDICT']
  const cells = checks.map((c) => [
    c.role,
    c.engine,
    c.setting,
    c.model,
    c.credentials,
    c.modelServed === null ? 'not checked' : c.modelServed ? 'yes' : 'NO',
    lifecycleText(c.lifecycle),
    c.canServe ? 'ok' : 'CANNOT SERVE',
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i].length)))
  const line = (row: string[]) =>
    row
      .map((cell, i) => cell.padEnd(widths[i]))
      .join('  ')
      .trimEnd()
  const out = [line(header)]
  for (const [i, row] of cells.entries()) {
    out.push(line(row))
    out.push(`    ${checks[i].detail}`)
  }
  return `${out.join('\n')}\n`
}

/** `engines check [--json]`: prints the table (or JSON) and answers the exit code: 1 when any row cannot serve. */
export async function runEnginesCheck(
  options: { json: boolean },
  env: Env,
  io: { write: (text: string) => void; fetch?: typeof fetch; now?: () => number },
): Promise<number> {
  const checks = await checkEngines(env, io)
  io.write(options.json ? `${JSON.stringify({ engines: checks, canServe: checks.every((c) => c.canServe) })}\n` : enginesTable(checks))
  return checks.every((c) => c.canServe) ? 0 : 1
}
