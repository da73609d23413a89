/**
 * `npm run bench:quality`: what the measured quality checks (shared/quality/measure.ts) cost per result, stage by stage,
 * on a tuning scene's shopper photo, product photo and a painted result scaled up to 1 MP and 12 MP. The checks run on
 * copies with a long side of 256 px, so the cost hardly grows with the input: the only part that reads the whole image
 * is the first sampling. The figures are in docs/engines.md#quality-check.
 *
 *   npm run bench:quality [-- RUNS]   (default 7 runs a size; the median of each stage is printed)
 */
import { loadavg } from 'node:os'
import { performance } from 'node:perf_hooks'
import { decodeImage } from '../shared/images/codecs/index.ts'
import type { RgbaImage } from '../shared/images/codecs/raster.ts'
import { measureResult } from '../shared/quality/measure.ts'
import { paintedComposite, received, resized } from '../tests/support/scenes/composites.ts'
import { scene } from '../tests/support/scenes/index.ts'

const runs = Number(process.argv[2] ?? 7)
// A tuning scene (tests/support/scenes/held-out.ts): trousers on a full-length shopper, a result the checks pass.
const sc = scene('soft', 11)
const product = decodeImage(sc.product.bytes, sc.product.format)
const shopper = received(sc)
const result = paintedComposite(sc)

function scaledTo(image: RgbaImage, megapixels: number): RgbaImage {
  const f = Math.sqrt((megapixels * 1e6) / (image.width * image.height))
  return resized(image, Math.round(image.width * f), Math.round(image.height * f))
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]
console.log(`bench:quality, ${runs} runs a size, load average ${loadavg()[0].toFixed(1)} (${new Date().toISOString().slice(0, 16)}Z)`)
console.log(`scene ${sc.description}`)
for (const mp of [1, 12]) {
  const input = { shopper: scaledTo(shopper, mp), product: scaledTo(product, mp), result: scaledTo(result, mp) }
  const stages: Record<string, number[]> = {}
  const totals: number[] = []
  let passed = true
  for (let run = 0; run < runs; run++) {
    const started = performance.now()
    const m = measureResult({ ...input, category: 'bottom', productKind: 'trousers', clock: () => performance.now() })
    totals.push(performance.now() - started)
    passed &&= m.passed
    for (const [key, value] of Object.entries(m.measures)) {
      if (!key.startsWith('ms.')) continue
      stages[key.slice(3)] ??= []
      stages[key.slice(3)].push(value)
    }
  }
  const size = `${input.shopper.width}×${input.shopper.height}`
  const parts = Object.entries(stages).map(([stage, values]) => `${stage} ${median(values).toFixed(1)}`)
  console.log(`${mp} MP (${size}): total ${median(totals).toFixed(1)} ms (${parts.join(', ')}); passed ${passed}`)
}
