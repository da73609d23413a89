import { readFile } from 'node:fs/promises'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { OPENAPI_FILE, documentedApp } from '../../scripts/openapi.ts'
import { errorCatalogue, settlementUnknown, type ErrorBody } from '../../shared/http/errors.ts'
import { openApiDocument, openApiText } from '../../shared/http/openapi.ts'
import { errorBodySchema, type ErrorResponseBody } from '../../shared/http/responses.ts'
import { tryOnRequestSchema, tryOnRoute, tryOnSuccessSchema, type TryOnSuccessBody } from '../../shared/http/tryon.ts'
import { scenarios } from '../../shared/tryon/scenarios.ts'
import type { TryOnSuccess } from '../../shared/tryon/run.ts'

type Json = any

const app = documentedApp()
const doc: Json = openApiDocument(app)
const operation = doc.paths['/functions/v1/tryon-api'].post
const examplesOf = (media: Json) => Object.values(media.examples as Record<string, { value: unknown }>).map((example) => example.value)

function refsIn(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refsIn(item, found)
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) key === '$ref' ? found.push(inner as string) : refsIn(inner, found)
  }
  return found
}

describe('openapi.json', () => {
  it('is the committed output of `npm run openapi`', async () => {
    const committed = await readFile(OPENAPI_FILE, 'utf8')
    expect(committed, 'openapi.json is stale: run `npm run openapi` and commit it').toBe(openApiText(app))
  })

  it('describes the request body with the very schema the route validates with', () => {
    expect(tryOnRoute.request.body.content['application/json'].schema).toBe(tryOnRequestSchema)
    expect(operation.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/TryOnRequest' })
    expect(Object.keys(doc.components.schemas.TryOnRequest.properties)).toEqual(Object.keys(tryOnRequestSchema.shape))
    expect(doc.components.schemas.TryOnRequest.required).toEqual(['userPhoto', 'productImage'])
    for (const field of Object.keys(tryOnRequestSchema.shape)) {
      expect(doc.components.schemas.TryOnRequest.properties[field].description, field).toMatch(/\w/)
    }
  })

  it('documents every error code under its HTTP status, with when it happens and an example', () => {
    const statuses = Object.keys(operation.responses).filter((status) => status !== '200')
    expect(statuses.map(Number).sort()).toEqual([...new Set(Object.values(errorCatalogue).map((entry) => entry.status))].sort())
    for (const [code, { status, when, message }] of Object.entries(errorCatalogue)) {
      const media = operation.responses[String(status)].content['application/json']
      expect(media.schema.allOf[1].properties.errorCode.enum, code).toContain(code)
      expect(media.examples[code].summary, code).toBe(when)
      expect(media.examples[code].value, code).toEqual({ success: false, error: message, errorCode: code })
    }
    expect(doc.components.schemas.ErrorCode.enum).toEqual(Object.keys(errorCatalogue))
  })

  it('has the messages the code answers with in its catalogue, word for word', () => {
    expect(errorCatalogue.authentication_required.message).toBe('Authentication required')
    expect(errorCatalogue.insufficient_credits.message).toBe('Insufficient credits')
    const tryOnId = crypto.randomUUID()
    expect(settlementUnknown(tryOnId).message).toContain(tryOnId)
    expect(settlementUnknown(tryOnId).message).toBe(errorCatalogue.settlement_unknown.message.replace(/[0-9a-f-]{36}/, tryOnId))
  })

  it('documents the headers: the key as a security scheme, the scenarios, Idempotency-Key and Origin', () => {
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' })
    const headers = Object.fromEntries(operation.parameters.map((p: Json) => [p.name, p]))
    expect(Object.keys(headers)).toEqual(['X-Tryon-Scenario', 'Idempotency-Key', 'Origin'])
    expect(headers['X-Tryon-Scenario'].schema.enum).toEqual(Object.keys(scenarios))
    expect(headers['Idempotency-Key'].description).toMatch(/24 hours.*idempotency_key_reused.*idempotency_key_in_progress/s)
    expect(operation.responses['200'].headers['Idempotent-Replayed']).toBeDefined()
  })

  it('documents the abuse limits: 429 with its three codes and a required Retry-After in seconds', () => {
    const tooMany = operation.responses['429']
    expect(tooMany.content['application/json'].schema.allOf[1].properties.errorCode.enum).toEqual([
      'rate_limited',
      'daily_cap_reached',
      'free_deliveries_exhausted',
    ])
    expect(tooMany.headers['Retry-After']).toMatchObject({ required: true, schema: { type: 'integer', minimum: 1 } })
    expect(doc.info.description).toMatch(/Abuse limits/)
  })

  it('documents the share link: no key, a redirect by default, the og:image page, the edge 404', () => {
    const share = doc.paths['/functions/v1/tryon-api/s/{shortId}'].get
    expect(share.security).toEqual([])
    expect(share.parameters).toEqual([expect.objectContaining({ name: 'shortId', in: 'path', required: true })])
    expect(Object.keys(share.responses).sort()).toEqual(['200', '302', '404'])
    expect(share.responses['302'].headers.Location).toBeDefined()
    expect(share.responses['200'].content['text/html']).toBeDefined()
    expect(share.responses['404'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/GatewayNotFound' })
  })

  it('has examples that the schemas accept, and every $ref resolves', () => {
    for (const body of examplesOf(operation.requestBody.content['application/json'])) tryOnRequestSchema.parse(body)
    const successes = examplesOf(operation.responses['200'].content['application/json'])
    for (const body of successes) tryOnSuccessSchema.parse(body)
    expect(
      successes
        .filter((body: Json) => body.bridal)
        .map((body: Json) => body.bridal.reason)
        .sort(),
    ).toEqual(['score_unavailable', 'train_pretreatment_unavailable', 'train_rendered', 'train_score_low'])
    for (const status of Object.keys(operation.responses).filter((s) => s !== '200')) {
      for (const body of examplesOf(operation.responses[status].content['application/json'])) errorBodySchema.parse(body)
    }
    const refs = refsIn(doc)
    expect(refs.length).toBeGreaterThan(5)
    for (const ref of refs) expect(doc.components.schemas[ref.replace('#/components/schemas/', '')], ref).toBeDefined()
    expect(doc.openapi).toBe('3.1.0')
  })

  it('has response schemas of the same shape as the bodies the handler builds', () => {
    expectTypeOf<TryOnSuccess>().toEqualTypeOf<TryOnSuccessBody>()
    expectTypeOf<ErrorBody>().toEqualTypeOf<ErrorResponseBody>()
  })
})
