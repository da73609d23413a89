import { z } from '@hono/zod-openapi'
import { scenarios } from '../tryon/outcomes.ts'
import { errorCodes } from './errors.ts'

/**
 * The request and response bodies of POST /functions/v1/tryon-api as zod schemas: the route validates with them,
 * the OpenAPI document is generated from them, and tests parse real responses with them.
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

/** The JSON body of POST /functions/v1/tryon-api (spec §4). Unknown fields are ignored. */
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
        'Test keys only: forces an outcome. `content_rejected` (422), `generation_failed` (500); for wedding-dress requests ' +
        '`train_score_low`, `train_score_unavailable`, `train_pretreatment_unavailable`, `bridal_preprocessing_crash` (503). ' +
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
  })
  .openapi('TryOnSuccess')

export const errorCodeSchema = z
  .enum(errorCodes)
  .meta({ description: 'Machine-readable cause; the HTTP status follows from it.' })
  .openapi('ErrorCode')

export const errorBodySchema = z
  .object({
    success: z.literal(false),
    error: z
      .string()
      .meta({ description: 'A message for people. The 401 and 402 texts are fixed: `Authentication required`, `Insufficient credits`.' }),
    errorCode: errorCodeSchema,
  })
  .openapi('Error')

/** What the edge proxy in front of the function answers for a wrong path; not an error of the service. */
export const gatewayNotFoundSchema = z.object({ error: z.literal('requested path is invalid') }).openapi('GatewayNotFound')

export type TryOnSuccessBody = z.infer<typeof tryOnSuccessSchema>
export type ErrorResponseBody = z.infer<typeof errorBodySchema>
