// @ts-check
/**
 * <tryon-button>: a "Try it on" button for a product page. No framework, no build step.
 *
 *   <script type="module" src="https://<host>/tryon-widget.js"></script>
 *   <tryon-button api-key="vto_live_…" product-image="https://shop.example.com/dress.jpg"></tryon-button>
 *
 * Attributes: api-key, product-image (URL or data URI), endpoint (required from a CDN; by default the
 * try-on endpoint on the API host that served this file), product-type ("wedding-dress"), clothing-type, locale (default
 * navigator.language), scenario (test keys: X-Tryon-Scenario). A result with a shortId offers "Copy link" (its
 * share link). Events (bubbling, composed):
 * `tryon-result` with the response body, `tryon-error` with { status, errorCode, error, body }.
 */

/** @typedef {{ applied: boolean, trainScore: number | null, reason: string }} Bridal */
/** @typedef {{ success: true, tryOnId: string, shortId: string | null, resultUrl: string, creditsRemaining: number, creditsCharged: number, bridal?: Bridal }} TryOnSuccess */
/** @typedef {{ status: number, errorCode: string, error: string, body: unknown }} TryOnFailure */

/** The service takes up to 10 MB; a phone photo scaled to this long side is a few hundred KB. */
export const MAX_SIDE = 1536

const messages = {
  en: {
    open: 'Try it on',
    close: 'Close',
    intro: 'Choose a photo of yourself, or take one: facing the camera, in good light.',
    bridal: 'For the gown and its train, use a full-length photo: standing, facing the camera, feet visible with some floor around them.',
    pick: 'Choose or take a photo',
    preview: 'Your photo',
    go: 'Create my try-on',
    retry: 'Try again',
    working: 'Creating your try-on… this can take a little while.',
    done: 'Your try-on is ready.',
    result: 'You wearing this product',
    train_rendered: 'The train of the gown is shown.',
    train_score_low:
      'The train could not be shown on this photo; a full-length photo with the floor visible works best. This try-on was free.',
    score_unavailable: 'The train is shown; its quality could not be checked.',
    train_pretreatment_unavailable: 'The gown is shown without its train.',
    details: (/** @type {string} */ score, /** @type {number} */ charged) => `Train score: ${score} · credits charged: ${charged}`,
    copy: 'Copy link',
    copied: 'Link copied.',
    copyHere: 'Copy this link:',
    unreadable: 'This photo could not be read. Choose a JPEG or PNG photo.',
    network: 'The try-on service could not be reached. Check your connection and try again.',
    400: 'This photo could not be used. Choose another photo (JPEG or PNG).',
    401: 'Try-on is not set up correctly on this site (invalid key).',
    402: 'Try-on is unavailable right now: this shop has no try-on credits left.',
    403: 'Try-on is not enabled for this website.',
    409: 'This try-on is already being created. Please wait a moment.',
    413: 'This photo is too large. Choose a smaller one.',
    422: 'We could not create a try-on from this photo. Try a clear, front-facing photo of yourself.',
    500: 'Something went wrong while creating your try-on. Please try again.',
    503: 'Wedding-dress try-on is temporarily unavailable. Nothing was charged; please try again later.',
    rate_limited: 'Too many try-ons in a short time. Please wait a minute and try again.',
    daily_cap_reached: 'Try-on is unavailable on this shop for now. Please come back later.',
    free_deliveries_exhausted: 'Wedding-dress try-on is unavailable for now. Please come back later.',
  },
  fr: {
    open: 'Essayer',
    close: 'Fermer',
    intro: 'Choisissez une photo de vous, ou prenez-en une : de face, bien éclairée.',
    bridal: 'Pour la robe et sa traîne, utilisez une photo en pied : debout, de face, les pieds visibles avec un peu de sol autour.',
    pick: 'Choisir ou prendre une photo',
    preview: 'Votre photo',
    go: 'Créer mon essayage',
    retry: 'Réessayer',
    working: 'Création de votre essayage… cela peut prendre un moment.',
    done: 'Votre essayage est prêt.',
    result: 'Vous portant ce produit',
    train_rendered: 'La traîne de la robe est affichée.',
    train_score_low:
      'La traîne n’a pas pu être affichée sur cette photo ; une photo en pied où le sol est visible donne les meilleurs résultats. Cet essayage était gratuit.',
    score_unavailable: 'La traîne est affichée ; sa qualité n’a pas pu être vérifiée.',
    train_pretreatment_unavailable: 'La robe est affichée sans sa traîne.',
    details: (/** @type {string} */ score, /** @type {number} */ charged) => `Score de la traîne : ${score} · crédits débités : ${charged}`,
    copy: 'Copier le lien',
    copied: 'Lien copié.',
    copyHere: 'Copiez ce lien :',
    unreadable: 'Cette photo est illisible. Choisissez une photo JPEG ou PNG.',
    network: 'Le service d’essayage est injoignable. Vérifiez votre connexion et réessayez.',
    400: 'Cette photo ne peut pas être utilisée. Choisissez-en une autre (JPEG ou PNG).',
    401: 'L’essayage n’est pas correctement configuré sur ce site (clé invalide).',
    402: 'L’essayage est indisponible pour le moment : cette boutique n’a plus de crédits d’essayage.',
    403: 'L’essayage n’est pas activé pour ce site.',
    409: 'Cet essayage est déjà en cours de création. Patientez un instant.',
    413: 'Cette photo est trop lourde. Choisissez-en une plus petite.',
    422: 'Impossible de créer un essayage à partir de cette photo. Essayez une photo nette, de face.',
    500: 'Un problème est survenu pendant la création de votre essayage. Veuillez réessayer.',
    503: 'L’essayage de robes de mariée est momentanément indisponible. Rien n’a été débité ; réessayez plus tard.',
    rate_limited: 'Trop d’essayages en peu de temps. Patientez une minute, puis réessayez.',
    daily_cap_reached: 'L’essayage est indisponible pour le moment sur cette boutique. Revenez plus tard.',
    free_deliveries_exhausted: 'L’essayage de robes de mariée est indisponible pour le moment. Revenez plus tard.',
  },
}

/** @typedef {typeof messages.en} Messages */

/** What the service accepts as `locale`; anything else is left out rather than refused. */
const LOCALE = /^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/

/** @param {string | null | undefined} locale @returns {'en' | 'fr'} */
export const languageOf = (locale) => (/^fr([-_]|$)/i.test(locale || '') ? 'fr' : 'en')

/**
 * The try-on URL when the page names none: the API on the host that served this file, if that host is the
 * API's own (the dev stack serves `/tryon-widget.js`, a Supabase project its Storage under
 * `/storage/v1/object/public/`). From a CDN or a shop's bundle the API cannot be guessed: null.
 * @param {string} scriptUrl @returns {string | null}
 */
export function defaultEndpoint(scriptUrl) {
  const url = new URL(scriptUrl)
  const fromApiHost = url.pathname === '/tryon-widget.js' || url.pathname.startsWith('/storage/v1/object/public/')
  return fromApiHost && /^https?:$/.test(url.protocol) ? new URL('/functions/v1/tryon-api', url).href : null
}

/**
 * The share link of a result: the API's `/s/<shortId>`, which shows the image and nothing else.
 * @param {string} endpoint @param {string} shortId
 */
export const shareLink = (endpoint, shortId) => `${endpoint.replace(/\/+$/, '')}/s/${encodeURIComponent(shortId)}`

/**
 * The shopper-facing message for a failed call.
 * @param {'en' | 'fr'} language @param {number} status 0 for a network failure @param {string} [errorCode]
 */
export function errorMessage(language, status, errorCode) {
  const t = /** @type {Record<string, string>} */ (/** @type {unknown} */ (messages[language]))
  if (status === 0) return t.network
  if (errorCode === 'image_too_large') return t[413]
  if (status === 429) return t[errorCode ?? ''] ?? t.rate_limited
  return t[status] ?? (status >= 500 ? t[500] : t[400])
}

/**
 * Decodes a photo, scales it to at most MAX_SIDE on its long side and encodes it as a JPEG data URI.
 * @param {Blob} file @returns {Promise<string>}
 */
export async function photoToDataUri(file) {
  const bitmap = await createImageBitmap(file, { imageOrientation: 'from-image' })
  const scale = Math.min(1, MAX_SIDE / Math.max(bitmap.width, bitmap.height))
  const canvas = document.createElement('canvas')
  canvas.width = Math.max(1, Math.round(bitmap.width * scale))
  canvas.height = Math.max(1, Math.round(bitmap.height * scale))
  const context = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'))
  context.fillStyle = '#fff' // a transparent PNG would turn black in a JPEG
  context.fillRect(0, 0, canvas.width, canvas.height)
  context.imageSmoothingQuality = 'high'
  context.drawImage(bitmap, 0, 0, canvas.width, canvas.height)
  bitmap.close()
  return canvas.toDataURL('image/jpeg', 0.9)
}

const template = `<style>
:host{display:inline-block;font:inherit;--tryon-accent:#1f3a5f}
button,.pick{font:inherit;border-radius:6px;padding:.55em 1.1em;cursor:pointer;border:1px solid var(--tryon-accent)}
.open,.go{background:var(--tryon-accent);color:#fff}
button:focus-visible,.pick:focus-within{outline:3px solid #f2a900;outline-offset:2px}
button:disabled{opacity:.6;cursor:progress}
.open:disabled{cursor:not-allowed}
dialog{max-width:min(30rem,94vw);border:0;border-radius:10px;padding:1.2rem;box-shadow:0 8px 40px #0005}
dialog::backdrop{background:#0008}
header{display:flex;justify-content:space-between;align-items:center;gap:1rem}
h2{margin:0;font-size:1.2rem}
.x{background:none;border:0;font-size:1.5rem;line-height:1;padding:.2em .4em}
.pick{display:inline-block;background:#fff;color:var(--tryon-accent);position:relative}
.copy{background:#fff;color:var(--tryon-accent)}
.pick input{position:absolute;inset:0;opacity:0;width:100%;cursor:pointer}
img{display:block;max-width:100%;max-height:55vh;margin:.8rem auto;border-radius:6px}
.row{display:flex;flex-wrap:wrap;gap:.6rem;margin:.8rem 0}
progress{width:100%}
.error{color:#a4161a;font-weight:600}
small{display:block;color:#555}
figcaption:focus{outline:none}
[hidden]{display:none!important}
</style>
<button class="open" type="button" part="button"><slot></slot></button>
<dialog aria-labelledby="title" aria-describedby="intro" part="dialog">
<header><h2 id="title"></h2><button class="x" type="button"></button></header>
<p id="intro"></p>
<div class="row"><label class="pick"><input type="file" accept="image/*" autofocus><span></span></label><button class="go" type="button" hidden></button></div>
<img class="preview" alt="" hidden>
<div role="status" aria-live="polite"><progress hidden></progress><span class="status"></span></div>
<p class="error" role="alert"></p>
<figure hidden><img class="result" alt=""><figcaption tabindex="-1"></figcaption><small></small><div class="row"><button class="copy" type="button" hidden></button></div></figure>
</dialog>`

export class TryOnButton extends HTMLElement {
  static observedAttributes = ['locale', 'product-type', 'endpoint']

  /** @type {string | null} the resized photo, ready to send */
  #photo = null
  /** @type {string | null} the share link of the result shown */
  #link = null
  #busy = false

  constructor() {
    super()
    const root = this.attachShadow({ mode: 'open' })
    root.innerHTML = template
    /** @param {string} selector */
    const $ = (selector) => /** @type {HTMLElement} */ (root.querySelector(selector))
    this.ui = {
      open: /** @type {HTMLButtonElement} */ ($('.open')),
      label: $('slot'),
      dialog: /** @type {HTMLDialogElement} */ ($('dialog')),
      title: $('#title'),
      close: /** @type {HTMLButtonElement} */ ($('.x')),
      intro: $('#intro'),
      input: /** @type {HTMLInputElement} */ ($('input')),
      pick: $('.pick span'),
      go: /** @type {HTMLButtonElement} */ ($('.go')),
      preview: /** @type {HTMLImageElement} */ ($('.preview')),
      progress: $('progress'),
      status: $('.status'),
      error: $('.error'),
      figure: $('figure'),
      result: /** @type {HTMLImageElement} */ ($('.result')),
      caption: $('figcaption'),
      details: $('small'),
      copy: /** @type {HTMLButtonElement} */ ($('.copy')),
    }
    const { open, dialog, close, input, go, copy } = this.ui
    open.addEventListener('click', () => this.openDialog())
    close.addEventListener('click', () => dialog.close())
    // A click on the backdrop lands on the dialog element itself.
    dialog.addEventListener('click', (event) => event.target === dialog && dialog.close())
    dialog.addEventListener('close', () => open.focus())
    input.addEventListener('change', () => {
      this.#choose(input.files?.[0])
      input.value = '' // so that choosing the same file again is a change too
    })
    go.addEventListener('click', () => this.#send())
    copy.addEventListener('click', () => this.#copyLink())
  }

  connectedCallback() {
    this.#renderText()
    this.#requireEndpoint()
  }

  /** @param {string} name */
  attributeChangedCallback(name) {
    this.#renderText()
    if (name === 'endpoint' && this.isConnected) this.#requireEndpoint()
  }

  /** The `endpoint` attribute, else the API host's own when this file came from it (see defaultEndpoint). */
  get endpoint() {
    return this.getAttribute('endpoint') || defaultEndpoint(import.meta.url)
  }

  /** Without an endpoint the button cannot work: it stays disabled, and the page's developer is told why, once. */
  #requireEndpoint() {
    const { open } = this.ui
    if (!this.endpoint && !open.disabled) {
      console.error(
        `<tryon-button>: the endpoint attribute is required when tryon-widget.js is not served by the try-on API's own host ` +
          `(it was loaded from ${import.meta.url}). Add endpoint="https://<project-ref>.supabase.co/functions/v1/tryon-api"; ` +
          'the button stays disabled until then.',
      )
    }
    open.disabled = !this.endpoint
  }

  get language() {
    return languageOf(this.getAttribute('locale') || navigator.language)
  }

  get #t() {
    return messages[this.language]
  }

  get #isBridal() {
    return this.getAttribute('product-type') === 'wedding-dress'
  }

  openDialog() {
    this.ui.dialog.showModal()
  }

  #renderText() {
    const t = this.#t
    const { label, title, close, intro, pick, preview, result, go, copy } = this.ui
    label.textContent = t.open
    title.textContent = t.open
    close.setAttribute('aria-label', t.close)
    close.textContent = '×'
    intro.textContent = this.#isBridal ? `${t.intro} ${t.bridal}` : t.intro
    pick.textContent = t.pick
    preview.alt = t.preview
    result.alt = t.result
    copy.textContent = t.copy
    if (!this.#busy) go.textContent = this.ui.error.textContent ? t.retry : t.go
  }

  /** @param {TryOnFailure} failure */
  #fail(failure) {
    const { error, go, input } = this.ui
    error.textContent = errorMessage(this.language, failure.status, failure.errorCode)
    // Only a network failure, a conflict or a server error can go better the second time.
    go.hidden = !(failure.status === 0 || failure.status === 409 || failure.status >= 500)
    go.textContent = this.#t.retry
    ;(go.hidden ? input : go).focus()
  }

  /** @param {File | undefined} file */
  async #choose(file) {
    const { preview, go, error, figure, status } = this.ui
    if (!file) return
    error.textContent = ''
    status.textContent = ''
    figure.hidden = true
    try {
      this.#photo = await photoToDataUri(file)
    } catch {
      this.#photo = null
      preview.hidden = go.hidden = true
      error.textContent = this.#t.unreadable
      return
    }
    preview.src = this.#photo
    preview.hidden = go.hidden = false
    go.textContent = this.#t.go
    go.focus()
  }

  async #send() {
    if (!this.#photo || this.#busy) return
    const t = this.#t
    const { dialog, go, input, progress, status, error, figure } = this.ui
    this.#busy = go.disabled = input.disabled = true
    dialog.setAttribute('aria-busy', 'true')
    progress.hidden = false
    status.textContent = t.working
    error.textContent = ''
    figure.hidden = true
    /** @type {TryOnSuccess | TryOnFailure} */
    let outcome
    try {
      outcome = await this.#call(this.#photo)
    } finally {
      // Enabled again before the outcome is shown: a disabled control cannot take the focus.
      this.#busy = go.disabled = input.disabled = false
      dialog.removeAttribute('aria-busy')
      progress.hidden = true
    }
    if ('resultUrl' in outcome) return this.#show(outcome)
    status.textContent = ''
    this.#fail(outcome)
    this.#emit('tryon-error', outcome)
  }

  /** @param {string} userPhoto @returns {Promise<TryOnSuccess | TryOnFailure>} */
  async #call(userPhoto) {
    const endpoint = this.endpoint
    if (!endpoint) return { status: 0, errorCode: 'endpoint_missing', error: 'The endpoint attribute is missing', body: null }
    const product = this.getAttribute('product-image') || ''
    if (!product) return { status: 400, errorCode: 'invalid_request', error: 'The product-image attribute is missing', body: null }
    /** @type {Record<string, string>} */
    const headers = { 'Content-Type': 'application/json', 'X-API-Key': this.getAttribute('api-key') || '' }
    const scenario = this.getAttribute('scenario')
    if (scenario) headers['X-Tryon-Scenario'] = scenario
    const locale = this.getAttribute('locale') || navigator.language || ''
    const page = location.protocol.startsWith('http') ? location.origin + location.pathname : undefined
    const body = {
      userPhoto,
      productImage: product.startsWith('data:') ? product : new URL(product, document.baseURI).href,
      productType: this.getAttribute('product-type') || undefined,
      clothingType: this.getAttribute('clothing-type') || undefined,
      locale: LOCALE.test(locale) ? locale : undefined,
      parentUrl: page && page.length <= 2048 ? page : undefined,
    }
    let response
    try {
      response = await fetch(endpoint, { method: 'POST', headers, body: JSON.stringify(body), credentials: 'omit' })
    } catch {
      return { status: 0, errorCode: 'network_error', error: 'The try-on service could not be reached', body: null }
    }
    const json = await response.json().catch(() => null)
    if (response.ok && json?.success === true) return json
    return {
      status: response.status,
      errorCode: String(json?.errorCode ?? ''),
      error: String(json?.error ?? response.statusText),
      body: json,
    }
  }

  /** @param {TryOnSuccess} outcome */
  #show(outcome) {
    const t = this.#t
    const { result, figure, caption, details, status, preview, go, copy } = this.ui
    const bridal = outcome.bridal
    // No shortId (a wedding-dress train that did not come out): nothing to share.
    this.#link = outcome.shortId && this.endpoint ? shareLink(this.endpoint, outcome.shortId) : null
    copy.hidden = !this.#link
    // The result takes the photo's place; choosing another photo brings the photo back.
    preview.hidden = go.hidden = true
    result.src = outcome.resultUrl
    caption.textContent = bridal ? `${t.done} ${t[/** @type {keyof Messages} */ (bridal.reason)] ?? ''}` : t.done
    details.textContent = bridal ? t.details(bridal.trainScore === null ? '—' : bridal.trainScore.toFixed(2), outcome.creditsCharged) : ''
    status.textContent = '' // the caption, which takes the focus, says it
    figure.hidden = false
    caption.focus()
    this.#emit('tryon-result', outcome)
  }

  /** Copies the share link; where the page may not write the clipboard, shows it to be copied by hand. */
  async #copyLink() {
    const t = this.#t
    if (!this.#link) return
    try {
      await navigator.clipboard.writeText(this.#link)
      this.ui.status.textContent = t.copied
    } catch {
      this.ui.status.textContent = `${t.copyHere} ${this.#link}`
    }
  }

  /** @param {string} type @param {unknown} detail */
  #emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }))
  }
}

if (!customElements.get('tryon-button')) customElements.define('tryon-button', TryOnButton)
