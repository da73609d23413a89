import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { drawShopper } from '../../../devstack/samples/shopper-photo.ts'
import type { RgbaImage } from '../../../shared/images/codecs/raster.ts'
import { analyseShopper, shopperPixels } from '../../../shared/engine/local/index.ts'
import { downscaleToFit } from '../../../shared/images/resize.ts'
import { READING_SIDE, readShopper, readShopperAtSizes } from '../../../shared/engine/local/shopper-reading.ts'
import { makeEmptyScene } from '../../support/empty-scenes.ts'
import { asInput, makeShopperPhoto } from '../../support/images.ts'
import { type StyleName, TUNING_STYLES } from '../../support/scenes/held-out.ts'
import { scene } from '../../support/scenes/index.ts'
import { readScene } from '../../support/scenes/reading.ts'

describe('reading a shopper photo', () => {
  it('reads the figure below a stain on the wall above its head, which the segmentation keeps as a head', () => {
    const wall: [number, number, number] = [200, 196, 188]
    for (const [wide, tall] of [
      [2.4, 4],
      [3, 4],
      [3, 8],
    ]) {
      const { image: drawn, geometry: g } = drawShopper({ width: 214, height: 320, background: wall, shirtColor: [150, 40, 60] })
      // More wall above the figure, and a darker streak on it 2.4 to 3 heads wide, well clear of the head.
      const above = 48
      const image: RgbaImage = {
        width: drawn.width,
        height: drawn.height + above,
        data: new Uint8Array(drawn.width * (drawn.height + above) * 4),
      }
      for (let i = 0; i < drawn.width * above; i++) image.data.set([...wall, 255], i * 4)
      image.data.set(drawn.data, drawn.width * above * 4)
      const half = (wide * 0.108 * g.figureHeight) / 2
      for (let y = 24; y < 24 + tall; y++)
        for (let x = Math.round(g.centreX - half); x < g.centreX + half; x++) image.data.set([120, 112, 100], (y * image.width + x) * 4)
      const { body } = readShopper(image)
      expect(body.found).toBe(true)
      expect(Math.abs(body.headTop - (g.headTop + above)) / g.figureHeight).toBeLessThan(0.02)
      expect(Math.abs(body.shoulderY - (g.shoulderY + above)) / g.figureHeight).toBeLessThan(0.03)
    }
  })

  // A white top on a white sweep leaves the head and neck alone above the rest. Read without them as a part above the
  // figure (a stain, a lamp), a beige skirt became the head of a figure half the person's height (studio 8283), and
  // trousers were put on the shins. A part with a face is kept; a brick above a head on a brick wall is still left off
  // (photo 3337).
  it.each([
    ['studio', 8283],
    ['photo', 3337],
  ] as const)('never reads the figure of %s %i from below its head', (style, seed) => {
    const drawn = scene(style, seed)
    const truth = drawn.truth.shopper
    const pixels = shopperPixels(asInput(drawn.shopper))
    const { body, small } = analyseShopper(pixels)
    if (seed === 3337) expect(body.found).toBe(true)
    if (body.found) {
      const headTop = (body.headTop * pixels.height) / small.height
      expect(Math.abs(headTop - truth.boxes.head[1]) / truth.figureHeight).toBeLessThan(0.03)
    }
  })

  // A checked top on a dark wall joined the head: the shoulders were read at the skirt's waistband, 1.79 times the
  // shoulders' width below the head's top (no standing figure's is above 1.24), and a gown went on at the legs (soft
  // 12336, charged). Such a reading is no figure, and the silhouette is read otherwise.
  it('never reads a head taller than one and a half times the shoulders: soft 12336 has its own shoulders', () => {
    const { truth, analysis, off } = readScene('soft', 12336)
    expect(analysis.body.found).toBe(true)
    expect(off(analysis.body.shoulderY, truth.boxes.torso[1])).toBeLessThan(0.03)
    expect(off(analysis.body.headTop, truth.boxes.head[1])).toBeLessThan(0.03)
  })

  // A top striped in the backdrop's colour cuts the silhouette into bars with empty rows between them: studio 8708 and
  // 7413 were refused as no person at every size. Short runs of empty rows are bridged where the subject goes on across
  // them; the figure is then read with its own head and shoulders.
  it("reads a figure whose top and sleeves are striped in the backdrop's colour, whatever the stripes' width", () => {
    const sweep: [number, number, number] = [246, 246, 246]
    for (const [stripe, period] of [
      [0.012, 0.03],
      [0.018, 0.04],
      [0.025, 0.05],
    ]) {
      const { image, geometry: g } = drawShopper({ width: 214, height: 320, background: sweep, shirtColor: [60, 90, 170] })
      const plain = readShopper({ ...image, data: image.data.slice() }).body
      const H = g.figureHeight
      for (let y0 = g.shoulderY + 0.03 * H; y0 < g.hipY; y0 += period * H)
        for (let y = Math.round(y0); y < Math.round(y0 + stripe * H); y++)
          for (let x = 0; x < image.width; x++) image.data.set([...sweep, 255], (y * image.width + x) * 4)
      const { body } = readShopper(image)
      expect(body.found, `stripes ${stripe}`).toBe(true)
      expect(Math.abs(body.headTop - g.headTop) / H).toBeLessThan(0.02)
      expect(Math.abs(body.shoulderY - g.shoulderY) / H).toBeLessThan(0.03)
      // The torso has a width on every row, on the stripes too (a garment is fitted to it), and about the unstriped
      // figure's: the armpits may come out a few rows apart (0.03 of the stature; read from the bars, 0.2 off on average).
      let off = 0
      let rows = 0
      for (let y = Math.ceil(g.shoulderY + 0.05 * H); y < g.waistY; y++, rows++) {
        const width = body.torso.right[y] - body.torso.left[y]
        const plainWidth = plain.torso.right[y] - plain.torso.left[y]
        expect(width, `stripes ${stripe}, row ${y}`).toBeGreaterThan(0.55 * plainWidth)
        off += Math.abs(width - plainWidth) / plainWidth
      }
      expect(off / rows, `stripes ${stripe}`).toBeLessThan(0.1)
    }
  })

  it.each([
    ['studio', 8708],
    ['studio', 7413],
  ] as const)("reads %s %i, its top striped in the sweep's white, with its own head and shoulders", (style, seed) => {
    const { truth, analysis, off } = readScene(style, seed)
    expect(analysis.body.found).toBe(true)
    expect(off(analysis.body.headTop, truth.boxes.head[1])).toBeLessThan(0.03)
    expect(off(analysis.body.shoulderY, truth.boxes.torso[1])).toBeLessThan(0.05)
  })
})

describe("legs that a band of floor took at the frame's bottom", () => {
  const wall: [number, number, number] = [200, 196, 188]
  /** A band of floor a little darker than the trousers along the frame's bottom rows, behind the legs. */
  const withFloorBand = (image: RgbaImage, rows: number, trousers: [number, number, number]) => {
    const backdrop = image.data.slice(0, 3)
    for (let y = image.height - rows; y < image.height; y++)
      for (let x = 0; x < image.width; x++) {
        const p = (y * image.width + x) * 4
        const d =
          Math.abs(image.data[p] - backdrop[0]) + Math.abs(image.data[p + 1] - backdrop[1]) + Math.abs(image.data[p + 2] - backdrop[2])
        if (d < 30)
          image.data.set(
            trousers.map((v) => v * 0.8 + 6),
            p,
          )
      }
    return image
  }

  // The segmentation takes the legs' last rows with the band, and the legs' end read as feet made a figure cut at the
  // knees a short full-length one: its waist a tenth of its height high, a skirt at the chest (flat 6140, dim 7219).
  it('reads a figure cut at the knees as cut, with its waist where it is, whatever the band and the trousers', () => {
    for (const trousers of [
      [52, 54, 66],
      [40, 70, 45],
      [150, 40, 60],
    ] as [number, number, number][])
      for (const rows of [4, 8, 14]) {
        const { image, geometry: g } = drawShopper({ width: 214, height: 320, fullLength: false, background: wall, trouserColor: trousers })
        const { body } = readShopper(withFloorBand(image, rows, trousers))
        expect(body.found).toBe(true)
        expect(body.feetVisible, `${rows} rows under ${trousers}`).toBe(false)
        expect(Math.abs(body.waistY - g.waistY) / g.figureHeight).toBeLessThan(0.04)
      }
  })

  it('still reads the feet of a full-length figure standing on such a band', () => {
    for (const trousers of [
      [52, 54, 66],
      [150, 40, 60],
    ] as [number, number, number][])
      for (const rows of [8, 20, 40]) {
        const { image, geometry: g } = drawShopper({ width: 214, height: 320, background: wall, trouserColor: trousers })
        const { body } = readShopper(withFloorBand(image, rows, trousers))
        expect(body.feetVisible).toBe(true)
        expect(Math.abs(body.floorY - g.floorY) / g.figureHeight).toBeLessThan(0.02)
      }
  })

  it.each([
    ['flat', 6140],
    ['dim', 7219],
    ['soft', 6],
    // Bands of 0.08 and 0.15 of the frame (2026-12-01; 0.07 at most was taken for legs running on): gowns went on to
    // the band's top, above the legs in it, and were charged.
    ['photo', 16062],
    ['dim', 16514],
  ] as const)('reads %s %i, cut at the knees above a floor band, as cut, its waist within a twentieth of the truth', (style, seed) => {
    const { truth, analysis, off } = readKneeLength(style, seed)
    expect(analysis.body.feetVisible).toBe(false)
    expect(off(analysis.body.waistY, truth.boxes.torso[3])).toBeLessThan(0.05)
  })

  // A full-length figure whose shoulders read low (curly hair) stands on a shadow pooled round its feet that runs on
  // below its floor line: its end is the soles, not a cut (studio 5018).
  it('keeps the feet of studio 5018 above the shadow pooled round them', () => {
    const { truth, analysis, off } = readScene('studio', 5018)
    expect(truth.fullLength).toBe(true)
    expect(analysis.body.feetVisible).toBe(true)
    expect(off(analysis.body.floorY, truth.floorY)).toBeLessThan(0.03)
  })
})

// The seams of a plank or tiled floor run down from the shadow under the feet, each narrower than a foot, together as wide
// as one: the figure was read standing on their far ends (trousers went on below the shoes of photo 17817, charged; photo
// 17722 was read cut at the knees). The seams below a band wider than the legs are no part of the figure.
describe('a figure standing on a floor whose seams run down from its shadow', () => {
  it.each([17817, 17722, 17557, 12612, 12237])('stands photo %i on its feet, within 0.03 of its height', (seed) => {
    const { truth, analysis, off } = readScene('photo', seed)
    expect(truth.fullLength).toBe(true)
    expect(analysis.body.feetVisible).toBe(true)
    expect(off(analysis.body.floorY, truth.floorY)).toBeLessThan(0.03)
  })

  // Legs that came out in thin strips in a dim room, with no band above the strips, are still the legs (dim 18319: taken
  // for seams in a first form, the figure was read standing 0.17 of its height too high).
  it('keeps the legs of dim 18319, thin strips below whole legs', () => {
    const { truth, analysis, off } = readScene('dim', 18319)
    expect(analysis.body.feetVisible).toBe(true)
    expect(off(analysis.body.floorY, truth.floorY)).toBeLessThan(0.06)
  })
})

const longSide = (image: { width: number; height: number }) => Math.max(image.width, image.height)

/** A knee-length tuning scene read by the engine, found. */
function readKneeLength(style: StyleName, seed: number) {
  const read = readScene(style, seed)
  expect(read.truth.framing).toBe('knee')
  expect(read.analysis.body.found).toBe(true)
  return read
}

describe('a shopper photo read at several sizes', () => {
  it('reads an ordinary photo once, at the first size', () => {
    const photo = makeShopperPhoto({ width: 600, height: 900, seed: 3 })
    const reading = readShopperAtSizes(shopperPixels(asInput(photo)))
    expect(reading.body.found).toBe(true)
    expect(longSide(reading.small)).toBe(READING_SIDE)
  })

  // Tuning scenes of the evaluation's generator (docs/quality-evaluation.md) whose figure the 320-px copy loses: a cabinet
  // at the frame's edge beside the legs (dim 3014). Another size finds it whole. (Photo 237, a beige top on a beige brick
  // wall, was another; its head standing alone above the top is now read at the first size: person.ts belowLoneHead.)
  it.each([['dim', 3014]] as const)('finds the figure of %s %i at another size when the first loses it', (style, seed) => {
    const pixels = shopperPixels(asInput(scene(style, seed).shopper))
    expect(readShopper(downscaleToFit(pixels, READING_SIDE)).body.found).toBe(false)
    const analysis = analyseShopper(pixels)
    expect(analysis.body.found).toBe(true)
    expect(longSide(analysis.small)).not.toBe(READING_SIDE)
    // Its landmarks in order, within the copy it was read on.
    const { headTop, shoulderY, waistY, hipY, kneeY, floorY } = analysis.body
    expect([headTop, shoulderY, waistY, hipY, kneeY, floorY]).toEqual(
      [headTop, shoulderY, waistY, hipY, kneeY, floorY].sort((a, b) => a - b),
    )
    expect(floorY).toBeLessThanOrEqual(analysis.small.height)
  })

  // Cut at the knees, a top of the wall's colour (a white one on a high-key sweep, studio 6238; a brown one against a
  // brown wallpaper, photo 6087) leaves the hips as the first wide rows below the head: read as the shoulders, they put a
  // shirt on the legs. The shoulders are found just below the head, and the figure is still a person.
  it.each([
    ['studio', 6238],
    ['photo', 6087],
  ] as const)('reads the shoulders of %s %i cut at the knees below the head, not at the hips, when its top is hidden', (style, seed) => {
    const { truth, analysis, scale } = readKneeLength(style, seed)
    const shoulders = analysis.body.shoulderY * scale
    // Within 0.05 of the figure's height (read at the hips, they were 0.22 and 0.28 off).
    expect(Math.abs(shoulders - truth.boxes.torso[1]) / truth.figureHeight).toBeLessThan(0.05)
    expect(analysis.body.hipY * scale).toBeGreaterThan(truth.boxes.torso[3] - 0.05 * truth.figureHeight)
  })

  // Cut at the knees, a pale face lost on a pale backdrop leaves the hair's cap above empty rows, and the top below it is
  // the shoulders. Read as a head above a hidden top, the cap put the shoulders at the chin and the stature at half the
  // truth: trousers went on over the top of studio 22013 and were charged.
  // 783's top came out, and its shoulders are found below the cap; 17018's and 22013's arms and necks were lost with the
  // face, and no person is left to find.
  it.each([
    ['studio', 783, true],
    ['studio', 17018, false],
    ['studio', 22013, false],
  ] as const)('does not take the hair over a lost face of %s %i for a head above a hidden top', (style, seed, found) => {
    const { truth, analysis, off } = readScene(style, seed)
    expect(truth.framing).toBe('knee')
    expect(analysis.body.found).toBe(found)
    // Read at the chin they were 0.11 to 0.18 of the height too high.
    if (found) expect(off(analysis.body.shoulderY, truth.boxes.torso[1])).toBeLessThan(0.05)
  })

  // Cut at the knees, the stature guessed before the shoulders are found is up to twice the truth, and the shoulders' width
  // was held that much longer below them: dim 22719's striped top, a dark stripe lost on the dark wall 16 rows below its
  // shoulders, had them read 0.09 of its height low, its stature 1.77 times the truth, and a tee went on to the shins.
  it('reads the shoulders of a striped top cut at the knees where its stripes begin, dim 22719', () => {
    const { truth, analysis, off } = readKneeLength('dim', 22719)
    expect(off(analysis.body.shoulderY, truth.boxes.torso[1])).toBeLessThan(0.03)
    expect(off(analysis.body.figureHeight, truth.figureHeight)).toBeLessThan(0.25)
  })

  // Cut at the knees below a top of the wall's colour, the bottoms start where the top ends: soft 3281 (trousers on a slim
  // waist, a bun on the head) read its stature from the head and its crotch where the trousers' legs part, so a skirt
  // began at the thighs; soft 6296 (a skirt below long hair) read its waist 0.12 of its height low.
  it.each([
    ['soft', 3281],
    ['soft', 6296],
  ] as const)('reads the waist of %s %i cut at the knees at the waistband below its hidden top', (style, seed) => {
    const { truth, analysis, off } = readKneeLength(style, seed)
    // The torso's box ends at the waist (0.14 and 0.12 of the height low before); the stature within 0.08 (0.42, 0.30).
    expect(off(analysis.body.waistY, truth.boxes.torso[3])).toBeLessThan(0.02)
    expect(off(analysis.body.figureHeight, truth.figureHeight)).toBeLessThan(0.08)
  })

  // A white top on a white sweep, its arms lost too: the head stands alone above the bottoms. The stature is the head's
  // top to the feet, and the shoulders are where it puts them (before, no person was found in any of these).
  it.each([
    ['studio', 8283],
    ['studio', 8303],
    ['studio', 7638],
  ] as const)("reads %s %i from its head standing alone above a top of the sweep's white, and its bottoms", (style, seed) => {
    const { truth, analysis, off } = readScene(style, seed)
    expect(truth.fullLength).toBe(true)
    expect(analysis.body.found).toBe(true)
    expect(off(analysis.body.headTop, truth.boxes.head[1])).toBeLessThan(0.03)
    expect(off(analysis.body.figureHeight, truth.figureHeight)).toBeLessThan(0.05)
    expect(off(analysis.body.shoulderY, truth.boxes.torso[1])).toBeLessThan(0.05)
  })

  it('reads no waistband below a clipped chin taken for a hidden top: studio 6133 is as wide as such a stature', () => {
    // A high-key studio clips the face's lower half; the rule reads the chin as the neckline of a hidden top, and the
    // first rows of the centre below it (just under the real shoulders) are no waistband: the stature it gave was half
    // the figure's, shoulders 0.44 of it wide.
    const drawn = scene('studio', 6133)
    expect(drawn.truth.shopper.framing).toBe('knee')
    const analysis = analyseShopper(shopperPixels(asInput(drawn.shopper)))
    expect(analysis.body.found).toBe(true)
    expect(analysis.body.waistband).toBeUndefined()
  })

  it('finds nobody at any size in empty rooms and objects alone', { timeout: 60_000 }, () => {
    const found: number[] = []
    for (let seed = 40_001; seed <= 40_040; seed++) {
      if (readShopperAtSizes(shopperPixels(asInput(makeEmptyScene(seed).photo))).body.found) found.push(seed)
    }
    expect(found).toEqual([])
  })

  it('never reads a copy larger than the photo, nor one size twice', () => {
    const photo = makeEmptyScene(40_101).photo.pixels
    const small = downscaleToFit(photo, 150)
    const reading = readShopperAtSizes(small)
    expect(reading.body.found).toBe(false)
    expect(reading.small.width).toBe(small.width)
  })
})

// A figure the frame cuts at the knees has its stature from its crotch, when one shows. Thighs drawn together part only
// at the knees, just above the frame's edge: read as the crotch, that gap gave statures 1.23-1.60 of the truth on 70
// knee-cut tuning scenes, and a tee went on to the shins (soft 11551, charged). No crotch lies lower than 0.58 of the stature
// the shoulders give; the figure is then measured by its shoulders.
describe('a figure cut at the knees', () => {
  it.each([
    ['studio', 3],
    ['soft', 276],
    ['studio', 213],
    ['flat', 3020],
    ['studio', 6023],
    ['soft', 11551],
  ] as const)('%s %i is read at its own stature, not from its knees parting', (style, seed) => {
    const { truth, analysis, scale } = readScene(style, seed)
    expect(truth.framing).toBe('knee')
    expect(analysis.body.found).toBe(true)
    expect(analysis.body.feetVisible).toBe(false)
    const stature = (analysis.body.figureHeight * scale) / truth.figureHeight
    expect(stature).toBeGreaterThan(0.9)
    expect(stature).toBeLessThan(1.2)
  })

  // With no crotch to read, the stature is the head-to-shoulder distance over SHOULDER_SHARE, as a cut frame leaves it;
  // over SHOULDER's landmark share it was 1.07-1.10 of the truth (median of the knee-cut scenes below, never looked at one
  // by one before this rule was written).
  it('reads the knee-cut figures of tuning seeds 30001-30050 at their stature, in the median', { timeout: 60_000 }, () => {
    const statures: number[] = []
    for (let seed = 30001; seed <= 30050; seed++) {
      const style = TUNING_STYLES[seed % TUNING_STYLES.length]
      if (scene(style, seed).truth.shopper.framing !== 'knee') continue
      const { truth, analysis, scale } = readScene(style, seed)
      if (!analysis.body.found) continue
      expect(analysis.body.feetVisible, `${style} ${seed}`).toBe(false)
      statures.push((analysis.body.figureHeight * scale) / truth.figureHeight)
    }
    statures.sort((a, b) => a - b)
    expect(statures.length).toBeGreaterThanOrEqual(8)
    const median = (statures[(statures.length - 1) >> 1] + statures[statures.length >> 1]) / 2
    expect(median).toBeGreaterThan(0.96)
    expect(median).toBeLessThan(1.04)
  })

  // Legs that reach the frame's bottom in front of a floor were taken for that floor where the floor's colour at the
  // bottom of their columns is theirs: the figure ended at the floor's line and was read full-length, 0.7-0.8 of its
  // stature (dim 21944, photo 19717, flat 22795).
  it.each([
    ['dim', 21944],
    ['photo', 19717],
    ['flat', 22795],
  ] as const)('%s %i, cut at the knees in front of a floor, is read cut', (style, seed) => {
    const { truth, analysis } = readScene(style, seed)
    expect(truth.framing).toBe('knee')
    expect(analysis.body.found).toBe(true)
    expect(analysis.body.feetVisible).toBe(false)
  })

  // Big curly hair makes the head as wide as the shoulders the head's width is to find, and those were found at the
  // chest, far below the bare neck: dim 12049's shirt went on to the shins and photo 12137's trousers up to the chest,
  // both charged (statures 1.53 and 0.88 of the truth, 1.36 and 1.53 for studio 11653 and dim 3099). The neck's shoulders.
  it.each([
    ['dim', 12049],
    ['studio', 11653],
    ['photo', 12137],
    ['dim', 3099],
  ] as const)('%s %i, its hair as wide as its shoulders, is read from the shoulders below its neck', (style, seed) => {
    const { truth, analysis, scale, off } = readScene(style, seed)
    expect(truth.framing).toBe('knee')
    expect(analysis.body.feetVisible).toBe(false)
    expect(off(analysis.body.shoulderY, truth.boxes.torso[1])).toBeLessThan(0.02)
    const stature = (analysis.body.figureHeight * scale) / truth.figureHeight
    expect(stature).toBeGreaterThan(0.9)
    expect(stature).toBeLessThan(1.2)
  })
})

// A brick wall's course of mortar, a few rows tall, joins the arms' tops and runs out on both sides: its rows were read
// as the shoulders' width, a tee went on as wide as the bricks (photo 11782 and 3007, charged), and where the course ran
// wider the figure was lost (27 of 36 courses on the sample shopper). The shoulders are as wide as rows held for a
// quarter of the head's width.
describe('a course of the wall joined to the shoulders', () => {
  const rgb = fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }))

  it('leaves the shoulders as wide as the figure without it, whatever its height, reach and colours', () => {
    fc.assert(
      fc.property(
        fc.record({
          wall: fc.tuple(fc.integer({ min: 160, max: 230 }), fc.integer({ min: 150, max: 225 }), fc.integer({ min: 140, max: 215 })),
          darker: fc.integer({ min: 50, max: 110 }),
          shirt: rgb,
          seed: fc.integer({ min: 1, max: 1_000 }),
          at: fc.double({ min: 0, max: 0.07, noNaN: true }),
          tall: fc.double({ min: 0.006, max: 0.018, noNaN: true }),
          reach: fc.double({ min: 0.24, max: 0.42, noNaN: true }),
        }),
        ({ wall, darker, shirt, seed, at, tall, reach }) => {
          const options = { width: 214, height: 320, background: wall, shirtColor: shirt, seed }
          const { image, geometry: g } = drawShopper(options as Parameters<typeof drawShopper>[0])
          const plain = readShopper({ ...image, data: image.data.slice() }).body
          fc.pre(plain.found)
          const H = g.figureHeight
          const mortar = wall.map((v) => v - darker)
          for (let y = Math.round(g.shoulderY + at * H); y < Math.round(g.shoulderY + (at + tall) * H); y++)
            for (let x = Math.max(0, Math.round(g.centreX - reach * H)); x <= Math.min(image.width - 1, g.centreX + reach * H); x++) {
              const p = (y * image.width + x) * 4
              const d = Math.abs(image.data[p] - wall[0]) + Math.abs(image.data[p + 1] - wall[1]) + Math.abs(image.data[p + 2] - wall[2])
              if (d < 12) image.data.set(mortar, p)
            }
          const { body } = readShopper(image)
          expect(body.found).toBe(true)
          expect(body.shoulderWidth / plain.shoulderWidth).toBeGreaterThan(0.85)
          expect(body.shoulderWidth / plain.shoulderWidth).toBeLessThan(1.15)
        },
      ),
      { numRuns: 40, seed: 26_1130 },
    )
  })

  it.each([
    ['photo', 11782],
    ['photo', 3007],
  ] as const)('reads %s %i with shoulders no wider than a standing figure', (style, seed) => {
    const { truth, analysis, scale } = readScene(style, seed)
    expect(analysis.body.found).toBe(true)
    expect((analysis.body.shoulderWidth * scale) / truth.figureHeight).toBeLessThan(0.4)
  })
})

// A picture's frame on the wall beside the head, touched by an arm or a hand, was one part with the figure: its shoulders
// read out to the frame's far side, or no head came out, and the photo was refused `person_not_found` (flat 14965, 15185,
// 15205, 15980, drawn 2026-11-30 and 2026-12-01). A solid block beside the head is taken out where it stands apart from the head's run.
describe('an object on the wall beside the head, joined to the arm', () => {
  it('reads the figure as it reads it without the object, wherever the object and whatever its colours', () => {
    fc.assert(
      fc.property(
        fc.record({
          wall: fc.tuple(fc.integer({ min: 170, max: 240 }), fc.integer({ min: 165, max: 235 }), fc.integer({ min: 160, max: 230 })),
          object: fc.tuple(fc.integer({ min: 20, max: 110 }), fc.integer({ min: 20, max: 110 }), fc.integer({ min: 20, max: 110 })),
          shirt: fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 })),
          seed: fc.integer({ min: 1, max: 1_000 }),
          left: fc.boolean(),
          from: fc.double({ min: 0.04, max: 0.12, noNaN: true }),
          tall: fc.double({ min: 0.12, max: 0.24, noNaN: true }),
          wide: fc.double({ min: 0.08, max: 0.2, noNaN: true }),
        }),
        ({ wall, object, shirt, seed, left, from, tall, wide }) => {
          const options = { width: 240, height: 320, background: wall, shirtColor: shirt, seed }
          const { image, geometry: g } = drawShopper(options as Parameters<typeof drawShopper>[0])
          const plain = readShopper({ ...image, data: image.data.slice() }).body
          fc.pre(plain.found)
          const H = g.figureHeight
          // The object's inner edge inside the arm's outline (the arm hangs just outside the shoulders' half-width).
          const inner = g.shoulderHalfWidth + 0.01 * H
          const [x0, x1] = left ? [g.centreX - inner - wide * H, g.centreX - inner] : [g.centreX + inner, g.centreX + inner + wide * H]
          for (let y = Math.round(g.headTop + from * H); y < Math.round(g.headTop + (from + tall) * H); y++)
            for (let x = Math.max(0, Math.round(x0)); x < Math.min(image.width, Math.round(x1)); x++)
              image.data.set(object, (y * image.width + x) * 4)
          const { body } = readShopper(image)
          expect(body.found).toBe(true)
          expect(Math.abs(body.headTop - plain.headTop) / H).toBeLessThan(0.02)
          expect(Math.abs(body.shoulderY - plain.shoulderY) / H).toBeLessThan(0.03)
          // No upper bound on the shoulders' width: where the first reading already shows a person, it stands (the
          // block is taken out only when none came out), and a block level with the shoulders widens them there (by 1.3
          // and more on this property's draws). Taking it out first moved other readings (studio 6133).
          expect(body.shoulderWidth / plain.shoulderWidth).toBeGreaterThan(0.8)
        },
      ),
      { numRuns: 40, seed: 26_1201 },
    )
  })

  it.each([14965, 15185, 15205, 15980])('finds the person of flat %i, a frame beside the head touching an arm', (seed) => {
    const { truth, analysis, off } = readScene('flat', seed)
    expect(analysis.body.found).toBe(true)
    expect(off(analysis.body.headTop, truth.boxes.head[1])).toBeLessThan(0.03)
    expect(off(analysis.body.shoulderY, truth.boxes.torso[1])).toBeLessThan(0.03)
  })

  // Hair falling either side of a face the white sweep took stands apart from the rest of the head, a block on each side:
  // taken out, a lock was read as the head and trousers went on the chest (studio 14178, charged, in a first form).
  it('never takes the hair either side of a lost face for objects: studio 14178 is never read with its shoulders high', () => {
    const { truth, analysis, off } = readScene('studio', 14178)
    if (analysis.body.found) expect(off(analysis.body.shoulderY, truth.boxes.torso[1])).toBeLessThan(0.05)
  })
})

describe("legs running on across a floor's line to the frame's bottom", () => {
  type Rgb = [number, number, number]
  const wall: Rgb = [200, 196, 188]
  const l1 = (a: Rgb, b: Rgb) => Math.abs(a[0] - b[0]) + Math.abs(a[1] - b[1]) + Math.abs(a[2] - b[2])
  /** The wall's pixels in the bottom `share` of the rows painted as a floor of another colour. */
  const withFloor = (image: RgbaImage, floor: Rgb, share: number) => {
    for (let y = Math.round(image.height * (1 - share)); y < image.height; y++)
      for (let x = 0; x < image.width; x++) {
        const p = (y * image.width + x) * 4
        if (l1([image.data[p], image.data[p + 1], image.data[p + 2]], wall) < 12) image.data.set(floor, p)
      }
    return image
  }
  const rgb = fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }))

  it.each([false, true])(
    'reads the figure as drawn (full-length: %s), whatever the floor, its depth and the trousers',
    (fullLength) => {
      fc.assert(
        fc.property(rgb, rgb, fc.double({ min: 0.08, max: 0.3, noNaN: true }), (floor, trousers, share) => {
          fc.pre(l1(floor, wall) > 60 && l1(trousers, floor) > 90 && l1(trousers, wall) > 90)
          const { image, geometry: g } = drawShopper({ width: 214, height: 320, fullLength, background: wall, trouserColor: trousers })
          const { body } = readShopper(withFloor(image, floor, share))
          expect(body.found).toBe(true)
          expect(body.feetVisible).toBe(fullLength)
          expect(body.figureHeight / g.figureHeight).toBeGreaterThan(0.9)
          expect(body.figureHeight / g.figureHeight).toBeLessThan(1.2)
          expect(Math.abs(body.waistY - g.waistY) / g.figureHeight).toBeLessThan(0.05)
        }),
        { seed: 20261201, numRuns: 40 },
      )
    },
    60_000,
  )
})

// A figure whose head the column through the upper body's centre passes beside (an arm out, a bag) was no person (soft
// 24986, dim 24934), nor one whose lone head stands above a fragment of the top, a belt or a narrow skirt's waist before
// the bottoms (photo 24972, dim 24534, studio 24963): all five refused as person_not_found on full-length photos.
describe('a figure read from its head', () => {
  it.each([
    ['soft', 24986],
    ['dim', 24934],
    ['photo', 24972],
    ['dim', 24534],
    ['studio', 24963],
  ] as const)('%s %i is found, at its stature, with its shoulders', (style, seed) => {
    const { truth, analysis, scale, off } = readScene(style, seed)
    expect(truth.framing).toBe('full')
    expect(analysis.body.found).toBe(true)
    const stature = (analysis.body.figureHeight * scale) / truth.figureHeight
    expect(stature).toBeGreaterThan(0.95)
    expect(stature).toBeLessThan(1.05)
    expect(off(analysis.body.shoulderY, truth.boxes.torso[1])).toBeLessThan(0.04)
  })
})
