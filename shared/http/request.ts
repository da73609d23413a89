import type { ZodError } from 'zod'
import { ApiError } from './errors.ts'
import { LargeString, parseJsonBytes } from '../encoding/json-bytes.ts'
import { readCapped } from '../streams/read-capped.ts'
import type { TryOnFields, TryOnHeaders } from './schemas.ts'
import type { KeyMode } from '../auth/api-key.ts'
import type { ProductKind } from '../engine/types.ts'
import { scenarios, type Scenario } from '../tryon/outcomes.ts'

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

/** The body as read: its fields (large images left in the bytes) and the bytes its idempotency hash covers. */
export interface TryOnBodyRead {
  fields: Record<string, unknown>
  /** What the route's schema validates: the fields with large images as placeholders and other large values as text. */
  forSchema: Record<string, unknown>
  /** `<scenario>\n<body>`, the bytes the idempotency hash covers. */
  hashed: Uint8Array<ArrayBuffer>
}

/** application/json with parameters, as the route's media-type gate (@hono/zod-openapi) takes it. */
const JSON_CONTENT_TYPE = /^application\/json(;\s*[a-zA-Z0-9-]+=([^;]+))*$/i

const IMAGE_FIELDS = ['userPhoto', 'productImage'] as const
/**
 * Bodies under this are read by the runtime's own JSON and base64 decoders, two to five times less CPU than reading them
 * in place (scripts/bench-body-parsing.ts), for at most about 3 MB more memory; larger ones are kept once, in place.
 */
const NATIVE_BODY_BYTES = 1024 * 1024
const UTF8_BOM = [0xef, 0xbb, 0xbf]

/**
 * Checks Content-Type and reads the JSON body once into one array, ahead of the route's validation; throws 400/413.
 * The images in it stay there as LargeString values (no body text, no image strings), so two 10 MB images sent as
 * base64 are held as 27 MB, not about 110 MB.
 */
export async function readTryOnBody(request: Request, maxBodyBytes: number): Promise<TryOnBodyRead> {
  if (!JSON_CONTENT_TYPE.test(request.headers.get('content-type') ?? '')) {
    throw invalid('Content-Type must be application/json')
  }
  // What the idempotency hash covers goes in front of the body, in the same array: `<scenario>\n<body>`.
  const hashPrefix = new TextEncoder().encode(`${request.headers.get('x-tryon-scenario')?.trim() ?? ''}\n`)
  const read = await readCapped(request, maxBodyBytes, undefined, () => bodyTooLarge(maxBodyBytes), {
    reserveBefore: hashPrefix.byteLength,
  })
  // The body's text never had its byte order mark (UTF-8 decoding drops it): neither does the hash.
  const bom = UTF8_BOM.every((byte, i) => read[hashPrefix.byteLength + i] === byte) ? UTF8_BOM.length : 0
  const hashed = read.subarray(bom)
  hashed.set(hashPrefix)
  let json: unknown
  try {
    const body = hashed.subarray(hashPrefix.byteLength)
    json = parseJsonBytes(body, body.length < NATIVE_BODY_BYTES ? { largeFrom: NATIVE_BODY_BYTES } : {})
  } catch {
    throw invalid('The request body is not valid JSON')
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw invalid('The request body must be a JSON object')
  }
  const fields = json as Record<string, unknown>
  // Any other large value is an ordinary string for the schema; the images are checked as placeholders.
  const forSchema: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(fields)) {
    const image = (IMAGE_FIELDS as readonly string[]).includes(name)
    forSchema[name] = value instanceof LargeString ? (image ? 'placeholder' : value.text()) : value
  }
  return { fields, forSchema, hashed }
}

/** The route's validation hook answers a failed check with the first issue, as `<field> <what is wrong>`. */
export function invalidRequest(error: ZodError): ApiError {
  const issue = error.issues[0]
  return invalid(`${issue.path.join('.') || 'body'} ${issue.message}`)
}

/** The try-on the validated body and headers ask for; the scenario's rules need the key's mode and the product. */
export async function tryOnInputOf(valid: TryOnFields, headers: TryOnHeaders, read: TryOnBodyRead, keyMode: KeyMode): Promise<ParsedTryOn> {
  const imageOf = (name: (typeof IMAGE_FIELDS)[number]) => (read.fields[name] instanceof LargeString ? read.fields[name] : valid[name])
  const productKind = productKindOf(valid.productType)
  const input: TryOnInput = {
    userPhoto: imageOf('userPhoto'),
    productImage: imageOf('productImage'),
    productKind,
    clothingType: valid.clothingType || undefined,
    parentUrl: valid.parentUrl || undefined,
    locale: valid.locale || undefined,
    scenario: checkScenario(headers['X-Tryon-Scenario'], keyMode, productKind),
  }
  const key = headers['Idempotency-Key']
  if (key === undefined) return { input }
  return { input, idempotency: { key, requestHash: await requestHash(read.hashed) } }
}

/**
 * What makes two requests "the same" for an idempotency key: the forced scenario and the body as sent, as
 * `<scenario>\n<body>` in UTF-8. (The body's bytes, which for any well-formed UTF-8 body are what its text
 * encoded back gives, as this hash was first computed.)
 */
async function requestHash(scenarioAndBody: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', scenarioAndBody))
}

export function bodyTooLarge(maxBodyBytes: number): ApiError {
  return new ApiError(
    'payload_too_large',
    `The request body exceeds ${Math.round(maxBodyBytes / 1024 / 1024)} MB; send large images as URLs`,
  )
}

function checkScenario(scenario: Scenario | undefined, keyMode: KeyMode, productKind: ProductKind): Scenario | undefined {
  if (scenario === undefined) return undefined
  if (keyMode !== 'test') throw invalid('X-Tryon-Scenario is accepted with test keys (vto_test_) only')
  if (scenarios[scenario] === 'wedding-dress' && productKind !== 'wedding-dress') {
    throw invalid(`X-Tryon-Scenario ${scenario} applies to productType "wedding-dress" only`)
  }
  return scenario
}
