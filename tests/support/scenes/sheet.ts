/** Contact sheets: shopper | product | result | verdicts, side by side at one height, as a PNG. */
import type { RgbaImage } from '../../../shared/images/codecs/raster.ts'
import { encodePng } from '../../../devstack/samples/png-encoder.ts'
import { resized } from './composites.ts'
import { charsIn, writeText } from './font.ts'
import type { Rgb } from './types.ts'

const HEIGHT = 420
const GAP = 6
const TEXT_WIDTH = 420

/** The panel colour says the outcome at a glance: charged and good, charged and broken, refunded, failed. */
export type SheetTone = 'good' | 'broken-charged' | 'refunded' | 'failed'
const TONES: Record<SheetTone, Rgb> = {
  good: [222, 240, 222],
  'broken-charged': [250, 214, 210],
  refunded: [250, 236, 200],
  failed: [226, 226, 230],
}

export function contactSheet(panels: (RgbaImage | null)[], lines: string[], tone: SheetTone): Uint8Array {
  const scaled = panels.map((p) => (p ? resized(p, Math.max(1, Math.round((p.width * HEIGHT) / p.height)), HEIGHT) : null))
  const widths = scaled.map((p) => p?.width ?? Math.round(HEIGHT * 0.6))
  const width = widths.reduce((a, b) => a + b + GAP, 0) + TEXT_WIDTH
  const sheet: RgbaImage = { width, height: HEIGHT, data: new Uint8Array(width * HEIGHT * 4).fill(255) }
  let x = 0
  for (const [k, panel] of scaled.entries()) {
    if (panel) {
      for (let y = 0; y < HEIGHT; y++)
        sheet.data.set(panel.data.subarray(y * panel.width * 4, (y + 1) * panel.width * 4), (y * width + x) * 4)
    } else {
      // No image (an error): a grey panel with a cross.
      for (let y = 0; y < HEIGHT; y++)
        for (let dx = 0; dx < widths[k]; dx++) {
          const onCross = Math.abs(dx / widths[k] - y / HEIGHT) < 0.006 || Math.abs(dx / widths[k] - (1 - y / HEIGHT)) < 0.006
          sheet.data.set(onCross ? [150, 150, 150, 255] : [230, 230, 230, 255], (y * width + x + dx) * 4)
        }
    }
    x += widths[k] + GAP
  }
  const background = TONES[tone]
  for (let y = 0; y < HEIGHT; y++) for (let dx = 0; dx < TEXT_WIDTH; dx++) sheet.data.set([...background, 255], (y * width + x + dx) * 4)
  const per = charsIn(TEXT_WIDTH - 16)
  let row = 10
  for (const line of lines) {
    // Long lines wrap at spaces.
    let rest = line
    while (rest.length > 0 && row < HEIGHT - 16) {
      let cut = rest.length <= per ? rest.length : rest.lastIndexOf(' ', per)
      if (cut <= 0) cut = per
      writeText(sheet, rest.slice(0, cut), x + 8, row, [30, 30, 34])
      rest = rest.slice(cut).trimStart()
      row += 18
    }
    row += 4
  }
  return encodePng(sheet)
}
