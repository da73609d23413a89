import { createRoute, z } from '@hono/zod-openapi'
import { errorCatalogue, type ErrorCode } from './errors.ts'
import { errorBodySchema, gatewayNotFoundSchema, tryOnHeadersSchema, tryOnRequestSchema, tryOnSuccessSchema } from './schemas.ts'
import { RESULT_CACHE_CONTROL } from '../storage/result-store.ts'

/** The routes of the function: what they take, what they answer. The handlers are in shared/app.ts and share.ts. */

const STATUS_TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Authentication required',
  402: 'Insufficient credits',
  403: 'Forbidden',
  405: 'Method not allowed',
  409: 'Conflict',
  413: 'Payload too large',
  422: 'Unprocessable content',
  429: 'Too many requests',
  500: 'Generation or infrastructure error',
  503: 'Service unavailable',
}

const RESPONSE_HEADERS: Record<number, Record<string, unknown>> = {
  405: { Allow: { description: 'The methods the endpoint takes.', schema: { type: 'string', const: 'POST, OPTIONS' } } },
  429: {
    'Retry-After': {
      description:
        'Seconds until the limit lets a request through again: the end of the minute or of the UTC day, or a few seconds when ' +
        'try-ons still running hold the rest.',
      required: true,
      schema: { type: 'integer', minimum: 1 },
    },
  },
}

/** The error responses, one per status, each listing its codes with when they happen and an example, from the catalogue. */
function errorResponses() {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const [code, { status }] of Object.entries(errorCatalogue) as [ErrorCode, { status: number }][]) {
    byStatus.set(status, [...(byStatus.get(status) ?? []), code])
  }
  const statuses = [...byStatus].sort(([a], [b]) => a - b)
  return Object.fromEntries(
    statuses.map(([status, codes]) => [
      String(status),
      {
        description: `${STATUS_TITLES[status] ?? 'Error'}: ${codes.map((code) => `\`${code}\``).join(', ')}. Nothing is charged.`,
        ...(RESPONSE_HEADERS[status] && { headers: RESPONSE_HEADERS[status] }),
        content: {
          'application/json': {
            schema: errorBodySchema.extend({ errorCode: z.enum(codes as [ErrorCode, ...ErrorCode[]]) }),
            examples: Object.fromEntries(
              codes.map((code) => [
                code,
                { summary: errorCatalogue[code].when, value: { success: false, error: errorCatalogue[code].message, errorCode: code } },
              ]),
            ),
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

/** POST /functions/v1/tryon-api: the contract of the service. */
export const tryOnRoute = createRoute({
  method: 'post',
  path: '/',
  operationId: 'createTryOn',
  summary: 'Generate a try-on image',
  description:
    'Synchronous: the call returns when the image is stored. Test keys (`vto_test_…`) always use the offline engine and are billed ' +
    'by the same rules.',
  request: {
    headers: tryOnHeadersSchema,
    body: {
      required: true,
      content: {
        'application/json': {
          schema: tryOnRequestSchema,
          examples: {
            standard: {
              value: { userPhoto: 'https://example.com/me.jpg', productImage: 'https://example.com/shirt.png', clothingType: 'T-shirt' },
            },
            weddingDress: {
              value: {
                userPhoto: 'data:image/jpeg;base64,<BASE64_DATA>',
                productImage: 'https://example.com/gown.png',
                productType: 'wedding-dress',
                locale: 'fr',
              },
            },
          },
        },
      },
    },
  },
  responses: {
    200: {
      description:
        'The image is stored at `resultUrl`. Also the answer to a wedding-dress call whose train did not come out ' +
        '(`bridal.applied` false, refunded).',
      headers: {
        'Idempotent-Replayed': {
          description: '`true` when this is the stored response of an earlier call with the same `Idempotency-Key`.',
          schema: { type: 'string', const: 'true' },
        },
      },
      content: {
        'application/json': {
          schema: tryOnSuccessSchema,
          examples: {
            standard: { value: { ...sampleResult, creditsRemaining: 41, creditsCharged: 1 } },
            trainRendered: {
              value: {
                ...sampleResult,
                creditsRemaining: 39,
                creditsCharged: 2,
                bridal: { applied: true, trainScore: 0.71, reason: 'train_rendered' },
              },
            },
            trainScoreLow: {
              value: {
                ...sampleResult,
                shortId: null,
                creditsRemaining: 41,
                creditsCharged: 0,
                bridal: { applied: false, trainScore: 0.12, reason: 'train_score_low' },
              },
            },
            scoreUnavailable: {
              value: {
                ...sampleResult,
                creditsRemaining: 39,
                creditsCharged: 2,
                bridal: { applied: true, trainScore: null, reason: 'score_unavailable' },
              },
            },
            trainPretreatmentUnavailable: {
              value: {
                ...sampleResult,
                creditsRemaining: 40,
                creditsCharged: 1,
                bridal: { applied: false, trainScore: null, reason: 'train_pretreatment_unavailable' },
              },
            },
          },
        },
      },
    },
    ...errorResponses(),
  },
})

/** OPTIONS, answered by the CORS middleware before any route: documented only. */
export const preflightRoute = createRoute({
  method: 'options',
  path: '/',
  operationId: 'preflightTryOn',
  summary: 'CORS preflight',
  description:
    'Answered for any origin with the allowed headers (`X-API-Key`, `Content-Type`, `X-Tryon-Scenario`, `Idempotency-Key`) and ' +
    '`Access-Control-Max-Age: 7200`; the key is checked on the real request.',
  security: [],
  responses: { 204: { description: 'Preflight accepted.' } },
})

/** GET /functions/v1/tryon-api/s/{shortId}: a result's public share link. */
export const shareRoute = createRoute({
  method: 'get',
  path: '/s/{shortId}',
  operationId: 'openShareLink',
  summary: 'Open the share link of a result',
  description:
    'The public link of a delivered result, made of its `shortId`: no key, and nothing but the image (no account, key, shop or page). ' +
    'A wedding-dress result whose train did not come out has no `shortId`, so no link. A deleted result answers 404 like an unknown one.',
  security: [],
  request: {
    // Any text reaches the handler, which answers the edge's 404 to what is not a shortId.
    params: z.object({
      shortId: z.string().openapi({ pattern: '^[0-9A-Za-z]{10}$', description: 'The `shortId` of a try-on response.' }),
    }),
  },
  responses: {
    302: {
      description:
        "By default: a redirect to the result image (`resultUrl`). Supabase serves functions' `text/html` as `text/plain` unless the " +
        'project has a custom domain, so a redirect is what works everywhere.',
      headers: {
        Location: { description: 'The result image.', schema: { type: 'string', format: 'uri' } },
        'Cache-Control': { description: 'Cached like the result itself.', schema: { type: 'string', const: RESULT_CACHE_CONTROL } },
      },
    },
    200: {
      description:
        'Where the function is served on a custom domain (`TRYON_SHARE_PAGES=1`): a small page showing the image, with `og:image` and ' +
        '`twitter:card` tags so chat apps show a preview. Cached like the result.',
      content: { 'text/html': { schema: z.string() } },
    },
    404: {
      description: "Unknown id, a result not delivered, or a deleted one: the edge proxy's answer for a wrong path.",
      content: {
        'application/json': { schema: gatewayNotFoundSchema, examples: { unknown: { value: { error: 'requested path is invalid' } } } },
      },
    },
  },
})
