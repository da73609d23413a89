import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeImage } from '../../shared/images/codecs/index.ts'
import type { RgbaImage } from '../../shared/images/codecs/raster.ts'
import { resizeArea } from '../../shared/images/resize.ts'
import { tryOnSuccessSchema } from '../../shared/http/tryon.ts'
import { decodeBase64 } from '../../shared/images/base64.ts'
import { readImageHeader } from '../../shared/images/sniff.ts'
import { storedPixels } from '../support/jpeg-exif.ts'
import { makePhonePhoto, type PhonePhoto } from '../support/phone-photo.ts'
import { startTestStack, type TestStack } from '../support/stack.ts'
import { launchChromium, screenshot, type Chromium } from './chromium.ts'
import { startProductPages, tshirtDataUri, type ProductPages } from './product-page.ts'

/** The JPEG inside a `data:image/jpeg;base64,…` URI. */
function jpegOf(dataUri: string): Uint8Array {
  expect(dataUri).toMatch(/^data:image\/jpeg;base64,/)
  return decodeBase64(dataUri.slice(dataUri.indexOf(',') + 1))!
}

/** Mean absolute difference per channel between two pictures of one size, 0–255. */
function meanDifference(a: RgbaImage, b: RgbaImage): number {
  expect([a.width, a.height]).toEqual([b.width, b.height])
  let sum = 0
  for (let i = 0; i < a.data.length; i++) if ((i & 3) !== 3) sum += Math.abs(a.data[i] - b.data[i])
  return sum / ((a.data.length / 4) * 3)
}

/**
 * A 12 MP phone photo (4000 × 3000 stored, EXIF Orientation 6: a 3000 × 4000 portrait as shown) chosen in the widget
 * on a shop's page in Chromium: the photo sent is the portrait the shopper sees, at most 1536 px, a JPEG of a
 * few hundred KB instead of the file's megabytes.
 */
describe('a phone photo in the widget, in Chromium', () => {
  let t: TestStack
  let browser: Chromium
  let shop: ProductPages
  let photo: PhonePhoto

  beforeAll(async () => {
    ;[t, browser] = await Promise.all([startTestStack(), launchChromium()])
    shop = await startProductPages(`${t.stack.url}/tryon-widget.js`)
    photo = makePhonePhoto({ width: 3000, height: 4000 })
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await shop?.close()
    await t?.close()
  })

  /** Checks the sent JPEG is the upright picture scaled to 1152 × 1536, and not the stored one turned some other way. */
  function expectUpright(sent: Uint8Array) {
    expect(readImageHeader(sent)).toMatchObject({ format: 'jpeg', width: 1152, height: 1536 })
    const pixels = decodeImage(sent, 'jpeg')
    const upright = meanDifference(pixels, resizeArea(photo.upright, 1152, 1536))
    const upsideDown = meanDifference(pixels, resizeArea(storedPixels(photo.upright, 3), 1152, 1536))
    const mirrored = meanDifference(pixels, resizeArea(storedPixels(photo.upright, 2), 1152, 1536))
    expect(upright).toBeLessThan(4)
    expect(upsideDown).toBeGreaterThan(5 * upright)
    expect(mirrored).toBeGreaterThan(2 * upright)
  }

  const choose = (page: Page, input: 'library' | 'camera') =>
    page
      .locator(`tryon-button input[type=file]${input === 'camera' ? '[capture]' : ':not([capture])'}`)
      .setInputFiles({ name: 'IMG_0001.jpg', mimeType: 'image/jpeg', buffer: Buffer.from(photo.jpeg) })

  it('sends the 4000 × 3000 Orientation-6 photo upright, as a small JPEG, and shows the result', async () => {
    expect(readImageHeader(photo.jpeg)).toMatchObject({ width: 4000, height: 3000 })
    expect(photo.jpeg.byteLength).toBeGreaterThan(2 * 1024 * 1024)
    const key = await t.createKey({ credits: 1 })
    const { page, errors } = await shop.open(browser, {
      endpoint: t.stack.functionUrl,
      'api-key': key.apiKey,
      'product-image': tshirtDataUri,
      'clothing-type': 'T-shirt',
      locale: 'en',
    })
    await page.getByRole('button', { name: 'Try it on' }).click()
    await choose(page, 'library')
    const sent = page.waitForRequest((request) => request.url() === t.stack.functionUrl && request.method() === 'POST')
    await page.getByRole('button', { name: 'Create my try-on' }).click()
    const request = await sent

    // What reaches the server: the whole JSON body, both images in it, under a fifth of the phone's file alone.
    const body = request.postDataBuffer()!
    expect(body.byteLength).toBeLessThan(photo.jpeg.byteLength / 5)
    const userPhoto = jpegOf(request.postDataJSON().userPhoto)
    expect(userPhoto.byteLength).toBeLessThan(400 * 1024)
    expectUpright(userPhoto)

    await page.locator('tryon-button').getByText('Your try-on is ready.').waitFor()
    const answer = tryOnSuccessSchema.parse(await (await request.response())!.json())
    const shown = await page.locator('tryon-button img.result').evaluate((image: HTMLImageElement) => ({
      src: image.src,
      width: image.naturalWidth,
      height: image.naturalHeight,
    }))
    expect(shown).toEqual({ src: answer.resultUrl, width: 1152, height: 1536 })
    expect(await t.balanceOf(key)).toBe(0)
    await screenshot(page, 'phone-photo-orientation-6')
    expect(errors).toEqual([])
  })

  it('turns the photo upright without createImageBitmap too (browsers without it draw an <img> upright)', async () => {
    const { page, errors } = await shop.open(browser, { endpoint: t.stack.functionUrl, 'api-key': 'vto_test_unused', locale: 'en' })
    await page.evaluate(() => {
      // As in a browser that lacks it: the widget must take its other way.
      ;(window as { createImageBitmap?: unknown }).createImageBitmap = undefined
    })
    await page.getByRole('button', { name: 'Try it on' }).click()
    await choose(page, 'library')
    const preview = page.locator('tryon-button img.preview')
    await preview.waitFor()
    expectUpright(jpegOf(await preview.evaluate((image: HTMLImageElement) => image.src)))
    expect(errors).toEqual([])
  })

  it('offers the camera as well as the library on a touch screen, and only the library on a desktop', async () => {
    const { page, errors } = await shop.open(browser, { endpoint: t.stack.functionUrl, 'api-key': 'vto_test_unused', locale: 'fr' })
    const dialog = page.locator('tryon-button').getByRole('dialog')
    await page.getByRole('button', { name: 'Essayer' }).click()
    expect(await dialog.getByText('Choisir une photo').isVisible()).toBe(true)
    expect(await dialog.getByText('Prendre une photo').isVisible()).toBe(false)
    await page.keyboard.press('Escape')

    // A phone's coarse pointer, as Chromium's device emulation gives it.
    const cdp = await browser.context.newCDPSession(page)
    await cdp.send('Emulation.setTouchEmulationEnabled', { enabled: true, maxTouchPoints: 5 })
    await page.getByRole('button', { name: 'Essayer' }).click()
    expect(await dialog.getByText('Choisir une photo').isVisible()).toBe(true)
    expect(await dialog.getByText('Prendre une photo').isVisible()).toBe(true)
    const camera = page.locator('tryon-button input[capture]')
    expect(await camera.evaluate((input: HTMLInputElement) => [input.accept, input.getAttribute('capture')])).toEqual([
      'image/*',
      'environment',
    ])
    await choose(page, 'camera')
    await page.locator('tryon-button img.preview').waitFor()
    expect(await page.getByRole('button', { name: 'Créer mon essayage' }).isVisible()).toBe(true)
    await screenshot(page, 'phone-photo-camera-fr')
    await cdp.detach()
    expect(errors).toEqual([])
  })
})
