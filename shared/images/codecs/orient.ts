import type { Orientation } from '../exif.ts'
import { rgbaRows, type RgbaImage, type RowSource } from './raster.ts'

/** Decoded pixels turned as an EXIF orientation says: what a viewer shows. The image itself when it is 1. */
export function orientImage(image: RgbaImage, orientation: Orientation): RgbaImage {
  return orientation === 1 ? image : orientRows(rgbaRows(image), orientation)
}

/** Rows read per strip: a source that converts as it is read (a JPEG's planes) keeps one strip at a time. */
const STRIP_ROWS = 16

/**
 * A row source read strip by strip into a new image, each stored pixel written where the orientation puts it (EXIF
 * 2.32 §4.6.4, tag 274: row 0 and column 0 of the stored image are shown at the side the value names). Allocates the
 * turned image alone: a caller shrinks before turning, never after.
 */
export function orientRows(source: RowSource, orientation: Orientation): RgbaImage {
  const { width: w, height: h } = source
  const quarter = orientation >= 5
  const out: RgbaImage = { width: quarter ? h : w, height: quarter ? w : h, data: new Uint8Array(w * h * 4) }
  const into = new Uint32Array(out.data.buffer)
  // Where stored pixel (x, y) lands, in pixels of the output: start + x * across + y * down.
  const [start, across, down] = placement(orientation, w, h)
  for (let y0 = 0; y0 < h; y0 += STRIP_ROWS) {
    const rows = Math.min(STRIP_ROWS, h - y0)
    const strip = source.rows(y0, rows)
    const aligned = strip.byteOffset % 4 === 0 ? strip : strip.slice()
    const pixels = new Uint32Array(aligned.buffer, aligned.byteOffset, rows * w)
    for (let y = 0, i = 0; y < rows; y++) {
      let at = start + (y0 + y) * down
      for (let x = 0; x < w; x++, i++, at += across) into[at] = pixels[i]
    }
  }
  return out
}

/** [start, step per stored column, step per stored row] of the output index, for an image w × h as stored. */
function placement(orientation: Orientation, w: number, h: number): [number, number, number] {
  switch (orientation) {
    case 1:
      return [0, 1, w]
    case 2:
      return [w - 1, -1, w]
    case 3:
      return [w * h - 1, -1, -w]
    case 4:
      return [(h - 1) * w, 1, -w]
    case 5:
      return [0, h, 1]
    case 6:
      return [h - 1, h, -1]
    case 7:
      return [w * h - 1, -h, -1]
    case 8:
      return [(w - 1) * h, -h, 1]
  }
}
