import { storedSize } from './display.ts'
import { convertToSrgb } from './icc.ts'
import type { InputImage } from '../engine/types.ts'
import { decodeImage, type DecodeBudget, type RgbaImage, type RowSource } from './codecs/index.ts'
import { rgbaRows } from './codecs/raster.ts'
import { orientImage, orientRows } from './codecs/orient.ts'
import { downscaleRowsToFit, downscaleToFit } from './resize.ts'

export interface UprightOptions {
  /** The long side wanted: decoded at the reduced scale no smaller than it (JPEG), then shrunk to fit it. */
  side?: number
  /** Shrunk only past this long side instead of `side` (a copy between the two is kept as decoded). */
  maxSide?: number
  budget?: DecodeBudget
}

/**
 * An input image's pixels as the shopper saw them: decoded (at a reduced scale where `side` allows), shrunk, then
 * converted to sRGB and turned upright, so the colour and orientation work is done on the small copy. Every step that
 * reads an input's pixels (engine, pre-treatment, scorers) decodes through here. Throws as decodeImage does.
 */
export function decodeUpright(input: InputImage, options: UprightOptions = {}): RgbaImage {
  const { side, budget } = options
  const fit = options.maxSide ?? side
  const decoded = decodeOnce(input, side, budget)
  let small = fit === undefined ? decoded : downscaleToFit(decoded, fit)
  // The request's copy stays as decoded for the next step: what is converted, turned or handed on is another array.
  if (small === decoded && budget?.copies) small = { width: decoded.width, height: decoded.height, data: decoded.data.slice() }
  if (input.colourProfile) convertToSrgb(input.colourProfile, small.data)
  return orientImage(small, input.orientation ?? 1)
}

/**
 * The local steps read a progressive JPEG of more than 24 MP (6000 × 4000) at 1/8 of its size, its DC scans alone: a
 * 40 MP one at 968 px instead of 1936. Finer, every coefficient of every scan is read whatever the scale: about 1 s of
 * CPU for 40 MP here and more on Deno, which with a wedding dress's steps passed Supabase's 2 s a request
 * (docs/decisions.md, "A CPU budget for decoding"). A provider's re-encode (shared/engine/providers/images.ts) still
 * decodes at the size the provider takes.
 */
export const LOCAL_PROGRESSIVE_EIGHTH_ABOVE = 24_000_000

/**
 * An input decoded once per request: the copy `budget` holds when it was decoded for at least `side` (or whole), else
 * decoded now, at the scale for `side`, and held instead of a smaller one. A decode that failed fails again at no cost.
 * The pixels of a reused copy are those of a larger DCT scale shrunk, within a level or two of decoding at the smaller.
 */
function decodeOnce(input: InputImage, side: number | undefined, budget: DecodeBudget | undefined): RgbaImage {
  const copies = budget?.copies
  const held = copies?.get(input.bytes)
  if (held && 'error' in held) throw held.error
  if (held && (held.side === undefined || (side !== undefined && held.side >= side))) return held.image
  try {
    // The decoder checks the size it allocates against the stored size intake read, whatever later headers say.
    const image = decodeImage(input.bytes, input.format, {
      minLongSide: side,
      expected: storedSize(input),
      budget,
      progressiveEighthAbovePixels: LOCAL_PROGRESSIVE_EIGHTH_ABOVE,
    })
    copies?.set(input.bytes, { side, image })
    return image
  } catch (error) {
    copies?.set(input.bytes, { error })
    throw error
  }
}

/**
 * The long side to decode an input at, for a re-encode at most `side` long: a photo to be turned or converted at the
 * DCT scale nearest above 3/4 of it (a 12 MP phone photo at half scale, 2016 px, not whole), as it is held whole once
 * shrunk; any other at `side` itself.
 */
export function reencodeDecodeSide(input: InputImage, side: number): number {
  return (input.orientation ?? 1) !== 1 || input.colourProfile ? Math.round(side * 0.75) : side
}

/**
 * Decoded rows of an input (a provider re-encode's), as the shopper saw them: the same rows when no turn or colour
 * conversion is needed; otherwise shrunk to `side`, converted to sRGB and turned upright into one image at most `side`
 * on its long side (16 MB at 2048 px), never a full-size copy. Each source row is read once.
 */
export function uprightRows(source: RowSource, input: InputImage, side: number): RowSource {
  const orientation = input.orientation ?? 1
  const profile = input.colourProfile
  if (orientation === 1 && !profile) return source
  const small = downscaleRowsToFit(source, side)
  const converted: RowSource = profile
    ? {
        width: small.width,
        height: small.height,
        rows(y, count) {
          const strip = small.rows(y, count)
          convertToSrgb(profile, strip)
          return strip
        },
      }
    : small
  return rgbaRows(orientRows(converted, orientation))
}
