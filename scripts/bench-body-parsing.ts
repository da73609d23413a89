/**
 * Where reading a try-on body natively (the text, JSON.parse, the runtime's base64) stops being cheaper than reading
 * it in place (shared/encoding/json-bytes.ts and shared/images/base64-in-place.ts, which keep a large body once):
 * `npx tsx scripts/bench-body-parsing.ts` on Node, `node_modules/.bin/deno run -A scripts/bench-body-parsing.ts` on
 * Deno. Two images of half the body each, as base64; CPU time per body, median of the runs, both ways alternated.
 */
import process from 'node:process'
import { LargeString, parseJsonBytes } from '../shared/encoding/json-bytes.ts'
import { decodeBase64, encodeBase64 } from '../shared/images/base64.ts'
import { readInlineBase64 } from '../shared/images/base64-in-place.ts'

const cpuMs = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

function body(size: number): Uint8Array {
  const image = new Uint8Array(Math.floor((size * 3) / 8))
  for (let i = 0; i < image.length; i++) image[i] = (i * 2654435761) >>> 24
  const text = JSON.stringify({ userPhoto: encodeBase64(image), productImage: encodeBase64(image), clothingType: 'T-shirt' })
  return new TextEncoder().encode(text)
}

function native(bytes: Uint8Array): number {
  const json = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, string>
  return decodeBase64(json.userPhoto)!.length + decodeBase64(json.productImage)!.length
}

function inPlace(bytes: Uint8Array): number {
  const json = parseJsonBytes(bytes.slice()) as Record<string, LargeString | string>
  let total = 0
  for (const field of ['userPhoto', 'productImage']) {
    const value = json[field]
    total += value instanceof LargeString ? readInlineBase64(value)!.decode().length : decodeBase64(value)!.length
  }
  return total
}

const sizes = [16, 64, 256, 1024, 4096, 16384].map((kb) => kb * 1024)
console.log('| body | native, CPU ms | in place, CPU ms | native ÷ in place |')
console.log('|--:|--:|--:|--:|')
for (const size of sizes) {
  const bytes = body(size)
  const runs = Math.max(5, Math.min(400, Math.round(40e6 / size)))
  const times: Record<string, number[]> = { native: [], inPlace: [] }
  for (let i = 0; i < runs + 2; i++) {
    for (const [name, read] of [
      ['native', native],
      ['inPlace', inPlace],
    ] as const) {
      const copy = name === 'inPlace' ? bytes : bytes
      const started = cpuMs()
      read(copy)
      if (i >= 2) times[name].push(cpuMs() - started)
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
  const [a, b] = [median(times.native), median(times.inPlace)]
  console.log(`| ${size / 1024} KB | ${a.toFixed(3)} | ${b.toFixed(3)} | ${(a / b).toFixed(2)} |`)
}
