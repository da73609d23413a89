/**
 * The shopper's body with their clothes on, as pieces in drawing order, each naming the body part it shows and
 * what covers it (skin, the top, the bottom, shoes, hair). Styles paint each piece their own way.
 */
import { anatomy, armJoints, hairPieces, type Figure } from './body.ts'
import type { Outfit } from './outfit.ts'
import { capsule, clipRows, polygon, union, type Point, type Shape } from './picture.ts'
import { PART, type Part } from './types.ts'

export type Covering = 'skin' | 'top' | 'bottom' | 'shoes' | 'hair'

export interface DressedPiece {
  shape: Shape
  part: Part
  covering: Covering
  /** Takes its part only where nothing was drawn yet (a skirt's flare beyond the legs). */
  partUnder?: boolean
  /** Hair: split into head and shoulder hair by the painter. */
  hair?: boolean
}

export function dressedBody(figure: Figure, outfit: Outfit): DressedPiece[] {
  const pieces = anatomy(figure)
  const { at, H } = figure
  const out: DressedPiece[] = []
  const hair = hairPieces(figure)
  for (const shape of hair.behind) out.push({ shape, part: PART.longHair, covering: 'hair', hair: true })
  const legCovering = (part: Part): Covering => {
    const k = outfit.bottomKind
    if (k === 'trousers' || k === 'jeans' || k === 'leggings') return 'bottom'
    return part === PART.hips ? 'bottom' : 'skin'
  }
  const arms = armJoints(figure)
  const sleeve = (side: number): Shape | undefined => {
    if (outfit.sleeves === 'none') return undefined
    const P = (p: Point): Point => [figure.x(side, p[0]), at(p[1])]
    const mid: Point = [(arms.shoulder[0] + arms.elbow[0]) / 2, (arms.shoulder[1] + arms.elbow[1]) / 2]
    const r = 0.034 * H * figure.limb
    if (outfit.sleeves === 'short') return capsule(P(arms.shoulder), r, P(mid), r * 0.95)
    return union(capsule(P(arms.shoulder), r, P(arms.elbow), r * 0.85), capsule(P(arms.elbow), r * 0.8, P(arms.wrist), r * 0.62))
  }
  const limb = (piece: (typeof pieces)[number]) => {
    const isArm = piece.part === PART.upperArm || piece.part === PART.forearm || piece.part === PART.hand
    if (isArm) {
      out.push({ shape: piece.shape, part: piece.part, covering: 'skin' })
      // The sleeve goes on once the whole arm is drawn: a long one covers the forearm too.
      if (piece.part === PART.hand) {
        const s = sleeve(piece.side)
        if (s) out.push({ shape: s, part: PART.upperArm, covering: 'top', partUnder: true })
      }
      return
    }
    if (piece.part === PART.foot) return out.push({ shape: piece.shape, part: piece.part, covering: 'shoes' })
    const covering = legCovering(piece.part)
    // Trousers hang a little wider than the leg; shorts end above the knee.
    out.push({ shape: piece.shape, part: piece.part, covering })
    if (outfit.bottomKind === 'shorts' && piece.part === PART.thigh)
      out.push({ shape: clipRows(piece.shape, 0, at(0.62)), part: PART.thigh, covering: 'bottom' })
  }
  for (const piece of pieces.filter((p) => p.far)) limb(piece)
  for (const piece of pieces.filter((p) => !p.far && (p.part === PART.thigh || p.part === PART.shin || p.part === PART.foot))) limb(piece)
  const hips = pieces.find((p) => p.part === PART.hips)!
  out.push({ shape: hips.shape, part: PART.hips, covering: 'bottom' })
  if (outfit.bottomKind === 'skirt') {
    const hem = outfit.skirtHem
    const flare = figure.hipHalf * (1.1 + 0.6 * (hem - 0.6))
    const X = (s: number, u: number) => figure.x(s, u)
    out.push({
      shape: polygon([
        [X(-1, figure.waistHalf * 1.02), at(0.4)],
        [X(1, figure.waistHalf * 1.02), at(0.4)],
        [X(1, figure.hipHalf * 1.04), at(0.5)],
        [X(1, flare), at(hem)],
        [X(-1, flare), at(hem)],
        [X(-1, figure.hipHalf * 1.04), at(0.5)],
      ]),
      part: PART.clothing,
      covering: 'bottom',
      partUnder: true,
    })
  }
  const torso = pieces.find((p) => p.part === PART.torso)!
  out.push({ shape: torso.shape, part: PART.torso, covering: 'top' })
  for (const piece of pieces.filter((p) => !p.far && (p.part === PART.upperArm || p.part === PART.forearm || p.part === PART.hand)))
    limb(piece)
  const neck = pieces.find((p) => p.part === PART.neck)!
  const face = pieces.find((p) => p.part === PART.face)!
  out.push({ shape: neck.shape, part: PART.neck, covering: 'skin' })
  out.push({ shape: face.shape, part: PART.face, covering: 'skin' })
  for (const shape of hair.onHead) out.push({ shape, part: PART.hair, covering: 'hair', hair: true })
  return out
}
