import { describe, expect, it } from 'vitest'
import { createRgba } from '../../../shared/images/codecs/raster.ts'
import { fitGarment } from '../../../shared/engine/local/fit.ts'
import type { GarmentCutout } from '../../../shared/engine/local/garment.ts'
import { defaultLayout, type BodyLayout } from '../../../shared/engine/local/person.ts'

const unit = { x: 1, y: 1 }

/**
 * A cut-out `width` × `height`: a body `bodyWidth` wide down the middle and, below the top rows, sleeves reaching the
 * cut-out's edges (a flat-lay with its sleeves spread).
 */
function cutout(width: number, height: number, bodyWidth: number): GarmentCutout {
  const image = createRgba(width, height)
  image.data.fill(255)
  const half = bodyWidth / 2
  const rows = (f: (y: number) => number) => Float32Array.from({ length: height }, (_, y) => f(y))
  return {
    image,
    left: rows(() => 0),
    right: rows(() => width),
    torsoLeft: rows(() => width / 2 - half),
    torsoRight: rows(() => width / 2 + half),
    topWidth: width,
    waistRow: 0.35,
    hasLegs: false,
    separated: true,
  }
}

/** A standing figure in a 200 × 400 photo, its arms' reach 1.2 times half its shoulders either side. */
const figure = (): BodyLayout => ({ ...defaultLayout(200, 400), found: true })

/** The same figure read half as tall again below the shoulders: a photo cut at the knees read from a wrong crotch. */
function readTooTall(body: BodyLayout): BodyLayout {
  const stretch = (y: number) => body.shoulderY + 1.5 * (y - body.shoulderY)
  return { ...body, hipY: stretch(body.hipY), kneeY: stretch(body.kneeY), figureHeight: 1.5 * body.figureHeight }
}

describe('fitting a jacket to the body', () => {
  it('keeps a jacket as long as in its photo when the landmarks would hang it lower: to the shins of a figure read too tall', () => {
    const body = readTooTall(figure())
    const jacket = cutout(100, 130, 60)
    const placement = fitGarment(jacket, 'outerwear', body, unit)
    const natural = placement.top + 130 * ((body.shoulderWidth * 1.14) / 100)
    const fromLandmarks = body.hipY + 0.45 * (body.kneeY - body.hipY)
    expect(natural).toBeLessThan(fromLandmarks - 20)
    expect(placement.bottom).toBeCloseTo(natural, 0)
  })

  it('still ends a coat longer than its wearer could carry at mid-thigh', () => {
    const body = figure()
    const coat = cutout(100, 400, 60)
    const placement = fitGarment(coat, 'outerwear', body, unit)
    expect(placement.bottom).toBeCloseTo(body.hipY + 0.45 * (body.kneeY - body.hipY), 0)
  })

  it('ends a long coat at mid-thigh of a figure cut at the knees, from its shoulders, when its landmarks read it too tall', () => {
    const truth = figure()
    const body = { ...readTooTall(truth), feetVisible: false }
    const coat = cutout(100, 400, 60)
    const fromLandmarks = body.hipY + 0.45 * (body.kneeY - body.hipY)
    // The landmarks alone would hang it past the real knees, onto the shins.
    expect(fromLandmarks).toBeGreaterThan(truth.kneeY)
    const placement = fitGarment(coat, 'outerwear', body, unit)
    const fromShoulders = body.headTop + (0.62 * (body.shoulderY - body.headTop)) / 0.185
    expect(placement.bottom).toBeCloseTo(fromShoulders, 0)
    // Mid-thigh: below the hips, well above the knees.
    expect(placement.bottom).toBeGreaterThan(truth.hipY)
    expect(placement.bottom).toBeLessThan(truth.kneeY - 0.05 * truth.figureHeight)
  })

  it('leaves a full-length figure’s mid-thigh to its landmarks', () => {
    // Shoulders read low (a puffed sleeve): the shoulders alone would put mid-thigh higher than the landmarks do.
    const body = { ...figure(), shoulderY: figure().headTop + 0.15 * figure().figureHeight }
    const placement = fitGarment(cutout(100, 400, 60), 'outerwear', body, unit)
    expect(placement.bottom).toBeCloseTo(body.hipY + 0.45 * (body.kneeY - body.hipY), 0)
  })

  it('reaches the waist at least, whatever the photo: a cropped jacket is not drawn as a collar', () => {
    const body = figure()
    const placement = fitGarment(cutout(100, 20, 60), 'outerwear', body, unit)
    expect(placement.bottom).toBeGreaterThanOrEqual(Math.round(body.waistY))
  })
})

describe('fitting sleeves to the arms', () => {
  it('never draws a top or a jacket past the arms’ reach, but lets a dress keep its width', () => {
    const body = figure()
    const H = body.figureHeight
    // Sleeves spread from the shoulders to three times the body's width (a flat-lay with its arms out).
    const wide = cutout(300, 150, 100)
    wide.topWidth = 100
    for (const category of ['top', 'outerwear'] as const) {
      const p = fitGarment(wide, category, body, unit)
      for (let i = 0; i < p.bottom - p.top; i++) {
        const y = p.top + i
        expect(p.outputX[i * 4], `${category} row ${y}`).toBeGreaterThanOrEqual(body.outer.left[y] - 0.02 * H - 0.01)
        expect(p.outputX[i * 4 + 3], `${category} row ${y}`).toBeLessThanOrEqual(body.outer.right[y] + 0.02 * H + 0.01)
      }
    }
    // A dress flaring below its waist to three times its shoulders: the skirt stands out past the arms' reach.
    const flared = cutout(300, 300, 100)
    for (let y = 0; y < 300; y++) {
      const flare = y < 150 ? 0 : (150 * (y - 150)) / 150
      flared.left[y] = flared.torsoLeft[y] = 100 - flare
      flared.right[y] = flared.torsoRight[y] = 200 + flare
    }
    flared.topWidth = 100
    const dress = fitGarment(flared, 'dress', body, unit)
    const widest = Math.max(...Array.from({ length: dress.bottom - dress.top }, (_, i) => dress.outputX[i * 4 + 3] - dress.outputX[i * 4]))
    expect(widest).toBeGreaterThan(body.outer.right[0] - body.outer.left[0] + 0.04 * H)
  })
})

describe('fitting a full skirt', () => {
  /** A gown `flare` times as wide at its hem as at its waist, the skirt widening in a straight line below the waist. */
  function gown(flare: number): GarmentCutout {
    const g = cutout(100 * flare, 400, 60)
    const centre = (100 * flare) / 2
    for (let y = 0; y < 400; y++) {
      const half = y < 120 ? 30 : 30 + ((flare * 50 - 30) * (y - 120)) / 280
      g.left[y] = g.torsoLeft[y] = centre - half
      g.right[y] = g.torsoRight[y] = centre + half
    }
    g.topWidth = 60
    return g
  }

  it('draws a ball gown’s skirt no further out than a skirt falls from the hips: 0.4 of the stature either side at the floor', () => {
    const body = figure()
    const H = body.figureHeight
    const hips = body.headTop + 0.4 * H
    const p = fitGarment(gown(6), 'dress', body, unit)
    let widest = 0
    for (let i = 0; i < p.bottom - p.top; i++) {
      const y = p.top + i
      if (y <= body.hipY) continue
      const t = Math.min(1, Math.max(0, (y - hips) / (body.floorY - hips)))
      const reach = (0.14 + 0.26 * t) * H
      const centre = (p.outputX[i * 4] + p.outputX[i * 4 + 3]) / 2
      expect(centre - p.outputX[i * 4], `row ${y}`).toBeLessThanOrEqual(reach + 0.01)
      expect(p.outputX[i * 4 + 3] - centre, `row ${y}`).toBeLessThanOrEqual(reach + 0.01)
      widest = Math.max(widest, p.outputX[i * 4 + 3] - centre)
    }
    // Still a full skirt: out to the cone's edge at the hem.
    expect(widest).toBeGreaterThan(0.35 * H)
  })

  it('leaves a skirt that falls within that reach as its photo draws it', () => {
    const body = figure()
    /** The skirt's half-width on the last row, from its centre. */
    const hem = (flare: number) => {
      const p = fitGarment(gown(flare), 'dress', body, unit)
      const i = p.bottom - p.top - 1
      return (p.outputX[i * 4 + 3] - p.outputX[i * 4]) / 2
    }
    expect(hem(1.5)).toBeLessThan(0.4 * body.figureHeight)
    // Hems 1.2 and 1.5 times as wide as the waist in the photo: drawn in the same proportion.
    expect(hem(1.5) / hem(1.2)).toBeCloseTo(1.25, 2)
  })
})

describe("pinning a dress's waist seam", () => {
  /** The output row a dress's waist seam (the cut-out's waistRow) lands on. */
  function seamRow(body: BodyLayout): number {
    const dress = cutout(100, 300, 60)
    const placement = fitGarment(dress, 'dress', body, unit)
    const seam = dress.waistRow * dress.image.height
    const i = placement.sourceRow.findIndex((row) => row >= seam)
    return placement.top + i
  }

  it("pins it at the silhouette's waist on a full-length figure, whatever hem the photo shows", () => {
    const body = figure()
    expect(Math.abs(seamRow({ ...body, hemY: body.waistY - 25 }) - body.waistY)).toBeLessThanOrEqual(1)
  })

  it("pins it at the top's hem on a figure cut at the knees, and at the silhouette's waist when it shows no hem", () => {
    const body = { ...figure(), feetVisible: false }
    const hemY = body.waistY - 25
    expect(Math.abs(seamRow({ ...body, hemY }) - hemY)).toBeLessThanOrEqual(1)
    expect(Math.abs(seamRow(body) - body.waistY)).toBeLessThanOrEqual(1)
  })
})

describe('fitting trousers to the legs', () => {
  /** Wide-leg trousers: `waist` across the top, widening evenly to `hem` at the bottom, `height` long. */
  function wideLegs(waist: number, hem: number, height: number): GarmentCutout {
    const width = hem
    const trousers = cutout(width, height, waist)
    for (let y = 0; y < height; y++) {
      const half = (waist + ((hem - waist) * y) / (height - 1)) / 2
      trousers.left[y] = width / 2 - half
      trousers.right[y] = width / 2 + half
    }
    trousers.topWidth = waist
    trousers.hasLegs = true
    return trousers
  }

  /** How wide the trousers are put on at output row `y`. */
  const widthAt = (placement: ReturnType<typeof fitGarment>, y: number) => {
    const i = Math.round(y) - placement.top
    return placement.outputX[i * 4 + 3] - placement.outputX[i * 4]
  }

  it('follows legs the silhouette shows closer than the waist would put them: wide legs stood off the shins (flat 10895)', () => {
    const body = figure()
    const y = body.ankleY - 8
    const legs = body.legs.right[Math.round(y)] - body.legs.left[Math.round(y)]
    expect(legs).toBeGreaterThan(0.35 * body.shoulderWidth)
    const placement = fitGarment(wideLegs(100, 160, 400), 'bottom', body, unit)
    // At the waist's scale (0.75 of it at the narrowest) they were 1.49 times as wide as the legs.
    expect(widthAt(placement, y) / legs).toBeLessThan(1.3)
    expect(widthAt(placement, y)).toBeGreaterThan(legs)
  })

  it("keeps the waist's scale on rows where the silhouette lost the legs (a few pixels carried down), and for shorts", () => {
    const body = figure()
    const lostFrom = Math.round(body.kneeY)
    for (let y = lostFrom; y < body.legs.left.length; y++) {
      body.legs.left[y] = body.centreX - 1
      body.legs.right[y] = body.centreX + 1
    }
    const trousers = wideLegs(100, 160, 400)
    const placement = fitGarment(trousers, 'bottom', body, unit)
    const waistScale = (body.shoulderWidth * 0.82 * 1.06) / 100
    const y = body.ankleY - 8
    const garmentRow = Math.floor(placement.sourceRow[Math.round(y) - placement.top])
    expect(widthAt(placement, y)).toBeCloseTo(0.75 * waistScale * (trousers.right[garmentRow] - trousers.left[garmentRow]), 3)
    // Shorts (not full-length) were never fitted closer: a short wide leg keeps the waist's scale at its hem.
    const shorts = wideLegs(100, 140, 120)
    const short = fitGarment(shorts, 'bottom', figure(), unit)
    const hemRow = short.bottom - 1
    const row = Math.floor(short.sourceRow[hemRow - short.top])
    const legs = figure().legs.right[hemRow] - figure().legs.left[hemRow]
    const atWaistScale = 0.75 * waistScale * (shorts.right[row] - shorts.left[row])
    expect(atWaistScale).toBeGreaterThan(legs + 0.024 * figure().figureHeight)
    expect(widthAt(short, hemRow)).toBeCloseTo(atWaistScale, 3)
  })
})
