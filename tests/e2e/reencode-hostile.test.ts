import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encodeBase64 } from '../../shared/images/base64.ts'
import { makeGarmentPhoto, makeShopperPhoto } from '../support/images.ts'
import { gemini, geminiPath, startFakeServer, type FakeServer } from '../support/provider-fakes.ts'
import { expectErrorBody, postTryOn, startTestStack, type TestStack } from '../support/stack.ts'

/**
 * A live key's photo that intake admits (its headers are sound) but whose pixels cannot be decoded: the provider's
 * re-encode, on the dev stack's local-work threads, finds it out. The caller gets the adapters' 400, nothing is
 * charged and the provider is never called.
 */
describe('a photo that breaks only when it is re-encoded for a provider (TRYON_ENGINE=gemini)', () => {
  let t: TestStack
  let fake: FakeServer
  beforeAll(async () => {
    fake = await startFakeServer((f) =>
      f.script(
        'POST',
        geminiPath('gemini-3.1-flash-image'),
        gemini.image(makeShopperPhoto({ width: 240, height: 400, format: 'jpeg' }).bytes),
      ),
    )
    t = await startTestStack({ env: { TRYON_ENGINE: 'gemini', GEMINI_API_KEY: 'AIza-live', GEMINI_BASE_URL: fake.url } })
  })
  afterAll(async () => {
    await t?.close()
    await fake?.close()
  })

  it('answers 400, charges nothing and never calls the provider', async () => {
    // 3000 × 5000: over the 4096 px Gemini takes as it is, so it must be decoded; its Huffman tables wiped after intake's look.
    const whole = makeShopperPhoto({ width: 3000, height: 5000, format: 'jpeg' }).bytes
    const cut = whole.slice()
    for (let i = 0; i + 1 < cut.length; i++) {
      if (cut[i] !== 0xff || cut[i + 1] !== 0xc4) continue
      const length = (cut[i + 2] << 8) | cut[i + 3]
      cut.fill(0, i + 5, i + 2 + length)
    }
    const productImage = encodeBase64(
      makeGarmentPhoto({ kind: 'tshirt', color: [200, 40, 40], width: 200, height: 200, format: 'png' }).bytes,
    )
    const key = await t.createKey({ credits: 1, mode: 'live', quality: 'off' })
    const res = await postTryOn(t.stack.functionUrl, {
      apiKey: key.apiKey,
      body: { userPhoto: encodeBase64(cut), productImage, clothingType: 'T-shirt' },
    })
    expectErrorBody(res, 400, 'unsupported_image', /userPhoto\) could not be decoded/)
    expect(fake.requests).toHaveLength(0)
    expect(await t.ledger(key)).toEqual({ balance: 1, reserved: 0, ledgerBalance: 1, ledgerReserved: 0, heldByTryOns: 0 })
  })
})
