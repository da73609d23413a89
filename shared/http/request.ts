import { z } from 'zod'
import { ApiError } from './errors.ts'
import type { KeyMode } from '../auth/api-key.ts'
import type { ProductKind } from '../billing/store.ts'

const optionalText = (max: number) => z.string().trim().max(max, `must be at most ${max} characters`).nullish()

/** The JSON body of POST /functions/v1/tryon-api (spec §4). Unknown fields are ignored. */
export const tryOnRequestSchema = z.object({
  userPhoto: z.string({ error: 'is required: a public image URL, a data URI or base64' }).min(1, 'must not be empty'),
  productImage: z.string({ error: 'is required: a public image URL, a data URI or base64' }).min(1, 'must not be empty'),
  clothingType: optionalText(100),
  productType: optionalText(100),
  parentUrl: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .max(2048, 'must be at most 2048 characters')
    .nullish(),
  locale: z
    .string()
    .regex(/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/, 'must be a language code such as en or fr-CA')
    .nullish(),
})

export type TryOnBody = z.infer<typeof tryOnRequestSchema>

/** Outcomes a test key may force with X-Tryon-Scenario (DESIGN.md §4). */
export const scenarios = {
  content_rejected: 'any',
  generation_failed: 'any',
  train_score_low: 'wedding-dress',
  train_score_unavailable: 'wedding-dress',
  train_pretreatment_unavailable: 'wedding-dress',
  bridal_preprocessing_crash: 'wedding-dress',
} as const

export type Scenario = keyof typeof scenarios

export interface TryOnInput {
  userPhoto: string
  productImage: string
  productKind: ProductKind
  clothingType?: string
  parentUrl?: string
  locale?: string
  scenario?: Scenario
}

const invalid = (message: string) => new ApiError('invalid_request', message)

export function productKindOf(productType: string | null | undefined): ProductKind {
  return productType === 'wedding-dress' ? 'wedding-dress' : 'standard'
}

export interface ParsedTryOn {
  input: TryOnInput
  /** Present when the caller sent Idempotency-Key. */
  idempotency?: { key: string; requestHash: Uint8Array }
}

/** Printable ASCII, as Stripe and the IETF draft use; long enough for a UUID or a hash. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/

/** Validates Content-Type, JSON, the schema and the scenario and idempotency headers; throws 400s. */
export async function parseTryOnRequest(request: Request, keyMode: KeyMode): Promise<ParsedTryOn> {
  const contentType = request.headers.get('content-type') ?? ''
  if (!/^application\/json\s*(;|$)/i.test(contentType)) {
    throw invalid('Content-Type must be application/json')
  }
  const idempotencyKey = request.headers.get('idempotency-key')
  if (idempotencyKey !== null && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
    throw invalid('Idempotency-Key must be 1 to 255 printable ASCII characters without spaces')
  }

  const text = await request.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw invalid('The request body is not valid JSON')
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw invalid('The request body must be a JSON object')
  }

  const parsed = tryOnRequestSchema.safeParse(json)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw invalid(`${issue.path.join('.') || 'body'} ${issue.message}`)
  }
  const body = parsed.data
  const productKind = productKindOf(body.productType)
  const scenario = parseScenario(request.headers.get('x-tryon-scenario'), keyMode, productKind)
  const input: TryOnInput = {
    userPhoto: body.userPhoto,
    productImage: body.productImage,
    productKind,
    clothingType: body.clothingType || undefined,
    parentUrl: body.parentUrl || undefined,
    locale: body.locale || undefined,
    scenario,
  }
  if (idempotencyKey === null) return { input }
  return { input, idempotency: { key: idempotencyKey, requestHash: await requestHash(text, scenario) } }
}

/** What makes two requests "the same" for an idempotency key: the body as sent, and the forced scenario. */
async function requestHash(body: string, scenario: Scenario | undefined): Promise<Uint8Array> {
  const bytes = new TextEncoder().encode(`${scenario ?? ''}\n${body}`)
  return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))
}

function parseScenario(header: string | null, keyMode: KeyMode, productKind: ProductKind): Scenario | undefined {
  if (header === null) return undefined
  if (keyMode !== 'test') throw invalid('X-Tryon-Scenario is accepted with test keys (vto_test_) only')
  const scenario = header.trim()
  if (!Object.hasOwn(scenarios, scenario)) {
    throw invalid(`X-Tryon-Scenario must be one of: ${Object.keys(scenarios).join(', ')}`)
  }
  if (scenarios[scenario as Scenario] === 'wedding-dress' && productKind !== 'wedding-dress') {
    throw invalid(`X-Tryon-Scenario ${scenario} applies to productType "wedding-dress" only`)
  }
  return scenario as Scenario
}
