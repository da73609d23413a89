import { createClient, FunctionsHttpError, type FunctionRegion } from '@supabase/supabase-js'

/**
 * A shop's own storefront code calling the try-on API with supabase-js, as docs/api.md shows it. The browser
 * test bundles this file with esbuild and runs it in Chromium, on the shop's origin.
 */
export async function tryOn(options: {
  supabaseUrl: string
  publishableKey: string
  apiKey: string
  body: Record<string, unknown>
  region?: FunctionRegion
}): Promise<{ status: number; body: unknown } | { status: 0; error: string }> {
  const supabase = createClient(options.supabaseUrl, options.publishableKey)
  const { data, error } = await supabase.functions.invoke('tryon-api', {
    body: options.body,
    headers: { 'X-API-Key': options.apiKey },
    region: options.region,
  })
  // A 4xx or 5xx from the function: its Response is the error's context, and its body is our JSON error.
  if (error instanceof FunctionsHttpError) {
    const response = error.context as Response
    return { status: response.status, body: await response.json() }
  }
  // FunctionsFetchError (the network, or a CORS refusal) or FunctionsRelayError.
  if (error) return { status: 0, error: `${error.name}: ${error.message}` }
  return { status: 200, body: data }
}
