import { importPKCS8, SignJWT } from 'jose'
import { excerpt, ProviderError, requestJson } from './http.ts'
import { asRecord } from './json.ts'
import type { ProviderRuntime } from './runtime.ts'

/** The fields of a Google service-account key file that the OAuth JWT flow needs. */
export interface ServiceAccount {
  client_email: string
  private_key: string
  private_key_id?: string
  token_uri: string
}

export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token'
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform'

/** Parses a service-account key file (its JSON text); throws an error naming what is missing, for startup. */
export function parseServiceAccount(json: string): ServiceAccount {
  let parsed: Record<string, unknown>
  try {
    parsed = asRecord(JSON.parse(json))
  } catch {
    throw new Error('VERTEX_SERVICE_ACCOUNT_JSON is not valid JSON (paste the whole service-account key file)')
  }
  const { client_email, private_key, private_key_id, token_uri } = parsed
  if (typeof client_email !== 'string' || client_email === '') throw new Error('VERTEX_SERVICE_ACCOUNT_JSON has no client_email')
  if (typeof private_key !== 'string' || !private_key.includes('-----BEGIN PRIVATE KEY-----')) {
    throw new Error('VERTEX_SERVICE_ACCOUNT_JSON has no PKCS#8 private_key')
  }
  return {
    client_email,
    private_key,
    private_key_id: typeof private_key_id === 'string' ? private_key_id : undefined,
    token_uri: typeof token_uri === 'string' && token_uri !== '' ? token_uri : GOOGLE_TOKEN_URI,
  }
}

/** Where an adapter gets its bearer token; `invalidate` drops a token the API refused. */
export interface AccessTokenSource {
  token(signal?: AbortSignal): Promise<string>
  invalidate(): void
}

/** A token given as configuration (e.g. `gcloud auth print-access-token`); it is never refreshed. */
export function staticAccessToken(token: string): AccessTokenSource {
  return { token: async () => token, invalidate: () => {} }
}

/** Refresh this long before the token's stated expiry, so a token never expires mid-request. */
const EXPIRY_MARGIN_MS = 60_000
const ASSERTION_LIFETIME_S = 3600

/**
 * OAuth 2.0 for service accounts (developers.google.com/identity/protocols/oauth2/service-account): a JWT
 * signed RS256 (with `jose`, on WebCrypto), exchanged at the token endpoint for an access token, cached until
 * shortly before it expires; concurrent requests share one exchange.
 */
export function serviceAccountTokens(account: ServiceAccount, runtime: ProviderRuntime, scope = CLOUD_PLATFORM_SCOPE): AccessTokenSource {
  let cached: { token: string; refreshAt: number } | undefined
  let pending: Promise<string> | undefined
  let signingKey: Promise<CryptoKey> | undefined

  async function exchange(signal?: AbortSignal): Promise<string> {
    signingKey ??= importPKCS8(account.private_key, 'RS256')
    const key = await signingKey.catch((error) => {
      signingKey = undefined
      throw new ProviderError(
        'auth',
        `the service-account private key could not be imported: ${error instanceof Error ? error.message : String(error)}`,
      )
    })
    const issuedAt = Math.floor(runtime.now() / 1000)
    const assertion = await new SignJWT({ scope })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(account.private_key_id && { kid: account.private_key_id }) })
      .setIssuer(account.client_email)
      .setAudience(account.token_uri)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + ASSERTION_LIFETIME_S)
      .sign(key)
    const answer = await requestJson(runtime, {
      provider: 'google-oauth',
      url: account.token_uri,
      method: 'POST',
      form: { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion },
      signal,
      attemptTimeoutMs: 15_000,
      maxResponseBytes: 64 * 1024,
    })
    const body = asRecord(answer.body)
    if (answer.status !== 200 || typeof body.access_token !== 'string' || body.access_token === '') {
      throw new ProviderError('auth', `the token endpoint answered HTTP ${answer.status}: ${excerpt(answer.body)}`)
    }
    const lifetimeMs = (typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 3600) * 1000
    cached = { token: body.access_token, refreshAt: runtime.now() + Math.max(0, lifetimeMs - EXPIRY_MARGIN_MS) }
    return body.access_token
  }

  return {
    async token(signal) {
      if (cached && runtime.now() < cached.refreshAt) return cached.token
      pending ??= exchange(signal).finally(() => {
        pending = undefined
      })
      return pending
    },
    invalidate() {
      cached = undefined
    },
  }
}
