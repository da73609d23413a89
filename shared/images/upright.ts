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
  // The decoder checks the size it allocates against the stored size intake read, whatever later headers say.
  const decoded = decodeImage(input.bytes, input.format, { minLongSide: side, expected: storedSize(input), budget })
  const small = fit === undefined ? decoded : downscaleToFit(decoded, fit)
  if (input.colourProfile) convertToSrgb(input.colourProfile, small.data)
  return orientImage(small, input.orientation ?? 1)
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
