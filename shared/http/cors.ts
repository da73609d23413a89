import { cors } from 'hono/cors'

/**
 * The origin a browser sent, in the form keys are configured with
 * (lowercase scheme://host[:port]); null when absent or not a web origin.
 */
export function normalizeOrigin(header: string | undefined | null): string | null {
  if (!header || header === 'null') return null
  try {
    const url = new URL(header)
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return null
    return url.origin
  } catch {
    return null
  }
}

/**
 * Preflights are answered for any origin: the key is not sent with a preflight, so the
 * per-key allow-list is enforced on the real request, whose refusal the page can read.
 */
export const storefrontCors = () =>
  cors({
    origin: (origin) => normalizeOrigin(origin),
    allowMethods: ['POST', 'OPTIONS'],
    allowHeaders: ['X-API-Key', 'Content-Type', 'X-Tryon-Scenario', 'Idempotency-Key'],
    exposeHeaders: ['X-Request-Id', 'Idempotent-Replayed'],
    maxAge: 7200,
    credentials: false,
  })
