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

/** The headers our own clients send (the widget, `fetch`, curl). */
const API_HEADERS = ['X-API-Key', 'Content-Type', 'X-Tryon-Scenario', 'Idempotency-Key']

/**
 * The headers `supabase.functions.invoke()` adds to every call from a browser, read in supabase/supabase-js
 * v2.109.0 (the version we pin): `apikey` and `Authorization: Bearer …` from fetchWithAuth
 * (packages/core/supabase-js/src/lib/fetch.ts), `X-Client-Info` from DEFAULT_HEADERS
 * (packages/core/supabase-js/src/lib/constants.ts), and `x-region` when a region is chosen
 * (packages/core/functions-js/src/FunctionsClient.ts, invoke(); with `?forceFunctionRegion=`).
 * supabase-js's own list for Edge Functions (packages/core/supabase-js/src/cors.ts) has the first three;
 * its `x-retry-count` is postgrest-js's, never sent to a function. Opt-in trace propagation
 * (`tracePropagation: { enabled: true }`: traceparent, tracestate, baggage) is not allowed. The handler
 * ignores all of these: the key is `X-API-Key` alone.
 */
const SUPABASE_CLIENT_HEADERS = ['Authorization', 'apikey', 'X-Client-Info', 'X-Region']

/**
 * Preflights are answered for any origin: the key is not sent with a preflight, so the
 * per-key allow-list is enforced on the real request, whose refusal the page can read.
 * The header list is explicit: requested headers are never echoed back.
 */
export const storefrontCors = () =>
  cors({
    origin: (origin) => normalizeOrigin(origin),
    allowMethods: ['POST', 'OPTIONS'],
    allowHeaders: [...API_HEADERS, ...SUPABASE_CLIENT_HEADERS],
    exposeHeaders: ['X-Request-Id', 'Idempotent-Replayed', 'Retry-After'],
    maxAge: 7200,
    credentials: false,
  })
