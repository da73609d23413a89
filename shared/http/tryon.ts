import { createRoute, z, type RouteHandler } from '@hono/zod-openapi'
import type { MiddlewareHandler } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { KeyMode } from '../auth/api-key.ts'
import type { Deps } from '../deps.ts'
import { LargeString } from '../encoding/json-bytes.ts'
import type { ProductKind } from '../engine/types.ts'
import type { TryOnInput } from '../tryon/input.ts'
import { runTryOn } from '../tryon/run.ts'
import { scenarios, type Scenario } from '../tryon/scenarios.ts'
import { catalogued, insufficientCredits, limitExceeded } from './errors.ts'
import { ClientClosedRequest, keyRefusal, type Env } from './middleware.ts'
import { type IMAGE_FIELDS, invalid, readTryOnBody, type TryOnBodyRead } from './request.ts'
import { errorResponses } from './responses.ts'

/**
 * POST /functions/v1/tryon-api, in one place: the request and response bodies as zod schemas (the route validates with
 * them, the OpenAPI document is generated from them, and tests parse real responses with them), the route, and its
 * handler. The try-on itself runs in shared/tryon/run.ts.
 */
const IMAGE_FIELD =
  'An image as a public http(s) URL (recommended server to server), a `data:image/<subtype>;base64,<DATA>` URI, or raw base64. ' +
  'JPEG, PNG or WebP, recognised from the bytes; at least 1 KB, at most 10 MB and 40 megapixels.'

const image = (what: string) =>
  z
    .string({ error: 'is required: a public image URL, a data URI or base64' })
    .min(1, 'must not be empty')
    .meta({ description: `${what} ${IMAGE_FIELD}` })

/** A NUL, or half of a UTF-16 surrogate pair: Postgres text holds neither (0x00 is refused, a lone half is not UTF-8). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the NUL is the character refused.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

const STORABLE = 'must not contain a NUL character (\\u0000) or an unpaired surrogate'
/** Text that reaches the database. */
const storable = (text: string) => !UNSTORABLE.test(text)

const optionalText = (max: number) => z.string().trim().max(max, `must be at most ${max} characters`).refine(storable, STORABLE).nullish()

/** The JSON body of POST /functions/v1/tryon-api (docs/api.md, "Request"). Unknown fields are ignored. */
export const tryOnRequestSchema = z
  .object({
    userPhoto: image('The shopper photo.'),
    productImage: image('The product (garment) image.'),
    clothingType: optionalText(100).meta({
      description: 'Category hint, free text (`T-shirt`, `Jeans`, `Dress`, `Jacket`…); without it the engine guesses from the garment.',
    }),
    productType: optionalText(100).meta({
      description:
        "`wedding-dress` renders the gown's train and costs 2 credits (refund rules in the description); " +
        'any other value is a standard try-on.',
    }),
    parentUrl: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
      .max(2048, 'must be at most 2048 characters')
      .refine(storable, STORABLE)
      .nullish()
      .meta({ description: 'URL of the product page, for attribution and analytics.' }),
    locale: z
      .string()
      .regex(/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/, 'must be a language code such as en or fr-CA')
      .nullish()
      .meta({ description: 'Output locale hint, a language code such as `en`, `fr` or `pt-BR`.' }),
  })
  .openapi('TryOnRequest')

export type TryOnFields = z.infer<typeof tryOnRequestSchema>

/** Printable ASCII without spaces, as Stripe and the IETF draft take it; long enough for a UUID or a hash. */
const idempotencyKeySchema = z.string().regex(/^[\x21-\x7e]{1,255}$/, 'must be 1 to 255 printable ASCII characters without spaces')

const scenarioNames = Object.keys(scenarios) as [keyof typeof scenarios, ...(keyof typeof scenarios)[]]

/** The request headers the route reads besides the key (a security scheme). Names are matched without case. */
export const tryOnHeadersSchema = z.object({
  'X-Tryon-Scenario': z
    .enum(scenarioNames, { error: `must be one of: ${scenarioNames.join(', ')}` })
    .optional()
    .openapi({
      description:
        'Test keys only: forces an outcome. `content_rejected` (422), `generation_failed` (500), `quality_failed` (a ' +
        "checked key's result fails its check: delivered, 0 credits); for wedding-dress requests `train_score_low`, " +
        '`train_score_unavailable`, `train_pretreatment_unavailable`, `bridal_preprocessing_crash` (503). ' +
        'A live key sending it, an unknown value or a bridal one on a standard request get 400.',
    }),
  'Idempotency-Key': idempotencyKeySchema.optional().openapi({
    description:
      'Makes a retry safe for 24 hours: the same key with the same body returns the original response (header ' +
      '`Idempotent-Replayed: true`) without charging again; the same key with another body gets 422 `idempotency_key_reused`; ' +
      'while the first call runs, 409 `idempotency_key_in_progress`.',
  }),
  Origin: z
    .string()
    .optional()
    .openapi({
      examples: ['https://shop.example.com'],
      description:
        'Sent by browsers. Required when the key is restricted to origins; a missing or unlisted origin gets 403 `origin_not_allowed`.',
    }),
})

export type TryOnHeaders = z.infer<typeof tryOnHeadersSchema>

export const bridalReasonSchema = z
  .enum(['train_rendered', 'train_score_low', 'score_unavailable', 'train_pretreatment_unavailable'])
  .meta({
    description:
      'Why the wedding-dress call was billed as it was: `train_rendered` (2 credits), `train_score_low` (the train did not come out: ' +
      '0 credits, `shortId` null), `score_unavailable` (the scorer could not run: 2 credits), `train_pretreatment_unavailable` ' +
      '(the gown without its train at the standard price: 1 credit).',
  })

export const bridalSchema = z
  .object({
    applied: z.boolean().meta({ description: '`true` when the train was rendered satisfactorily, `false` when it was not rendered.' }),
    trainScore: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .meta({ description: 'Quality of the rendered train, 0 to 1; `null` when the scorer was unavailable or no train was prepared.' }),
    reason: bridalReasonSchema,
  })
  .meta({ description: 'Present in wedding-dress responses only.' })
  .openapi('Bridal')

export const qualitySchema = z
  .object({
    checked: z
      .boolean()
      .meta({ description: '`false` when the check could not run (the judge was down, blocked or off-schema): billed as usual.' }),
    passed: z
      .boolean()
      .nullable()
      .meta({ description: '`false`: the result failed the check and was delivered free (`creditsCharged` 0, `shortId` null).' }),
    score: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .meta({ description: 'How well the result passed, 0 to 1; `null` when the check could not run.' }),
    issues: z.array(z.string()).meta({
      description:
        'What failed: `framing_changed`, `person_changed`, `colour_changed`, `garment_missing`, `garment_wrong_region`, ' +
        '`garment_off_body`, `garment_not_applied`, `details_lost`, `artifacts` (`scenario_forced` by a test scenario).',
    }),
  })
  .meta({ description: 'Present when the key\'s results are checked before they are billed (docs/billing.md, "Checked results").' })
  .openapi('Quality')

export const tryOnSuccessSchema = z
  .object({
    success: z.literal(true),
    tryOnId: z.uuid().meta({ description: 'Identifier of the generation.' }),
    shortId: z
      .string()
      .regex(/^[0-9A-Za-z]{10}$/)
      .nullable()
      .meta({ description: 'Short shareable identifier (10 base62 characters); `null` when the wedding-dress train verdict fails.' }),
    resultUrl: z.url().meta({ description: 'Public, permanent URL of the generated image.' }),
    creditsRemaining: z.number().meta({ description: 'The account balance after this call.' }),
    creditsCharged: z.number().int().min(0).max(2).meta({ description: 'What this call cost after any refund: 0, 1 or 2.' }),
    bridal: bridalSchema.optional(),
    quality: qualitySchema.optional(),
  })
  .openapi('TryOnSuccess')

export type TryOnSuccessBody = z.infer<typeof tryOnSuccessSchema>

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

export interface ParsedTryOn {
  input: TryOnInput
  /** Present when the caller sent Idempotency-Key. */
  idempotency?: { key: string; requestHash: Uint8Array }
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

export function productKindOf(productType: string | null | undefined): ProductKind {
  return productType === 'wedding-dress' ? 'wedding-dress' : 'standard'
}

function checkScenario(scenario: Scenario | undefined, keyMode: KeyMode, productKind: ProductKind): Scenario | undefined {
  if (scenario === undefined) return undefined
  if (keyMode !== 'test') throw invalid('X-Tryon-Scenario is accepted with test keys (vto_test_) only')
  if (scenarios[scenario] === 'wedding-dress' && productKind !== 'wedding-dress') {
    throw invalid(`X-Tryon-Scenario ${scenario} applies to productType "wedding-dress" only`)
  }
  return scenario
}

/** The try-on's handler, after authenticate, the body's size limit and readBody (shared/app.ts mounts them): steps 2-7. */
export function tryOnHandler(deps: Deps): RouteHandler<typeof tryOnRoute, Env> {
  return async (c) => {
    const credential = c.get('credential')
    const origin = c.get('origin')
    const { input, idempotency } = await tryOnInputOf(c.req.valid('json'), c.req.valid('header'), c.get('body'), credential.mode)

    const tryOnId = deps.ids.tryOnId()
    const clientHash = await deps.clients.hash(deps.clients.addressOf(c.req.raw, c.env))
    const begun = await deps.billing.begin({
      keyHash: credential.keyHash,
      origin,
      tryOnId,
      productKind: input.productKind,
      clothingType: input.clothingType,
      parentUrl: input.parentUrl,
      locale: input.locale,
      idempotency,
      clientHash,
      now: deps.clock(),
    })
    c.set('keyChecked', true)
    switch (begun.verdict) {
      case 'ok':
        break
      case 'insufficient_credits':
        throw insufficientCredits()
      case 'replay':
        return c.json(begun.response as TryOnSuccessBody, 200, { 'Idempotent-Replayed': 'true' })
      case 'idempotency_in_progress':
        throw catalogued('idempotency_key_in_progress')
      case 'idempotency_mismatch':
        throw catalogued('idempotency_key_reused')
      case 'rate_limited':
      case 'daily_cap_reached':
      case 'free_deliveries_exhausted':
        throw limitExceeded(begun.verdict, begun.retryAfterSeconds)
      default:
        throw keyRefusal(begun.verdict)
    }

    const result = await runTryOn(deps, {
      tryOnId,
      keyMode: credential.mode,
      input,
      requestId: c.get('requestId'),
      qualityCheck: begun.qualityCheck,
    })
    return c.json(result, 200)
  }
}

/** Reads the body ahead of the route's validators, which then validate what it read (see readTryOnBody). */
export function readBody(deps: Deps): MiddlewareHandler<Env> {
  return async (c, next) => {
    let read: TryOnBodyRead
    try {
      read = await readTryOnBody(c.req.raw, deps.config.maxBodyBytes)
    } catch (error) {
      // What readTryOnBody refuses is an ApiError; anything else is the body stream's own error: the client stopped
      // sending (Node: "aborted", Deno: BadResource). Not a failure of ours, and nobody is left to read an answer.
      if (!(error instanceof HTTPException)) throw new ClientClosedRequest(error)
      throw error
    }
    c.set('body', read)
    // The route's json validator asks c.req.json(), which would re-serialise and parse a cached body: answer it directly.
    const parsed = Promise.resolve(read.forSchema)
    c.req.json = <T>() => parsed as Promise<T>
    await next()
  }
}
