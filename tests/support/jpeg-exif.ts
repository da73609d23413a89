/**
 * Photos as phone cameras store them: the sensor's pixels as they came, and an EXIF `Orientation` telling viewers how
 * to turn them. Tests build one upright picture, store it sideways (or mirrored) with `storedPixels`, encode it, and
 * add the tag with `withExifOrientation`.
 *
 * Orientation values are those of EXIF 2.32 (CIPA DC-008-2019) tag 0x0112, as TIFF 6.0 defines them: the row and
 * column the stored 0th row and 0th column stand for. 1 upright; 2 mirrored; 3 turned 180°; 4 flipped; 5 transposed;
 * 6 "rotate 90° clockwise to display"; 7 transversed; 8 "rotate 90° counter-clockwise to display".
 */
import type { RgbaImage } from '../../shared/images/codecs/raster.ts'

export type ExifOrientation = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8

/** Where the displayed pixel (x, y) of a width × height picture lies in the stored pixels. */
function storedAt(orientation: ExifOrientation, x: number, y: number, width: number, height: number): [number, number] {
  switch (orientation) {
    case 1:
      return [x, y]
    case 2:
      return [width - 1 - x, y]
    case 3:
      return [width - 1 - x, height - 1 - y]
    case 4:
      return [x, height - 1 - y]
    case 5:
      return [y, x]
    case 6:
      return [y, width - 1 - x]
    case 7:
      return [height - 1 - y, width - 1 - x]
    case 8:
      return [height - 1 - y, x]
  }
}

/** The pixels a camera stores for `upright` when it writes `orientation` (values 5–8 swap width and height). */
export function storedPixels(upright: RgbaImage, orientation: ExifOrientation): RgbaImage {
  const { width, height } = upright
  const swapped = orientation >= 5
  const stored: RgbaImage = {
    width: swapped ? height : width,
    height: swapped ? width : height,
    data: new Uint8Array(upright.data.length),
  }
  // One RGBA pixel as one 32-bit word: a 12 MP photo is turned in a fraction of a second.
  const source = upright.data.byteOffset % 4 === 0 ? upright.data : upright.data.slice()
  const from = new Uint32Array(source.buffer, source.byteOffset, width * height)
  const to = new Uint32Array(stored.data.buffer)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const [sx, sy] = storedAt(orientation, x, y, width, height)
      to[sy * stored.width + sx] = from[y * width + x]
    }
  }
  return stored
}

/**
 * The JPEG with an EXIF APP1 segment right after its SOI, as cameras write it: "Exif\0\0", a TIFF header in the given
 * byte order, and IFD0 holding the one entry Orientation (tag 0x0112, type SHORT, count 1).
 */
export function withExifOrientation(jpeg: Uint8Array, orientation: ExifOrientation, byteOrder: 'big' | 'little' = 'big'): Uint8Array {
  if (jpeg[0] !== 0xff || jpeg[1] !== 0xd8) throw new Error('not a JPEG: no SOI marker')
  const little = byteOrder === 'little'
  const tiff = new DataView(new ArrayBuffer(26))
  tiff.setUint16(0, little ? 0x4949 : 0x4d4d) // "II" or "MM"
  tiff.setUint16(2, 42, little)
  tiff.setUint32(4, 8, little) // IFD0 follows the header
  tiff.setUint16(8, 1, little) // one entry
  tiff.setUint16(10, 0x0112, little)
  tiff.setUint16(12, 3, little) // SHORT
  tiff.setUint32(14, 1, little)
  tiff.setUint16(18, orientation, little) // left-justified in the 4-byte value field
  tiff.setUint32(22, 0, little) // no IFD1
  const payload = [...new TextEncoder().encode('Exif'), 0, 0, ...new Uint8Array(tiff.buffer)]
  const length = payload.length + 2
  const segment = Uint8Array.from([0xff, 0xe1, length >> 8, length & 255, ...payload])
  const out = new Uint8Array(jpeg.length + segment.length)
  out.set(jpeg.subarray(0, 2))
  out.set(segment, 2)
  out.set(jpeg.subarray(2), 2 + segment.length)
  return out
}
