import { z } from '@hono/zod-openapi'
import { errorCatalogue, errorCodes, type ErrorCode } from './errors.ts'

/** The error bodies and the error responses of every route, written from the catalogue (shared/http/errors.ts). */

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

export type ErrorResponseBody = z.infer<typeof errorBodySchema>

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
export function errorResponses() {
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
