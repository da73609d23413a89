/**
 * What turning and colour-converting phone photos costs: `npx tsx scripts/bench-orientation.ts [--runs 5]`.
 * A portrait photo stored as a phone stores it (the pixels sideways, EXIF Orientation 6), with and without a Display
 * P3 profile, against the same photo stored upright, at 12 MP (4032 × 3024) and at the 40 MP limit (7744 × 5164).
 * For each, the process CPU time (user + system) of: reading the header and metadata (intake), the local engine's
 * decode (decodeUpright at 1536 px) and a provider's input (prepareInput with Gemini's policy: the original bytes
 * when they show as stored, else a 2048 px upright sRGB JPEG). The variants are alternated run by run in one
 * process so a shared machine's load hits them alike; medians are printed.
 */
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { drawShopper } from '../devstack/samples/shopper-photo.ts'
import { encodeJpeg } from '../shared/images/codecs/index.ts'
import { decodeUpright } from '../shared/images/upright.ts'
import { GEMINI_INPUT } from '../shared/engine/providers/gemini.ts'
import { prepareInput } from '../shared/engine/providers/images.ts'
import type { InputImage } from '../shared/engine/types.ts'
import { asDisplayed } from '../shared/images/display.ts'
import { readImageHeader } from '../shared/images/sniff.ts'
import { DISPLAY_P3, iccProfile } from '../tests/support/icc-profiles.ts'
import { exifSegment, exifWithOrientation, iccSegments, withJpegSegments } from '../tests/support/photo-metadata.ts'
import { storedPixels } from '../tests/support/jpeg-exif.ts'

const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '5' } } })
const runs = Number(args.runs)

function cpuMs(work: () => unknown): number {
  const start = process.cpuUsage()
  work()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / 1000
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]

console.log(
  `${new Date().toISOString()}, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}, ${runs} runs, medians in CPU ms`,
)
console.log('| photo (shown) | stored as | bytes | intake | local decode | provider input | sent |')
console.log('|---|---|---|---|---|---|---|')
for (const [width, height] of [
  [3024, 4032],
  [5164, 7744],
]) {
  const upright = drawShopper({ width, height, seed: 3 }).image
  const sideways = encodeJpeg(storedPixels(upright, 6), 90)
  const variants = [
    { name: 'upright', bytes: encodeJpeg(upright, 90) },
    { name: 'Orientation 6', bytes: withJpegSegments(sideways, [exifSegment(exifWithOrientation(6))]) },
    {
      name: 'Orientation 6, Display P3',
      bytes: withJpegSegments(sideways, [exifSegment(exifWithOrientation(6)), ...iccSegments(iccProfile(DISPLAY_P3))]),
    },
  ]
  const times = variants.map(() => ({ intake: [] as number[], local: [] as number[], provider: [] as number[], sent: '' }))
  for (let run = 0; run <= runs; run++) {
    variants.forEach((variant, i) => {
      let input: InputImage | undefined
      const intake = cpuMs(() => {
        input = { ...asDisplayed(readImageHeader(variant.bytes)!, variant.bytes), bytes: variant.bytes }
      })
      const local = cpuMs(() => decodeUpright(input!, { side: 1536 }))
      let sent = ''
      const provider = cpuMs(() => {
        const prepared = prepareInput(input!, 'userPhoto', GEMINI_INPUT)
        sent = prepared.reencoded ? `re-encoded, ${(prepared.bytes.length / 1e6).toFixed(2)} MB` : 'original bytes'
      })
      // Run 0 warms the code paths up and is not counted.
      if (run === 0) return
      times[i].intake.push(intake)
      times[i].local.push(local)
      times[i].provider.push(provider)
      times[i].sent = sent
    })
  }
  variants.forEach((variant, i) => {
    const t = times[i]
    console.log(
      `| ${width} × ${height} | ${variant.name} | ${(variant.bytes.length / 1e6).toFixed(2)} MB | ${median(t.intake).toFixed(2)} | ` +
        `${median(t.local).toFixed(0)} | ${median(t.provider).toFixed(0)} | ${t.sent} |`,
    )
  })
}
