import { createRoute, z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { BillingStore } from '../billing/store.ts'
import { RESULT_CACHE_CONTROL, type ResultStore } from '../storage/result-store.ts'
import { GATEWAY_NOT_FOUND } from './errors.ts'
import { gatewayNotFoundSchema } from './responses.ts'

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

/** What the share link reads: the delivered result's path, its public URL, and whether pages are served. */
export interface ShareDeps {
  billing: Pick<BillingStore, 'sharedResult'>
  store: Pick<ResultStore, 'urlOf'>
  sharePages: boolean
}

/** A shortId as the service makes them (shared/tryon/ids.ts): anything else is unknown without asking the database. */
const SHORT_ID = /^[0-9A-Za-z]{10}$/

/**
 * `GET /functions/v1/tryon-api/s/<shortId>`: the public share link of a result. No key; it reveals the image and
 * nothing else (no account, key, shop or page). By default a redirect to the image, which works on Supabase's
 * default domains; with `sharePages` (a custom domain, where text/html reaches the browser) a small page whose
 * og:image and twitter:card tags let chat apps show a preview. Unknown, undelivered or deleted: the edge's 404.
 */
export function shareHandler(deps: ShareDeps) {
  return async (c: Context) => {
    const shortId = c.req.param('shortId') ?? ''
    const path = SHORT_ID.test(shortId) ? await deps.billing.sharedResult(shortId) : null
    if (!path) return c.json(GATEWAY_NOT_FOUND, 404)
    const imageUrl = deps.store.urlOf(path)
    // Cached like the result itself; share links are not for search engines.
    const headers = { 'Cache-Control': RESULT_CACHE_CONTROL, 'X-Robots-Tag': 'noindex', 'Referrer-Policy': 'no-referrer' }
    if (!deps.sharePages) return c.body(null, 302, { ...headers, Location: imageUrl })
    return c.html(sharePage(imageUrl), 200, {
      ...headers,
      'Content-Security-Policy': [
        "default-src 'none'",
        `img-src ${new URL(imageUrl).origin}`,
        "style-src 'unsafe-inline'",
        "base-uri 'none'",
        "form-action 'none'",
      ].join('; '),
      'X-Content-Type-Options': 'nosniff',
    })
  }
}

const escapeAttribute = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** The page a chat app reads for its preview, and a person sees: the image alone. */
export function sharePage(imageUrl: string): string {
  const image = escapeAttribute(imageUrl)
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Virtual try-on</title>
<meta property="og:type" content="website">
<meta property="og:title" content="Virtual try-on">
<meta property="og:image" content="${image}">
<meta name="twitter:card" content="summary_large_image">
<meta name="twitter:image" content="${image}">
<style>body{margin:0;min-height:100vh;display:grid;place-items:center;background:#111}img{max-width:100vw;max-height:100vh}</style>
</head>
<body><img src="${image}" alt="Virtual try-on"></body>
</html>
`
}
