import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encodeBase64 } from '../../../shared/images/base64.ts'
import { requestJson } from '../../../shared/engine/providers/http.ts'
import { Base64Bytes, jsonBody } from '../../../shared/engine/providers/json-body.ts'
import { startFakeServer, type FakeServer } from '../../support/provider-fakes.ts'
import { testRuntime } from './support.ts'

const bytesOf = (length: number, seed = 1) => Uint8Array.from({ length }, (_, i) => (i * 31 + seed * 7 + (i >> 8)) & 255)

async function readAll(stream: ReadableStream<Uint8Array>): Promise<{ bytes: Uint8Array; largestChunk: number }> {
  const chunks: Uint8Array[] = []
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk)
  return { bytes: new Uint8Array(Buffer.concat(chunks)), largestChunk: Math.max(0, ...chunks.map((c) => c.byteLength)) }
}

describe('JSON request bodies with images', () => {
  const person = bytesOf(200_001)
  const garment = bytesOf(3, 2)
  const body = {
    model_name: 'tryon-v1.6',
    inputs: {
      model_image: new Base64Bytes(person, 'data:image/jpeg;base64,'),
      garment_image: new Base64Bytes(garment),
      note: 'Ünïcode “quotes” \u0000 and \\ too',
    },
    parts: [{ text: 'x' }, { inline_data: { data: new Base64Bytes(new Uint8Array(0)) } }],
  }
  const expected = JSON.stringify({
    model_name: 'tryon-v1.6',
    inputs: {
      model_image: `data:image/jpeg;base64,${encodeBase64(person)}`,
      garment_image: encodeBase64(garment),
      note: 'Ünïcode “quotes” \u0000 and \\ too',
    },
    parts: [{ text: 'x' }, { inline_data: { data: '' } }],
  })

  it('writes the JSON the same value with base64 strings would be, with its length known before', async () => {
    const json = jsonBody(body)
    const bytes = new TextEncoder().encode(expected)
    expect(json.length).toBe(bytes.byteLength)
    expect(Buffer.from(json.bytes()).equals(Buffer.from(bytes))).toBe(true)
    const streamed = await readAll(json.stream())
    expect(Buffer.from(streamed.bytes).equals(Buffer.from(bytes))).toBe(true)
    // The base64 goes out 64 KB at a time, never as one string.
    expect(streamed.largestChunk).toBe(64 * 1024)
    // Each attempt gets a fresh stream of the same bytes.
    expect(Buffer.from((await readAll(json.stream())).bytes).equals(Buffer.from(bytes))).toBe(true)
  })

  it('agrees with JSON.stringify for any bytes and any text around them', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.string(), fc.string({ unit: 'binary' }), (raw, key, text) => {
        const written = new TextDecoder().decode(
          jsonBody({ [key]: text, image: new Base64Bytes(raw), list: [text, new Base64Bytes(raw, 'data:image/png;base64,')] }).bytes(),
        )
        return (
          written === JSON.stringify({ [key]: text, image: encodeBase64(raw), list: [text, `data:image/png;base64,${encodeBase64(raw)}`] })
        )
      }),
    )
  })

  it('shows a placeholder, never the bytes, where an image is logged', () => {
    expect(JSON.stringify({ data: new Base64Bytes(person) })).toBe('{"data":"[200001 bytes as base64]"}')
  })
})

describe('sending a large JSON body', () => {
  let fake: FakeServer
  beforeAll(async () => {
    fake = await startFakeServer()
  })
  afterAll(() => fake.close())

  const image = bytesOf(300_000)
  const call = (url: string) => ({
    provider: 'test',
    url,
    method: 'POST' as const,
    attemptTimeoutMs: 5_000,
    maxResponseBytes: 1024,
    body: { data: new Base64Bytes(image) },
  })

  it('streams it with its length, and the provider reads the JSON whole', async () => {
    fake.reset()
    fake.script('POST', '/v1/echo', { json: { ok: true } })
    const sent: unknown[] = []
    const runtime = testRuntime({ fetch: (input, init) => (sent.push(init?.body), fetch(input, init)) }).runtime
    const answer = await requestJson(runtime, call(`${fake.url}/v1/echo`))
    expect(answer.status).toBe(200)
    expect(sent[0]).toBeInstanceOf(ReadableStream)
    const [received] = fake.requestsTo('/v1/echo')
    expect(received.json).toEqual({ data: encodeBase64(image) })
    expect(received.headers['content-length']).toBe(String(received.text.length))
    expect(received.headers['content-type']).toBe('application/json')
  })

  it('sends it again whole when the server wants a length first (411), without counting a failure', async () => {
    fake.reset()
    fake.script('POST', '/v1/echo', { status: 411, text: '' }, { json: { ok: true } })
    const sent: unknown[] = []
    const t = testRuntime({ fetch: (input, init) => (sent.push(init?.body), fetch(input, init)) })
    const answer = await requestJson(t.runtime, { ...call(`${fake.url}/v1/echo`), retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 } })
    expect(answer.status).toBe(200)
    expect(t.sleeps).toEqual([])
    expect(sent[0]).toBeInstanceOf(ReadableStream)
    expect(sent[1]).toBeInstanceOf(Uint8Array)
    const received = fake.requestsTo('/v1/echo')
    expect(received).toHaveLength(2)
    expect(received[1].json).toEqual({ data: encodeBase64(image) })
  })
})
