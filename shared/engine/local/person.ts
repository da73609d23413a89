import type { Mask } from './segmentation.ts'

/** A body span per row of the analysis image: left and right edges, NaN where the row has no body. */
export interface RowSpans {
  left: Float32Array
  right: Float32Array
}

/** Body landmarks in analysis-image pixels (y grows downwards; rows past the bottom edge are extrapolated). */
export interface BodyLayout {
  /** False when no plausible figure was found and the layout is the centred default. */
  found: boolean
  feetVisible: boolean
  centreX: number
  headTop: number
  neckY: number
  /** Top of the shoulder slope, where a garment's shoulder seam sits. */
  shoulderY: number
  /** Full width across the shoulders (deltoids included). */
  shoulderWidth: number
  waistY: number
  /**
   * The top of the bottoms, in a photo cut at the knees whose top is the wall's colour: the first rows of the body's
   * centre below the hidden top. The stature is taken from it (staturedByShoulders). Undefined for every other figure.
   */
  waistband?: number
  /** The top's hem where the photo shows it near the waist (waist.ts): where bottoms go on. Undefined when it shows none. */
  hemY?: number
  hipY: number
  crotchY: number
  kneeY: number
  ankleY: number
  floorY: number
  figureHeight: number
  torso: RowSpans
  legs: RowSpans
  /** Everything within reach of the shoulders, arms included: how far sleeves may extend. */
  outer: RowSpans
}

// Landmark heights as fractions of stature, measured from the top of the head (adult, front view).
const SHOULDER = 0.17
const WAIST = 0.4
const HIP = 0.5
const CROTCH = 0.525
const ANKLE = 0.955
/**
 * How far below the top of the head, in statures its shoulders give (`fromShoulders`), a figure cut by the frame may have
 * its crotch. On the 197 knee-cut tuning scenes of 1-300, 3001-3400, 6001-6300 and 7001-7300 (2026-11-30), 70 of the 72
 * crotches read were lower than this (0.59-0.74): thighs drawn together parting at the knees, near the frame's edge, the
 * stature read from them 1.23-1.60 of the truth; a tee went on to the shins (soft 11551, charged).
 */
const LOWEST_CROTCH = 0.58

/**
 * The shoulders' width is that of the widest rows held for HELD_ACROSS of the head's width, where the widest single row
 * is more than BAR_OVER_HELD times it: a brick wall's course of mortar, a few rows tall, joined to the arms' tops (photo
 * 11782: 100 against 67 held; photo 3007: 134 against 85). Under that, a peak of a few rows is the figure's own outline
 * (the arms' tops where they leave the torso, a gap between arm and torso closing for a few rows: 1.28 times the held
 * rows at most, dim 3069, of the tuning scenes 1-300 and 3001-3069), and stays. Of 3,700 tuning and fresh scenes, the
 * engine's reading moved on five: those two, photo 12002 (72 against 45), dim 11574 and studio 6233 (good before and after).
 */
const HELD_ACROSS = 0.25
const BAR_OVER_HELD = 1.4
/**
 * Streaks below the feet (readBody): rows whose every run is narrower than a foot, STREAK_ROWS of the stature or more,
 * below rows BAND_OVER_LEGS times as full as the legs LEGS_ABOVE of the stature higher up (the feet's shadow on the
 * floor). Of 2,400 tuning scenes (12001-13000, 17001-18400, 2026-12-01), 17 readings moved, all photo-style plank or tile
 * floors, each floor line nearer the truth: from 0.03-0.15 of the frame below it to 0.01-0.02 (photo 17722, read cut at
 * the knees, and 17802 now have their feet). Without the band, dim 18319's legs, come out in thin strips, were cut.
 */
const STREAK_ROWS = 0.03
const BAND_OVER_LEGS = 1.5
const LEGS_ABOVE = 0.1
/** Where a centred default figure, or one measured by its shoulders, has its knees. */
const KNEE = 0.72

/**
 * Finds the figure's landmarks from its silhouette; falls back to a centred figure filling the frame (not
 * `found`). A silhouette with a hole where clothes or skin match the wall (a grey shirt against a grey wall,
 * a face against a beige one) is read again with each row filled between its outermost pixels, a head standing alone
 * above a hidden top from the head and the bottoms, and a figure whose head did not come out at all from its shoulders
 * and feet.
 */
export function analyseBody(mask: Mask, coverage: number): BodyLayout {
  const { width, height } = mask
  if (coverage < 0.02 || coverage > 0.9) return defaultLayout(width, height)
  const layout = readBody(mask, false)
  if (layout.found) return layout
  const filled = filledRows(mask)
  const second = readBody(filled, false)
  if (second.found) return second
  // A head standing alone above a top of the backdrop's colour (belowLoneHead), only where no figure came out otherwise:
  // a figure the rows filled between its arms did read keeps that reading (studio 83, 173: its arms beside a white top
  // give its shoulders better than the arms beside the bottoms do).
  const alone = readBody(mask, false, true)
  if (alone.found) return alone
  return readBody(filled, true)
}

/** The mask with every row filled from its first to its last pixel. */
function filledRows({ width, height, data }: Mask): Mask {
  const out = Uint8Array.from(data)
  for (let y = 0; y < height; y++) {
    const row = y * width
    let first = -1
    let last = -1
    for (let x = 0; x < width; x++) if (data[row + x]) (first = first < 0 ? x : first), (last = x)
    if (first >= 0) out.fill(1, row + first, row + last + 1)
  }
  return { width, height, data: out }
}

function readBody(mask: Mask, headless: boolean, lone = false): BodyLayout {
  const { width, height } = mask
  const rows = rowExtents(mask)
  let top = rows.first.findIndex((x, y) => x >= 0 && rows.count[y] >= Math.max(2, width * 0.01))
  if (top < 0) return defaultLayout(width, height)
  let last = height - 1
  while (last > top && rows.count[last] < 2) last--
  // The soles: the lowest rows wide enough to be feet, not a thin streak of floor texture or shadow below them.
  const footWidth = Math.max(3, (last - top) * 0.025)
  let bottom = last
  while (bottom > top && rows.count[bottom] < footWidth) bottom--
  // Streaks below a band wider than the legs (the seams of a plank floor joined to the feet's shadow, photo 17817) are no
  // part of the figure, however many of them a row holds; legs come out in thin strips have no band above them.
  let streak = bottom
  while (streak > top && widestRun(mask, streak) < footWidth) streak--
  if (streak < bottom && bottom - streak >= STREAK_ROWS * (streak - top) && standsOnBand(rows.count, streak, streak - top)) bottom = streak
  if (bottom - top < height * 0.2) return defaultLayout(width, height)

  let feetVisible = bottom < height - 2
  if (!feetVisible) {
    const floor = pooledShadowFloor(mask, top, bottom)
    if (floor !== null) {
      bottom = floor
      feetVisible = true
    }
  }
  let centreX = upperCentroid(mask, top, bottom)
  let smooth = centralWidths(mask, centreX)
  // The column through the upper body's centre may pass beside the head (an arm out, a bag on one side): then the head's
  // own centre, if its column runs down into the body (dim 24986, 24934).
  const headRows = top + Math.max(2, Math.round(HEAD_ROWS * (bottom - top)))
  if (Math.max(...smooth.subarray(top, headRows + 1)) < 2) {
    const head = headCentre(mask, top, headRows, bottom)
    if (head !== undefined) (centreX = head), (smooth = centralWidths(mask, centreX))
  }
  const stature = feetVisible ? bottom - top : undefined
  let shoulders = headless ? headlessShoulders(smooth, top, bottom, feetVisible) : findShoulders(smooth, top, bottom, stature)
  // No shoulders below the head, and the head stands alone above empty rows: a top of the backdrop's colour, read from
  // the head and the bottoms below it.
  const alone = lone && !shoulders && stature !== undefined ? belowLoneHead(smooth, top, stature) : undefined
  shoulders ??= alone ?? null
  if (!shoulders) return defaultLayout(width, height)
  const head = headless ? undefined : headBelowGap(smooth, top, shoulders.shoulderStart)
  const fromHead = head === undefined ? null : findShoulders(smooth, head, bottom, stature)
  if (head !== undefined && fromHead) (top = head), (shoulders = fromHead)
  const across = (found: { shoulderStart: number; headWidth: number }) => {
    const last = Math.min(bottom, found.shoulderStart + Math.round(found.headWidth * 0.6))
    const held = Math.max(3, Math.round(HELD_ACROSS * found.headWidth))
    let widest = 0
    let widestHeld = 0
    for (let y = found.shoulderStart; y <= last; y++) widest = Math.max(widest, smooth[y])
    for (let from = Math.max(top, found.shoulderStart - held + 1); from <= last; from++) {
      let least = smooth[from]
      for (let y = from + 1; y < from + held && y <= bottom; y++) least = Math.min(least, smooth[y])
      widestHeld = Math.max(widestHeld, least)
    }
    return widest > BAR_OVER_HELD * widestHeld ? widestHeld : widest
  }
  if (!headless && stature !== undefined && across(shoulders) < NARROWEST_SHOULDERS * stature) {
    // Shoulders narrower than a standing figure's ever are: the head's own widening, below a narrow piece of the wall
    // joined atop it (a brick, a lamp's stand) that was read as the head. The shoulders are the next jump down.
    const lower = findShoulders(smooth, shoulders.shoulderStart, bottom, stature)
    if (lower && lower.shoulderStart - top <= 0.3 * stature && across(lower) >= NARROWEST_SHOULDERS * stature) shoulders = lower
  }
  let { shoulderStart, neckY } = shoulders
  const { headWidth } = shoulders
  top = shoulders.headTop ?? top
  let shoulderWidth = across(shoulders)
  let waistband: number | undefined
  const hidden = headless
    ? undefined
    : hiddenTorsoShoulders(smooth, top, neckY, shoulderStart, feetVisible ? bottom - top : undefined, headWidth)
  if (hidden) {
    // The arms hang from the shoulders' outer edges: the span across their tops is the shoulders'. Cut at the knees, the
    // first wide rows are the hips, narrower than the shoulders: the span across the arms' tops, beside the hidden top.
    shoulderWidth = smooth[shoulderStart]
    if (!feetVisible) shoulderWidth = Math.max(shoulderWidth, widestRow(mask, hidden, hidden + Math.round(0.3 * (hidden - top))))
    // Below a lone head the first rows are the bottoms' waist: the shoulders are as wide as the arms beside them, when
    // those came out, and as a standing figure's are at least.
    if (alone && stature !== undefined) {
      const arms = widestRow(mask, shoulderStart, shoulderStart + Math.round(LONE_HEAD_ARMS * stature))
      shoulderWidth = Math.min(WIDEST_SHOULDERS * stature, Math.max(shoulderWidth, arms, NARROWEST_SHOULDERS * stature))
    }
    const band = feetVisible ? undefined : waistbandAbove(smooth, shoulderStart)
    // Shoulders wider than a standing figure's at the stature it gives: no waistband, but rows just below the shoulders
    // after a clipped face's chin was read as a hidden top's neckline (studio 6133: 0.44 of it).
    if (band !== undefined && shoulderWidth <= WIDEST_SHOULDERS * ((band - top) / WAIST)) waistband = band
    shoulderStart = hidden
    // As for a head placed above headless shoulders: the neck's base a little above them.
    neckY = Math.min(neckY, Math.round(hidden - 0.03 * (feetVisible ? bottom - top : (hidden - top) / SHOULDER_SHARE)))
  }
  if (shoulderWidth > width * 0.98 || shoulderWidth < headWidth * 1.3) return defaultLayout(width, height)
  // A head taller than HEAD_OVER_SHOULDERS times the shoulders' width is a head and a top read as one (soft 12336:
  // a checked top on a dark wall joined the head, the shoulders read at the skirt's waistband, 1.79 times): no figure.
  if (shoulderStart - top > HEAD_OVER_SHOULDERS * shoulderWidth) return defaultLayout(width, height)

  const fromShoulders = (shoulderStart - top) / SHOULDER
  const guess = feetVisible ? bottom - top : fromShoulders
  // A standing figure is tall: its head and shoulders sit in the top fifth, not halfway down a wide blob.
  if (feetVisible && (shoulderStart - top > 0.3 * guess || shoulderStart - top < 0.08 * guess)) return defaultLayout(width, height)
  // A figure the frame cuts takes its stature from its crotch, which lies at 0.525 of it: no lower than LOWEST_CROTCH of the
  // stature its shoulders give here (1.03-1.27 of the truth on those scenes). Lower, it is the knees parting.
  const lowest = feetVisible ? 0.75 : LOWEST_CROTCH
  const crotch = findCrotch(mask, centreX, shoulderWidth, shoulderStart + 0.25 * guess, Math.min(bottom, top + lowest * guess))
  // No crotch: the head-to-shoulder distance gives the stature as a cut frame leaves it (SHOULDER_SHARE), not the
  // landmark guess, which put knee-cut figures at 1.09 of their stature (LOWEST_CROTCH's tuning scenes).
  const figureHeight = feetVisible ? bottom - top : crotch !== null ? (crotch - top) / CROTCH : (shoulderStart - top) / SHOULDER_SHARE
  const at = (f: number) => top + f * figureHeight
  const floorY = at(1)
  const crotchY = crotch ?? at(CROTCH)
  const span = crotchY - shoulderStart
  const layout: BodyLayout = {
    found: true,
    feetVisible,
    centreX,
    headTop: top,
    neckY,
    shoulderY: shoulderStart,
    shoulderWidth,
    waistY: crotch !== null ? shoulderStart + span * 0.64 : at(WAIST),
    waistband,
    hipY: crotch !== null ? shoulderStart + span * 0.93 : at(HIP),
    crotchY,
    kneeY: crotchY + 0.42 * (floorY - crotchY),
    ankleY: at(ANKLE),
    floorY,
    figureHeight,
    torso: { left: new Float32Array(height), right: new Float32Array(height) },
    legs: { left: new Float32Array(height), right: new Float32Array(height) },
    outer: { left: new Float32Array(height), right: new Float32Array(height) },
  }
  measureSpans(mask, layout)
  // The waistband is read more surely than a crotch the frame's cut or legs joined in trousers put low (soft 3281).
  return waistband === undefined ? layout : staturedByShoulders(layout)
}

/** How much wider than the shins the widest row of a shadow pooled under the feet is, at least. */
const POOL_OVER_SHINS = 1.8

/**
 * The floor line of a figure whose silhouette runs to the frame's bottom edge only through the shadow pooled under
 * its feet (a studio's soft shadow, a floor darkened round the shoes): the lowest rows swell to an ellipse far wider
 * than the shins, centred on the line the feet stand on, and narrow again below it. That row, or null when the bottom
 * rows are legs the frame cut (their span stays the shins').
 */
function pooledShadowFloor({ width, data }: Mask, top: number, bottom: number): number | null {
  const span = bottom - top
  const extent = (y: number): number => {
    let first = -1
    let last = -1
    for (let x = 0, i = y * width; x < width; x++, i++) if (data[i]) (first = first < 0 ? x : first), (last = x)
    return first < 0 ? 0 : last - first + 1
  }
  const shins = Math.round(bottom - 0.12 * span)
  let shinWidth = 0
  for (let y = shins - 2; y <= shins + 2; y++) shinWidth = Math.max(shinWidth, extent(y))
  let widest = -1
  let widestWidth = 0
  for (let y = bottom; y > bottom - 0.08 * span; y--) {
    const w = extent(y)
    if (w > widestWidth) (widest = y), (widestWidth = w)
  }
  // The pool's lower half in the frame: a band cut by the edge could as well be a hem or a step.
  if (shinWidth === 0 || widestWidth < POOL_OVER_SHINS * shinWidth || widest > bottom - 2) return null
  return widest
}

/** The widest span, first pixel to last, of the mask's rows from `from` to `to`. */
function widestRow(mask: Mask, from: number, to: number): number {
  let widest = 0
  for (let y = Math.max(0, from); y <= Math.min(mask.height - 1, to); y++) {
    const [first, end] = extentWithin(mask, y, 0, mask.width - 1)
    if (!Number.isNaN(first)) widest = Math.max(widest, end - first)
  }
  return widest
}

/**
 * Whether the rows just above `y` are a band BAND_OVER_LEGS times as full as the legs higher up (LEGS_ABOVE of the
 * stature): the feet with their shadow on the floor.
 */
function standsOnBand(count: Int32Array, y: number, stature: number): boolean {
  const legs = count[Math.max(0, Math.round(y - LEGS_ABOVE * stature))]
  let band = 0
  for (let k = Math.max(0, y - 3); k <= y; k++) band = Math.max(band, count[k])
  return band >= BAND_OVER_LEGS * legs
}

/** The widest run of the mask's row `y`. */
function widestRun({ width, data }: Mask, y: number): number {
  let widest = 0
  let run = 0
  for (let x = 0, i = y * width; x < width; x++, i++) {
    run = data[i] ? run + 1 : 0
    if (run > widest) widest = run
  }
  return widest
}

function rowExtents({ width, height, data }: Mask) {
  const first = new Int32Array(height).fill(-1)
  const count = new Int32Array(height)
  for (let y = 0; y < height; y++) {
    for (let x = 0, i = y * width; x < width; x++, i++) {
      if (!data[i]) continue
      if (first[y] < 0) first[y] = x
      count[y]++
    }
  }
  return { first, count }
}

/** Horizontal centre of the head and torso (the upper body is the most symmetric part). */
function upperCentroid({ width, data }: Mask, top: number, bottom: number): number {
  let sum = 0
  let count = 0
  const end = top + Math.round((bottom - top) * 0.35)
  for (let y = top; y <= end; y++) {
    for (let x = 0, i = y * width; x < width; x++, i++) {
      if (data[i]) {
        sum += x
        count++
      }
    }
  }
  return count ? sum / count : width / 2
}

/** Per row, the width of the silhouette's run through column x, median-filtered over three rows. */
function centralWidths(mask: Mask, centreX: number): Float32Array {
  const widths = new Float32Array(mask.height)
  for (let y = 0; y < mask.height; y++) {
    const run = runAround(mask, y, Math.round(centreX))
    widths[y] = run ? run[1] - run[0] + 1 : 0
  }
  return median3(widths)
}

/** The head's rows: the first HEAD_ROWS of the silhouette's height, where findShoulders takes the head's width. */
const HEAD_ROWS = 0.06
/**
 * How far down the silhouette (share of its height) the column through the head's centre runs with no gap of more than
 * two rows, for the head to be the figure's: a brick on the wall above a head stands apart from it (photo 477).
 */
const HEAD_JOINED = 0.2

/** The centre of the pixels in the head's rows, when the column through it runs down into the body; else undefined. */
function headCentre({ width, data }: Mask, top: number, headRows: number, bottom: number): number | undefined {
  let sum = 0
  let count = 0
  for (let y = top; y <= headRows; y++)
    for (let x = 0, i = y * width; x < width; x++, i++)
      if (data[i]) {
        sum += x
        count++
      }
  if (!count) return undefined
  const x = Math.round(sum / count)
  let gap = 0
  for (let y = top; y <= top + HEAD_JOINED * (bottom - top); y++) {
    gap = data[y * width + x] ? 0 : gap + 1
    if (gap > 2) return undefined
  }
  return sum / count
}

function runAround({ width, data }: Mask, y: number, x: number): [number, number] | null {
  const row = y * width
  if (x < 0 || x >= width || !data[row + x]) return null
  let l = x
  let r = x
  while (l > 0 && data[row + l - 1]) l--
  while (r < width - 1 && data[row + r + 1]) r++
  return [l, r]
}

function median3(values: Float32Array): Float32Array {
  const out = new Float32Array(values.length)
  for (let i = 0; i < values.length; i++) {
    const a = values[Math.max(0, i - 1)]
    const b = values[i]
    const c = values[Math.min(values.length - 1, i + 1)]
    out[i] = Math.max(Math.min(a, b), Math.min(Math.max(a, b), c))
  }
  return out
}

/**
 * Walks down the central width profile: the crown of the head gives the head's width (hair included); the
 * shoulders are the first rows well below it that are clearly wider and stay so. Hair falling past the
 * shoulders, a neck hidden by it or a raised collar do not hide the jump from head to shoulders. Curly or loose
 * hair can make the head nearly as wide as a slim figure's shoulders: when no such jump shows in the top third of
 * the figure, the jump from a bare neck below the head is taken instead.
 */
function findShoulders(width: Float32Array, top: number, bottom: number, stature: number | undefined) {
  const span = stature ?? (bottom - top) / 0.45
  let headWidth = 0
  for (let y = top; y <= Math.min(bottom, top + Math.max(2, Math.round(0.06 * span))); y++) headWidth = Math.max(headWidth, width[y])
  if (headWidth < 2) return null
  const from = top + Math.max(1, Math.round(0.08 * span))
  const to = Math.min(bottom, top + Math.round(0.32 * span))
  // Cut by the frame, the span guessed is up to twice the stature: held that long, a striped top's shoulders are lost
  // where a stripe of the backdrop's colour cuts the rows below them. Held for a third of the head's width at most.
  const hold = Math.max(2, Math.round(stature === undefined ? Math.min(0.03 * span, CUT_HOLD_HEADS * headWidth) : 0.03 * span))
  const walk = (wide: (y: number) => boolean, held: (y: number) => boolean) => {
    let firstWide = -1
    for (let y = from; y <= to; y++) {
      if (!wide(y)) continue
      if (firstWide < 0) firstWide = y
      let stays = true
      for (let k = 1; k <= hold && y + k <= bottom; k++) if (!held(y + k)) stays = false
      if (!stays) continue
      // The neck is above the first row as wide as shoulders, even one a gap in the clothes cuts off below.
      let neckY = firstWide
      for (let k = top + Math.round(0.5 * headWidth); k < firstWide; k++) if (width[k] < width[neckY]) neckY = k
      return { shoulderStart: y, neckY, headWidth, headTop: undefined as number | undefined }
    }
    return null
  }
  const byHead = walk(
    (y) => width[y] >= 1.6 * headWidth,
    (y) => width[y] >= 1.45 * headWidth,
  )
  const neck = visibleNeck(width, top + Math.round(0.5 * headWidth), Math.min(to, top + Math.round(0.2 * span)), headWidth)
  const fromNeck = () =>
    neck &&
    walk(
      (y) => y > neck.y && width[y] >= Math.max(NECK_TO_SHOULDERS * neck.width, 1.15 * headWidth),
      (y) => width[y] >= 1.1 * headWidth,
    )
  // A standing figure's shoulders are within its top 0.3 (readBody's test): lower, the head's width hid them.
  if (byHead && stature !== undefined && byHead.shoulderStart - top <= 0.3 * stature) return byHead
  if (byHead && stature === undefined) {
    // No stature to test them against: found far further below a bare neck than the shoulders the neck shows, they are
    // the chest under a head made as wide as the shoulders by its hair.
    const byNeck = fromNeck()
    return neck && byNeck && byHead.shoulderStart - neck.y > HAIR_HID_SHOULDERS * (byNeck.shoulderStart - neck.y) ? byNeck : byHead
  }
  if (!neck) return byHead
  return fromNeck() ?? byHead
}

/**
 * How many times further below a bare neck than the shoulders the neck shows the jump from the head's width lies, at
 * least, when it is the chest: 2.7 to 3.2 on the four of the 460 knee-cut tuning and listed fresh scenes read that way
 * (dim 12049, 3099, studio 11653, photo 12137: statures 0.88 to 1.53 of the truth), 1.85 at most on the others.
 */
const HAIR_HID_SHOULDERS = 2

/** How long, as a share of the head's width, the shoulders' width is held below them in a figure cut by the frame. */
const CUT_HOLD_HEADS = 0.35

/**
 * The top of the head to the shoulders, as a multiple of the shoulders' width, at most: 0.39 to 1.24 on the 1,763 of
 * 1,782 tuning photos (seeds 1-300, 10301-10900, 11501-12400) read with their shoulders within 0.05 of the stature of
 * the truth.
 */
const HEAD_OVER_SHOULDERS = 1.5

/** Shoulders narrower than this share of the stature are not a standing adult's, even turned a little. */
const NARROWEST_SHOULDERS = 0.17

/** Shoulders wider than this share of the stature are not a standing adult's, arms' tops included (soft 3281: 0.21). */
const WIDEST_SHOULDERS = 0.35

/** How far below where a standing figure's shoulders are the first wide rows under a hidden torso lie, at least. */
const HIDDEN_TORSO_LOWER = 1.2

/**
 * A torso of the backdrop's own colour (a white top on a white sweep, clipped to the same white; a brown top against a
 * brown wallpaper) leaves empty rows between the neck and the first wide rows, which are then the tops of the arms
 * beside it, or the hips, well below where a standing figure's shoulders are. With the feet in the photo, the row where
 * its proportions put them (SHOULDER_SHARE of the stature below the top of the head). In a photo cut at the knees no
 * stature gives them: when the first wide rows lie further below the head's top than HIDDEN_TORSO_HEADS times its
 * height to the neck (a standing figure's shoulders are 1.3 to 1.6 times it), the shoulders are the first empty row
 * below the neck, where the hidden top's neckline starts. Undefined when the torso is not hidden.
 */
function hiddenTorsoShoulders(
  width: Float32Array,
  top: number,
  neckY: number,
  found: number,
  stature: number | undefined,
  headWidth: number,
) {
  let empty = -1
  for (let y = neckY; y < found && empty < 0; y++) if (width[y] === 0) empty = y
  if (empty < 0) return undefined
  if (stature === undefined) {
    // Shorter than wide, the part above the empty rows is hair over a face lost on the backdrop, not a head and neck.
    if (empty - top < HEAD_TALL * headWidth) return undefined
    return found - top > HIDDEN_TORSO_HEADS * Math.max(1, neckY - top) ? empty : undefined
  }
  const shoulders = top + SHOULDER_SHARE * stature
  return found - top > HIDDEN_TORSO_LOWER * (shoulders - top) ? Math.round(shoulders) : undefined
}

/** How narrow (share of the shoulders' width) the centre's run gets below shoulders that were a head: its neck. */
const NECK_BELOW = 0.5
/** How much wider than those shoulders the run then gets: the shoulders below the neck. */
const WIDER_BELOW_NECK = 1.3

/**
 * The top of a head read as the shoulders, below a piece of the wall that joins the figure's top but not the centre's
 * column (a brick above the head, parted from it by empty rows there, photo 12137 cut at the knees): the first row after
 * the last run of more than two empty rows above the shoulders found, when below those the column narrows to a neck
 * (NECK_BELOW) within HEAD_OVER_SHOULDERS of their width and then widens past them (WIDER_BELOW_NECK) within half of
 * it. Undefined otherwise: hair above a face lost against the wall is parted from shoulders that have no neck below.
 */
function headBelowGap(width: Float32Array, top: number, shoulderStart: number): number | undefined {
  let after = -1
  let empty = 0
  for (let y = top; y < shoulderStart; y++) {
    if (width[y] === 0) empty++
    else {
      if (empty > 2) after = y
      empty = 0
    }
  }
  if (after < 0) return undefined
  const across = width[shoulderStart]
  const lowest = Math.min(width.length - 1, Math.round(after + HEAD_OVER_SHOULDERS * across))
  let neck = -1
  for (let y = shoulderStart + 1; y <= lowest && neck < 0; y++) if (width[y] < NECK_BELOW * across) neck = y
  if (neck < 0) return undefined
  for (let y = neck; y <= Math.min(width.length - 1, neck + Math.round(0.5 * across)); y++)
    if (width[y] > WIDER_BELOW_NECK * across) return after
  return undefined
}

/** Rows below the bottoms' top (share of the stature) where the hands hanging beside them show the shoulders' span. */
const LONE_HEAD_ARMS = 0.12
/** The first rows below a lone head's empty ones lie this far below its top at most (share of the stature): the hips. */
const LONE_HEAD_BODY = 0.55
/**
 * How far down (share of the stature) the body below a lone head stays at least this share of the head's width (hair
 * included): 0.9 for a skirt below curly hair (studio 8283), 1.1 to 1.75 on the other tuning scenes; a bridal gown's lace
 * on a mannequin, 0.67 (empty scene 40003).
 */
const LONE_HEAD_MASS = 0.1
const LONE_HEAD_MASS_WIDTH = 0.8
/** The share of those rows that must be that wide. */
const LONE_HEAD_SOLID = 0.8

/**
 * A head standing alone, with the feet in the photo: empty rows below it within the figure's top 0.3 (where a standing
 * figure's shoulders are), and the body going on below them no lower than the hips. A top, and arms, of the backdrop's
 * colour: a white top on a white sweep (studio 8283, 8303). The first rows of that body are returned as the shoulders
 * found, for hiddenTorsoShoulders to place the shoulders where the stature puts them; undefined when the head does not
 * stand alone.
 */
function belowLoneHead(width: Float32Array, top: number, stature: number) {
  let headWidth = 0
  for (let y = top; y <= top + Math.max(2, Math.round(0.06 * stature)); y++) headWidth = Math.max(headWidth, width[y])
  if (headWidth < 2) return undefined
  let empty = -1
  for (let y = top + Math.round(0.5 * headWidth); y <= top + 0.3 * stature && empty < 0; y++) if (width[y] === 0) empty = y
  if (empty < 0) return undefined
  const lowest = top + LONE_HEAD_BODY * stature
  const mass = Math.round(LONE_HEAD_MASS * stature)
  // Every part below the empty rows, down to the hips, in turn: a fragment of the top or a belt between the head and the
  // bottoms is passed over (photo 24972, studio 24963).
  for (let y = empty; y <= lowest; ) {
    while (y <= lowest && width[y] === 0) y++
    if (y > lowest) return undefined
    const body = y
    // Bottoms are a solid mass nearly as wide as the head for a while, not a streak of texture or a fragment of lace;
    // a narrow skirt's waist may be a few rows short of it (photo 24534).
    let solid = 0
    for (let k = body; k <= body + mass; k++) if (width[k] >= LONE_HEAD_MASS_WIDTH * headWidth) solid++
    if (solid >= LONE_HEAD_SOLID * (mass + 1))
      return { shoulderStart: body, neckY: empty - 1, headWidth, headTop: undefined as number | undefined }
    while (y <= lowest && width[y] !== 0) y++
  }
  return undefined
}

/**
 * Cut at the knees, the first wide rows below a hidden top are the bottoms, which start narrower than that at a slim
 * waist (soft 3281: 0.7 of the width sought): their top, the first row of the body's centre after the empty rows.
 */
function waistbandAbove(width: Float32Array, found: number): number {
  let y = found
  while (y > 0 && width[y - 1] > 0) y--
  return y
}

/**
 * How many times the head's height to the neck the first wide rows lie below the head's top, at least, before a figure
 * cut at the knees is taken to have a hidden torso (tuning photo 6087, studio 6238: 2.8 and 2.0).
 */
const HIDDEN_TORSO_HEADS = 1.9

/**
 * How tall the part above the empty rows is, at least, as a share of the head's width (hair included), for a figure cut
 * at the knees to be read with a hidden torso. A pale face lost on a pale backdrop leaves only the hair's cap above them,
 * wider than tall, and the top below is the shoulders (studio 22013 read at the chin, trousers put on over its top). Of
 * 3,000 tuning scenes (1-1500, 17001-18500, 2026-12-01) the rule was tried on 13 readings: lost faces 0.51 to 0.80 (soft
 * 151, flat 730, studio 783 and 17018, among others), heads above hidden tops 1.02 to 2.79 (photo 6087, studio 6238, soft
 * 17371).
 */
const HEAD_TALL = 0.9

/** How much wider than a bare neck the shoulders below it are at least: 2.7 times for a slim figure (tuning soft 31). */
const NECK_TO_SHOULDERS = 2.4

/**
 * The narrowest row below the head, when it is a bare neck (well under the head's width): a head made wide by curly or
 * loose hair is as wide as a slim figure's shoulders, but its neck is not.
 */
function visibleNeck(width: Float32Array, from: number, to: number, headWidth: number): { y: number; width: number } | undefined {
  let best = -1
  for (let y = from; y <= to; y++) if (width[y] > 0 && (best < 0 || width[y] < width[best])) best = y
  return best >= 0 && width[best] <= 0.6 * headWidth ? { y: best, width: width[best] } : undefined
}

/**
 * A figure whose head did not come out (skin and hair of the wall's colour): its silhouette starts at the
 * shoulders, square and shoulder-wide, and the head is where a standing figure's proportions put it above
 * them. Only with the feet in the photo, which fix the figure's height.
 */
function headlessShoulders(width: Float32Array, top: number, bottom: number, feetVisible: boolean) {
  if (!feetVisible) return null
  const stature = (bottom - top) / (1 - SHOULDER)
  const shoulderWidth = Math.max(width[top + 1] ?? 0, width[top + 2] ?? 0, width[top + 3] ?? 0)
  if (shoulderWidth < 0.15 * stature || shoulderWidth > 0.4 * stature) return null
  const headTop = Math.round(bottom - stature)
  return { shoulderStart: top, neckY: Math.max(headTop, top - Math.round(0.03 * stature)), headWidth: shoulderWidth / 2.3, headTop }
}

/** The first row, going down, from which the body's centre line is background between two legs for a while. */
function findCrotch(mask: Mask, centreX: number, shoulderWidth: number, from: number, to: number): number | null {
  const { width, height, data } = mask
  const cx = Math.round(centreX)
  const reach = Math.round(shoulderWidth * 0.5)
  const isGap = (y: number): boolean => {
    const row = y * width
    if (data[row + cx] || data[row + Math.max(0, cx - 1)] || data[row + Math.min(width - 1, cx + 1)]) return false
    let left = false
    let right = false
    for (let d = 2; d <= reach; d++) {
      if (cx - d >= 0 && data[row + cx - d]) left = true
      if (cx + d < width && data[row + cx + d]) right = true
    }
    return left && right
  }
  const need = Math.max(3, Math.round((to - from) * 0.1))
  for (let y = Math.max(0, Math.round(from)); y <= Math.min(height - 1, Math.round(to)); y++) {
    if (!isGap(y)) continue
    let run = 1
    while (run < need && y + run < height && isGap(y + run)) run++
    if (run >= need || y + run >= height) return y
  }
  return null
}

/** Torso span (the run around the centre, kept within plausible widths) and leg span (all body within the hips' reach). */
function measureSpans(mask: Mask, layout: BodyLayout): void {
  const height = mask.height
  const half = layout.shoulderWidth / 2
  const cx = layout.centreX
  for (let y = 0; y < height; y++) {
    const run = runAround(mask, y, Math.round(cx))
    const l = run ? cx - run[0] : NaN
    const r = run ? run[1] + 1 - cx : NaN
    layout.torso.left[y] = cx - clamp(l, 0.55 * half, half)
    layout.torso.right[y] = cx + clamp(r, 0.55 * half, half)
    const legs = extentWithin(mask, y, cx - 0.68 * half, cx + 0.68 * half)
    layout.legs.left[y] = legs[0]
    layout.legs.right[y] = legs[1]
    const outer = extentWithin(mask, y, cx - 1.5 * half, cx + 1.5 * half)
    layout.outer.left[y] = Number.isNaN(outer[0]) ? layout.torso.left[y] : Math.min(outer[0], layout.torso.left[y])
    layout.outer.right[y] = Number.isNaN(outer[1]) ? layout.torso.right[y] : Math.max(outer[1], layout.torso.right[y])
  }
  fillGaps(layout.legs, cx - 0.35 * half, cx + 0.35 * half)
  smoothSpans(layout.torso, 2)
  smoothSpans(layout.legs, 2)
  smoothSpans(layout.outer, 2)
}

/** Leftmost and rightmost body pixel of a row within [from, to], NaN when there is none. */
function extentWithin({ width, data }: Mask, y: number, from: number, to: number): [number, number] {
  let lo = NaN
  let hi = NaN
  for (let x = Math.max(0, Math.floor(from)); x <= Math.min(width - 1, Math.ceil(to)); x++) {
    if (!data[y * width + x]) continue
    if (Number.isNaN(lo)) lo = x
    hi = x + 1
  }
  return [lo, hi]
}

function clamp(v: number, lo: number, hi: number): number {
  return Number.isNaN(v) ? lo : v < lo ? lo : v > hi ? hi : v
}

function fillGaps(spans: RowSpans, left: number, right: number): void {
  for (let y = 0; y < spans.left.length; y++) {
    if (Number.isNaN(spans.left[y])) {
      spans.left[y] = y > 0 ? spans.left[y - 1] : left
      spans.right[y] = y > 0 ? spans.right[y - 1] : right
    }
  }
}

function smoothSpans(spans: RowSpans, radius: number): void {
  for (const values of [spans.left, spans.right]) {
    const copy = Float32Array.from(values)
    for (let y = 0; y < values.length; y++) {
      let sum = 0
      let n = 0
      for (let k = Math.max(0, y - radius); k <= Math.min(values.length - 1, y + radius); k++, n++) sum += copy[k]
      values[y] = sum / n
    }
  }
}

/**
 * The top of the head to the top of the shoulders, as a share of a standing adult's height: the median of 233
 * full-length tuning scenes read by analyseBody (5.40 heights per that distance, 5th to 95th percentile 4.84 to 5.68).
 * A frame that cuts a figure at the knees does not move it: its landmarks guessed the height at 0.69 to 1.47 of the
 * truth on the tuning scenes cut at the knees, this distance at 0.93 to 1.11.
 */
export const SHOULDER_SHARE = 0.185

/**
 * The layout with its height, and every landmark below the shoulders, taken from the head-to-shoulder distance; below a
 * hidden top, from the head to the waistband: shoulders there are only the first empty row under the neck, often a few
 * rows low, and a bun or a high hairdo that lengthens the head weighs less against the longer distance (soft 3281).
 */
export function staturedByShoulders(body: BodyLayout): BodyLayout {
  const figureHeight =
    body.waistband === undefined
      ? Math.max(1, body.shoulderY - body.headTop) / SHOULDER_SHARE
      : Math.max(1, body.waistband - body.headTop) / WAIST
  const at = (f: number) => body.headTop + f * figureHeight
  return { ...body, figureHeight, waistY: at(WAIST), hipY: at(HIP), crotchY: at(CROTCH), kneeY: at(KNEE), ankleY: at(ANKLE), floorY: at(1) }
}

/** A centred figure filling the frame: the best guess when no silhouette stands out. */
export function defaultLayout(width: number, height: number): BodyLayout {
  const headTop = 0.04 * height
  const figureHeight = 0.98 * height
  const at = (f: number) => headTop + f * figureHeight
  const centreX = width / 2
  const shoulderWidth = Math.min(0.26 * figureHeight, 0.8 * width)
  const half = shoulderWidth / 2
  const spans = (halfWidth: number): RowSpans => ({
    left: new Float32Array(height).fill(centreX - halfWidth),
    right: new Float32Array(height).fill(centreX + halfWidth),
  })
  return {
    found: false,
    feetVisible: true,
    centreX,
    headTop,
    neckY: at(0.14),
    shoulderY: at(SHOULDER),
    shoulderWidth,
    waistY: at(WAIST),
    hipY: at(HIP),
    crotchY: at(CROTCH),
    kneeY: at(KNEE),
    ankleY: at(ANKLE),
    floorY: at(1),
    figureHeight,
    torso: spans(0.72 * half),
    legs: spans(0.7 * half),
    outer: spans(1.2 * half),
  }
}
