import { encodeBase64 } from '../../shared/images/base64.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../../tests/support/images.ts'

/** A try-on request body and what is in it. */
export interface TryOnBody {
  json: string
  /** Decoded size of each image, in bytes. */
  imageBytes: [number, number]
  description: string
}

const dataUri = (bytes: Uint8Array, type: string) => `data:${type};base64,${encodeBase64(bytes)}`

function body(person: Uint8Array, garment: Uint8Array, description: string): TryOnBody {
  const json = JSON.stringify({
    userPhoto: dataUri(person, 'image/jpeg'),
    productImage: dataUri(garment, 'image/jpeg'),
    clothingType: 'T-shirt',
  })
  return { json, imageBytes: [person.length, garment.length], description }
}

/** Two real photos of about 50 KB each (the instant engine never decodes them, intake still reads their headers). */
export function smallPhotos(): TryOnBody {
  const person = makeShopperPhoto({ width: 600, height: 900, format: 'jpeg' }).bytes
  const garment = makeGarmentPhoto({ kind: 'tshirt', color: [40, 90, 170], width: 760, height: 760 }).bytes
  return body(person, garment, `two JPEG photos (${kb(person.length)} + ${kb(garment.length)})`)
}

/**
 * Two 8 MB "photos": a JPEG header announcing 4000×3000 (12 MP, under the 40 MP limit) followed by random,
 * incompressible bytes. Intake sniffs the header and checks the size; the instant engine never decodes them.
 */
export function largeImages(size = 8 * 1024 * 1024): TryOnBody {
  const make = () => {
    const bytes = new Uint8Array(size)
    for (let offset = 0; offset < size; offset += 65_536) crypto.getRandomValues(bytes.subarray(offset, Math.min(size, offset + 65_536)))
    // SOI, then a baseline frame header: length 17, 8-bit, height 3000, width 4000, three components.
    bytes.set([
      0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x0b, 0xb8, 0x0f, 0xa0, 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01,
    ])
    return bytes
  }
  return body(make(), make(), `two ${(size / 1024 / 1024).toFixed(0)} MB JPEGs (header + random bytes)`)
}

/** The local engine's real work: a 1024×1536 shopper and a 1024×1536 garment photo. */
export function localEnginePhotos(): TryOnBody {
  const person = makeShopperPhoto({ width: 1024, height: 1536, format: 'jpeg' }).bytes
  const garment = makeGarmentPhoto({ kind: 'tshirt', color: [200, 30, 40], width: 1024, height: 1536 }).bytes
  return body(person, garment, `two 1024×1536 JPEG photos (${kb(person.length)} + ${kb(garment.length)})`)
}

function kb(bytes: number): string {
  return `${(bytes / 1024).toFixed(0)} KB`
}
