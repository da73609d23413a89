import type { RgbaImage } from '../../shared/engine/local/codecs/raster.ts'

const CODE_LENGTH_ORDER = [17, 18, 0, 1, 2, 3, 4, 5, 16, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]

class BitWriter {
  private bytes: number[] = []
  private acc = 0
  private used = 0

  put(value: number, bits: number): void {
    for (let i = 0; i < bits; i++) {
      this.acc |= ((value >> i) & 1) << this.used
      if (++this.used === 8) {
        this.bytes.push(this.acc)
        this.acc = 0
        this.used = 0
      }
    }
  }

  finish(): Uint8Array {
    if (this.used > 0) this.bytes.push(this.acc)
    return Uint8Array.from(this.bytes)
  }
}

/** Huffman code lengths limited to maxLength (rare symbols' counts are halved until the tree fits). */
function codeLengths(counts: number[], maxLength: number): number[] {
  let weights = counts.slice()
  for (;;) {
    const lengths = new Array<number>(counts.length).fill(0)
    const nodes = weights.flatMap((w, symbol) => (w > 0 ? [{ w, symbols: [symbol] }] : []))
    if (nodes.length === 1) lengths[nodes[0].symbols[0]] = 1
    while (nodes.length > 1) {
      nodes.sort((a, b) => a.w - b.w || a.symbols[0] - b.symbols[0])
      const [a, b] = nodes.splice(0, 2)
      for (const s of [...a.symbols, ...b.symbols]) lengths[s]++
      nodes.push({ w: a.w + b.w, symbols: [...a.symbols, ...b.symbols] })
    }
    if (Math.max(...lengths) <= maxLength) return lengths
    weights = weights.map((w) => (w > 0 ? Math.max(1, w >> 1) : 0))
  }
}

/** Canonical codes, bit-reversed because VP8L (like DEFLATE) packs code bits least significant first. */
function canonicalCodes(lengths: number[]): number[] {
  const codes = new Array<number>(lengths.length).fill(0)
  let code = 0
  for (let length = 1; length <= 15; length++) {
    for (let s = 0; s < lengths.length; s++) {
      if (lengths[s] !== length) continue
      let reversed = 0
      for (let i = 0; i < length; i++) reversed |= ((code >> i) & 1) << (length - 1 - i)
      codes[s] = reversed
      code++
    }
    code <<= 1
  }
  return codes
}

interface PrefixCode {
  lengths: number[]
  codes: number[]
}

function writePrefixCode(w: BitWriter, counts: number[]): PrefixCode {
  const used = counts.flatMap((c, s) => (c > 0 ? [s] : []))
  if (used.length <= 2 && used.every((s) => s < 256)) {
    const symbols = used.length === 0 ? [0] : used
    w.put(1, 1)
    w.put(symbols.length - 1, 1)
    w.put(1, 1)
    w.put(symbols[0], 8)
    if (symbols.length === 2) w.put(symbols[1], 8)
    const lengths = new Array<number>(counts.length).fill(0)
    const codes = new Array<number>(counts.length).fill(0)
    if (symbols.length === 2) {
      lengths[symbols[0]] = lengths[symbols[1]] = 1
      codes[symbols[1]] = 1
    }
    return { lengths, codes }
  }
  const lengths = codeLengths(counts, 15)
  const lengthCounts = new Array<number>(19).fill(0)
  for (const l of lengths) lengthCounts[l]++
  // Keep at least two code-length symbols so the code-length code itself is never degenerate.
  if (lengthCounts.filter((c) => c > 0).length < 2) lengthCounts[lengthCounts[0] > 0 ? 1 : 0]++
  const metaLengths = codeLengths(lengthCounts, 7)
  const metaCodes = canonicalCodes(metaLengths)
  w.put(0, 1)
  w.put(19 - 4, 4)
  for (const s of CODE_LENGTH_ORDER) w.put(metaLengths[s], 3)
  w.put(0, 1)
  for (const l of lengths) w.put(metaCodes[l], metaLengths[l])
  return { lengths, codes: canonicalCodes(lengths) }
}

/** Lossless WebP (VP8L) with literal-only Huffman coding: simple, valid, and independent of the decoder under test. */
export function encodeWebpLossless(image: RgbaImage): Uint8Array {
  const { width, height, data } = image
  if (width > 16384 || height > 16384) throw new Error('VP8L images are at most 16384 pixels on a side')
  const hasAlpha = data.some((v, i) => (i & 3) === 3 && v !== 255)
  const w = new BitWriter()
  w.put(0x2f, 8)
  w.put(width - 1, 14)
  w.put(height - 1, 14)
  w.put(hasAlpha ? 1 : 0, 1)
  w.put(0, 3)
  w.put(0, 1) // no transforms
  w.put(0, 1) // no colour cache
  w.put(0, 1) // a single prefix-code group
  const histograms = [
    new Array<number>(280).fill(0),
    new Array<number>(256).fill(0),
    new Array<number>(256).fill(0),
    new Array<number>(256).fill(0),
  ]
  const channelOrder = [1, 0, 2, 3]
  for (let p = 0; p < data.length; p += 4) for (let c = 0; c < 4; c++) histograms[c][data[p + channelOrder[c]]]++
  const codes = histograms.map((h) => writePrefixCode(w, h))
  writePrefixCode(w, new Array<number>(40).fill(0))
  for (let p = 0; p < data.length; p += 4) {
    for (let c = 0; c < 4; c++) {
      const symbol = data[p + channelOrder[c]]
      w.put(codes[c].codes[symbol], codes[c].lengths[symbol])
    }
  }
  const payload = w.finish()
  const padded = payload.length + (payload.length & 1)
  const out = new Uint8Array(20 + padded)
  const view = new DataView(out.buffer)
  out.set([0x52, 0x49, 0x46, 0x46], 0)
  view.setUint32(4, 12 + padded, true)
  out.set([0x57, 0x45, 0x42, 0x50, 0x56, 0x50, 0x38, 0x4c], 8)
  view.setUint32(16, payload.length, true)
  out.set(payload, 20)
  return out
}
