import type { RgbaImage } from '../../shared/images/codecs/raster.ts'
import { VP8 } from 'image-in-browser/lib/src/formats/webp/vp8.js'

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

/**
 * VP8's boolean entropy coder, as RFC 6386 section 7.3 writes it (the reference encoder's bool_encoder), so tests
 * can make lossy WebP files without a lossy encoder: the decoder under test reads them as libwebp would.
 */
class BoolWriter {
  private out: number[] = []
  private range = 255
  private bottom = 0
  private bitCount = 24

  bool(probability: number, value: boolean | number): void {
    const split = 1 + (((this.range - 1) * probability) >> 8)
    if (value) {
      this.bottom += split
      this.range -= split
    } else this.range = split
    while (this.range < 128) {
      this.range <<= 1
      if (this.bottom & 0x80000000) this.carry()
      this.bottom = (this.bottom << 1) >>> 0
      if (--this.bitCount === 0) {
        this.out.push((this.bottom >>> 24) & 0xff)
        this.bottom &= 0xffffff
        this.bitCount = 8
      }
    }
  }

  literal(value: number, bits: number): void {
    for (let bit = bits - 1; bit >= 0; bit--) this.bool(128, (value >> bit) & 1)
  }

  private carry(): void {
    let at = this.out.length - 1
    while (at >= 0 && this.out[at] === 0xff) this.out[at--] = 0
    if (at >= 0) this.out[at]++
  }

  finish(): Uint8Array {
    for (let i = 0; i < 32; i++) this.bool(128, 0)
    return Uint8Array.from(this.out)
  }
}

export interface LossyWebpOptions {
  /** The normal loop filter's level, 0 (off) to 63: a decoder filters every macroblock edge when it is set. */
  filterLevel?: number
  /** An ALPH chunk of one flat alpha value (lossless-compressed), in an extended (VP8X) file. */
  alpha?: boolean
}

/**
 * A lossy WebP of any size up to 16383 × 16383 whose every macroblock is DC-predicted with no residual (a flat grey
 * picture): a few bits a macroblock, so 40 megapixels fit in about 100 KB, while a decoder still reconstructs, filters
 * and converts every pixel. The probabilities of the "no update" flags are the key-frame table of RFC 6386 section
 * 13.4, taken from image-in-browser's copy of libwebp's.
 */
export function encodeWebpLossyFlat(width: number, height: number, options: LossyWebpOptions = {}): Uint8Array {
  if (width < 1 || height < 1 || width > 16383 || height > 16383) throw new Error('VP8 frames are 1 to 16383 pixels on a side')
  const header = new BoolWriter()
  header.literal(0, 1) // colour space
  header.literal(0, 1) // clamping type
  header.literal(0, 1) // no segmentation
  header.literal(0, 1) // normal loop filter
  header.literal(options.filterLevel ?? 0, 6)
  header.literal(0, 3) // sharpness
  header.literal(0, 1) // no loop filter deltas
  header.literal(0, 2) // one token partition
  header.literal(40, 7) // y_ac_qi
  for (let i = 0; i < 5; i++) header.literal(0, 1) // no quantizer deltas
  header.literal(0, 1) // refresh_entropy_probs
  for (const plane of VP8.coeffsUpdateProba) {
    for (const band of plane) for (const context of band) for (const probability of context) header.bool(probability, 0)
  }
  header.literal(1, 1) // mb_no_coeff_skip
  header.literal(1, 8) // prob_skip_false: a skipped macroblock costs almost nothing
  const macroblocks = Math.ceil(width / 16) * Math.ceil(height / 16)
  for (let i = 0; i < macroblocks; i++) {
    header.bool(1, 1) // skipped: no coefficients
    header.bool(145, 1) // not B_PRED
    header.bool(156, 0)
    header.bool(163, 0) // DC_PRED
    header.bool(142, 0) // chroma DC_PRED
  }
  const first = header.finish()
  const tokens = new Uint8Array(8)
  const frame = new Uint8Array(10 + first.length + tokens.length)
  const tag = (1 << 4) | (first.length << 5) // key frame, version 0, shown
  frame.set([tag & 0xff, (tag >> 8) & 0xff, (tag >> 16) & 0xff, 0x9d, 0x01, 0x2a, width & 0xff, width >> 8, height & 0xff, height >> 8])
  frame.set(first, 10)
  frame.set(tokens, 10 + first.length)
  const chunks = [riffChunk('VP8 ', frame)]
  if (options.alpha) {
    // Alpha as a headerless VP8L image stream of one symbol a channel (its green is the alpha): zero bits a pixel.
    const flat = encodeWebpLossless({ width: 1, height: 1, data: Uint8Array.of(0, 128, 0, 255) })
    const stream = flat.slice(25, 20 + new DataView(flat.buffer).getUint32(16, true))
    const vp8x = new Uint8Array(10)
    vp8x[0] = 0x10 // alpha
    vp8x.set(
      [
        (width - 1) & 0xff,
        ((width - 1) >> 8) & 0xff,
        (width - 1) >> 16,
        (height - 1) & 0xff,
        ((height - 1) >> 8) & 0xff,
        (height - 1) >> 16,
      ],
      4,
    )
    chunks.unshift(riffChunk('VP8X', vp8x), riffChunk('ALPH', Uint8Array.of(1, ...stream)))
  }
  if (chunks.reduce((n, c) => n + c.length, 0) < 1024) chunks.push(riffChunk('XPAD', new Uint8Array(1024)))
  const body = concatBytes([Uint8Array.from([0x57, 0x45, 0x42, 0x50]), ...chunks])
  const out = new Uint8Array(8 + body.length)
  out.set([0x52, 0x49, 0x46, 0x46])
  new DataView(out.buffer).setUint32(4, body.length, true)
  out.set(body, 8)
  return out
}

function riffChunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + data.length + (data.length & 1))
  for (let i = 0; i < 4; i++) out[i] = type.charCodeAt(i)
  new DataView(out.buffer).setUint32(4, data.length, true)
  out.set(data, 8)
  return out
}

function concatBytes(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}
