import { z } from 'zod'
import { ApiError } from './errors.ts'
import { LargeString, parseJsonBytes } from '../encoding/json-bytes.ts'
import { readCapped } from '../streams/read-capped.ts'
import type { KeyMode } from '../auth/api-key.ts'
import type { ProductKind } from '../engine/types.ts'
import { scenarios, type Scenario } from '../tryon/outcomes.ts'

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

export interface TryOnInput {
  /** A large value (an image as base64) stays in the request's bytes, where intake decodes it. */
  userPhoto: string | LargeString
  productImage: string | LargeString
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

const IMAGE_FIELDS = ['userPhoto', 'productImage'] as const
const UTF8_BOM = [0xef, 0xbb, 0xbf]

/**
 * Validates Content-Type, JSON, the schema and the scenario and idempotency headers; throws 400s.
 * The body is read once into one array and parsed from it; the images in it stay there as LargeString values
 * (no body text, no image strings), so two 10 MB images sent as base64 are held as 27 MB, not about 110 MB.
 */
export async function parseTryOnRequest(request: Request, keyMode: KeyMode, maxBodyBytes: number): Promise<ParsedTryOn> {
  const contentType = request.headers.get('content-type') ?? ''
  if (!/^application\/json\s*(;|$)/i.test(contentType)) {
    throw invalid('Content-Type must be application/json')
  }
  const idempotencyKey = request.headers.get('idempotency-key')
  if (idempotencyKey !== null && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
    throw invalid('Idempotency-Key must be 1 to 255 printable ASCII characters without spaces')
  }

  // What the idempotency hash covers goes in front of the body, in the same array: `<scenario>\n<body>`.
  const hashPrefix = new TextEncoder().encode(`${request.headers.get('x-tryon-scenario')?.trim() ?? ''}\n`)
  const read = await readCapped(request, maxBodyBytes, undefined, () => bodyTooLarge(maxBodyBytes), { reserveBefore: hashPrefix.byteLength })
  // The body's text never had its byte order mark (UTF-8 decoding drops it): neither does the hash.
  const bom = UTF8_BOM.every((byte, i) => read[hashPrefix.byteLength + i] === byte) ? UTF8_BOM.length : 0
  const hashed = read.subarray(bom)
  hashed.set(hashPrefix)
  const body = hashed.subarray(hashPrefix.byteLength)
  let json: unknown
  try {
    json = parseJsonBytes(body)
  } catch {
    throw invalid('The request body is not valid JSON')
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw invalid('The request body must be a JSON object')
  }

  const fields = json as Record<string, unknown>
  // Any other large value is an ordinary string for the schema; the images are checked as placeholders.
  const checked: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(fields)) {
    const image = (IMAGE_FIELDS as readonly string[]).includes(name)
    checked[name] = value instanceof LargeString ? (image ? 'placeholder' : value.text()) : value
  }
  const parsed = tryOnRequestSchema.safeParse(checked)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw invalid(`${issue.path.join('.') || 'body'} ${issue.message}`)
  }
  const valid = parsed.data
  const imageOf = (name: (typeof IMAGE_FIELDS)[number]) => (fields[name] instanceof LargeString ? fields[name] : valid[name])
  const productKind = productKindOf(valid.productType)
  const scenario = parseScenario(request.headers.get('x-tryon-scenario'), keyMode, productKind)
  const input: TryOnInput = {
    userPhoto: imageOf('userPhoto'),
    productImage: imageOf('productImage'),
    productKind,
    clothingType: valid.clothingType || undefined,
    parentUrl: valid.parentUrl || undefined,
    locale: valid.locale || undefined,
    scenario,
  }
  if (idempotencyKey === null) return { input }
  return { input, idempotency: { key: idempotencyKey, requestHash: await requestHash(hashed) } }
}

/**
 * What makes two requests "the same" for an idempotency key: the forced scenario and the body as sent, as
 * `<scenario>\n<body>` in UTF-8. (The body's bytes, which for any well-formed UTF-8 body are what its text
 * encoded back gives, as this hash was first computed.)
 */
async function requestHash(scenarioAndBody: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', scenarioAndBody))
}

function bodyTooLarge(maxBodyBytes: number): ApiError {
  return new ApiError('payload_too_large', `The request body exceeds ${Math.round(maxBodyBytes / 1024 / 1024)} MB; send large images as URLs`)
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
