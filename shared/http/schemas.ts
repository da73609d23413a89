import { z } from 'zod'
import { errorStatus, type ErrorCode } from './errors.ts'
import { scenarios } from '../tryon/outcomes.ts'

/**
 * The response bodies of POST /functions/v1/tryon-api as zod schemas: the OpenAPI document is generated
 * from them and from the request schema in request.ts, and tests parse real responses with them.
 */

export const bridalReasonSchema = z.enum(['train_rendered', 'train_score_low', 'score_unavailable', 'train_pretreatment_unavailable']).meta({
  description:
    'Why the wedding-dress call was billed as it was: `train_rendered` (2 credits), `train_score_low` (the train did not come out: 0 credits, ' +
    '`shortId` null), `score_unavailable` (the scorer could not run: 2 credits), `train_pretreatment_unavailable` ' +
    '(the gown without its train at the standard price: 1 credit).',
})

export const bridalSchema = z
  .object({
    applied: z.boolean().meta({ description: '`true` when the train was rendered satisfactorily, `false` when it was not rendered.' }),
    trainScore: z.number().min(0).max(1).nullable().meta({ description: 'Quality of the rendered train, 0 to 1; `null` when the scorer was unavailable or no train was prepared.' }),
    reason: bridalReasonSchema,
  })
  .meta({ description: 'Present in wedding-dress responses only.' })

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

const errorCodes = Object.keys(errorStatus) as [ErrorCode, ...ErrorCode[]]

export const errorCodeSchema = z.enum(errorCodes).meta({ description: 'Machine-readable cause; the HTTP status follows from it.' })

export const errorBodySchema = z
  .object({
    success: z.literal(false),
    error: z.string().meta({ description: 'A message for people. The 401 and 402 texts are fixed: `Authentication required`, `Insufficient credits`.' }),
    errorCode: errorCodeSchema,
  })

/** What the edge proxy in front of the function answers for a wrong path; not an error of the service. */
export const gatewayNotFoundSchema = z.object({ error: z.literal('requested path is invalid') })

export const scenarioHeaderSchema = z.enum(Object.keys(scenarios) as [keyof typeof scenarios, ...(keyof typeof scenarios)[]])

/** Idempotency-Key: printable ASCII without spaces, as Stripe and the IETF draft take it. */
export const idempotencyKeyHeaderSchema = z.string().regex(/^[\x21-\x7e]{1,255}$/).max(255)

export type TryOnSuccessBody = z.infer<typeof tryOnSuccessSchema>
export type ErrorResponseBody = z.infer<typeof errorBodySchema>
