import { describe, expect, it } from 'vitest'
import { createLocalEngine } from '../../../shared/engine/local/index.ts'
import { decodeImage } from '../../../shared/images/codecs/index.ts'
import { measureResult } from '../../../shared/quality/measure.ts'
import { asInput, makeGarmentPhoto, makeShopperPhoto } from '../../support/images.ts'
import { SLOW } from './check-support.ts'

// The test photos' shopper wears a blue shirt by default (devstack/samples/shopper-photo.ts).
const shopper = makeShopperPhoto({ width: 240, height: 420, format: 'jpeg' })
const blueTee = makeGarmentPhoto({ kind: 'tshirt', color: [30, 90, 200], width: 200, height: 200, format: 'png' })
const redTee = makeGarmentPhoto({ kind: 'tshirt', color: [200, 40, 40], width: 200, height: 200, format: 'png' })

async function tryOn(garment: typeof blueTee) {
  const outcome = await createLocalEngine().generate({ person: asInput(shopper), garment: asInput(garment), category: 'top' })
  if (outcome.kind !== 'generated' || !('bytes' in outcome.image)) throw new Error(`expected an image, got ${outcome.kind}`)
  return decodeImage(outcome.image.bytes, 'jpeg')
}

describe('a region the shopper already wears in the product colour', { timeout: SLOW }, () => {
  it('passes a blue T-shirt put on over a blue shirt: the torso is undecidable, not missing', async () => {
    const m = measureResult({
      shopper: shopper.pixels,
      product: blueTee.pixels,
      result: await tryOn(blueTee),
      category: 'top',
    })
    expect(m.measures['alike.torso']).toBeGreaterThanOrEqual(0.5)
    expect(m.measures['cover.torso']).toBeUndefined()
    expect(m.issues).toEqual([])
    expect(m.passed).toBe(true)
  })

  it('still fails the photo sent back unchanged for a product of another colour: the garment is missing', () => {
    const m = measureResult({ shopper: shopper.pixels, product: redTee.pixels, result: shopper.pixels, category: 'top' })
    expect(m.measures['alike.torso']).toBeUndefined()
    expect(m.issues).toEqual(['garment_missing'])
  })

  it('fails a red T-shirt sent back as the blue shirt: a red product is never alike to it', async () => {
    const m = measureResult({ shopper: shopper.pixels, product: redTee.pixels, result: await tryOn(blueTee), category: 'top' })
    expect(m.passed).toBe(false)
  })
})
