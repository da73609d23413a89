import { manyScanJpeg } from '../tests/support/hostile-images.ts'
import { decodeJpeg } from '../shared/engine/local/codecs/jpeg-decoder.ts'
import { createDecodeBudget } from '../shared/engine/local/codecs/raster.ts'
import { decodingWork } from '../shared/images/decoding-work.ts'
import { readImageHeader } from '../shared/images/sniff.ts'
const cpu = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
for (const scans of [1, 10, 60, 200, 1000]) {
  const bytes = manyScanJpeg({ width: 7296, height: 5472, scans })
  const info = readImageHeader(bytes)!
  let t = cpu()
  const w = decodingWork(bytes, info)
  const est = cpu() - t
  const budget = createDecodeBudget(240e6)
  t = cpu()
  let result = 'ok'
  try {
    decodeJpeg(bytes, { minLongSide: 1536, budget })
  } catch (e) {
    result = String(e)
  }
  console.log(
    scans,
    bytes.length,
    info,
    'estimate',
    est.toFixed(1),
    'ms',
    JSON.stringify(w),
    'decode',
    (cpu() - t).toFixed(0),
    'ms',
    budget.workSpent,
    result,
  )
}
