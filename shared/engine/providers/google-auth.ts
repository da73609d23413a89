import { decodeBase64, encodeBase64 } from '../../images/base64.ts'
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
 * OAuth 2.0 for service accounts: a JWT signed RS256 with WebCrypto, exchanged at the token endpoint for an
 * access token, cached until shortly before it expires; concurrent requests share one exchange.
 */
export function serviceAccountTokens(account: ServiceAccount, runtime: ProviderRuntime, scope = CLOUD_PLATFORM_SCOPE): AccessTokenSource {
  let cached: { token: string; refreshAt: number } | undefined
  let pending: Promise<string> | undefined
  let signingKey: Promise<CryptoKey> | undefined

  async function exchange(signal?: AbortSignal): Promise<string> {
    signingKey ??= importPrivateKey(account.private_key)
    const key = await signingKey.catch((error) => {
      signingKey = undefined
      throw new ProviderError('auth', `the service-account private key could not be imported: ${error instanceof Error ? error.message : String(error)}`)
    })
    const issuedAt = Math.floor(runtime.now() / 1000)
    const assertion = await signJwt(key, { alg: 'RS256', typ: 'JWT', ...(account.private_key_id && { kid: account.private_key_id }) }, {
      iss: account.client_email,
      scope,
      aud: account.token_uri,
      iat: issuedAt,
      exp: issuedAt + ASSERTION_LIFETIME_S,
    })
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

async function importPrivateKey(pem: string): Promise<CryptoKey> {
  const body = pem.replace(/-----(BEGIN|END) PRIVATE KEY-----/g, '').replace(/\s+/g, '')
  const der = decodeBase64(body)
  if (!der) throw new Error('the PEM body is not base64')
  return crypto.subtle.importKey('pkcs8', new Uint8Array(der), { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['sign'])
}

async function signJwt(key: CryptoKey, header: Record<string, unknown>, claims: Record<string, unknown>): Promise<string> {
  const encoder = new TextEncoder()
  const signingInput = `${base64url(encoder.encode(JSON.stringify(header)))}.${base64url(encoder.encode(JSON.stringify(claims)))}`
  const signature = new Uint8Array(await crypto.subtle.sign('RSASSA-PKCS1-v1_5', key, encoder.encode(signingInput)))
  return `${signingInput}.${base64url(signature)}`
}

export function base64url(bytes: Uint8Array): string {
  return encodeBase64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}
