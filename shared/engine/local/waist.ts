import type { RgbaImage } from '../../images/codecs/raster.ts'
import { ciede2000, labOf } from '../../quality/colour.ts'
import type { BodyLayout } from './person.ts'
import type { Mask } from './segmentation.ts'

/**
 * How far above and below the waist the silhouette's proportions give the hem is looked for, as shares of the stature.
 * The silhouette's waist is up to 0.12 of the stature low where the legs join (dim 7054: 0.118, 7143: 0.088); 0.18
 * above it reaches the neckline on many figures (tuning 1-300: 36 of 258 read there), 0.15 on those whose waist was
 * read high, kept off it by HEM_BELOW_SHOULDERS. Before 2026-11-29 (evening): 0.08 and 0.06, which left bottoms 0.05 of
 * the stature or more below the true waist on 84 of 854 found figures (tuning 1-300, 3001-3400, 7001-7300), and above
 * it on 20; now on 41 and 16.
 */
const HEM_ABOVE = 0.15
const HEM_BELOW = 0.1
/** Rows averaged either side of a row, as a share of the stature: narrow stripes and checks are averaged over, a hem is not. */
const HEM_WINDOW = 0.03
/**
 * A row is a stripe's edge, not the hem, when one of the rows below it is the colour of one of the rows above it (at
 * least RECUR_GAP rows apart): within this share of the contrast across it, in CIEDE2000. Bars as wide as the window
 * (studio 8218: black and green bars 6 rows each at 320, over yellow trousers) are not averaged over, and the edge from
 * a bar to the next is stronger than the hem. At a share of 0.2 the dim rooms' near-black colours still tell apart
 * (dim 7054: a dark top over dark trousers); a fixed 6 took them for a stripe.
 */
const RECUR_SHARE = 0.2
const RECUR_GAP = 3
/**
 * How far above and below a row its colours are looked for coming back, in windows (HEM_WINDOW): bars as broad as the
 * window come back within two (tuning soft 206: blue and green bars 6 rows each at 320, the window 8, read as the hem
 * at the neckline's first bar when only one window was looked at).
 */
const RECUR_REACH = 2
/**
 * The hem is at least this share of the stature below the shoulders: a waist read high brought the reach up to the
 * neckline (tuning 279, 3083, 3131, 3189, 3374, 7267: the hem read 0.01 to 0.05 of the stature below the shoulders,
 * bottoms put on 0.18 to 0.25 of it too high). The waist is about 0.22 below them.
 */
const HEM_BELOW_SHOULDERS = 0.1
/** Half the band down the body's centre that is read, as a share of the shoulders' width: clear of the arms. */
const HEM_BAND = 0.12
/**
 * CIEDE2000 between the mean colours above and below a row from which it is the hem. Tuning seeds 1-300: at 16, the
 * waist moved nearer the truth on 37 full-length figures and further on 1 (by 0.03 of the stature); at 12 on 43 and 3.
 */
const HEM_CONTRAST = 16
/**
 * A dim photo shows its colours near black, and a top and bottoms differ there by less than HEM_CONTRAST (dim 10839: a
 * grey-blue top over navy trousers, 7 across the hem): where the band's mean lightness (L*) is under DIM_LIGHTNESS, the
 * contrast asked is scaled down with it, to DIMMEST_SHARE of HEM_CONTRAST at most. On the 434 dim photos of tuning seeds
 * 1-300, 3001-3400, 6001-6300, 7001-7300 and 10301-11200 read as served, the top of the bottoms (the hem, else the
 * silhouette's waist) came 0.05 of the stature or more off the true waist on 123 before, 77 after (77 nearer, 4
 * further); on 116 dim photos of seeds 50004-50599 not looked at before, 31 before, 17 after (20 nearer, 1 further).
 * None of 1,033 photos of the other styles of 1-300, 3001-3400 and 10301-10900 moved.
 */
const DIM_LIGHTNESS = 40
const DIMMEST_SHARE = 0.35

/**
 * The layout with the top's hem (`hemY`), when the photo shows one near where the silhouette's proportions put the
 * waist: the row down the body's centre where the mean colour of the rows above it differs most from that of the rows
 * below it, by HEM_CONTRAST at least (less in a dim band, DIM_LIGHTNESS), and no colour of the rows below comes back
 * from above (RECUR_SHARE: a broad stripe's edge), never nearer the shoulders than HEM_BELOW_SHOULDERS. Bottoms go on
 * there (fit.ts). The silhouette alone reads a waist a tenth of the stature low when the legs join (trousers, a skirt
 * over them: the crotch is read at the skirt's hem), and bottoms put on there left the top's hem and the old trousers
 * showing above them (dim 3119: 0.067 low). A dress or a top and bottoms of one colour show no hem: the layout is kept.
 * A dress's waist seam is pinned at the hem only on a figure cut at the knees (fit.ts). Where no colour tells the hem
 * and the silhouette (`mask`) is given, the hem is where the silhouette stops below the top (hemAtGap).
 */
export function readHem(photo: RgbaImage, body: BodyLayout, mask?: Mask): BodyLayout {
  if (!body.found) return body
  const read = hemByColour(photo, body)
  if (read.hemY !== undefined || !mask) return read
  const gap = hemAtGap(mask, body)
  return gap === undefined ? read : { ...read, hemY: gap }
}

/**
 * The rows the hem is looked for in (HEM_ABOVE above the silhouette's waist to HEM_BELOW below it, never nearer the
 * shoulders than HEM_BELOW_SHOULDERS), and the rows a mean is taken over (HEM_WINDOW), before each reading keeps them
 * inside the picture.
 */
function hemReach(body: BodyLayout) {
  const H = body.figureHeight
  return {
    window: Math.max(2, Math.round(HEM_WINDOW * H)),
    from: Math.max(Math.round(body.waistY - HEM_ABOVE * H), Math.round(body.shoulderY + HEM_BELOW_SHOULDERS * H)),
    to: Math.round(body.waistY + HEM_BELOW * H),
  }
}

/**
 * Half the band about the body's centre, as a share of the shoulders' width, whose rows the silhouette leaves empty
 * below a top's hem over bottoms of the backdrop's colour: within the torso, clear of the forearms hanging beside it
 * (0.4 took them in on studio 6153). Two legs apart may leave it empty too, but down to the ankles: no hem.
 */
const GAP_HALF = 0.2

/**
 * The top's hem where the silhouette stops below it, within the reach readHem looks in: the first row from which
 * the rows across GAP_HALF of the shoulders' width either side of the centre are all empty for a window, with the row
 * above it not empty, and the silhouette coming back below before the ankles (a skirt or trousers of the sweep's white
 * under a top that came out, studio 6153: the colours across it differ by 16, the hem's threshold, and bottoms were put
 * on 0.06 of the stature above it). Undefined when there is no such gap.
 */
function hemAtGap(mask: Mask, body: BodyLayout): number | undefined {
  const { width, height, data } = mask
  const reach = hemReach(body)
  const { window } = reach
  const x0 = Math.max(0, Math.round(body.centreX - GAP_HALF * body.shoulderWidth))
  const x1 = Math.min(width - 1, Math.round(body.centreX + GAP_HALF * body.shoulderWidth))
  const from = Math.max(1, reach.from)
  const to = Math.min(height - 1, reach.to)
  const ankle = Math.min(height, Math.round(body.ankleY))
  if (to <= from || x1 < x0) return undefined
  const empty = (y: number) => {
    for (let x = x0; x <= x1; x++) if (data[y * width + x]) return false
    return true
  }
  for (let y = from; y <= to; y++) {
    if (!empty(y) || empty(y - 1)) continue
    let end = y + 1
    while (end < ankle && empty(end)) end++
    if (end - y >= window && end < ankle) return y
    y = end
  }
  return undefined
}

/** readHem's reading by the colours down the body's centre. */
function hemByColour(photo: RgbaImage, body: BodyLayout): BodyLayout {
  const { width, height, data } = photo
  const hemRows = hemReach(body)
  const { window } = hemRows
  const from = Math.max(window, hemRows.from)
  const to = Math.min(height - window, hemRows.to)
  const x0 = Math.max(0, Math.round(body.centreX - HEM_BAND * body.shoulderWidth))
  const x1 = Math.min(width - 1, Math.round(body.centreX + HEM_BAND * body.shoulderWidth))
  if (to <= from || x1 < x0) return body
  // Running sums of each row's mean colour across the band, from the first row any mean reads.
  const reach = RECUR_REACH * window
  const first = Math.max(0, from - reach)
  const rows = Math.min(height, to + reach) - first
  const sums = new Float64Array((rows + 1) * 3)
  for (let r = 0; r < rows; r++) {
    const y = first + r
    for (let c = 0; c < 3; c++) {
      let sum = 0
      for (let x = x0; x <= x1; x++) sum += data[(y * width + x) * 4 + c]
      sums[(r + 1) * 3 + c] = sums[r * 3 + c] + sum / (x1 - x0 + 1)
    }
  }
  const meanLab = (a: number, b: number) =>
    labOf([0, 1, 2].map((c) => (sums[b * 3 + c] - sums[a * 3 + c]) / (b - a)) as [number, number, number])
  const rowLab = Array.from({ length: rows }, (_, r) => meanLab(r, r + 1))
  const recurs = (r: number, contrast: number) => {
    for (let below = r; below < Math.min(rows, r + reach); below++)
      for (let above = Math.max(0, r - reach); above < Math.min(r, below - RECUR_GAP + 1); above++)
        if (ciede2000(rowLab[below], rowLab[above]) < RECUR_SHARE * contrast) return true
    return false
  }
  let hem = -1
  const lightness = meanLab(0, rows)[0]
  let strongest = HEM_CONTRAST * Math.max(DIMMEST_SHARE, Math.min(1, lightness / DIM_LIGHTNESS))
  for (let y = from; y <= to; y++) {
    const r = y - first
    const contrast = ciede2000(meanLab(r - window, r), meanLab(r, r + window))
    if (contrast >= strongest && !recurs(r, contrast)) (strongest = contrast), (hem = y)
  }
  return hem < 0 ? body : { ...body, hemY: hem }
}
