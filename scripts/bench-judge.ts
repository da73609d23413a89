/**
 * What the seeing judge adds to a try-on on our side: `npm run bench:judge [-- --rounds N]`.
 *
 * A judge call (shared/quality/gemini-judge.ts) against a stand-in for the Gemini API on 127.0.0.1 that reads the
 * whole request and answers at once with a fixed JSON-mode reply: what is timed is ours alone (preparing the three
 * images, writing their base64 into the request body, sending it over loopback, reading and checking the answer,
 * computing the verdict). The model's own time (1-3 s, docs/engines.md "Quality check: the judge") comes on top.
 * Cases: photos within the judge's input policy (sent as they are), and a 12 MP phone photo that must be
 * re-encoded to 2048 px first; each as a standard garment and as a wedding dress (the train questions added).
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createGeminiQualityJudge } from '../shared/quality/gemini-judge.ts'
import type { JudgeRequest } from '../shared/quality/judge.ts'
import { providerRuntime } from '../shared/engine/providers/runtime.ts'
import { asInput, makeGarmentPhoto, makeShopperPhoto } from '../tests/support/images.ts'

const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 30

const answer = (weddingDress: boolean) =>
  JSON.stringify({
    candidates: [
      {
        content: {
          role: 'model',
          parts: [
            {
              text: JSON.stringify({
                garmentOnBody: true,
                samePerson: true,
                samePose: true,
                sameBackground: true,
                colourKept: true,
                detailsKept: true,
                grossArtifacts: false,
                ...(weddingDress && {
                  gownOnBody: true,
                  croppedAboveFeet: false,
                  trainOnFloor: true,
                  trainContinuous: true,
                  trainLength: 'long',
                }),
                reason: 'kept',
              }),
            },
          ],
        },
        finishReason: 'STOP',
        index: 0,
      },
    ],
    usageMetadata: { promptTokenCount: 3742, candidatesTokenCount: 61, thoughtsTokenCount: 212, totalTokenCount: 4015 },
  })

let receivedBytes = 0
const server = createServer(async (req, res) => {
  let size = 0
  for await (const chunk of req) size += (chunk as Uint8Array).length
  receivedBytes = size
  const weddingDress = (req.headers['x-bench-wedding'] ?? '') === '1'
  res.writeHead(200, { 'content-type': 'application/json' }).end(answer(weddingDress))
})
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

const quiet = providerRuntime({ log: () => {} })
let wedding = false
// The stand-in needs to know which reply to give; the header is the bench's, not the API's.
const runtime = providerRuntime({
  log: () => {},
  fetch: (input, init) =>
    quiet.fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), 'x-bench-wedding': wedding ? '1' : '0' } }),
})
const judge = createGeminiQualityJudge({ apiKey: 'bench', baseUrl, model: 'gemini-3.5-flash' }, runtime)

const shopper = asInput(makeShopperPhoto({ width: 1024, height: 1536, format: 'jpeg', seed: 3 }))
const phone = asInput(makeShopperPhoto({ width: 3000, height: 4000, format: 'jpeg', seed: 4 }))
const product = asInput(makeGarmentPhoto({ kind: 'tshirt', color: [200, 30, 40], width: 1024, height: 1024, format: 'jpeg' }))
const result = { bytes: makeShopperPhoto({ width: 1024, height: 1536, format: 'jpeg', seed: 5, shirtColor: [200, 30, 40] }).bytes }

async function measure(label: string, request: JudgeRequest): Promise<void> {
  wedding = request.weddingDress
  const times: number[] = []
  for (let i = 0; i < rounds + 3; i++) {
    const started = performance.now()
    const verdict = await judge.judge(request)
    const ms = performance.now() - started
    if (!verdict.checked || !verdict.passed) throw new Error(`${label}: unexpected verdict ${JSON.stringify(verdict)}`)
    if (request.weddingDress && verdict.train?.kind !== 'scored') throw new Error(`${label}: no train score`)
    if (i >= 3) times.push(ms)
  }
  times.sort((a, b) => a - b)
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(1)
  const mb = (receivedBytes / 1024 / 1024).toFixed(2)
  console.log(`${label.padEnd(52)} ${mb.padStart(6)} MB  median ${at(0.5).padStart(7)} ms  p90 ${at(0.9).padStart(7)} ms`)
}

console.log(`quality judge, local overhead per call (${rounds} rounds after 3 warm-ups; request body size; the model's time not included)`)
const images = { shopper, product, result: { ...result, contentType: 'image/jpeg' as const } }
await measure('standard garment, photos sent as they are', { ...images, weddingDress: false })
await measure('wedding dress (train questions in the same call)', { ...images, weddingDress: true })
await measure('standard garment, 12 MP shopper photo re-encoded', { ...images, shopper: phone, weddingDress: false })
server.close()
