import { describe, expect, it } from 'vitest'
import type { Rgb } from '../../../devstack/samples/drawing.ts'
import { drawGarment, type GarmentKind } from '../../../devstack/samples/garment-photo.ts'
import type { RgbaImage } from '../../../shared/images/codecs/index.ts'
import { extractGarment, guessCategory, type GarmentCutout } from '../../../shared/engine/local/garment.ts'
import type { GarmentCategory } from '../../../shared/engine/types.ts'
import { makeFlatImage } from '../../support/images.ts'

const colour: Rgb = [40, 120, 200]
const size = 240

const shots = new Map<string, RgbaImage>()

/** Drawn once per kind and backdrop; extraction only reads it. */
function productShot(kind: GarmentKind, transparentBackground = false): RgbaImage {
  const key = `${kind}:${transparentBackground}`
  if (!shots.has(key)) shots.set(key, drawGarment({ kind, color: colour, width: size, height: size, transparentBackground }).image)
  return shots.get(key)!
}

/**
 * Best overlap (intersection over union) of the cutout's opaque area with the garment's true shape, over small
 * shifts: the cutout is cropped to its own bounding box, which may start a pixel off the drawn one.
 */
function overlapWithTrueShape(cut: GarmentCutout, shape: RgbaImage): number {
  let shapeX = size
  let shapeY = size
  for (let i = 0; i < size * size; i++) {
    if (shape.data[i * 4 + 3] < 128) continue
    shapeX = Math.min(shapeX, i % size)
    shapeY = Math.min(shapeY, Math.floor(i / size))
  }
  const { width, height, data } = cut.image
  let cutX = width
  let cutY = height
  for (let i = 0; i < width * height; i++) {
    if (data[i * 4 + 3] < 128) continue
    cutX = Math.min(cutX, i % width)
    cutY = Math.min(cutY, Math.floor(i / width))
  }
  let best = 0
  for (let dy = -2; dy <= 2; dy++) {
    for (let dx = -2; dx <= 2; dx++) {
      let both = 0
      let either = 0
      for (let y = 0; y < size; y++) {
        for (let x = 0; x < size; x++) {
          const inShape = shape.data[(y * size + x) * 4 + 3] >= 128
          const cx = x - shapeX + cutX + dx
          const cy = y - shapeY + cutY + dy
          const inCut = cx >= 0 && cy >= 0 && cx < width && cy < height && data[(cy * width + cx) * 4 + 3] >= 128
          if (inShape && inCut) both++
          if (inShape || inCut) either++
        }
      }
      best = Math.max(best, both / either)
    }
  }
  return best
}

const shapeCategory: Record<GarmentKind, GarmentCategory[]> = {
  tshirt: ['top'],
  trousers: ['bottom'],
  dress: ['dress'],
  gown: ['dress'],
  'gown-with-train': ['dress'],
  // The shape alone does not tell a jacket from a long-sleeved top; either way it dresses the upper body.
  jacket: ['top', 'outerwear'],
}
const kinds = Object.keys(shapeCategory) as GarmentKind[]

describe('garment extraction', () => {
  it.each(kinds)('cuts a %s out of a studio backdrop along its true outline', (kind) => {
    const cut = extractGarment(productShot(kind))
    expect(overlapWithTrueShape(cut, productShot(kind, true))).toBeGreaterThan(0.96)
  })

  it.each(kinds)('keeps the %s colour and leaves the backdrop out', (kind) => {
    const { data } = extractGarment(productShot(kind)).image
    let visible = 0
    let backdrop = 0
    const sum = [0, 0, 0]
    for (let p = 0; p < data.length; p += 4) {
      if (data[p + 3] === 0) continue
      visible++
      if (data[p] > 200 && data[p + 1] > 200 && data[p + 2] > 200) backdrop++
      for (let c = 0; c < 3; c++) sum[c] += data[p + c]
    }
    expect(backdrop / visible).toBeLessThan(0.02)
    for (const [c, total] of sum.entries()) expect(Math.abs(total / visible - colour[c])).toBeLessThan(15)
  })

  it.each(kinds)('crops a %s to the garment, on a backdrop or cut out on transparency', (kind) => {
    const shape = productShot(kind, true)
    let [x0, y0, x1, y1] = [size, size, 0, 0]
    for (let i = 0; i < size * size; i++) {
      if (shape.data[i * 4 + 3] < 64) continue
      const [x, y] = [i % size, Math.floor(i / size)]
      ;[x0, y0, x1, y1] = [Math.min(x0, x), Math.min(y0, y), Math.max(x1, x + 1), Math.max(y1, y + 1)]
    }
    for (const image of [productShot(kind), shape]) {
      const cut = extractGarment(image)
      expect(Math.abs(cut.image.width - (x1 - x0))).toBeLessThanOrEqual(3)
      expect(Math.abs(cut.image.height - (y1 - y0))).toBeLessThanOrEqual(3)
      expect(cut.left.every((l, y) => l < cut.right[y])).toBe(true)
      expect(cut.torsoLeft.every((l, y) => l >= cut.left[y] && cut.torsoRight[y] <= cut.right[y])).toBe(true)
    }
  })

  it.each(['gown-with-train', 'gown'] as GarmentKind[])(
    'cuts a white %s off a white studio backdrop whole, and reads its train only where there is one',
    (kind) => {
      // Fabric a few levels off the backdrop: only its weave and shading tell it apart.
      const white: Rgb = [246, 244, 239]
      const photo = drawGarment({ kind, color: white, width: size, height: size }).image
      const shape = drawGarment({ kind, color: white, width: size, height: size, transparentBackground: true }).image
      const cut = extractGarment(photo)
      expect(overlapWithTrueShape(cut, shape)).toBeGreaterThan(0.9)
      expect(cut.shape?.hasTrain).toBe(kind === 'gown-with-train')
    },
  )

  it.each(['gown-with-train', 'gown'] as GarmentKind[])(
    'reads a white %s over a soft studio shadow of its own tone: a train only where there is one',
    (kind) => {
      const white: Rgb = [246, 244, 239]
      const photo = drawGarment({ kind, color: white, width: size, height: size }).image
      const shape = drawGarment({ kind, color: white, width: size, height: size, transparentBackground: true }).image
      // A flat shadow on the floor behind the hem, as wide as most of the garment and a few rows deep.
      let [x0, x1, y1] = [size, 0, 0]
      for (let i = 0; i < size * size; i++) {
        if (shape.data[i * 4 + 3] < 128) continue
        ;[x0, x1, y1] = [Math.min(x0, i % size), Math.max(x1, i % size), Math.max(y1, Math.floor(i / size))]
      }
      const [cx, rx, ry] = [(x0 + x1) / 2, (x1 - x0) * 0.45, size * 0.015]
      for (let y = 0; y < size; y++) {
        for (let x = 0; x < size; x++) {
          const i = (y * size + x) * 4
          if (shape.data[i + 3] >= 128 || ((x - cx) / rx) ** 2 + ((y - (y1 - 2)) / ry) ** 2 > 1) continue
          for (let c = 0; c < 3; c++) photo.data[i + c] = Math.round(photo.data[i + c] * 0.87)
        }
      }
      expect(extractGarment(photo).shape?.hasTrain).toBe(kind === 'gown-with-train')
    },
  )

  it.each([true, false])('tells a train from a plain hem with a flat shadow under either (train: %s)', (train) => {
    // An outline as a white gown on a white sweep leaves it, its shadow included: bodice, a flared skirt to
    // the floor, with a train a fan that narrows to a rounded end; under both a flat shadow as wide as the hem.
    const image = { width: size, height: size, data: new Uint8Array(size * size * 4) }
    const half = (y: number): number => {
      if (y < 12) return 0
      if (y < 70) return y < 55 ? 22 : 17
      const skirt = 17 + ((y - 70) / 130) * 43
      if (!train) return y <= 200 ? skirt : 0
      if (y < 150) return skirt
      const t = (y - 150) / 78
      const fan = skirt + (88 - skirt) * Math.min(1, t / 0.6)
      return t > 1 ? 0 : t > 0.6 ? fan * Math.sqrt(1 - ((t - 0.6) / 0.4) ** 2) : fan
    }
    const bottom = train ? 228 : 200
    for (let y = 0; y < size; y++) {
      for (let x = 0; x < size; x++) {
        const shadow = ((x - 120) / 84) ** 2 + ((y - (bottom - 1)) / 4) ** 2 <= 1
        if (Math.abs(x - 120) > half(y) && !shadow) continue
        image.data.set([240, 238, 232, 255], (y * size + x) * 4)
      }
    }
    expect(extractGarment(image).shape?.hasTrain).toBe(train)
  })

  it.each(['gown-with-train', 'gown'] as GarmentKind[])(
    'keeps the bodice of a white %s a level or two off a clean white sweep, and reads its train only where there is one',
    (kind) => {
      const shape = drawGarment({ kind, color: [250, 250, 250], width: size, height: size, transparentBackground: true }).image
      let [top, bottom] = [size, 0]
      for (let i = 0; i < size * size; i++) {
        if (shape.data[i * 4 + 3] < 128) continue
        ;[top, bottom] = [Math.min(top, Math.floor(i / size)), Math.max(bottom, Math.floor(i / size))]
      }
      // Lit from above: the bodice a level or two under the sweep, the skirt darker towards the floor, a faint weave.
      const photo: RgbaImage = { width: size, height: size, data: new Uint8Array(size * size * 4).fill(251) }
      for (let y = 0; y < size; y++) {
        for (let x = 0; x < size; x++) {
          const i = (y * size + x) * 4
          if (shape.data[i + 3] < 128) continue
          const level = 250 - 12 * ((y - top) / (bottom - top)) ** 3 + Math.round(Math.sin(x * 1.3) * Math.sin(y * 1.7))
          photo.data.set([level, level, level - 1], i)
        }
      }
      const cut = extractGarment(photo)
      expect(overlapWithTrueShape(cut, shape)).toBeGreaterThan(0.9)
      expect(cut.shape?.hasTrain).toBe(kind === 'gown-with-train')
    },
  )

  it.each(['gown-with-train', 'gown', 'jacket'] as GarmentKind[])(
    'cuts a %s off wooden planks whole, though no smooth backdrop fits planks, and reads a train only on the gown with one',
    (kind) => {
      const pink: Rgb = [232, 140, 176]
      const shape = drawGarment({ kind, color: pink, width: size, height: size, transparentBackground: true }).image
      // Planks 30 px wide, each its own shade of one wood, dark seams between them, a grain along them.
      const photo: RgbaImage = { width: size, height: size, data: new Uint8Array(size * size * 4) }
      for (let y = 0; y < size; y++) {
        for (let x = 0; x < size; x++) {
          const plank = Math.floor(x / 30)
          const shade = (x % 30 < 1 ? 0.75 : 1) * (0.86 + 0.14 * Math.sin(plank * 9.1)) * (1 + 0.04 * Math.sin(y * 0.9 + plank))
          const i = (y * size + x) * 4
          const a = shape.data[i + 3] / 255
          const wood = [200, 166, 128].map((v) => v * shade)
          for (let c = 0; c < 3; c++) photo.data[i + c] = Math.round(shape.data[i + c] * a + wood[c] * (1 - a))
          photo.data[i + 3] = 255
        }
      }
      const cut = extractGarment(photo)
      expect(cut.separated).toBe(true)
      expect(overlapWithTrueShape(cut, shape)).toBeGreaterThan(0.9)
      if (kind !== 'jacket') expect(cut.shape?.hasTrain).toBe(kind === 'gown-with-train')
    },
  )

  it('takes the whole picture as the garment when nothing stands out, such as a fabric close-up', () => {
    const cut = extractGarment(makeFlatImage({ width: 90, height: 60, color: [160, 40, 60] }).pixels)
    expect([cut.image.width, cut.image.height]).toEqual([90, 60])
    expect(cut.image.data.every((v, i) => (i & 3) !== 3 || v === 255)).toBe(true)
  })
})

describe('garment category', () => {
  it.each(kinds)('is guessed from the shape of a %s', (kind) => {
    for (const transparentBackground of [false, true]) {
      const cut = extractGarment(productShot(kind, transparentBackground))
      expect(shapeCategory[kind]).toContain(guessCategory(cut))
      expect(cut.hasLegs).toBe(kind === 'trousers')
    }
  })

  it('follows the clothing-type hint over the shape', () => {
    const tshirt = extractGarment(productShot('tshirt'))
    const trousers = extractGarment(productShot('trousers'))
    expect(guessCategory(tshirt, 'Evening GOWN')).toBe('dress')
    expect(guessCategory(tshirt, 'wool coat')).toBe('outerwear')
    expect(guessCategory(tshirt, 'denim jacket')).toBe('outerwear')
    expect(guessCategory(tshirt, 'skinny jeans')).toBe('bottom')
    expect(guessCategory(trousers, 'polo shirt')).toBe('top')
    expect(guessCategory(trousers, 'summer dress')).toBe('dress')
  })

  it('falls back to the shape when the hint names no garment', () => {
    const trousers = extractGarment(productShot('trousers'))
    expect(guessCategory(trousers, 'size M, navy')).toBe('bottom')
    expect(guessCategory(trousers, '')).toBe('bottom')
  })
})
