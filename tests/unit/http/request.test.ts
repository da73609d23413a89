import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { ApiError } from '../../../shared/http/errors.ts'
import { LargeString } from '../../../shared/encoding/json-bytes.ts'
import { invalidRequest, readTryOnBody } from '../../../shared/http/request.ts'
import { tryOnHeadersSchema, tryOnInputOf, tryOnRequestSchema } from '../../../shared/http/tryon.ts'
import type { KeyMode } from '../../../shared/auth/api-key.ts'

const MAX_BODY = 30 * 1024 * 1024
const photo = 'QUJD'.repeat(40_000)
/** Over the 1 MB from which a body is read in place. */
const largePhoto = 'QUJD'.repeat(300_000)

function post(body: string | Uint8Array<ArrayBuffer>, headers: Record<string, string> = {}): Request {
  return new Request('http://localhost/tryon-api', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })
}

/** What the route does with a request: read the body, validate it and the headers with the route's schemas, build the input. */
async function parseTryOnRequest(request: Request, keyMode: KeyMode, maxBodyBytes: number) {
  const read = await readTryOnBody(request, maxBodyBytes)
  const headers = tryOnHeadersSchema.safeParse({
    'X-Tryon-Scenario': request.headers.get('x-tryon-scenario') ?? undefined,
    'Idempotency-Key': request.headers.get('idempotency-key') ?? undefined,
  })
  if (!headers.success) throw invalidRequest(headers.error)
  const body = tryOnRequestSchema.safeParse(read.forSchema)
  if (!body.success) throw invalidRequest(body.error)
  return tryOnInputOf(body.data, headers.data, read, keyMode)
}

/** The hash as it was first defined: over the scenario and the body's text, encoded back to UTF-8. */
const textHash = (scenario: string, text: string) => new Uint8Array(createHash('sha256').update(`${scenario}\n${text}`, 'utf8').digest())

async function refusal(work: Promise<unknown>): Promise<ApiError> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ApiError)
  return error as ApiError
}

describe('reading a try-on request body', () => {
  it('leaves large images in the bytes of a body over 1 MB and reads the rest as usual', async () => {
    const body = JSON.stringify({
      userPhoto: `data:image/jpeg;base64,${largePhoto}`,
      productImage: 'https://shop.example/dress.jpg',
      clothingType: ' Dress ',
      extra: { nested: photo },
    })
    const { input } = await parseTryOnRequest(post(body), 'live', MAX_BODY)
    expect(input.userPhoto).toBeInstanceOf(LargeString)
    expect((input.userPhoto as LargeString).text()).toBe(`data:image/jpeg;base64,${largePhoto}`)
    expect(input).toMatchObject({ productImage: 'https://shop.example/dress.jpg', clothingType: 'Dress', productKind: 'standard' })
  })

  it('reads a body under 1 MB with the runtime’s own parser: its images are plain strings', async () => {
    const body = JSON.stringify({ userPhoto: `data:image/jpeg;base64,${photo}`, productImage: photo, clothingType: 'Dress' })
    const { input } = await parseTryOnRequest(post(body), 'live', MAX_BODY)
    expect(input).toMatchObject({ userPhoto: `data:image/jpeg;base64,${photo}`, productImage: photo, clothingType: 'Dress' })
  })

  it('hashes what the idempotency hash always covered: the scenario and the body as text', async () => {
    const body = JSON.stringify({ userPhoto: largePhoto, productImage: photo, clothingType: 'Robe d’été' })
    const plain = await parseTryOnRequest(post(body, { 'idempotency-key': 'k-1' }), 'test', MAX_BODY)
    expect(plain.idempotency?.requestHash).toEqual(textHash('', body))
    const forced = await parseTryOnRequest(
      post(body, { 'idempotency-key': 'k-1', 'x-tryon-scenario': ' generation_failed ' }),
      'test',
      MAX_BODY,
    )
    expect(forced.idempotency?.requestHash).toEqual(textHash('generation_failed', body))
    // A byte order mark is not part of the text: neither of the parse nor of the hash.
    const withBom = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(body)])
    const bom = await parseTryOnRequest(post(withBom, { 'idempotency-key': 'k-1' }), 'test', MAX_BODY)
    expect(bom.idempotency?.requestHash).toEqual(textHash('', body))
    expect((bom.input.userPhoto as LargeString).text()).toBe(largePhoto)
  })

  it('checks a large value of another field as the string it is', async () => {
    const error = await refusal(
      parseTryOnRequest(post(JSON.stringify({ userPhoto: photo, productImage: photo, clothingType: photo })), 'live', MAX_BODY),
    )
    expect(error.message).toBe('clothingType must be at most 100 characters')
  })

  it.each([
    ['a broken large string', `{"userPhoto": "${photo}\u0001", "productImage": "x"}`, 'The request body is not valid JSON'],
    ['a large key', `{"${photo}": 1, "userPhoto": "x"}`, 'productImage is required: a public image URL, a data URI or base64'],
    [
      'a large image as a number',
      `{"userPhoto": [${'1,'.repeat(40_000)}1], "productImage": "x"}`,
      'userPhoto is required: a public image URL, a data URI or base64',
    ],
  ])('refuses %s as a string body would be refused', async (_, body, message) => {
    expect((await refusal(parseTryOnRequest(post(body), 'live', MAX_BODY))).message).toBe(message)
  })

  it.each([
    ['application/json', true],
    ['Application/JSON', true],
    ['application/json; charset=utf-8', true],
    ['application/json;charset=UTF-8', true],
    ['application/json;', false],
    ['application/json ; charset=utf-8', false],
    ['application/jsonx', false],
    ['text/plain', false],
    ['', false],
  ])('takes Content-Type %j: %s (the grammar of the route’s media-type gate)', async (contentType, taken) => {
    const request = new Request('http://localhost/tryon-api', { method: 'POST', headers: { 'content-type': contentType }, body: '{}' })
    const read = readTryOnBody(request, MAX_BODY).then(
      () => true,
      (error: ApiError) => error.message,
    )
    expect(await read).toBe(taken ? true : 'Content-Type must be application/json')
  })

  it('refuses a body over the cap while reading it', async () => {
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(`{"userPhoto": "${photo}`))
        controller.close()
      },
    })
    const request = new Request('http://localhost/tryon-api', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit)
    const error = await refusal(parseTryOnRequest(request, 'live', 100_000))
    expect(error.code).toBe('payload_too_large')
  })
})
