/** The demo requests' photos, drawn on the fly: full-length shoppers (JPEG), a T-shirt and a gown (PNG). */
import { encodeJpeg } from '../shared/images/codecs/jpeg-encoder.ts'
import { drawGarment } from './samples/garment-photo.ts'
import { encodePng } from './samples/png-encoder.ts'
import { drawShopper } from './samples/shopper-photo.ts'

export function demoShopperPhoto(): Uint8Array {
  return encodeJpeg(drawShopper({ width: 600, height: 900, fullLength: true }).image, 90)
}

export function demoGarmentPhoto(): Uint8Array {
  return encodePng(drawGarment({ kind: 'tshirt', color: [196, 38, 52], width: 480, height: 480 }).image)
}

/** On a slate floor, so the ivory train shows against it. */
export function demoBrideShopperPhoto(): Uint8Array {
  return encodeJpeg(drawShopper({ width: 600, height: 900, fullLength: true, background: [120, 128, 140] }).image, 90)
}

export function demoGownPhoto(): Uint8Array {
  return encodePng(
    drawGarment({ kind: 'gown-with-train', color: [242, 236, 224], width: 480, height: 480, transparentBackground: true }).image,
  )
}
