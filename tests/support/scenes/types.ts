import type { RgbaImage } from '../../../shared/images/codecs/raster.ts'
import type { EncodedPhoto } from '../images.ts'
import type { Figure } from './body.ts'
import type { StyleName } from './held-out.ts'
import type { Outfit } from './outfit.ts'
import type { Rng } from './rng.ts'

export type { StyleName } from './held-out.ts'
export type Rgb = [number, number, number]
/** [x0, y0, x1, y1) in pixels. */
export type Box = [number, number, number, number]

/** The body part a pixel of the shopper photo shows, topmost first (what the camera sees). */
export const PART = {
  background: 0,
  /** Hair on the head, above the chin. */
  hair: 1,
  face: 2,
  /** Hair falling behind the neck and shoulders: a garment may lie over it. */
  longHair: 3,
  neck: 4,
  /** From the shoulder line to the waist. */
  torso: 5,
  /** From the waist to the crotch. */
  hips: 6,
  upperArm: 7,
  forearm: 8,
  hand: 9,
  thigh: 10,
  shin: 11,
  foot: 12,
  /** Clothing the shopper wears beyond the body's outline (a flared skirt, a loose sleeve). */
  clothing: 13,
} as const
export type Part = (typeof PART)[keyof typeof PART]

export type ProductKind = 'tshirt' | 'shirt' | 'jacket' | 'trousers' | 'skirt' | 'dress' | 'gown' | 'train-gown' | 'shoes' | 'bag'
export type ProductCategory = 'top' | 'outerwear' | 'bottom' | 'dress' | 'shoes' | 'bag'
export type ProductConvention = 'flat-lay' | 'ghost-mannequin' | 'white-on-white' | 'hanger' | 'props' | 'on-model'
export type Pose = 'front' | 'turn' | 'arms-out'
export type Framing = 'full' | 'knee'

/** One of the product's colours as drawn (before light and shading), and its share of the garment's area. */
export interface ProductColour {
  name: string
  rgb: Rgb
  share: number
}

export interface ProductTruth {
  kind: ProductKind
  category: ProductCategory
  /** Its dominant colours, largest share first; shares sum to 1. */
  colours: ProductColour[]
  /** The same colours as the shopper photo's light shows them at the torso. */
  coloursInScene: Rgb[]
  pattern: 'plain' | 'stripes' | 'print'
  hasTrain: boolean
  convention: ProductConvention
  /** Pixels of the product photo that show the product (1) or not (0). */
  mask: Uint8Array
}

export interface ShopperTruth {
  /** The PART of every pixel of the shopper photo. */
  parts: Uint8Array
  /** Bounding boxes of the visible parts (empty boxes when a part is out of frame). */
  boxes: { head: Box; torso: Box; legs: Box; feet: Box; person: Box }
  /** Height of the whole figure in pixels, head to soles, whether or not all of it is in frame. */
  figureHeight: number
  centreX: number
  /** The floor line under the feet (may lie below the frame when cropped). */
  floorY: number
  pose: Pose
  framing: Framing
  /** Head and feet inside the frame with room to spare: what the API asks for. */
  fullLength: boolean
  /** Skin, hair and every colour the shopper wears, as the scene's light shows them at the torso. */
  colours: Rgb[]
}

/** What a try-on request sends for the scene. */
export interface SceneRequest {
  clothingType: string
  productType?: 'wedding-dress'
}

export interface Scene {
  style: StyleName
  seed: number
  shopper: EncodedPhoto
  product: EncodedPhoto
  truth: { shopper: ShopperTruth; product: ProductTruth }
  request: SceneRequest
  description: string
}

/** The scene's light on a fabric: what a colour looks like at the middle of the torso. */
export type Light = (colour: Rgb) => Rgb

/**
 * One drawing style: its own light, backgrounds, figure painting and camera. It sets its light first, so the
 * shopper's clothes can be chosen to stand apart from the product under it, then draws.
 */
export type Style = (rng: Rng, figure: Figure) => { light: Light; draw(outfit: Outfit): DrawnShopper }

export interface DrawnShopper {
  image: RgbaImage
  parts: Uint8Array
  /** How the style's camera or export saves it (quality for JPEG). */
  encoding: { format: 'jpeg' | 'png'; quality: number }
  description: string
}
