/**
 * Seeded try-on scenes in several independent drawing styles, each with the ground truth its generator knows:
 * where every body part of the shopper is, the product's category, dominant colours and train, and whether the
 * shopper photo is a valid full-length photo. `scene(style, seed)` always draws the same scene for the same pair.
 *
 * Written apart from devstack/samples/ and tests/support/bridal-scenes.ts (what the local engine was tuned on), and
 * from every check in shared/: see docs/quality-evaluation.md for the styles, the sets and the oracle.
 */
import { encodeJpeg } from '../../../shared/images/codecs/jpeg-encoder.ts'
import type { RgbaImage } from '../../../shared/images/codecs/raster.ts'
import { encodePng } from '../../../devstack/samples/png-encoder.ts'
import type { EncodedPhoto } from '../images.ts'
import { makeFigure, SKIN_TONES } from './body.ts'
import { chooseProduct, productIsLight } from './garments.ts'
import { ALL_STYLES, type StyleName } from './held-out.ts'
import { makeOutfit, MIN_SEPARATION, outfitColours, separation } from './outfit.ts'
import { drawProductPhoto } from './product-photo.ts'
import { Rng } from './rng.ts'
import { dim } from './styles/dim.ts'
import { flat } from './styles/flat.ts'
import { photo } from './styles/photo.ts'
import { soft } from './styles/soft.ts'
import { studio } from './styles/studio.ts'
import { window } from './styles/window.ts'
import { PART, type Box, type Rgb, type Scene, type Style } from './types.ts'

export type { Scene } from './types.ts'

const STYLES: Record<StyleName, Style> = { flat, soft, photo, studio, dim, window }

export function scene(style: StyleName, seed: number): Scene {
  const rng = new Rng(seed, ALL_STYLES.indexOf(style) + 1)
  const spec = chooseProduct(rng.fork(1))
  const product = drawProductPhoto(rng.fork(2), spec)
  const productColours = spec.colours.map((c) => c.rgb)
  const figureRng = rng.fork(3)
  const figure = makeFigure(figureRng, SKIN_TONES[0])
  const { light, draw } = STYLES[style](rng.fork(4), figure)
  const inScene = productColours.map(light)
  const avoid = [...productColours, ...inScene]
  // The shopper's skin, like their clothes, must not pass for the product where the product should go.
  const tones = SKIN_TONES.map((tone) => ({ tone, order: figureRng.next() }))
    .sort((a, b) => a.order - b.order)
    .map(({ tone }) => tone)
  const spread = (tone: Rgb) => separation(light(tone), avoid)
  figure.skin = tones.find((tone) => spread(tone) >= MIN_SEPARATION) ?? tones.reduce((a, b) => (spread(a) >= spread(b) ? a : b))
  const outfit = makeOutfit(rng.fork(5), avoid, light, productIsLight(spec))
  const drawn = draw(outfit)
  const shopper = encode(drawn.image, drawn.encoding)
  return {
    style,
    seed,
    shopper,
    product: product.photo,
    truth: {
      shopper: {
        parts: drawn.parts,
        boxes: boxesOf(drawn.parts, figure.width, figure.height),
        figureHeight: figure.H,
        centreX: figure.cx,
        floorY: figure.floorY,
        pose: figure.pose,
        framing: figure.framing,
        fullLength: figure.fullLength,
        colours: [figure.skin, figure.hair, ...outfitColours(outfit)].map(light),
      },
      product: {
        kind: spec.kind,
        category: spec.category,
        colours: spec.colours,
        // Light may push a colour past white; a screen shows it at 255.
        coloursInScene: inScene.map((c) => c.map((v) => Math.min(255, Math.max(0, v))) as Rgb),
        pattern: spec.pattern,
        hasTrain: spec.hasTrain,
        convention: spec.convention,
        mask: product.mask,
      },
    },
    request: spec.request,
    description:
      `${style} ${seed}: ${spec.description} as ${spec.request.productType ?? 'standard'} "${spec.request.clothingType}"; ` +
      `${product.description}; shopper ${figure.width}x${figure.height} ${figure.framing} ${figure.pose} ${figure.build} ` +
      `${figure.hairStyle} hair, top ${outfit.top.pattern} ${outfit.sleeves} sleeves, ${outfit.bottomKind}` +
      `${outfit.lightOnLight ? ' (light on light)' : ''}; ${drawn.description}, ${shopper.format}`,
  }
}

function encode(image: RgbaImage, encoding: { format: 'jpeg' | 'png'; quality: number }): EncodedPhoto {
  const bytes = encoding.format === 'png' ? encodePng(image) : encodeJpeg(image, encoding.quality)
  return { bytes, format: encoding.format, width: image.width, height: image.height, pixels: image }
}

/** Bounding boxes of head (hair and face), torso, legs, feet and the whole person; [0, 0, 0, 0] for a part out of frame. */
function boxesOf(parts: Uint8Array, width: number, height: number): Scene['truth']['shopper']['boxes'] {
  const groups: Record<keyof Scene['truth']['shopper']['boxes'], number[]> = {
    head: [PART.hair, PART.face],
    torso: [PART.torso],
    legs: [PART.thigh, PART.shin],
    feet: [PART.foot],
    person: Object.values(PART).filter((p) => p !== PART.background),
  }
  const boxes = {} as Scene['truth']['shopper']['boxes']
  for (const [name, members] of Object.entries(groups) as [keyof typeof groups, number[]][]) {
    const wanted = new Uint8Array(16)
    for (const m of members) wanted[m] = 1
    const box: Box = [width, height, 0, 0]
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        if (!wanted[parts[y * width + x]]) continue
        if (x < box[0]) box[0] = x
        if (y < box[1]) box[1] = y
        if (x + 1 > box[2]) box[2] = x + 1
        if (y + 1 > box[3]) box[3] = y + 1
      }
    }
    boxes[name] = box[2] > box[0] ? box : [0, 0, 0, 0]
  }
  return boxes
}
