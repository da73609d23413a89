import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestStack, type TestStack } from '../support/stack.ts'

describe('CORS for browser storefronts', () => {
  let t: TestStack
  beforeAll(async () => {
    t = await startTestStack()
  })
  afterAll(() => t?.close())

  const preflight = (origin: string) =>
    fetch(t.stack.functionUrl, {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type,x-api-key,x-evil' },
    })

  it('answers a preflight from any web origin with an explicit list of headers', async () => {
    const response = await preflight('https://any-shop.example')
    expect(response.status).toBe(204)
    expect(response.headers.get('access-control-allow-origin')).toBe('https://any-shop.example')
    expect(response.headers.get('access-control-allow-methods')).toBe('POST,OPTIONS')
    expect(response.headers.get('access-control-allow-headers')).toBe('X-API-Key,Content-Type,X-Tryon-Scenario,Idempotency-Key')
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
    expect(response.headers.get('access-control-expose-headers')).toBe('X-Request-Id,Idempotent-Replayed')
    expect(response.headers.get('vary')).toMatch(/Origin/)
  })
})
