import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Env } from 'hono'

/** The API key as the document's security scheme; registered with the routes (shared/app.ts). */
export const API_KEY_SCHEME = {
  type: 'apiKey',
  in: 'header',
  name: 'X-API-Key',
  description: '`vto_live_…` or `vto_test_…`. Sent as a header only: a key in the query string is refused with 401.',
} as const

/** The public path of the function on Supabase; the document names its routes under it. */
export const PUBLIC_PATH = '/functions/v1/tryon-api'

const SUMMARY = 'Virtual try-on: a shopper photo and a product image in, a permanent image URL out.'

const description = [
  'Generates a virtual try-on image from a shopper photo and a product image, billed in prepaid credits.',
  '**Credits.** A standard try-on costs 1 credit; `productType: "wedding-dress"` reserves 2 and settles by the `bridal` verdict: ' +
    '2 when the train is rendered, 0 when it scores low (the result is still delivered, `shortId` is null), 2 when the score is ' +
    'unavailable, 1 when only the train pre-treatment cannot run. An error never costs a credit.',
  '**Order of checks.** A key that cannot be used gets its 401/403 before anything about the body is said; a usable key with a bad ' +
    "body gets 400 and pays nothing; then the key's abuse limits (429, decided in the same database call that reserves the credits); " +
    '402 answers a well-formed request within the limits only.',
  '**Abuse limits.** Per key: try-ons per minute, try-ons per minute per client address, credits per day, and refunded ' +
    'wedding-dress results per day, in total and per client address. Keys restricted to origins (browser keys) start with 10 ' +
    'try-ons a minute per address, 20 refunded results a day and 5 per address; other keys with none. A 429 (`rate_limited`, ' +
    '`daily_cap_reached`, `free_deliveries_exhausted`) carries `Retry-After` in seconds and charges nothing.',
  '**Browsers.** Preflights are answered for any origin; a key restricted to origins requires a matching `Origin` on the real ' +
    'request (a soft control: servers can send any `Origin`).',
  '**Wrong path.** The edge proxy in front of the function answers `404 {"error":"requested path is invalid"}` (schema ' +
    '`GatewayNotFound`) with an `sb-request-id` header; that is not an error of the service.',
].join('\n\n')

/** The OpenAPI 3.1 document of the service, generated from its routes (`npm run openapi` writes it to openapi.json). */
export function openApiDocument<E extends Env>(app: OpenAPIHono<E>) {
  const document = app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: { title: 'Try-on API', version: '1', description },
    servers: [
      {
        url: 'https://{projectRef}.supabase.co',
        description: 'Supabase Edge Functions',
        variables: { projectRef: { default: 'your-project-ref' } },
      },
      { url: 'http://127.0.0.1:54321', description: 'Dev stack (`npm start`)' },
    ],
    security: [{ apiKey: [] }],
  })
  // OpenAPI 3.1's info.summary, which the generator's types (3.0's) lack.
  return { ...document, info: { title: 'Try-on API', version: '1', summary: SUMMARY, description } }
}

export const openApiText = <E extends Env>(app: OpenAPIHono<E>) => `${JSON.stringify(openApiDocument(app), null, 2)}\n`
