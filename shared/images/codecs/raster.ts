/** Decoded pixels: 8-bit RGBA, row-major, no padding. */
export interface RgbaImage {
  width: number
  height: number
  data: Uint8Array
}

/** Thrown by the decoders for data they cannot read; the engine turns it into `invalid_input`. */
export class ImageDecodeError extends Error {
  override name = 'ImageDecodeError'
}

/** The size a decoder was about to allocate is over the pixel limit, or over what is left of the request's budget. */
export class ImageTooLargeError extends ImageDecodeError {
  override name = 'ImageTooLargeError'
}

/** Decoding the image would take more work than its size warrants, or than is left of the request's budget. */
export class ImageTooComplexError extends ImageDecodeError {
  override name = 'ImageTooComplexError'
}

export function createRgba(width: number, height: number): RgbaImage {
  return { width, height, data: new Uint8Array(width * height * 4) }
}

/** The most pixels one image may have (docs/api.md, "Images"), whatever decodes it. */
export const MAX_IMAGE_PIXELS = 40_000_000

/**
 * Decoded pixels one request may allocate in all (every decode of every step), so no path can decode the same large
 * image over and over. A wedding-dress try-on of two 40 MP PNGs, the largest legitimate case, decodes about 200 MP.
 */
export interface DecodeBudget {
  /** Takes `pixels` from the budget, or throws ImageTooLargeError and takes nothing. */
  spend(pixels: number): void
  readonly remaining: number
  /** Takes `steps` of decoding work (a JPEG's coefficient steps) from the budget, or throws ImageTooComplexError. */
  spendWork(steps: number): void
  /** The work taken so far, and what is left. */
  readonly workSpent: number
  readonly workRemaining: number
  /**
   * The request's decoded copy of each input, by its bytes: a later step that needs no more detail reuses it instead of
   * decoding the same bytes again (shared/images/upright.ts). Absent, every step decodes for itself.
   */
  readonly copies?: WeakMap<Uint8Array, DecodedCopy>
}

/** An input decoded once for a request: at the scale for `side` (undefined: full size), or the error its decoding threw. */
export type DecodedCopy = { side: number | undefined; image: RgbaImage } | { error: unknown }

/** Work allowed per decoded pixel of the budget: eight coefficient steps (512 a block of 64 pixels, as one image may take). */
const WORK_PER_PIXEL = 8

export function createDecodeBudget(pixels: number, work = pixels * WORK_PER_PIXEL): DecodeBudget {
  let remaining = pixels
  let workSpent = 0
  return {
    copies: new WeakMap(),
    spendWork(steps) {
      if (workSpent + steps > work) {
        throw new ImageTooComplexError(`decoding it would take this request past its budget of ${work} steps of decoding work`)
      }
      workSpent += steps
    },
    get workSpent() {
      return workSpent
    },
    get workRemaining() {
      return work - workSpent
    },
    spend(amount) {
      if (amount > remaining) {
        throw new ImageTooLargeError(
          `decoding it would take this request past its budget of ${Math.round(pixels / 1e6)} megapixels of decoded images`,
        )
      }
      remaining -= amount
    },
    get remaining() {
      return remaining
    },
  }
}

export interface AllocationLimits {
  /** At most this many pixels in the image as its decoder reads it (default MAX_IMAGE_PIXELS). */
  maxPixels?: number
  /** The size the image's first header announced (what intake checked): a decoder that finds another refuses. */
  expected?: { width: number; height: number }
  budget?: DecodeBudget
}

/**
 * Every decoder calls this with the size it is about to allocate for, read from the header it will actually decode,
 * before allocating: the limit holds whatever an earlier header said.
 */
export function checkAllocation(
  format: string,
  width: number,
  height: number,
  limits: AllocationLimits,
  allocatedPixels = width * height,
): void {
  const { expected } = limits
  if (expected && (expected.width !== width || expected.height !== height)) {
    throw new ImageDecodeError(
      `the ${format} headers disagree about its size (${expected.width}×${expected.height}, then ${width}×${height})`,
    )
  }
  const maxPixels = limits.maxPixels ?? MAX_IMAGE_PIXELS
  if (width * height > maxPixels) {
    throw new ImageTooLargeError(
      `the ${format} is ${width}×${height} (${((width * height) / 1e6).toFixed(1)} megapixels), more than the ${maxPixels / 1e6} allowed`,
    )
  }
  limits.budget?.spend(allocatedPixels)
}

/**
 * An image read a strip of rows at a time, so a re-encode never holds more than its source and one strip: a JPEG
 * kept as its decoded planes, or a resize of another source. `rows` answers RGBA rows [y, y + count) as a view
 * that stays valid only until the next call.
 */
export interface RowSource {
  readonly width: number
  readonly height: number
  rows(y: number, count: number): Uint8Array
}

/** Whole decoded pixels as a row source (no copy). */
export function rgbaRows(image: RgbaImage): RowSource {
  const stride = image.width * 4
  return { width: image.width, height: image.height, rows: (y, count) => image.data.subarray(y * stride, (y + count) * stride) }
}
