import type { ZodError } from 'zod'
import { ApiError } from './errors.ts'
import { LargeString, parseJsonBytes } from '../encoding/json-bytes.ts'
import { readCapped } from '../streams/read-capped.ts'

export const invalid = (message: string) => new ApiError('invalid_request', message)

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

export const IMAGE_FIELDS = ['userPhoto', 'productImage'] as const
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

export function bodyTooLarge(maxBodyBytes: number): ApiError {
  return new ApiError(
    'payload_too_large',
    `The request body exceeds ${Math.round(maxBodyBytes / 1024 / 1024)} MB; send large images as URLs`,
  )
}
