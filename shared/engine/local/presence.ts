import type { RgbaImage } from '../../images/codecs/raster.ts'
import type { BodyLayout } from './person.ts'
import type { Mask } from './segmentation.ts'

/**
 * Share of the face window that must read as skin. Generated people: 0.77 and up, down to 0.62 for a flat
 * illustration's dark face with its eyes and outline in the window; empty scenes that pass the rest: 0.5.
 */
const MIN_FACE_SKIN = 0.6
/**
 * A head beside the shoulders: 0.33–0.56 of their width on generated people, 0.69 for curly hair over a slim figure's
 * bare shoulders, 0.22 for a face whose pale hair was lost against a lamp-lit wall (dim 21294); a bottle's cap or a lamp's
 * shade is not. From 0.2 the held-out photos without a person (`bench:person`) are refused as from 0.25.
 */
const HEAD_TO_SHOULDERS: [number, number] = [0.2, 0.72]
/** Share of the body below the shoulders of the face's colour past which it is one object (a vase, a dress form). */
const MAX_FACE_COLOURED_BODY = 0.8
/** L1 distance in RGB within which a body pixel counts as the face's colour. */
const FACE_COLOUR_DISTANCE = 45

/**
 * Shoulders narrower than this share of the stature read are no figure's: 0.17 and up on the 267 knee-cut tuning figures
 * read cut in 17001-18026 and 19001-20070 (2026-12-01), whose statures were read 0.42 to 1.83 of the truth, and a standing
 * adult's are 0.17 at least (person.ts NARROWEST_SHOULDERS). A column of a checked texture's squares was read as a head
 * above a hidden top and a body 0.05 as wide as tall (empty scene 20092).
 */
const NARROWEST_FIGURE = 0.12

/**
 * Whether the figure the body analysis found is a person and not a thing with an outline like one (a vase, a floor
 * lamp, a chair in a room, a garment laid flat, a pattern): the silhouette has a head of its own at its top (not one
 * placed from the feet because none came out), about as wide beside the shoulders as a head is, with skin in the
 * middle of it, above a body that is not all of the face's colour. A photo in black and white is judged by the
 * outline alone. Measured on generated photos with and without people, on seeds held out of the tuning
 * (tests/unit/engine/presence.test.ts).
 */
export function looksLikePerson(image: RgbaImage, mask: Mask, body: BodyLayout): boolean {
  if (!body.found) return false
  const { width, height } = mask
  const cx = Math.round(body.centreX)
  const top = Math.max(0, Math.round(body.headTop))
  const headSpan = body.shoulderY - body.headTop
  if (cx < 0 || cx >= width || headSpan < 2) return false
  // Shoulders this narrow for the stature read are no figure's, however far off a cut figure's stature was read.
  if (body.shoulderWidth < NARROWEST_FIGURE * body.figureHeight) return false

  // The head came out: body at the centre in its upper third (a head placed above headless shoulders has none).
  let crown = false
  for (let y = top; y <= Math.min(height - 1, Math.round(body.headTop + 0.3 * headSpan)) && !crown; y++)
    crown = mask.data[y * width + cx] === 1
  if (!crown) return false

  let headWidth = 0
  let middles = 0
  let rows = 0
  for (let y = top; y <= Math.min(height - 1, Math.round(body.neckY)); y++) {
    const run = centralRun(mask, y, cx)
    if (!run) continue
    headWidth = Math.max(headWidth, run[1] - run[0] + 1)
    middles += (run[0] + run[1]) / 2
    rows++
  }
  const ratio = headWidth / body.shoulderWidth
  if (ratio < HEAD_TO_SHOULDERS[0] || ratio > HEAD_TO_SHOULDERS[1]) return false
  if (isGreyscale(image)) return true

  // The face is in the middle of the head, which need not be on the body's centre line, the centroid of the silhouette's
  // upper third (soft 11166: a white top lost against a pale wall, its arms kept, put that line 10 pixels of 239 off
  // the face, and the face's window held the wall beside the neck).
  const light = frameLight(image, mask)
  const headCx = rows > 0 ? Math.round(middles / rows) : cx
  const face = faceWindow(image, mask, { cx: headCx, top: body.headTop, span: headSpan, width: headWidth }, light)
  if (face.share < MIN_FACE_SKIN) return false

  // A thing is one colour from top to bottom; a person's clothes, arms and legs are not all of the face's. A dim photo
  // holds every colour within a few dozen levels of black, so its colours are compared as the room's light corrected
  // shows them (as the face's skin is read), each averaged over its neighbours against the noise brought up with them.
  const gains = light?.kind === 'dim' ? light.gains : undefined
  const [fr, fg, fb] = face.mean.map((mean, c) => mean * (gains?.[c] ?? 1))
  let bodyPixels = 0
  let faceColoured = 0
  for (let y = Math.max(0, Math.round(body.shoulderY)); y < height; y++) {
    for (let x = 0, i = y * width; x < width; x++, i++) {
      if (!mask.data[i]) continue
      bodyPixels++
      const o = i * 4
      const [r, g, b] = gains ? meanAround(image, x, y, gains) : [image.data[o], image.data[o + 1], image.data[o + 2]]
      if (Math.abs(r - fr) + Math.abs(g - fg) + Math.abs(b - fb) < FACE_COLOUR_DISTANCE) faceColoured++
    }
  }
  return bodyPixels === 0 || faceColoured / bodyPixels < MAX_FACE_COLOURED_BODY
}

/**
 * A head with its neck, standing alone above a top of the backdrop's colour: at least this share of the silhouette's
 * rows from its top to its last (about 0.23 on studio 8283; a brick above a head on a brick wall, 0.07 on photo 3337).
 */
const MIN_HEAD_PART = 0.12
/** ...and no wider than this share of its own height (a head and neck are taller than wide). */
const MAX_HEAD_PART_WIDTH = 1.2

/**
 * Whether a part of the mask on its own rows ([from, to), nothing else on them) is a person's head: tall enough beside
 * the silhouette below it and no wider than a head and neck, with skin in the middle of it (faceWindow, at the
 * MIN_FACE_SKIN a person's head must show), read with the part's extent as the head's and its last row as the
 * shoulders. A stain or a lamp above a figure is not; a head whose top and shoulders are lost against the backdrop is.
 * A photo in black and white shows no skin: its parts are taken to be no head.
 */
export function isHeadPart(image: RgbaImage, mask: Mask, [from, to]: [number, number]): boolean {
  const { width, height } = mask
  let last = height - 1
  while (last >= to && mask.data.subarray(last * width, (last + 1) * width).every((v) => v === 0)) last--
  if (to - from < 2 || to - from < MIN_HEAD_PART * (last + 1 - from) || isGreyscale(image)) return false
  let sumX = 0
  let n = 0
  let headWidth = 0
  for (let y = from; y < to; y++) {
    let left = -1
    let right = -1
    for (let x = 0; x < width; x++) {
      if (!mask.data[y * width + x]) continue
      if (left < 0) left = x
      right = x
      sumX += x
      n++
    }
    if (left >= 0) headWidth = Math.max(headWidth, right - left + 1)
  }
  if (n === 0 || headWidth > MAX_HEAD_PART_WIDTH * (to - from)) return false
  const head = { cx: Math.round(sumX / n), top: from, span: to - from, width: headWidth }
  return faceWindow(image, mask, head, frameLight(image, mask)).share >= MIN_FACE_SKIN
}

/** A head: its centre column, its top row, how far down its shoulders (or its part's last row) are, and its width. */
interface Head {
  cx: number
  top: number
  span: number
  width: number
}

/**
 * The face of a head: the middle of it, clear of hair at the crown and sides and of the chin and neck. The share of its
 * pixels that read as skin in the photo's light (frameLight), and their mean colour as it was photographed.
 */
function faceWindow(image: RgbaImage, mask: Mask, head: Head, light: FrameLight | undefined): { share: number; mean: number[] } {
  const { width, height } = mask
  const { cx } = head
  let skin = 0
  let litSkin = 0
  let count = 0
  const face = [0, 0, 0]
  const half = Math.max(1, Math.round(0.2 * head.width))
  const sweepWarmth = light?.kind === 'high-key' ? warmthBeside(image, mask, head) : undefined
  for (let y = Math.round(head.top + 0.35 * head.span); y <= Math.round(head.top + 0.7 * head.span); y++) {
    if (y < 0 || y >= height) continue
    for (let x = Math.max(0, cx - half); x <= Math.min(width - 1, cx + half); x++) {
      const o = (y * width + x) * 4
      const [r, g, b] = [image.data[o], image.data[o + 1], image.data[o + 2]]
      face[0] += r
      face[1] += g
      face[2] += b
      count++
      // In ordinary light, pale skin a cool light took past daylight's band counts too.
      if (isSkin(r, g, b) || (light === undefined && isPaleSkin(r, g, b))) skin++
      if (light?.kind === 'dim') {
        const [lr, lg, lb] = meanAround(image, x, y, light.gains)
        if (isSkin(lr, lg, lb, LAMPLIT_SKIN)) litSkin++
      } else if (light?.kind === 'high-key') {
        const burnt =
          Math.min(r, g, b) >= BURNT_OUT &&
          (mask.data[y * width + x] === 1 || framed(mask, x, y, head.width) || warmth(r, g, b) >= (sweepWarmth ?? Infinity) + WARMER)
        if (burnt || isPushedPaleSkin(r, g, b)) litSkin++
      }
    }
  }
  return { share: count === 0 ? 0 : Math.max(skin, litSkin) / count, mean: face.map((sum) => sum / Math.max(1, count)) }
}

/** The band of normalised r = R/(R+G+B) and g that skin from the palest to the darkest falls in: [r low, r high, g low, g high]. */
type SkinBand = [number, number, number, number]

const DAYLIGHT_SKIN: SkinBand = [0.36, 0.52, 0.27, 0.36]
/**
 * Skin under a warm lamp read with half the room's cast taken off (frameLight): the rest of the cast leaves a dark
 * face redder than daylight's band allows, its mean at r 0.51–0.54 on dim tuning scenes (3074, 3124, 3224), where
 * its noisy pixels fell on both sides of 0.52. The pale end stays where daylight's is (r 0.37).
 */
const LAMPLIT_SKIN: SkinBand = [0.36, 0.57, 0.26, 0.36]

/**
 * Skin of any tone in daylight: red above green above blue, in the band of normalised r and g that skin from the
 * palest to the darkest falls in, warm enough (red well above blue), and not near black.
 */
function isSkin(r: number, g: number, b: number, [rLow, rHigh, gLow, gHigh]: SkinBand = DAYLIGHT_SKIN): boolean {
  const sum = r + g + b
  if (sum <= 60 || !(r > g && g > b) || r - b <= 0.12 * r) return false
  const nr = r / sum
  const ng = g / sum
  return nr > rLow && nr < rHigh && ng > gLow && ng < gHigh
}

/** Nearly no colour anywhere (a black-and-white photo): skin cannot be told by its colour. */
function isGreyscale({ data }: RgbaImage): boolean {
  let chroma = 0
  const step = 4 * 7
  let n = 0
  for (let o = 0; o < data.length; o += step, n++) chroma += Math.abs(data[o] - data[o + 1]) + Math.abs(data[o + 1] - data[o + 2])
  return n > 0 && chroma / n < 4
}

function centralRun({ width, data }: Mask, y: number, x: number): [number, number] | null {
  const row = y * width
  if (!data[row + x]) return null
  let l = x
  let r = x
  while (l > 0 && data[row + l - 1]) l--
  while (r < width - 1 && data[row + r + 1]) r++
  return [l, r]
}

/** A backdrop darker than this on average (0..255, mean of the channels) is a photo taken in dim light. */
const DIM_BACKDROP = 80
/** What a dim photo's backdrop is brought up to before its face is read: a room in ordinary light. */
const LIT_BACKDROP = 128
/** Share of the backdrop's colour cast taken off (a geometric mean between none and all): walls have colours of their own. */
const CAST_REMOVED = 0.5

/**
 * In a high-key photo, a face pixel this bright in every channel is skin the light burnt out to white: inside the
 * silhouette, or framed by the hair on both sides of its row (framed), not the sweep beside the head.
 */
const BURNT_OUT = 240

/**
 * Whether the head's silhouette is on both sides of a pixel along its row, within `reach`: a face burnt to the sweep's
 * own white is backdrop to the segmentation, a hole that opens down the neck (a white top), but hair frames it.
 */
function framed({ width, data }: Mask, x: number, y: number, reach: number): boolean {
  let left = false
  let right = false
  for (let d = 1; d <= reach && !(left && right); d++) {
    left ||= x - d >= 0 && data[y * width + x - d] === 1
    right ||= x + d < width && data[y * width + x + d] === 1
  }
  return left && right
}

/**
 * How much warmer than the sweep beside the head (warmth) a burnt-out face pixel is, in levels: pale skin pushed to
 * clipping keeps its blue a little below its red and green ([255, 255, 243] on a sweep of [255, 255, 255], tuning
 * studio 7183, 7198; [255, 255, 250], studio 7298), a face the segmentation leaves to the sweep when no hair frames it.
 */
const WARMER = 4

/** How far blue falls below red and green: 0 on a neutral white, more on skin. */
function warmth(r: number, g: number, b: number): number {
  return (r + g) / 2 - b
}

/**
 * The mean warmth of the backdrop beside the head, on the face's rows: the pixels of the sweep one to two head widths
 * from the centre line on either side. Undefined when none is backdrop there, or when it is not a sweep clipped to
 * white: the rule is for a face pushed to clipping with the sweep, and a bright wall short of it has tones of its own.
 */
function warmthBeside(image: RgbaImage, mask: Mask, head: Head): number | undefined {
  const { width, height } = mask
  const { cx, width: headWidth } = head
  let sum = 0
  let clipped = 0
  let n = 0
  for (let y = Math.round(head.top + 0.35 * head.span); y <= Math.round(head.top + 0.7 * head.span); y++) {
    if (y < 0 || y >= height) continue
    for (let d = headWidth; d <= 2 * headWidth; d++) {
      for (const x of [cx - d, cx + d]) {
        if (x < 0 || x >= width || mask.data[y * width + x]) continue
        const o = (y * width + x) * 4
        const [r, g, b] = [image.data[o], image.data[o + 1], image.data[o + 2]]
        sum += warmth(r, g, b)
        clipped += Math.min(r, g, b) >= CLIPPED_SWEEP ? 1 : 0
        n++
      }
    }
  }
  return n > 0 && clipped >= CLIPPED_SHARE * n ? sum / n : undefined
}

/** A sweep pixel this bright in every channel is clipped white; so must most of the sweep beside a burnt-out face be. */
const CLIPPED_SWEEP = 250
const CLIPPED_SHARE = 0.9

/** A backdrop brighter than this on average is a high-key photo: a white sweep lit almost to clipping. */
const HIGH_KEY_BACKDROP = 225

type FrameLight = { kind: 'dim'; gains: [number, number, number] } | { kind: 'high-key' }

/**
 * The light of the photo, measured on the backdrop around the figure, when it is far from ordinary: a dim room (one
 * warm lamp at night, an underexposed phone) or a high-key studio (a white sweep, the exposure pushed until it
 * clips). Skin under a warm lamp is redder than daylight skin, and a dark skin tone in it falls near black; relative
 * to the room's own light it is skin again, so a dim photo's face is brightened and half its cast taken off. Pale skin
 * pushed towards white keeps little of its colour. Undefined in ordinary light, where the face is read as it is.
 */
function frameLight(image: RgbaImage, mask: Mask): FrameLight | undefined {
  const sums = [0, 0, 0]
  let n = 0
  const step = 3
  for (let i = 0; i < mask.data.length; i += step) {
    if (mask.data[i]) continue
    const o = i * 4
    sums[0] += image.data[o]
    sums[1] += image.data[o + 1]
    sums[2] += image.data[o + 2]
    n++
  }
  if (n === 0) return undefined
  const [r, g, b] = sums.map((s) => s / n)
  const grey = (r + g + b) / 3
  if (grey > HIGH_KEY_BACKDROP) return { kind: 'high-key' }
  if (grey >= DIM_BACKDROP || Math.min(r, g, b) <= 0) return undefined
  const exposure = LIT_BACKDROP / grey
  return {
    kind: 'dim',
    gains: [exposure * (grey / r) ** CAST_REMOVED, exposure * (grey / g) ** CAST_REMOVED, exposure * (grey / b) ** CAST_REMOVED],
  }
}

/**
 * Red this bright is clipped at white: pale skin pushed past it (a face [255, 251, 232] or [255, 255, 235], tuning
 * studio 6078, 6193, 6278) keeps only blue below red and green.
 */
const RED_CLIPPED = 253

/**
 * Pale skin in a photo pushed bright: blue stays a little below red and green, so it is warmer than the white around
 * it but no longer in the daylight band (normalised red falls to about a third). Red still above green: ivory (a gown,
 * a mannequin's head) has them equal. Unless red is clipped (RED_CLIPPED): how far above green it was is lost then, and
 * green may have clipped beside it, so only blue's lead tells ([253–255, 255, 235–239], tuning studio 7503).
 */
function isPushedPaleSkin(r: number, g: number, b: number): boolean {
  const sum = r + g + b
  const warmRed = r >= RED_CLIPPED || (r - g >= 6 && r / sum > 0.34)
  return sum > 450 && warmRed && g > b && r - b >= 12 && r - b <= 0.3 * r
}

/**
 * Green's lead over blue, as a share of red's lead over blue, that skin keeps: its hue is orange (19–26° for the tones
 * the scenes draw, 29° for the pale faces below), where cream is yellow ([245, 235, 200]: 47°), green nearly level with
 * red. 0.58 is 35°.
 */
const SKIN_HUE = 0.58

/**
 * Pale skin in ordinary light. The palest skin sits at the red edge of daylight's band (r 0.366 for [253, 228, 210]),
 * and a slightly cool light takes it past: faces of [207, 191, 176] and [237, 217, 198] read at r 0.352–0.36 (photo
 * 13622 and 14067, both refused `person_not_found`). Such a face is bright and warm as pushed pale skin is, and of
 * skin's hue (SKIN_HUE): without the hue, a marble texture, a room with a floor lamp and a dress form of the photos
 * without a person (`npm run bench:person`, 20021, 20023, 20150) were taken for people, their bright warm pixels yellower.
 */
function isPaleSkin(r: number, g: number, b: number): boolean {
  return isPushedPaleSkin(r, g, b) && g - b <= SKIN_HUE * (r - b)
}

/** A pixel's colour averaged over its 3×3 neighbourhood (a dim photo's sensor noise averaged out), corrected for the light. */
function meanAround({ width, height, data }: RgbaImage, x: number, y: number, gains: [number, number, number]): [number, number, number] {
  let r = 0
  let g = 0
  let b = 0
  let n = 0
  for (let yy = Math.max(0, y - 1); yy <= Math.min(height - 1, y + 1); yy++) {
    for (let xx = Math.max(0, x - 1); xx <= Math.min(width - 1, x + 1); xx++, n++) {
      const o = (yy * width + xx) * 4
      r += data[o]
      g += data[o + 1]
      b += data[o + 2]
    }
  }
  return [(r / n) * gains[0], (g / n) * gains[1], (b / n) * gains[2]]
}
