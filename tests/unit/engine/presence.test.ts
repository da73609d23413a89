import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { RgbaImage } from '../../../shared/images/codecs/raster.ts'
import { analyseShopper, shopperPixels } from '../../../shared/engine/local/index.ts'
import { analyseBody } from '../../../shared/engine/local/person.ts'
import { looksLikePerson } from '../../../shared/engine/local/presence.ts'
import { makeBridalScene } from '../../support/bridal-scenes.ts'
import { makeEmptyScene, type EmptySceneKind } from '../../support/empty-scenes.ts'
import { asInput, encodeImage, makeShopperPhoto, type EncodedPhoto } from '../../support/images.ts'
import { scene } from '../../support/scenes/index.ts'

/**
 * The thresholds of shared/engine/local/presence.ts were set on seeds 1–300 and 10001–10300 of both generators;
 * these seeds were never looked at while setting them (`npm run bench:person` measures more of them).
 */
const heldOut = (count: number) => Array.from({ length: count }, (_, i) => 20_001 + i)

/** What the engine sees of a photo: the silhouette's reading, and whether the engine takes it for a person. */
function read(photo: EncodedPhoto): { silhouette: boolean; person: boolean } {
  const { small, segmentation, body } = analyseShopper(shopperPixels(asInput(photo)))
  const silhouette = analyseBody(segmentation.mask, segmentation.coverage)
  expect(body.found, 'the engine decides as looksLikePerson does').toBe(
    silhouette.found && looksLikePerson(small, segmentation.mask, silhouette),
  )
  return { silhouette: silhouette.found, person: body.found }
}

function greyscale(photo: EncodedPhoto): EncodedPhoto {
  const data = Uint8Array.from(photo.pixels.data)
  for (let o = 0; o < data.length; o += 4) data.fill(Math.round(0.299 * data[o] + 0.587 * data[o + 1] + 0.114 * data[o + 2]), o, o + 3)
  const pixels: RgbaImage = { ...photo.pixels, data }
  return { ...photo, pixels, bytes: encodeImage(pixels, 'png'), format: 'png' }
}

describe('the person detector on generated photos', () => {
  it('keeps every person the body analysis finds, on held-out bridal scenes', { timeout: 120_000 }, () => {
    const refused: string[] = []
    const missed: string[] = []
    // A bridal scene takes about a second to draw: a few here, hundreds in the benchmark.
    const seeds = heldOut(24)
    for (const seed of seeds) {
      const scene = makeBridalScene(seed)
      const { silhouette, person } = read(scene.person)
      if (silhouette && !person) refused.push(`${seed}: ${scene.description}`)
      if (!silhouette) missed.push(`${seed}: ${scene.description}`)
    }
    expect(refused).toEqual([])
    // The silhouette itself misses a few (a figure of the wall's colour); those were 500s and are now 400s.
    expect(missed.length, missed.join('\n')).toBeLessThanOrEqual(seeds.length * 0.05)
  })

  it('keeps the sample shoppers of every size, backdrop, skin tone and framing, in colour and in black and white', () => {
    const variants = [
      { width: 200, height: 360 },
      { width: 160, height: 280, fullLength: false },
      { width: 400, height: 600, background: [120, 128, 140] as [number, number, number] },
      { width: 240, height: 420, background: 'gradient' as const, skinTone: [92, 60, 44] as [number, number, number] },
      { width: 300, height: 450, skinTone: [250, 221, 200] as [number, number, number], fullLength: false },
      {
        width: 214,
        height: 320,
        background: [40, 44, 52] as [number, number, number],
        skinTone: [168, 112, 78] as [number, number, number],
      },
    ]
    for (const [i, variant] of variants.entries()) {
      const photo = makeShopperPhoto({ ...variant, seed: i + 3, format: 'jpeg' })
      expect(read(photo), JSON.stringify(variant)).toEqual({ silhouette: true, person: true })
      expect(read(greyscale(photo)).person, `${JSON.stringify(variant)} in black and white`).toBe(true)
    }
  })

  it('reads the face in the middle of the head when the body is read off its centre line', () => {
    const rgb = fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }))
    const skin = fc.constantFrom<[number, number, number]>([58, 38, 28], [92, 60, 44], [168, 112, 78], [224, 172, 138], [250, 221, 200])
    fc.assert(
      fc.property(
        fc.record({ seed: fc.integer({ min: 1, max: 10_000 }), skinTone: skin, background: rgb, side: fc.constantFrom(-1, 1) }),
        ({ seed, skinTone, background, side }) => {
          const photo = makeShopperPhoto({ width: 240, height: 400, seed, skinTone, background, format: 'png' })
          const { small, segmentation, body } = analyseShopper(shopperPixels(asInput(photo)))
          // Only figures read as people where they stand are taken further.
          fc.pre(body.found)
          // A top lost against the wall on one side moves the body's centre line, the centroid of the silhouette's
          // upper third, by about an eighth of the shoulders (soft 11166: 10 pixels of 86); the face stays put.
          const moved = { ...body, centreX: body.centreX + side * 0.12 * body.shoulderWidth }
          expect(looksLikePerson(small, segmentation.mask, moved)).toBe(true)
        },
      ),
      { numRuns: 40, seed: 26_1130 },
    )
  })

  it('finds a dark-skinned figure whose white top, lost against a pale wall, moves its centre line (soft 11166)', () => {
    const s = scene('soft', 11166)
    expect(analyseShopper(shopperPixels(asInput(s.shopper))).body.found).toBe(true)
  })

  it('finds a pale-skinned figure under a cool light as under a neutral one', () => {
    const palest = fc.constantFrom<[number, number, number]>([253, 228, 210], [250, 221, 200], [241, 203, 178])
    const rgb = fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }))
    fc.assert(
      fc.property(
        fc.record({
          seed: fc.integer({ min: 1, max: 10_000 }),
          skinTone: palest,
          background: rgb,
          cool: fc.double({ min: 0.02, max: 0.06 }),
        }),
        ({ seed, skinTone, background, cool }) => {
          const photo = makeShopperPhoto({ width: 240, height: 400, seed, skinTone, background, format: 'png' })
          fc.pre(read(photo).person)
          // A cooler light: red down by `cool`, green by half as much (a face of [253, 228, 210] at 5% reads r 0.355).
          const data = Uint8Array.from(photo.pixels.data)
          for (let o = 0; o < data.length; o += 4) {
            data[o] = Math.round(data[o] * (1 - cool))
            data[o + 1] = Math.round(data[o + 1] * (1 - cool / 2))
          }
          const pixels: RgbaImage = { ...photo.pixels, data }
          expect(read({ ...photo, pixels, bytes: encodeImage(pixels, 'png'), format: 'png' }).person).toBe(true)
        },
      ),
      { numRuns: 30, seed: 26_1201 },
    )
  })

  it.each([
    ['photo', 13622],
    ['photo', 14067],
  ] as const)("finds the pale face of %s %i, its skin past daylight's red edge in the room's light", (style, seed) => {
    const s = scene(style, seed)
    expect(analyseShopper(shopperPixels(asInput(s.shopper))).body.found).toBe(true)
  })

  // Pale grey hair lost against a lamp-lit wall leaves the face's middle as the head: 0.22 of the shoulders' width, where a
  // head was to be a quarter at least (dim 21294, answered person_not_found).
  it('finds the figure of dim 21294, its head narrowed by pale hair lost against the wall', () => {
    const s = scene('dim', 21294)
    expect(analyseShopper(shopperPixels(asInput(s.shopper))).body.found).toBe(true)
  })

  // A column of a checked texture's squares, read as a head above a hidden top, its shoulders 0.05 of the stature wide.
  it('finds nobody in a checked texture read as a figure far narrower than tall (held-out empty scene 20092)', () => {
    const scene = makeEmptyScene(20_092)
    expect(scene.kind).toBe('texture')
    expect(read(scene.photo).person).toBe(false)
  })

  it('finds nobody in held-out photos without a person: empty rooms, objects alone, product photos, textures', { timeout: 120_000 }, () => {
    const seen: Record<EmptySceneKind, { refused: number; of: number }> = {
      room: { refused: 0, of: 0 },
      object: { refused: 0, of: 0 },
      product: { refused: 0, of: 0 },
      texture: { refused: 0, of: 0 },
    }
    const accepted: string[] = []
    for (const seed of heldOut(80)) {
      const scene = makeEmptyScene(seed)
      const { person } = read(scene.photo)
      seen[scene.kind].of++
      if (person) accepted.push(`${seed}: ${scene.description}`)
      else seen[scene.kind].refused++
    }
    for (const kind of Object.keys(seen) as EmptySceneKind[]) expect(seen[kind].of, kind).toBeGreaterThan(10)
    // Rooms, garments and patterns: nobody, every time. Objects alone include a skin-coloured dress form with a knob
    // for a head, and a bottle's cap and shoulders: the outline alone cannot always tell them.
    expect(seen.room.refused, accepted.join('\n')).toBe(seen.room.of)
    expect(seen.product.refused, accepted.join('\n')).toBe(seen.product.of)
    expect(seen.texture.refused, accepted.join('\n')).toBe(seen.texture.of)
    expect(seen.object.refused / seen.object.of, accepted.join('\n')).toBeGreaterThanOrEqual(0.9)
  })
})
