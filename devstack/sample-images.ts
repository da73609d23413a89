/** The demo request's photos: a full-length shopper (JPEG) and a T-shirt product shot (PNG), drawn on the fly. */
import { encodeJpeg } from '../shared/engine/local/codecs/jpeg-encoder.ts'
import { drawGarment } from './samples/garment-photo.ts'
import { encodePng } from './samples/png-encoder.ts'
import { drawShopper } from './samples/shopper-photo.ts'

export function demoShopperPhoto(): Uint8Array {
  return encodeJpeg(drawShopper({ width: 600, height: 900, fullLength: true }).image, 90)
}

export function demoGarmentPhoto(): Uint8Array {
  return encodePng(drawGarment({ kind: 'tshirt', color: [196, 38, 52], width: 480, height: 480 }).image)
}
