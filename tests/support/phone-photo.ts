/**
 * A shopper's photo as a phone takes it: a full-length portrait, with sensor grain, whose JPEG stores the pixels
 * sideways (landscape) and an EXIF Orientation of 6, "rotate 90° clockwise to display", as many phone cameras write it.
 */
import { random } from '../../devstack/samples/drawing.ts'
import { drawShopper, type ShopperGeometry } from '../../devstack/samples/shopper-photo.ts'
import { encodeJpeg } from '../../shared/images/codecs/jpeg-encoder.ts'
import type { RgbaImage } from '../../shared/images/codecs/raster.ts'
import { storedPixels, withExifOrientation } from './jpeg-exif.ts'

export interface PhonePhoto {
  /** The file as the phone saved it: stored `height × width`, tagged Orientation 6. */
  jpeg: Uint8Array
  /** The picture as every viewer shows it: `width × height`, upright. */
  upright: RgbaImage
  geometry: ShopperGeometry
}

/** `width × height` as shown (portrait when width < height); grain of ±`grain`/2 per channel, seeded; JPEG `quality`. */
export function makePhonePhoto(options: { width: number; height: number; grain?: number; quality?: number; seed?: number }): PhonePhoto {
  const { image, geometry } = drawShopper({ width: options.width, height: options.height, fullLength: true, seed: options.seed })
  // A picture on the wall at the upper left, so that a mirrored photo differs from the upright one.
  const { width, height } = image
  for (let y = Math.round(height * 0.08); y < Math.round(height * 0.2); y++) {
    for (let x = Math.round(width * 0.04); x < Math.round(width * 0.2); x++) image.data.set([190, 40, 50], (y * width + x) * 4)
  }
  const grain = options.grain ?? 24
  const next = random(options.seed ?? 7)
  // A camera's noise: what makes a real photo weigh megabytes where a clean drawing weighs a few hundred KB.
  for (let i = 0; i < image.data.length; i++) {
    if ((i & 3) !== 3) image.data[i] = Math.max(0, Math.min(255, image.data[i] + (next() - 0.5) * grain))
  }
  const jpeg = withExifOrientation(encodeJpeg(storedPixels(image, 6), options.quality ?? 90), 6)
  return { jpeg, upright: image, geometry }
}
