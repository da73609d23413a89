import { describe, expect, it } from 'vitest'
import { dataUri, InputPreparationError, prepareInput, sentAsIs } from '../../../shared/engine/providers/images.ts'
import { jsonBody } from '../../../shared/engine/providers/json-body.ts'
import { fetchOutput, generatedImage } from '../../../shared/engine/providers/output.ts'
import { createLocalPretreatment } from '../../../shared/bridal/local-pretreatment.ts'
import { createDecodeBudget, decodeImage } from '../../../shared/images/codecs/index.ts'
import { readImageHeader } from '../../../shared/images/sniff.ts'
import { decodeUpright } from '../../../shared/images/upright.ts'
import { asInput, makeFlatImage, makeGarmentPhoto, makeNoiseImage, makeShopperPhoto } from '../../support/images.ts'
import { providerResult, testRuntime } from './support.ts'

describe('input preparation', () => {
  const any = { formats: ['jpeg', 'png', 'webp'] as const, maxBytes: 10 * 1024 * 1024, maxLongSide: 4096 }

  it('sends the caller’s bytes untouched when format, size and dimensions fit', () => {
    const png = asInput(makeFlatImage({ width: 50, height: 40, color: [1, 2, 3], format: 'png' }))
    const prepared = prepareInput(png, 'productImage', any)
    expect(prepared).toEqual({ bytes: png.bytes, format: 'png', contentType: 'image/png', reencoded: false })
    expect(JSON.parse(new TextDecoder().decode(jsonBody(dataUri(prepared)).bytes()))).toMatch(/^data:image\/png;base64,iVBORw0KGgo/)
  })

  it('decodes nothing for an image the provider takes as it is: a JPEG whose pixels are garbage still goes out untouched', () => {
    const photo = asInput(makeNoiseImage({ width: 300, height: 200, format: 'jpeg' }))
    const garbled = photo.bytes.slice()
    garbled.fill(0x55, garbled.length - 400, garbled.length - 2)
    const image = { ...photo, bytes: garbled }
    expect(sentAsIs(image, any)).toBe(true)
    expect(prepareInput(image, 'userPhoto', any)).toMatchObject({ bytes: garbled, reencoded: false })
    expect(sentAsIs(image, { ...any, formats: ['png'] })).toBe(false)
    expect(sentAsIs(image, { ...any, maxLongSide: 299 })).toBe(false)
    expect(sentAsIs(image, { ...any, maxBytes: garbled.length - 1 })).toBe(false)
  })

  it('shrinks and re-encodes until the bytes fit', () => {
    const noise = asInput(makeNoiseImage({ width: 500, height: 500, format: 'jpeg' }))
    expect(noise.bytes.byteLength).toBeGreaterThan(200_000)
    const prepared = prepareInput(noise, 'userPhoto', { ...any, maxBytes: 80_000 })
    expect(prepared.reencoded).toBe(true)
    expect(prepared.bytes.byteLength).toBeLessThanOrEqual(80_000)
    const header = readImageHeader(prepared.bytes)!
    expect(header.format).toBe('jpeg')
    expect(header.width).toBeLessThan(500)
  })

  it('re-encodes a large photo near 2048 px, even for a provider that takes more: a JPEG at its DCT scale, without a resize', () => {
    const jpeg = asInput(makeNoiseImage({ width: 5000, height: 220, format: 'jpeg' }))
    const fromJpeg = prepareInput(jpeg, 'userPhoto', { ...any, maxBytes: jpeg.bytes.byteLength - 1 })
    expect(readImageHeader(fromJpeg.bytes)).toMatchObject({ format: 'jpeg', width: 2500, height: 110 })
    const png = asInput(makeNoiseImage({ width: 5000, height: 220, format: 'png' }))
    const fromPng = prepareInput(png, 'productImage', { ...any, maxBytes: png.bytes.byteLength - 1 })
    expect(readImageHeader(fromPng.bytes)).toMatchObject({ format: 'jpeg', width: 2048, height: 90 })
    // Never past the provider's own limit, and an image that fits is never touched, however large.
    expect(readImageHeader(prepareInput(jpeg, 'userPhoto', { ...any, maxLongSide: 2000 }).bytes)).toMatchObject({ width: 2000, height: 88 })
    expect(prepareInput(jpeg, 'userPhoto', { ...any, maxLongSide: 5000 }).bytes).toBe(jpeg.bytes)
  })

  it('flattens a transparent product shot on white, not black, when it must become JPEG', () => {
    const cutout = asInput(
      makeGarmentPhoto({ kind: 'tshirt', color: [200, 20, 20], width: 80, height: 80, transparentBackground: true, format: 'png' }),
    )
    const prepared = prepareInput(cutout, 'productImage', { ...any, formats: ['jpeg'] })
    const corner = decodeImage(prepared.bytes, 'jpeg').data.subarray(0, 3)
    expect(Math.min(...corner)).toBeGreaterThan(240)
  })

  it('refuses an image that must be re-encoded but cannot be decoded, naming the field', () => {
    const broken = {
      bytes: new Uint8Array([0x52, 0x49, 0x46, 0x46, 0, 0, 0, 0, 0x57, 0x45, 0x42, 0x50, 1, 2, 3]),
      format: 'webp' as const,
      width: 10,
      height: 10,
    }
    expect(() => prepareInput(broken, 'userPhoto', { ...any, formats: ['jpeg'] })).toThrow(InputPreparationError)
  })
})

describe('provider output', () => {
  it('trusts the bytes, not the provider’s content type', () => {
    expect(generatedImage(providerResult, 'x').contentType).toBe('image/jpeg')
    expect(() => generatedImage(new TextEncoder().encode('<html>'), 'x')).toThrow(/not a JPEG, PNG or WebP/)
  })

  it('refuses plain-http output URLs unless the provider itself is reached over http', async () => {
    const { runtime } = testRuntime()
    const limits = { maxBytes: 1000, downloadTimeoutMs: 1000 }
    await expect(fetchOutput(runtime, 'http://cdn.example/out.png', { engine: 'fashn', allowHttp: false, limits })).rejects.toMatchObject({
      kind: 'refused',
    })
    await expect(fetchOutput(runtime, 'ftp://cdn.example/out.png', { engine: 'fashn', allowHttp: true, limits })).rejects.toMatchObject({
      kind: 'refused',
    })
    await expect(fetchOutput(runtime, 'not a url', { engine: 'fashn', allowHttp: true, limits })).rejects.toMatchObject({
      kind: 'malformed',
    })
  })
})

describe('a provider re-encode and the request’s decoding budget (issue 24)', () => {
  const person = asInput(makeShopperPhoto({ width: 1800, height: 2700, format: 'jpeg' }))
  const gown = asInput(makeGarmentPhoto({ kind: 'gown-with-train', color: [242, 236, 224], width: 600, height: 800, format: 'png' }))
  // Smaller than the photo, so it is re-encoded; smaller than the pre-treatment's copy, so that copy will do.
  const policy = { formats: ['jpeg'] as const, maxBytes: 10 * 1024 * 1024, maxLongSide: 1024 }

  it('is charged to the request’s budget when it decodes', () => {
    const budget = createDecodeBudget(240e6)
    const prepared = prepareInput(person, 'userPhoto', policy, budget)
    expect(prepared.reencoded).toBe(true)
    expect(budget.remaining).toBeLessThan(240e6)
    expect(budget.workSpent).toBeGreaterThan(0)
  })

  it('a wedding dress’s shopper photo is decoded once: the re-encode starts from the pre-treatment’s copy', async () => {
    const budget = createDecodeBudget(240e6)
    await createLocalPretreatment({ guidance: 'none' }).prepare({ person, garment: gown, decodeBudget: budget })
    const before = { pixels: budget.remaining, work: budget.workSpent }
    const prepared = prepareInput(person, 'userPhoto', policy, budget)
    expect({ pixels: budget.remaining, work: budget.workSpent }).toEqual(before)
    // Without the copy the photo is decoded (and charged) again, to much the same picture.
    const alone = createDecodeBudget(240e6)
    const fresh = decodeImage(prepareInput(person, 'userPhoto', policy, alone).bytes, 'jpeg')
    expect(alone.remaining).toBeLessThan(240e6)
    const reused = decodeImage(prepared.bytes, 'jpeg')
    expect([reused.width, reused.height]).toEqual([fresh.width, fresh.height])
    expect(meanDifference(reused.data, fresh.data)).toBeLessThan(4)
  })
})

describe('a provider re-encode and a copy too small for it', () => {
  it('decodes the photo again at its own size: a 1/8 copy would send the provider a fraction of the photo', () => {
    const person = asInput(makeShopperPhoto({ width: 1800, height: 2700, format: 'jpeg' }))
    const budget = createDecodeBudget(240e6)
    const small = decodeUpright(person, { side: 256, budget })
    expect(Math.max(small.width, small.height)).toBeLessThan(768)
    const before = budget.remaining
    const prepared = prepareInput(person, 'userPhoto', { formats: ['jpeg'], maxBytes: 10e6, maxLongSide: 1024 }, budget)
    expect(budget.remaining).toBeLessThan(before)
    expect(readImageHeader(prepared.bytes)).toMatchObject({ height: 1024 })
  })
})

function meanDifference(a: Uint8Array, b: Uint8Array): number {
  let sum = 0
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i] - b[i])
  return sum / a.length
}
