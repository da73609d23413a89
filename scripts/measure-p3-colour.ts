/**
 * What converting a Display P3 photo to sRGB does to its reds, against keeping its stored values as if they were sRGB:
 * `npx tsx scripts/measure-p3-colour.ts`. Each colour is written as a 64 × 64 JPEG with a Display P3 profile (the
 * profile tests/support/icc-profiles.ts builds) and read the way the service reads inputs (intake's metadata, then
 * decodeUpright); "kept" is the same file decoded without its profile. The error is CIEDE2000 (CIE 142-2001, the
 * formulas of Sharma, Wu and Dalal 2005) against the colour a colour-managed viewer shows on an sRGB display (the P3
 * colour clipped to sRGB), and against the P3 colour itself (what a wide-gamut phone screen shows).
 */
import { decodeImage, encodeJpeg } from '../shared/images/codecs/index.ts'
import { decodeUpright } from '../shared/images/upright.ts'
import { asDisplayed } from '../shared/images/display.ts'
import { readImageHeader } from '../shared/images/sniff.ts'
import { decodeCurve, DISPLAY_P3, fromSrgb, iccProfile, rgbToXyz, SRGB, toSrgb, type RgbSpace } from '../tests/support/icc-profiles.ts'
import { iccSegments, withJpegSegments } from '../tests/support/photo-metadata.ts'

type Rgb = [number, number, number]

const profile = iccSegments(iccProfile(DISPLAY_P3))
const cases: [string, Rgb][] = [
  ['the most saturated P3 red', [255, 0, 0]],
  ['a P3 red beyond sRGB', [230, 40, 35]],
  ["sRGB's own red, as P3 stores it", fromSrgb(DISPLAY_P3, [255, 0, 0])],
  ['a garment red (sRGB 200, 30, 45)', fromSrgb(DISPLAY_P3, [200, 30, 45])],
  ['a dark wine red (sRGB 120, 20, 35)', fromSrgb(DISPLAY_P3, [120, 20, 35])],
  ['a skin tone (sRGB 224, 172, 150)', fromSrgb(DISPLAY_P3, [224, 172, 150])],
]

/** CIELAB under D65 of an 8-bit colour of `space` (unclipped: a P3 colour keeps its own chroma). */
function lab(space: RgbSpace, rgb: Rgb): Rgb {
  const m = rgbToXyz(space)
  const l = rgb.map((v) => decodeCurve(space, v / 255))
  const xyz = [0, 1, 2].map((i) => m[i * 3] * l[0] + m[i * 3 + 1] * l[1] + m[i * 3 + 2] * l[2])
  const white = [0.3127 / 0.329, 1, (1 - 0.3127 - 0.329) / 0.329]
  const f = (t: number) => (t > 216 / 24389 ? Math.cbrt(t) : (24389 / 27 / 116) * t + 16 / 116)
  const [fx, fy, fz] = xyz.map((v, i) => f(v / white[i]))
  return [116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)]
}

function ciede2000([l1, a1, b1]: Rgb, [l2, a2, b2]: Rgb): number {
  const rad = Math.PI / 180
  const c1 = Math.hypot(a1, b1)
  const c2 = Math.hypot(a2, b2)
  const cMean = (c1 + c2) / 2
  const g = 0.5 * (1 - Math.sqrt(cMean ** 7 / (cMean ** 7 + 25 ** 7)))
  const [ap1, ap2] = [(1 + g) * a1, (1 + g) * a2]
  const [cp1, cp2] = [Math.hypot(ap1, b1), Math.hypot(ap2, b2)]
  const hue = (b: number, a: number) => (b === 0 && a === 0 ? 0 : (Math.atan2(b, a) / rad + 360) % 360)
  const [hp1, hp2] = [hue(b1, ap1), hue(b2, ap2)]
  const dL = l2 - l1
  const dC = cp2 - cp1
  let dh = cp1 * cp2 === 0 ? 0 : hp2 - hp1
  if (dh > 180) dh -= 360
  else if (dh < -180) dh += 360
  const dH = 2 * Math.sqrt(cp1 * cp2) * Math.sin((dh / 2) * rad)
  const lMean = (l1 + l2) / 2
  const cpMean = (cp1 + cp2) / 2
  let hMean = hp1 + hp2
  if (cp1 * cp2 !== 0) hMean = Math.abs(hp1 - hp2) <= 180 ? hMean / 2 : hMean < 360 ? (hMean + 360) / 2 : (hMean - 360) / 2
  const t =
    1 -
    0.17 * Math.cos((hMean - 30) * rad) +
    0.24 * Math.cos(2 * hMean * rad) +
    0.32 * Math.cos((3 * hMean + 6) * rad) -
    0.2 * Math.cos((4 * hMean - 63) * rad)
  const sl = 1 + (0.015 * (lMean - 50) ** 2) / Math.sqrt(20 + (lMean - 50) ** 2)
  const sc = 1 + 0.045 * cpMean
  const sh = 1 + 0.015 * cpMean * t
  const rt = -2 * Math.sqrt(cpMean ** 7 / (cpMean ** 7 + 25 ** 7)) * Math.sin(60 * Math.exp(-(((hMean - 275) / 25) ** 2)) * rad)
  return Math.sqrt((dL / sl) ** 2 + (dC / sc) ** 2 + (dH / sh) ** 2 + rt * (dC / sc) * (dH / sh))
}

function centre(image: { width: number; height: number; data: Uint8Array }): Rgb {
  const at = ((image.height >> 1) * image.width + (image.width >> 1)) * 4
  return [image.data[at], image.data[at + 1], image.data[at + 2]]
}

console.log(`${new Date().toISOString()}: Display P3 reds read converted to sRGB vs kept as stored (CIEDE2000)`)
console.log('| colour | P3 stored | sRGB display shows | converted | ΔE | kept | ΔE | ΔE to the P3 colour, converted / kept |')
console.log('|---|---|---|---|---|---|---|---|')
for (const [name, p3] of cases) {
  const patch = { width: 64, height: 64, data: new Uint8Array(64 * 64 * 4) }
  for (let i = 0; i < patch.data.length; i += 4) patch.data.set([...p3, 255], i)
  const jpeg = withJpegSegments(encodeJpeg(patch, 100), profile)
  const converted = centre(decodeUpright({ ...asDisplayed(readImageHeader(jpeg)!, jpeg), bytes: jpeg }))
  const kept = centre(decodeImage(jpeg, 'jpeg'))
  const shown = toSrgb(DISPLAY_P3, p3).map(Math.round) as Rgb
  const target = lab(SRGB, shown)
  const truth = lab(DISPLAY_P3, p3)
  const de = (rgb: Rgb, reference: Rgb) => ciede2000(reference, lab(SRGB, rgb)).toFixed(1)
  console.log(
    `| ${name} | ${p3.join(', ')} | ${shown.join(', ')} | ${converted.join(', ')} | ${de(converted, target)} | ${kept.join(', ')} | ` +
      `${de(kept, target)} | ${de(converted, truth)} / ${de(kept, truth)} |`,
  )
}
