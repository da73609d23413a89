// @ts-check
/**
 * <tryon-button>: a "Try it on" button for a product page. No framework, no build step.
 *
 *   <script type="module" src="https://<host>/tryon-widget.js"></script>
 *   <tryon-button api-key="vto_live_…" product-image="https://shop.example.com/dress.jpg"></tryon-button>
 *
 * Attributes: api-key, product-image (URL or data URI), endpoint (required from a CDN; by default the
 * try-on endpoint on the API host that served this file), product-type ("wedding-dress"), clothing-type, locale (default
 * navigator.language), expected-seconds (the usual wait shown in the progress), debug (credits and scores shown, for
 * the shop's developer), scenario (test keys: X-Tryon-Scenario). A result with a shortId offers "Copy link" (its
 * share link). Events (bubbling, composed):
 * `tryon-result` with the response body, `tryon-error` with { status, errorCode, error, body }.
 */

/** @typedef {{ applied: boolean, trainScore: number | null, reason: string }} Bridal */
/** @typedef {{ checked: boolean, passed: boolean, score: number | null, issues: string[] }} Quality */
/** @typedef {{ success: true, tryOnId: string, shortId: string | null, resultUrl: string, creditsRemaining: number, creditsCharged: number, bridal?: Bridal, quality?: Quality }} TryOnSuccess */
/** @typedef {{ status: number, errorCode: string, error: string, body: unknown }} TryOnFailure */

/**
 * The long side a photo is sent at: the local engine's working size (shared/engine/local/index.ts), more than FASHN's
 * (864 × 1296) and Gemini's (about 1024 px) renders, and under every engine's input limit (FASHN 2000 px, Vertex and
 * Gemini 4096, the train judge 2048: shared/engine/providers/), so no engine has the server re-encode it.
 */
export const MAX_SIDE = 1536

/**
 * The usual wait in seconds unless `expected-seconds` says otherwise: FASHN takes 8 s in its default mode and 12–17 s in
 * its quality mode (docs/engines.md), and about 1 s more passes until a poll sees it done (docs/performance.md).
 */
export const EXPECTED_SECONDS = 20

const messages = {
  en: {
    open: 'Try it on',
    close: 'Close',
    intro: 'Choose a photo of yourself, or take one: facing the camera, in good light.',
    bridal: 'For the gown and its train, use a full-length photo: standing, facing the camera, feet visible with some floor around them.',
    hint: 'A full-length photo works best: standing, facing the camera, feet visible, in good light.',
    library: 'Choose a photo',
    camera: 'Take a photo',
    preview: 'Your photo',
    go: 'Create my try-on',
    retry: 'Try again',
    cancel: 'Cancel',
    working: 'Creating your try-on…',
    waited: (/** @type {number} */ seconds, /** @type {number} */ usual) => `${seconds} s, usually about ${usual} s`,
    longer: (/** @type {number} */ seconds) => `${seconds} s: taking longer than usual, still working`,
    done: 'Your try-on is ready.',
    result: 'You wearing this product',
    copy: 'Copy link',
    copied: 'Link copied.',
    copyHere: 'Copy this link:',
    unreadable: 'This photo could not be read. Choose a JPEG or PNG photo.',
    network: 'The try-on service could not be reached. Check your connection and try again.',
    /** What the shopper is told of an outcome: by verdict or error code, else by HTTP status. */
    says: {
      train_rendered: 'The train of the gown is shown.',
      train_score_low: 'The train of the gown could not be shown on this photo.',
      score_unavailable: 'The train is shown; its quality could not be checked.',
      train_pretreatment_unavailable: 'The gown is shown without its train.',
      quality_failed: 'We could not dress this photo well.',
      person_not_found: 'We could not find a person in this photo.',
      image_too_large: 'This photo is too large. Choose another one, or take a new one.',
      product: 'This product cannot be tried on right now.',
      daily_cap_reached: 'Try-on is unavailable on this shop for now. Please come back later.',
      free_deliveries_exhausted: 'Wedding-dress try-on is unavailable for now. Please come back later.',
      bridal_preprocessing_failed: 'Wedding-dress try-on is temporarily unavailable. Please try again later.',
      400: 'This photo could not be used. Choose another photo (JPEG or PNG).',
      401: 'Try-on is not set up correctly on this site (invalid key).',
      402: 'Try-on is unavailable on this shop right now. Please come back later.',
      403: 'Try-on is not enabled for this website.',
      409: 'This try-on is already being created. Please wait a moment.',
      413: 'This photo is too large. Choose a smaller one.',
      422: 'We could not create a try-on from this photo.',
      429: 'Too many try-ons in a short time. Please wait a minute and try again.',
      500: 'Something went wrong while creating your try-on. Please try again.',
      503: 'Try-on is very busy right now. Please try again in a moment.',
    },
  },
  fr: {
    open: 'Essayer',
    close: 'Fermer',
    intro: 'Choisissez une photo de vous, ou prenez-en une : de face, bien éclairée.',
    bridal: 'Pour la robe et sa traîne, utilisez une photo en pied : debout, de face, les pieds visibles avec un peu de sol autour.',
    hint: 'Une photo en pied donne les meilleurs résultats : debout, de face, les pieds visibles, bien éclairée.',
    library: 'Choisir une photo',
    camera: 'Prendre une photo',
    preview: 'Votre photo',
    go: 'Créer mon essayage',
    retry: 'Réessayer',
    cancel: 'Annuler',
    working: 'Création de votre essayage…',
    waited: (/** @type {number} */ seconds, /** @type {number} */ usual) => `${seconds} s, d’habitude environ ${usual} s`,
    longer: (/** @type {number} */ seconds) => `${seconds} s : plus long que d’habitude, toujours en cours`,
    done: 'Votre essayage est prêt.',
    result: 'Vous portant ce produit',
    copy: 'Copier le lien',
    copied: 'Lien copié.',
    copyHere: 'Copiez ce lien :',
    unreadable: 'Cette photo est illisible. Choisissez une photo JPEG ou PNG.',
    network: 'Le service d’essayage est injoignable. Vérifiez votre connexion et réessayez.',
    says: {
      train_rendered: 'La traîne de la robe est affichée.',
      train_score_low: 'La traîne de la robe n’a pas pu être affichée sur cette photo.',
      score_unavailable: 'La traîne est affichée ; sa qualité n’a pas pu être vérifiée.',
      train_pretreatment_unavailable: 'La robe est affichée sans sa traîne.',
      quality_failed: 'Nous n’avons pas pu bien habiller cette photo.',
      person_not_found: 'Nous n’avons trouvé personne sur cette photo.',
      image_too_large: 'Cette photo est trop lourde. Choisissez-en une autre, ou prenez-en une nouvelle.',
      product: 'Ce produit ne peut pas être essayé pour le moment.',
      daily_cap_reached: 'L’essayage est indisponible pour le moment sur cette boutique. Revenez plus tard.',
      free_deliveries_exhausted: 'L’essayage de robes de mariée est indisponible pour le moment. Revenez plus tard.',
      bridal_preprocessing_failed: 'L’essayage de robes de mariée est momentanément indisponible. Réessayez plus tard.',
      400: 'Cette photo ne peut pas être utilisée. Choisissez-en une autre (JPEG ou PNG).',
      401: 'L’essayage n’est pas correctement configuré sur ce site (clé invalide).',
      402: 'L’essayage est indisponible pour le moment sur cette boutique. Revenez plus tard.',
      403: 'L’essayage n’est pas activé pour ce site.',
      409: 'Cet essayage est déjà en cours de création. Patientez un instant.',
      413: 'Cette photo est trop lourde. Choisissez-en une plus petite.',
      422: 'Impossible de créer un essayage à partir de cette photo.',
      429: 'Trop d’essayages en peu de temps. Patientez une minute, puis réessayez.',
      500: 'Un problème est survenu pendant la création de votre essayage. Veuillez réessayer.',
      503: 'L’essayage est très demandé en ce moment. Réessayez dans un instant.',
    },
  },
}

/** Outcomes another photo can mend: their words go on with what to photograph. */
const MENDED_BY_A_PHOTO = [
  'person_not_found',
  'ai_content_rejected',
  'generation_failed',
  'quality_failed',
  'train_score_low',
  'train_pretreatment_unavailable',
]

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
 * The shopper's words for a failed call, with what to photograph where another photo can help.
 * @param {'en' | 'fr'} language @param {number} status 0 for a network failure @param {string} [errorCode]
 * @param {string} [error] the API's message, which names the image it refused @param {boolean} [bridal]
 */
export function errorMessage(language, status, errorCode = '', error = '', bridal = false) {
  const t = messages[language]
  if (status === 0) return t.network
  const says = /** @type {Record<string, string>} */ (t.says)
  // The shop's product image was refused: another photo of the shopper would not help.
  const product = status < 500 && /\bproductImage\b/.test(error)
  // Past the day's free results a standard try-on's result that failed its check is not delivered: to the shopper that
  // is the same photo we could not dress well, with what to photograph.
  const code = errorCode === 'free_deliveries_exhausted' && !bridal ? 'quality_failed' : errorCode
  const key = product ? 'product' : ([code, status].find((k) => Object.hasOwn(says, k)) ?? (status >= 500 ? 500 : 400))
  return withHint(language, says[key], code, bridal)
}

/** @param {'en' | 'fr'} language @param {string} words @param {string | undefined} code @param {boolean} bridal */
function withHint(language, words, code, bridal) {
  const t = messages[language]
  return code && MENDED_BY_A_PHOTO.includes(code) ? `${words} ${bridal ? t.bridal : t.hint}` : words
}

/**
 * What a delivered result tells the shopper: its words, and whether its image is worth showing. The verdicts, first that
 * applies: a new one is one line here, and its words in each locale.
 * @param {'en' | 'fr'} language @param {TryOnSuccess} body @param {boolean} [bridal]
 */
export function resultMessage(language, body, bridal = false) {
  const t = messages[language]
  const verdict = body.quality?.passed === false ? 'quality_failed' : body.bridal?.reason
  const image = verdict !== 'quality_failed'
  const table = /** @type {Record<string, string>} */ (t.says)
  const says = verdict && Object.hasOwn(table, verdict) && table[verdict]
  const words = [image && t.done, says && withHint(language, says, verdict, bridal)]
  return { text: words.filter(Boolean).join(' '), image }
}

/**
 * The API's own figures and words, shown under a result or an error only with the `debug` attribute: they are for the
 * shop's developer (in English), never for its customers.
 * @param {TryOnSuccess | TryOnFailure} outcome
 */
export function debugLine(outcome) {
  if (!('resultUrl' in outcome)) return `HTTP ${outcome.status || '(no answer)'} ${outcome.errorCode}: ${outcome.error}`
  const score = (/** @type {number | null} */ value) => (value === null ? '—' : value.toFixed(2))
  return [
    `credits charged: ${outcome.creditsCharged}`,
    `credits remaining: ${outcome.creditsRemaining}`,
    outcome.bridal && `train score: ${score(outcome.bridal.trainScore)}`,
    outcome.quality && `quality score: ${score(outcome.quality.score)}`,
  ]
    .filter(Boolean)
    .join(' · ')
}

/**
 * The photo as it is shown, EXIF orientation applied: createImageBitmap where it takes `imageOrientation`, else an
 * <img>, which browsers draw upright since CSS `image-orientation: from-image` became the default (2020).
 * @param {Blob} file @returns {Promise<ImageBitmap | HTMLImageElement>}
 */
async function decodeUpright(file) {
  try {
    return await createImageBitmap(file, { imageOrientation: 'from-image' })
  } catch {
    const image = new Image()
    image.src = URL.createObjectURL(file)
    try {
      await image.decode()
      return image
    } finally {
      URL.revokeObjectURL(image.src)
    }
  }
}

/**
 * Decodes a photo upright, scales it to at most MAX_SIDE on its long side and encodes it as a JPEG data URI.
 * @param {Blob} file @returns {Promise<string>}
 */
export async function photoToDataUri(file) {
  const photo = await decodeUpright(file)
  const width = 'naturalWidth' in photo ? photo.naturalWidth : photo.width
  const height = 'naturalHeight' in photo ? photo.naturalHeight : photo.height
  const scale = Math.min(1, MAX_SIDE / Math.max(width, height))
  const canvas = document.createElement('canvas')
  canvas.width = Math.max(1, Math.round(width * scale))
  canvas.height = Math.max(1, Math.round(height * scale))
  const context = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'))
  context.fillStyle = '#fff' // a transparent PNG would turn black in a JPEG
  context.fillRect(0, 0, canvas.width, canvas.height)
  context.imageSmoothingQuality = 'high'
  context.drawImage(photo, 0, 0, canvas.width, canvas.height)
  if ('close' in photo) photo.close()
  return canvas.toDataURL('image/jpeg', 0.9)
}

const template = `<style>
:host{display:inline-block;font:inherit;--tryon-accent:#1f3a5f}
button,.pick{font:inherit;border-radius:6px;padding:.55em 1.1em;cursor:pointer;border:1px solid var(--tryon-accent)}
.open,.go{background:var(--tryon-accent);color:#fff}
button:focus-visible,.pick:focus-within{outline:3px solid #f2a900;outline-offset:2px}
button:disabled,.pick:has(:disabled){opacity:.6;cursor:progress}
.open:disabled{cursor:not-allowed}
dialog{max-width:min(30rem,94vw);border:0;border-radius:10px;padding:1.2rem;box-shadow:0 8px 40px #0005}
dialog::backdrop{background:#0008}
header{display:flex;justify-content:space-between;align-items:center;gap:1rem}
h2{margin:0;font-size:1.2rem}
.x{background:none;border:0;font-size:1.5rem;line-height:1;padding:.2em .4em}
.pick,.copy,.cancel{display:inline-block;background:#fff;color:var(--tryon-accent);position:relative}
.pick input{position:absolute;inset:0;opacity:0;width:100%;cursor:pointer}
img{display:block;max-width:100%;max-height:55vh;margin:.8rem auto;border-radius:6px}
.row{display:flex;flex-wrap:wrap;gap:.6rem;margin:.8rem 0;align-items:center}
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
<div class="row"><label class="pick"><input type="file" accept="image/*" autofocus><span></span></label>
<label class="pick camera" hidden><input type="file" accept="image/*" capture="environment"><span></span></label>
<button class="go" type="button" hidden></button></div>
<img class="preview" alt="" hidden>
<div role="status" aria-live="polite"><span class="status"></span></div>
<div class="wait" hidden><progress></progress><div class="row"><small class="time"></small><button class="cancel" type="button"></button></div></div>
<p class="error" role="alert"></p>
<figure hidden><img class="result" alt=""><figcaption tabindex="-1"></figcaption><div class="row"><button class="copy" type="button" hidden></button></div></figure>
<small class="debug"></small>
</dialog>`

export class TryOnButton extends HTMLElement {
  static observedAttributes = ['locale', 'product-type', 'endpoint']

  /** @type {string | null} the resized photo, ready to send */
  #photo = null
  /** @type {string | null} the share link of the result shown */
  #link = null
  /** @type {AbortController | null} the call in flight, which Cancel or closing the dialog aborts */
  #call = null

  constructor() {
    super()
    const root = this.attachShadow({ mode: 'open' })
    root.innerHTML = template
    /** @param {string} selector */
    const $ = (selector) => /** @type {HTMLElement} */ (root.querySelector(selector))
    const [library, camera] = /** @type {NodeListOf<HTMLInputElement>} */ (root.querySelectorAll('input'))
    this.ui = {
      open: /** @type {HTMLButtonElement} */ ($('.open')),
      label: $('slot'),
      dialog: /** @type {HTMLDialogElement} */ ($('dialog')),
      title: $('#title'),
      close: /** @type {HTMLButtonElement} */ ($('.x')),
      intro: $('#intro'),
      library,
      libraryText: $('.pick span'),
      camera,
      cameraPick: $('.camera'),
      cameraText: $('.camera span'),
      go: /** @type {HTMLButtonElement} */ ($('.go')),
      preview: /** @type {HTMLImageElement} */ ($('.preview')),
      wait: $('.wait'),
      progress: /** @type {HTMLProgressElement} */ ($('progress')),
      time: $('.time'),
      cancel: /** @type {HTMLButtonElement} */ ($('.cancel')),
      status: $('.status'),
      error: $('.error'),
      figure: $('figure'),
      result: /** @type {HTMLImageElement} */ ($('.result')),
      caption: $('figcaption'),
      copy: /** @type {HTMLButtonElement} */ ($('.copy')),
      debug: $('.debug'),
    }
    const { open, dialog, close, go, cancel, copy } = this.ui
    open.addEventListener('click', () => this.openDialog())
    close.addEventListener('click', () => dialog.close())
    // A click on the backdrop lands on the dialog element itself.
    dialog.addEventListener('click', (event) => event.target === dialog && dialog.close())
    dialog.addEventListener('close', () => {
      this.#call?.abort() // nobody is left to see the result
      open.focus()
    })
    for (const input of [library, camera]) {
      input.addEventListener('change', () => {
        this.#choose(input.files?.[0])
        input.value = '' // so that choosing the same file again is a change too
      })
    }
    go.addEventListener('click', () => this.#send())
    cancel.addEventListener('click', () => this.#call?.abort())
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

  /** The usual wait in seconds: the `expected-seconds` attribute when it is a sensible number. */
  get #expectedSeconds() {
    const seconds = Math.round(Number(this.getAttribute('expected-seconds')))
    return seconds > 0 && seconds <= 600 ? seconds : EXPECTED_SECONDS
  }

  openDialog() {
    // Phones and tablets (a coarse pointer) also get their camera; a desktop's file dialog would ignore `capture`.
    this.ui.cameraPick.hidden = !matchMedia('(pointer: coarse)').matches
    this.ui.dialog.showModal()
  }

  #renderText() {
    const t = this.#t
    const { label, title, close, intro, libraryText, cameraText, preview, result, go, cancel, copy } = this.ui
    label.textContent = t.open
    title.textContent = t.open
    close.setAttribute('aria-label', t.close)
    close.textContent = '×'
    intro.textContent = this.#isBridal ? `${t.intro} ${t.bridal}` : t.intro
    libraryText.textContent = t.library
    cameraText.textContent = t.camera
    preview.alt = t.preview
    result.alt = t.result
    cancel.textContent = t.cancel
    copy.textContent = t.copy
    if (!this.#call) go.textContent = this.ui.error.textContent ? t.retry : t.go
  }

  /** @param {TryOnFailure} failure */
  #fail(failure) {
    const { error, go, library } = this.ui
    error.textContent = errorMessage(this.language, failure.status, failure.errorCode, failure.error, this.#isBridal)
    this.#debug(failure)
    // Only a network failure, a conflict or a server error can go better the second time.
    go.hidden = !(failure.status === 0 || failure.status === 409 || failure.status >= 500)
    go.textContent = this.#t.retry
    ;(go.hidden ? library : go).focus()
  }

  /** @param {TryOnSuccess | TryOnFailure} outcome */
  #debug(outcome) {
    this.ui.debug.textContent = this.hasAttribute('debug') ? debugLine(outcome) : ''
  }

  /** @param {File | undefined} file */
  async #choose(file) {
    const { preview, go, error, figure, status, debug } = this.ui
    if (!file) return
    error.textContent = status.textContent = debug.textContent = ''
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
    this.#photoStep()
  }

  /** The chosen photo, ready to send (again). */
  #photoStep() {
    const { preview, go } = this.ui
    preview.hidden = go.hidden = false
    go.textContent = this.#t.go
    go.focus()
  }

  async #send() {
    if (!this.#photo || this.#call) return
    const t = this.#t
    const { dialog, go, library, camera, wait, progress, time, cancel, status, error, figure, debug } = this.ui
    const call = new AbortController()
    this.#call = call
    go.disabled = library.disabled = camera.disabled = true
    dialog.setAttribute('aria-busy', 'true')
    wait.hidden = false
    status.textContent = t.working
    error.textContent = debug.textContent = ''
    figure.hidden = true
    cancel.focus()
    const started = Date.now()
    const usual = this.#expectedSeconds
    const tick = () => {
      const seconds = Math.floor((Date.now() - started) / 1000)
      progress.max = usual
      // Past the usual wait the bar cannot say how much is left: it turns indeterminate.
      if (seconds < usual) progress.value = seconds
      else progress.removeAttribute('value')
      time.textContent = seconds < usual ? t.waited(seconds, usual) : t.longer(seconds)
    }
    tick()
    const ticking = setInterval(tick, 1000)
    /** @type {TryOnSuccess | TryOnFailure} */
    let outcome
    try {
      outcome = await this.#post(this.#photo, call.signal)
    } finally {
      clearInterval(ticking)
      // Enabled again before the outcome is shown: a disabled control cannot take the focus.
      this.#call = null
      go.disabled = library.disabled = camera.disabled = false
      dialog.removeAttribute('aria-busy')
      wait.hidden = true
      status.textContent = ''
    }
    if (call.signal.aborted) return this.#photoStep()
    if ('resultUrl' in outcome) return this.#show(outcome)
    this.#fail(outcome)
    this.#emit('tryon-error', outcome)
  }

  /** @param {string} userPhoto @param {AbortSignal} signal @returns {Promise<TryOnSuccess | TryOnFailure>} */
  async #post(userPhoto, signal) {
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
      response = await fetch(endpoint, { method: 'POST', headers, body: JSON.stringify(body), credentials: 'omit', signal })
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
    const { result, figure, caption, preview, go, copy } = this.ui
    const shown = resultMessage(this.language, outcome, this.#isBridal)
    // No shortId (a wedding-dress train that did not come out): nothing to share.
    this.#link = outcome.shortId && this.endpoint ? shareLink(this.endpoint, outcome.shortId) : null
    copy.hidden = !this.#link || !shown.image
    // The result takes the photo's place; choosing another photo brings the photo back.
    preview.hidden = go.hidden = true
    result.hidden = !shown.image
    if (shown.image) result.src = outcome.resultUrl
    caption.textContent = shown.text
    this.#debug(outcome)
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
