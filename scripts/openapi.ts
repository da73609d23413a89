// `npm run openapi`: writes openapi.json from the zod schemas the handler validates and answers with.
import { writeFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { z } from 'zod'
import { BRIDAL_UNAVAILABLE_MESSAGE } from '../shared/bridal/pipeline.ts'
import { AUTHENTICATION_REQUIRED, INSUFFICIENT_CREDITS, LIMIT_MESSAGES, databaseUnavailable, errorStatus, settlementUnknown, type ErrorCode } from '../shared/http/errors.ts'
import { tryOnRequestSchema } from '../shared/http/request.ts'
import { RESULT_CACHE_CONTROL } from '../shared/storage/result-store.ts'
import { serviceBusy } from '../shared/tryon/work-gate.ts'
import {
  bridalSchema,
  errorBodySchema,
  errorCodeSchema,
  gatewayNotFoundSchema,
  idempotencyKeyHeaderSchema,
  scenarioHeaderSchema,
  tryOnSuccessSchema,
} from '../shared/http/schemas.ts'

export const OPENAPI_FILE = fileURLToPath(new URL('../openapi.json', import.meta.url))

type JsonObject = Record<string, unknown>

const imageField = 'An image as a public http(s) URL (recommended server to server), a `data:image/<subtype>;base64,<DATA>` URI, or raw base64. JPEG, PNG or WebP, recognised from the bytes; at least 1 KB, at most 10 MB and 40 megapixels.'

/** Descriptions of the request fields, attached to the handler's own schema while it is converted. */
const requestFieldDocs = new Map<unknown, string>([
  [tryOnRequestSchema.shape.userPhoto, `The shopper photo. ${imageField}`],
  [tryOnRequestSchema.shape.productImage, `The product (garment) image. ${imageField}`],
  [tryOnRequestSchema.shape.clothingType, 'Category hint, free text (`T-shirt`, `Jeans`, `Dress`, `Jacket`…); without it the engine guesses from the garment.'],
  [tryOnRequestSchema.shape.productType, '`wedding-dress` renders the gown\'s train and costs 2 credits (refund rules in the description); any other value is a standard try-on.'],
  [tryOnRequestSchema.shape.parentUrl, 'URL of the product page, for attribution and analytics.'],
  [tryOnRequestSchema.shape.locale, 'Output locale hint, a language code such as `en`, `fr` or `pt-BR`.'],
])

/** When each error code is answered; a code without a line here fails the openapi test. */
export const errorCodeDocs: Record<string, { when: string; example: string }> = {
  invalid_request: { when: 'Not JSON, wrong `Content-Type`, a missing or invalid field, a bad `X-Tryon-Scenario` or `Idempotency-Key`.', example: 'userPhoto is required: a public image URL, a data URI or base64' },
  image_unreachable: { when: 'An image URL cannot be fetched (network, status, timeout, refused address).', example: 'productImage: could not fetch the image: HTTP 404' },
  image_too_small: { when: 'An image is under 1 KB.', example: 'userPhoto: image is smaller than 1 KB (512 bytes); images must be at least 1 KB' },
  image_too_large: { when: 'An image is over 10 MB or 40 megapixels.', example: 'userPhoto: image is 9000×6000 (54.0 megapixels); images may have at most 40 megapixels' },
  unsupported_image: { when: 'An image is not a JPEG, PNG or WebP, or its pixels cannot be decoded.', example: 'userPhoto: image is not a readable JPEG, PNG or WebP (the format is read from the bytes, not from the URL or data URI); send a JPEG, PNG or WebP image' },
  authentication_required: { when: 'No `X-API-Key` header, a malformed or unknown key, or a key anywhere in the query string.', example: AUTHENTICATION_REQUIRED },
  insufficient_credits: { when: 'The balance cannot pay for the call (1 credit, 2 for a wedding dress).', example: INSUFFICIENT_CREDITS },
  key_inactive: { when: 'The key is deactivated.', example: 'This API key is inactive' },
  origin_not_allowed: { when: 'The key is restricted to origins and `Origin` is missing or not one of them.', example: 'This API key is not authorized for this origin; send the Origin header of an allowed site' },
  method_not_allowed: { when: 'Any method but `POST` (and the CORS `OPTIONS`).', example: 'Use POST with a JSON body' },
  idempotency_key_in_progress: { when: 'A request with the same `Idempotency-Key` is still running.', example: 'A request with this Idempotency-Key is still being processed; retry after it completes' },
  payload_too_large: { when: 'The body is over 30 MB; refused before it is read whole.', example: 'The request body exceeds 30 MB; send large images as URLs' },
  idempotency_key_reused: { when: 'The `Idempotency-Key` was used in the last 24 hours with a different body.', example: 'This Idempotency-Key was already used with a different request body' },
  ai_content_rejected: { when: 'The generation engine rejected the content.', example: 'The generation engine rejected the content of these images. No credits were charged.' },
  rate_limited: { when: 'The key\'s try-ons per minute, or its try-ons per minute from this client address, are used up (browser keys: 10 a minute per address by default).', example: LIMIT_MESSAGES.rate_limited },
  daily_cap_reached: { when: 'The key\'s credits per day (a spend cap, set per key) are used up, counting try-ons still running; resets at midnight UTC.', example: LIMIT_MESSAGES.daily_cap_reached },
  free_deliveries_exhausted: { when: 'A wedding-dress request when the key has had its refunded (free) wedding-dress results for the day, in total or from this client address (browser keys: 20 and 5 by default); answered before anything is generated.', example: LIMIT_MESSAGES.free_deliveries_exhausted },
  internal_error: { when: 'An unexpected failure; retrying is safe.', example: 'Internal error. No credits were charged; you may retry.' },
  generation_failed: { when: 'The engine failed or took too long; retrying is safe.', example: 'Image generation failed. No credits were charged; you may retry.' },
  storage_failed: { when: 'The result could not be stored; retrying is safe.', example: 'The result could not be stored. No credits were charged; you may retry.' },
  database_unavailable: { when: 'The database could not be reached in time; credits held for the call are returned, retrying is safe.', example: databaseUnavailable().message },
  settlement_unknown: { when: 'The database did not confirm whether the try-on was charged, even after retries (it may have been). Retry with the same `Idempotency-Key`: a charged try-on is replayed, an uncharged one runs again once its hold is returned.', example: settlementUnknown('3f2c5a9e-7b1d-4c8e-9a6f-2d4e8b1c0a57').message },
  bridal_preprocessing_failed: { when: 'Wedding-dress pre-processing crashed; generation was cancelled and fully refunded.', example: BRIDAL_UNAVAILABLE_MESSAGE },
  service_busy: { when: 'Too many try-ons are being generated by the embedded engine at once; nothing was charged. Retry after `Retry-After` seconds.', example: serviceBusy(2).message },
}

const statusTitles: Record<number, string> = {
  400: 'Bad request', 401: 'Authentication required', 402: 'Insufficient credits', 403: 'Forbidden', 405: 'Method not allowed',
  409: 'Conflict', 413: 'Payload too large', 422: 'Unprocessable content', 429: 'Too many requests', 500: 'Generation or infrastructure error', 503: 'Service unavailable',
}

function componentSchemas(): JsonObject {
  const registry = z.registry<{ id: string }>()
  registry.add(tryOnRequestSchema, { id: 'TryOnRequest' })
  registry.add(tryOnSuccessSchema, { id: 'TryOnSuccess' })
  registry.add(bridalSchema, { id: 'Bridal' })
  registry.add(errorBodySchema, { id: 'Error' })
  registry.add(errorCodeSchema, { id: 'ErrorCode' })
  registry.add(gatewayNotFoundSchema, { id: 'GatewayNotFound' })
  const { schemas } = z.toJSONSchema(registry, {
    io: 'input',
    uri: (id) => `#/components/schemas/${id}`,
    override: ({ zodSchema, jsonSchema }) => {
      const description = requestFieldDocs.get(zodSchema)
      if (description) jsonSchema.description = description
    },
  })
  // Components live inside the document: no $schema or $id of their own (3.1 defaults to 2020-12).
  return Object.fromEntries(Object.entries(schemas).map(([id, { $schema, $id, ...schema }]) => [id, schema]))
}

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` })
const headerSchema = (schema: z.ZodType) => {
  const { $schema, ...json } = z.toJSONSchema(schema)
  return json
}

function errorResponses(): JsonObject {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const [code, status] of Object.entries(errorStatus) as [ErrorCode, number][]) {
    byStatus.set(status, [...(byStatus.get(status) ?? []), code])
  }
  return Object.fromEntries(
    [...byStatus].sort(([a], [b]) => a - b).map(([status, codes]) => [
      String(status),
      {
        description: `${statusTitles[status] ?? 'Error'}: ${codes.map((code) => `\`${code}\``).join(', ')}. Nothing is charged.`,
        ...(status === 405 && { headers: { Allow: { description: 'The methods the endpoint takes.', schema: { type: 'string', const: 'POST, OPTIONS' } } } }),
        ...(status === 429 && {
          headers: { 'Retry-After': { description: 'Seconds until the limit lets a request through again: the end of the minute or of the UTC day, or a few seconds when try-ons still running hold the rest.', required: true, schema: { type: 'integer', minimum: 1 } } },
        }),
        content: {
          'application/json': {
            schema: { allOf: [ref('Error'), { type: 'object', properties: { errorCode: { enum: codes } } }] },
            examples: Object.fromEntries(codes.map((code) => [code, {
              summary: errorCodeDocs[code]?.when ?? '',
              value: { success: false, error: errorCodeDocs[code]?.example ?? '', errorCode: code },
            }])),
          },
        },
      },
    ]),
  )
}

const sampleResult = {
  success: true,
  tryOnId: '6f1c2d0e-8a3b-4c5d-9e7f-0a1b2c3d4e5f',
  shortId: 'aZ3k9QmP2x',
  resultUrl: 'https://your-project-ref.supabase.co/storage/v1/object/public/tryon-results/2026/11/6f1c2d0e-8a3b-4c5d-9e7f-0a1b2c3d4e5f.jpg',
}

const description = `Generates a virtual try-on image from a shopper photo and a product image, billed in prepaid credits.

**Credits.** A standard try-on costs 1 credit; \`productType: "wedding-dress"\` reserves 2 and settles by the \`bridal\` verdict: 2 when the train is rendered, 0 when it scores low (the result is still delivered, \`shortId\` is null), 2 when the score is unavailable, 1 when only the train pre-treatment cannot run. An error never costs a credit.

**Order of checks.** A key that cannot be used gets its 401/403 before anything about the body is said; a usable key with a bad body gets 400 and pays nothing; then the key's abuse limits (429, decided in the same database call that reserves the credits); 402 answers a well-formed request within the limits only.

**Abuse limits.** Per key: try-ons per minute, try-ons per minute per client address, credits per day, and refunded wedding-dress results per day, in total and per client address. Keys restricted to origins (browser keys) start with 10 try-ons a minute per address, 20 refunded results a day and 5 per address; other keys with none. A 429 (\`rate_limited\`, \`daily_cap_reached\`, \`free_deliveries_exhausted\`) carries \`Retry-After\` in seconds and charges nothing.

**Browsers.** Preflights are answered for any origin; a key restricted to origins requires a matching \`Origin\` on the real request (a soft control: servers can send any \`Origin\`).

**Wrong path.** The edge proxy in front of the function answers \`404 {"error":"requested path is invalid"}\` (schema \`GatewayNotFound\`) with an \`sb-request-id\` header; that is not an error of the service.`

/** The OpenAPI 3.1 document of the service. */
export function openApiDocument(): JsonObject {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Try-on API',
      version: '1',
      summary: 'Virtual try-on: a shopper photo and a product image in, a permanent image URL out.',
      description,
    },
    servers: [
      { url: 'https://{projectRef}.supabase.co', description: 'Supabase Edge Functions', variables: { projectRef: { default: 'your-project-ref' } } },
      { url: 'http://127.0.0.1:54321', description: 'Dev stack (`npm start`)' },
    ],
    security: [{ apiKey: [] }],
    paths: {
      '/functions/v1/tryon-api': {
        post: {
          operationId: 'createTryOn',
          summary: 'Generate a try-on image',
          description: 'Synchronous: the call returns when the image is stored. Test keys (`vto_test_…`) always use the offline engine and are billed by the same rules.',
          parameters: [
            {
              name: 'X-Tryon-Scenario', in: 'header', required: false, schema: headerSchema(scenarioHeaderSchema),
              description: 'Test keys only: forces an outcome. `content_rejected` (422), `generation_failed` (500); for wedding-dress requests `train_score_low`, `train_score_unavailable`, `train_pretreatment_unavailable`, `bridal_preprocessing_crash` (503). A live key sending it, an unknown value or a bridal one on a standard request get 400.',
            },
            {
              name: 'Idempotency-Key', in: 'header', required: false, schema: headerSchema(idempotencyKeyHeaderSchema),
              description: 'Makes a retry safe for 24 hours: the same key with the same body returns the original response (header `Idempotent-Replayed: true`) without charging again; the same key with another body gets 422 `idempotency_key_reused`; while the first call runs, 409 `idempotency_key_in_progress`.',
            },
            {
              name: 'Origin', in: 'header', required: false, schema: { type: 'string', examples: ['https://shop.example.com'] },
              description: 'Sent by browsers. Required when the key is restricted to origins; a missing or unlisted origin gets 403 `origin_not_allowed`.',
            },
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: ref('TryOnRequest'),
                examples: {
                  standard: { value: { userPhoto: 'https://example.com/me.jpg', productImage: 'https://example.com/shirt.png', clothingType: 'T-shirt' } },
                  weddingDress: { value: { userPhoto: 'data:image/jpeg;base64,<BASE64_DATA>', productImage: 'https://example.com/gown.png', productType: 'wedding-dress', locale: 'fr' } },
                },
              },
            },
          },
          responses: {
            '200': {
              description: 'The image is stored at `resultUrl`. Also the answer to a wedding-dress call whose train did not come out (`bridal.applied` false, refunded).',
              headers: { 'Idempotent-Replayed': { description: '`true` when this is the stored response of an earlier call with the same `Idempotency-Key`.', schema: { type: 'string', const: 'true' } } },
              content: {
                'application/json': {
                  schema: ref('TryOnSuccess'),
                  examples: {
                    standard: { value: { ...sampleResult, creditsRemaining: 41, creditsCharged: 1 } },
                    trainRendered: { value: { ...sampleResult, creditsRemaining: 39, creditsCharged: 2, bridal: { applied: true, trainScore: 0.71, reason: 'train_rendered' } } },
                    trainScoreLow: { value: { ...sampleResult, shortId: null, creditsRemaining: 41, creditsCharged: 0, bridal: { applied: false, trainScore: 0.12, reason: 'train_score_low' } } },
                    scoreUnavailable: { value: { ...sampleResult, creditsRemaining: 39, creditsCharged: 2, bridal: { applied: true, trainScore: null, reason: 'score_unavailable' } } },
                    trainPretreatmentUnavailable: { value: { ...sampleResult, creditsRemaining: 40, creditsCharged: 1, bridal: { applied: false, trainScore: null, reason: 'train_pretreatment_unavailable' } } },
                  },
                },
              },
            },
            ...errorResponses(),
          },
        },
        options: {
          operationId: 'preflightTryOn',
          summary: 'CORS preflight',
          description: 'Answered for any origin with the allowed headers (`X-API-Key`, `Content-Type`, `X-Tryon-Scenario`, `Idempotency-Key`) and `Access-Control-Max-Age: 7200`; the key is checked on the real request.',
          security: [],
          responses: { '204': { description: 'Preflight accepted.' } },
        },
      },
      '/functions/v1/tryon-api/s/{shortId}': {
        get: {
          operationId: 'openShareLink',
          summary: 'Open the share link of a result',
          description:
            'The public link of a delivered result, made of its `shortId`: no key, and nothing but the image (no account, key, shop or page). ' +
            'A wedding-dress result whose train did not come out has no `shortId`, so no link. A deleted result answers 404 like an unknown one.',
          security: [],
          parameters: [
            { name: 'shortId', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9A-Za-z]{10}$' }, description: 'The `shortId` of a try-on response.' },
          ],
          responses: {
            '302': {
              description: 'By default: a redirect to the result image (`resultUrl`). Supabase serves functions\' `text/html` as `text/plain` unless the project has a custom domain, so a redirect is what works everywhere.',
              headers: {
                Location: { description: 'The result image.', schema: { type: 'string', format: 'uri' } },
                'Cache-Control': { description: 'Cached like the result itself.', schema: { type: 'string', const: RESULT_CACHE_CONTROL } },
              },
            },
            '200': {
              description: 'Where the function is served on a custom domain (`TRYON_SHARE_PAGES=1`): a small page showing the image, with `og:image` and `twitter:card` tags so chat apps show a preview. Cached like the result.',
              content: { 'text/html': { schema: { type: 'string' } } },
            },
            '404': {
              description: 'Unknown id, a result not delivered, or a deleted one: the edge proxy\'s answer for a wrong path.',
              content: { 'application/json': { schema: ref('GatewayNotFound'), examples: { unknown: { value: { error: 'requested path is invalid' } } } } },
            },
          },
        },
      },
    },
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: '`vto_live_…` or `vto_test_…`. Sent as a header only: a key in the query string is refused with 401.' },
      },
      schemas: componentSchemas(),
    },
  }
}

export const openApiText = () => `${JSON.stringify(openApiDocument(), null, 2)}\n`

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(OPENAPI_FILE, openApiText())
  console.log(`wrote ${OPENAPI_FILE}`)
}
