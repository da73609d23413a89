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

export function createRgba(width: number, height: number): RgbaImage {
  return { width, height, data: new Uint8Array(width * height * 4) }
}
