import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { wellFormedUnknownKey } from '../support/database.ts'
import { expectErrorBody, postTryOn, startTestStack, type TestStack } from '../support/stack.ts'

describe('CORS for browser storefronts', () => {
  let t: TestStack
  beforeAll(async () => {
    t = await startTestStack()
  })
  afterAll(() => t?.close())

  const preflight = (origin: string, requestHeaders = 'content-type,x-api-key,x-evil') =>
    fetch(t.stack.functionUrl, {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': requestHeaders },
    })

  it('answers a preflight from any web origin with an explicit list of headers', async () => {
    const response = await preflight('https://any-shop.example')
    expect(response.status).toBe(204)
    expect(response.headers.get('access-control-allow-origin')).toBe('https://any-shop.example')
    expect(response.headers.get('access-control-allow-methods')).toBe('POST,OPTIONS')
    expect(response.headers.get('access-control-allow-headers')).toBe(
      'X-API-Key,Content-Type,X-Tryon-Scenario,Idempotency-Key,Authorization,apikey,X-Client-Info,X-Region',
    )
    expect(response.headers.get('access-control-max-age')).toBe('7200')
    expect(response.headers.get('access-control-allow-credentials')).toBeNull()
    expect(response.headers.get('vary')).toMatch(/Origin/)
  })

  it('never allows the null origin', async () => {
    const response = await preflight('null')
    expect(response.headers.get('access-control-allow-origin')).toBeNull()
  })

  it('reflects the exact origin on real responses, errors included, with Vary: Origin', async () => {
    const response = await fetch(t.stack.functionUrl, { method: 'POST', headers: { Origin: 'https://Shop.Example:8443' } })
    expect(response.status).toBe(401)
    expect(response.headers.get('access-control-allow-origin')).toBe('https://shop.example:8443')
    expect(response.headers.get('access-control-expose-headers')).toBe('X-Request-Id,Idempotent-Replayed,Retry-After')
    expect(response.headers.get('vary')).toMatch(/Origin/)
  })

  it('allows every header supabase-js sends from a browser, and never echoes the ones it does not know', async () => {
    // What Chromium asks before `supabase.functions.invoke('tryon-api', { headers: { 'X-API-Key': … }, region })`.
    const response = await preflight('https://shop.example.com', 'apikey,authorization,content-type,x-api-key,x-client-info,x-region')
    const allowed = response.headers.get('access-control-allow-headers')!.toLowerCase().split(',')
    for (const header of ['apikey', 'authorization', 'content-type', 'x-api-key', 'x-client-info', 'x-region'])
      expect(allowed).toContain(header)

    const unknown = await preflight('https://shop.example.com', 'x-evil,cookie,x-forwarded-for')
    const allowedForUnknown = unknown.headers.get('access-control-allow-headers')!.toLowerCase().split(',')
    for (const header of ['x-evil', 'cookie', 'x-forwarded-for']) expect(allowedForUnknown).not.toContain(header)
    expect(allowedForUnknown).toEqual(allowed)
  })

  describe('Supabase client headers carry no authority', () => {
    it('refuses a valid key sent only as Authorization: Bearer, with 401 and no charge', async () => {
      const key = await t.createKey({ credits: 2 })
      const res = await postTryOn(t.stack.functionUrl, {
        body: {},
        headers: { Authorization: `Bearer ${key.apiKey}`, Origin: 'https://shop.example.com' },
      })
      expectErrorBody(res, 401, 'authentication_required', 'Authentication required')
      expect(res.headers.get('access-control-allow-origin')).toBe('https://shop.example.com')
      expect(await t.balanceOf(key)).toBe(2)
    })

    it('refuses a valid key sent only as apikey, with 401 and no charge', async () => {
      const key = await t.createKey({ credits: 2 })
      const res = await postTryOn(t.stack.functionUrl, {
        body: {},
        headers: { apikey: key.apiKey, 'X-Client-Info': 'supabase-js/2.109.0; runtime=web' },
      })
      expectErrorBody(res, 401, 'authentication_required', 'Authentication required')
      expect(await t.balanceOf(key)).toBe(2)
    })

    it('answers by X-API-Key alone when a project JWT rides along in Authorization and apikey', async () => {
      const key = await t.createKey({ credits: 0 })
      const anon = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoiYW5vbiJ9.c2lnbmF0dXJl'
      const supabaseHeaders = {
        Authorization: `Bearer ${anon}`,
        apikey: anon,
        'X-Client-Info': 'supabase-js/2.109.0; runtime=web',
        'x-region': 'eu-west-1',
      }
      // A well-formed request, so the key decides the answer: 402 for this key, 401 for an unknown one.
      const body = { userPhoto: 'https://example.com/me.jpg', productImage: 'https://example.com/shirt.png' }
      expectErrorBody(
        await postTryOn(t.stack.functionUrl, { apiKey: key.apiKey, body, headers: supabaseHeaders }),
        402,
        'insufficient_credits',
        'Insufficient credits',
      )
      expectErrorBody(
        await postTryOn(t.stack.functionUrl, { apiKey: wellFormedUnknownKey(), body, headers: supabaseHeaders }),
        401,
        'authentication_required',
      )
    })
  })
})
