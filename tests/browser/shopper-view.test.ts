import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errorCatalogue } from '../../shared/http/errors.ts'
import { tryOnSuccessSchema } from '../../shared/http/tryon.ts'
import { eventually } from '../support/eventually.ts'
import { makeShopperPhoto } from '../support/images.ts'
import { fashn, FASHN_PREDICTION, startFashnFake, type FashnFake } from '../support/provider-fakes.ts'
import { startTestStack, type TestStack } from '../support/stack.ts'
import { launchChromium, screenshot, type Chromium } from './chromium.ts'
import { dialogText, gownDataUri, startProductPages, tshirtDataUri, type ProductPages } from './product-page.ts'

const photo = makeShopperPhoto({ width: 900, height: 1500, fullLength: true })

/** Chooses the photo and sends it; resolves with the API request once it is sent. */
async function send(page: Page, names: { open: string; go: string }) {
  await page.getByRole('button', { name: names.open }).click()
  await page
    .locator('tryon-button input[type=file]:not([capture])')
    .setInputFiles({ name: 'me.jpg', mimeType: 'image/jpeg', buffer: Buffer.from(photo.bytes) })
  const sent = page.waitForRequest((request) => request.url().endsWith('/functions/v1/tryon-api') && request.method() === 'POST')
  await page.getByRole('button', { name: names.go }).click()
  return sent
}

/** Whether the dialog is open, and the class of the widget's control that has the focus. */
const focused = (page: Page) =>
  page.locator('tryon-button').evaluate((element) => ({
    open: element.shadowRoot!.querySelector('dialog')!.open,
    focused: element.shadowRoot!.activeElement?.className ?? null,
  }))

/** Words that belong to the shop's bill, not to its customers. */
const SHOP_WORDS = /credit|crédit|score|balance|solde|\d\.\d\d/i

const EN_HINT = 'A full-length photo works best: standing, facing the camera, feet visible, in good light.'
const FR_HINT = 'Une photo en pied donne les meilleurs résultats : debout, de face, les pieds visibles, bien éclairée.'
const EN_BRIDAL =
  'For the gown and its train, use a full-length photo: standing, facing the camera, feet visible with some floor around them.'
const FR_BRIDAL = 'Pour la robe et sa traîne, utilisez une photo en pied : debout, de face, les pieds visibles avec un peu de sol autour.'

/** A shop's own product page (no playground): what its customers see of each outcome, test keys on the local engine. */
describe('what a shopper sees, in Chromium', () => {
  let t: TestStack
  let browser: Chromium
  let shop: ProductPages
  let script: string

  beforeAll(async () => {
    ;[t, browser] = await Promise.all([startTestStack(), launchChromium()])
    script = `${t.stack.url}/tryon-widget.js`
    shop = await startProductPages(script)
  })
  afterAll(async () => {
    // The browser first: its idle keep-alive connections would hold the API's server open.
    await browser?.close()
    await shop?.close()
    await t?.close()
  })

  const bridalPage = (apiKey: string, extra: Record<string, string | true>) =>
    shop.open(browser, {
      endpoint: t.stack.functionUrl,
      'api-key': apiKey,
      'product-image': gownDataUri,
      'product-type': 'wedding-dress',
      ...extra,
    })

  it('no credits and no scores for the shopper; a refunded train is explained with what to photograph', async () => {
    const key = await t.createKey({ credits: 2 })
    const { page, errors } = await bridalPage(key.apiKey, { scenario: 'train_score_low', locale: 'en' })
    const request = await send(page, { open: 'Try it on', go: 'Create my try-on' })
    const caption = page.locator('tryon-button figcaption')
    await caption.getByText('Your try-on is ready.', { exact: false }).waitFor()

    const body = tryOnSuccessSchema.parse(await (await request.response())!.json())
    expect(body).toMatchObject({ creditsCharged: 0, creditsRemaining: 2, bridal: { applied: false, reason: 'train_score_low' } })
    expect(body.bridal!.trainScore).not.toBeNull()
    expect(await caption.textContent()).toBe(`Your try-on is ready. The train of the gown could not be shown on this photo. ${EN_BRIDAL}`)
    expect(await page.locator('tryon-button img.result').isVisible()).toBe(true)
    const text = await dialogText(page)
    expect(text).not.toMatch(SHOP_WORDS)
    expect(text).not.toContain(String(body.creditsRemaining))
    await screenshot(page, 'shopper-train-refunded')
    expect(errors).toEqual([])
  })

  it('shows the credits and the train score with `debug`, as the playground does', async () => {
    const key = await t.createKey({ credits: 2 })
    const { page, errors } = await bridalPage(key.apiKey, { scenario: 'train_score_unavailable', locale: 'fr', debug: true })
    const request = await send(page, { open: 'Essayer', go: 'Créer mon essayage' })
    await page.locator('tryon-button figcaption').getByText('Votre essayage est prêt.', { exact: false }).waitFor()
    const body = tryOnSuccessSchema.parse(await (await request.response())!.json())
    expect(body).toMatchObject({ creditsCharged: 2, creditsRemaining: 0, bridal: { applied: true, trainScore: null } })
    // The key is at the default level, measured: the widget shows the check's score beside the train's.
    expect(await page.locator('tryon-button .debug').textContent()).toBe(
      `credits charged: 2 · credits remaining: 0 · train score: — · quality score: ${body.quality!.score!.toFixed(2)}`,
    )
    expect(await page.locator('tryon-button figcaption').textContent()).toBe(
      'Votre essayage est prêt. La traîne est affichée ; sa qualité n’a pas pu être vérifiée.',
    )
    expect(errors).toEqual([])
  })

  it('a failed try-on tells the shopper, in French, what to photograph, and offers to try again', async () => {
    const key = await t.createKey({ credits: 1 })
    const { page, errors } = await shop.open(browser, {
      endpoint: t.stack.functionUrl,
      'api-key': key.apiKey,
      'product-image': tshirtDataUri,
      scenario: 'generation_failed',
      locale: 'fr',
    })
    const request = await send(page, { open: 'Essayer', go: 'Créer mon essayage' })
    const alert = page.locator('tryon-button').getByRole('alert')
    await alert.getByText('Un problème est survenu', { exact: false }).waitFor()
    expect((await request.response())!.status()).toBe(500)
    expect(await alert.textContent()).toBe(`Un problème est survenu pendant la création de votre essayage. Veuillez réessayer. ${FR_HINT}`)
    expect(await page.getByRole('button', { name: 'Réessayer' }).isVisible()).toBe(true)
    expect(await page.locator('tryon-button .debug').textContent()).toBe('')
    expect(await dialogText(page)).not.toMatch(SHOP_WORDS)
    expect(await t.balanceOf(key)).toBe(1)
    await screenshot(page, 'shopper-failed-fr')
    expect(errors).toEqual([])
  })

  it('has shopper words in each language for every error the API answers, and for the verdicts to come', async () => {
    const { page } = await shop.open(browser, { endpoint: t.stack.functionUrl, 'api-key': 'vto_test_unused' })
    const catalogue = [
      ...Object.entries(errorCatalogue).map(([code, entry]) => [code, entry.status, entry.message]),
      ['person_not_found', 400, 'userPhoto: no person was found in the photo'],
    ]
    const noTrain = { applied: false, trainScore: null, reason: 'train_pretreatment_unavailable' }
    const quality = { checked: true, passed: false, score: 0.31, issues: ['garment_off_body'] }
    const success = { success: true, tryOnId: 'id', shortId: null, resultUrl: 'https://x/r.jpg', creditsRemaining: 4, creditsCharged: 0 }
    // A string, so that vitest leaves this import() alone: it runs in the page, on the module it already loaded.
    const words: Record<
      'en' | 'fr',
      { errors: string[]; productRefused: string; bridalPastFree: string; quality: unknown; qualityAbsent: unknown; noTrain: unknown }
    > =
      await page.evaluate(`import(${JSON.stringify(script)}).then((widget) => Object.fromEntries(['en', 'fr'].map((language) => [language, {
        errors: ${JSON.stringify(catalogue)}.map(([code, status, message]) => widget.errorMessage(language, status, code, message)),
        productRefused: widget.errorMessage(language, 400, 'image_too_large', 'productImage: image is larger than 10 MB'),
        bridalPastFree: widget.errorMessage(language, 429, 'free_deliveries_exhausted', '', true),
        quality: widget.resultMessage(language, { ...${JSON.stringify(success)}, quality: ${JSON.stringify(quality)} }),
        qualityAbsent: widget.resultMessage(language, ${JSON.stringify(success)}),
        noTrain: widget.resultMessage(language, { ...${JSON.stringify(success)}, bridal: ${JSON.stringify(noTrain)} }, true),
      }])))`)

    for (const [index, [code]] of catalogue.entries()) {
      const [en, fr] = [words.en.errors[index], words.fr.errors[index]]
      expect(en, code as string).toMatch(/^[A-Z].+\.$/)
      expect(fr, code as string).not.toBe(en)
      expect(`${en} ${fr}`, code as string).not.toMatch(SHOP_WORDS)
    }
    const at = (code: string) => catalogue.findIndex(([c]) => c === code)
    expect(words.en.errors[at('person_not_found')]).toBe(`We could not find a person in this photo. ${EN_HINT}`)
    expect(words.fr.errors[at('person_not_found')]).toBe(`Nous n’avons trouvé personne sur cette photo. ${FR_HINT}`)
    expect(words.en.errors[at('ai_content_rejected')]).toBe(`We could not create a try-on from this photo. ${EN_HINT}`)
    expect(words.en.errors[at('image_too_large')]).toBe('This photo is too large. Choose another one, or take a new one.')
    // The catalogue's example of it names the shopper's photo; the shop's product image is not the shopper's to mend.
    expect(words.en.productRefused).toBe('This product cannot be tried on right now.')
    expect(words.fr.productRefused).toBe('Ce produit ne peut pas être essayé pour le moment.')
    // Past the day's free results a result that failed its check is not delivered: the shopper is told as of one delivered.
    expect(words.en.errors[at('free_deliveries_exhausted')]).toBe(`We could not dress this photo well. ${EN_HINT}`)
    expect(words.fr.errors[at('free_deliveries_exhausted')]).toBe(`Nous n’avons pas pu bien habiller cette photo. ${FR_HINT}`)
    expect(words.en.bridalPastFree).toBe('Wedding-dress try-on is unavailable for now. Please come back later.')
    expect(words.en.quality).toEqual({ text: `We could not dress this photo well. ${EN_HINT}`, image: false })
    expect(words.fr.quality).toEqual({ text: `Nous n’avons pas pu bien habiller cette photo. ${FR_HINT}`, image: false })
    expect(words.en.qualityAbsent).toEqual({ text: 'Your try-on is ready.', image: true })
    expect(words.fr.noTrain).toEqual({ text: `Votre essayage est prêt. La robe est affichée sans sa traîne. ${FR_BRIDAL}`, image: true })
  })
})

/**
 * The wait on a live key whose engine is FASHN (its fake keeps the job `processing`), with Playwright's clock driving
 * the page's time: the elapsed seconds against the usual wait, then "longer than usual"; Cancel gives the photo back.
 */
describe('the wait for a slow engine, in Chromium', () => {
  let t: TestStack
  let fake: FashnFake
  let browser: Chromium
  let shop: ProductPages
  const statusPath = `/v1/status/${FASHN_PREDICTION}`

  beforeAll(async () => {
    fake = await startFashnFake(makeShopperPhoto({ width: 96, height: 160, seed: 7 }).bytes)
    ;[t, browser] = await Promise.all([
      startTestStack({ env: { TRYON_ENGINE: 'fashn', FASHN_API_KEY: 'fa-live-key', FASHN_BASE_URL: fake.url } }),
      launchChromium(),
    ])
    shop = await startProductPages(`${t.stack.url}/tryon-widget.js`)
  })
  afterAll(async () => {
    await browser?.close()
    await shop?.close()
    await t?.close()
    await fake?.close()
  })

  it('counts the seconds against the usual wait, stays cancellable, and Cancel or closing returns to the photo', async () => {
    fake.script('GET', statusPath, fashn.status('processing'))
    const key = await t.createKey({ credits: 2, mode: 'live' })
    const { page, errors } = await shop.open(
      browser,
      { endpoint: t.stack.functionUrl, 'api-key': key.apiKey, 'product-image': tshirtDataUri, 'expected-seconds': '20', locale: 'en' },
      async (page) => {
        await page.clock.install({ time: new Date('2026-11-24T10:00:00Z') })
        await page.clock.pauseAt(new Date('2026-11-24T10:00:01Z'))
      },
    )
    const failed: string[] = []
    page.on('requestfailed', (request) => failed.push(`${request.method()} ${request.failure()?.errorText}`))
    await page.evaluate(() => {
      const seen: string[] = []
      ;(window as unknown as { seen: string[] }).seen = seen
      document.addEventListener('tryon-error', () => seen.push('tryon-error'))
      document.addEventListener('tryon-result', () => seen.push('tryon-result'))
    })
    const widget = page.locator('tryon-button')
    const progress = widget.locator('progress')
    const time = widget.locator('.time')

    await send(page, { open: 'Try it on', go: 'Create my try-on' })
    await eventually(async () => fake.requestsTo('/v1/run').length === 1)
    await time.getByText('0 s, usually about 20 s').waitFor()
    expect(await widget.getByRole('status').textContent()).toBe('Creating your try-on…')
    await page.clock.runFor(5_000)
    await time.getByText('5 s, usually about 20 s').waitFor()
    expect(await progress.evaluate((bar: HTMLProgressElement) => [bar.value, bar.max, bar.hasAttribute('value')])).toEqual([5, 20, true])
    await page.clock.runFor(20_000)
    await time.getByText('25 s: taking longer than usual, still working').waitFor()
    // Past the usual wait the bar is indeterminate: it cannot tell how much is left.
    expect(await progress.evaluate((bar: HTMLProgressElement) => bar.hasAttribute('value'))).toBe(false)
    expect(await dialogText(page)).not.toMatch(SHOP_WORDS)
    await screenshot(page, 'shopper-waiting-longer')

    expect(await focused(page)).toEqual({ open: true, focused: 'cancel' })
    await widget.getByRole('button', { name: 'Cancel' }).click()
    const create = widget.getByRole('button', { name: 'Create my try-on' })
    await create.waitFor()
    expect(await focused(page)).toEqual({ open: true, focused: 'go' })
    expect(await widget.locator('img.preview').isVisible()).toBe(true)
    expect(await progress.isVisible()).toBe(false)
    expect(await widget.getByRole('alert').textContent()).toBe('')
    await eventually(async () => failed.length === 1)
    expect(failed).toEqual(['POST net::ERR_ABORTED'])

    // Sent again, then the dialog closed while waiting: nobody is left to see it, so the call is dropped too.
    await create.click()
    await time.getByText('0 s, usually about 20 s').waitFor()
    await page.keyboard.press('Escape')
    await eventually(async () => failed.length === 2)
    expect(failed[1]).toBe('POST net::ERR_ABORTED')
    expect(await focused(page)).toEqual({ open: false, focused: 'open' })
    expect(await page.evaluate(() => (window as unknown as { seen: string[] }).seen)).toEqual([])

    // The server goes on with FASHN's job until it settles: the books balance whatever it came to.
    fake.script('GET', statusPath, fashn.completed(fake.outputUrl))
    await eventually(async () => (await t.ledger(key)).reserved === 0)
    const ledger = await t.ledger(key)
    expect(ledger.balance).toBe(ledger.ledgerBalance)
    expect(errors).toEqual([])
  })
})
