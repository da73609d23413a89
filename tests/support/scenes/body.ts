/**
 * The shopper's body: frame, framing, pose, build, skin and hair, as joints and widths in pixels. Styles draw it
 * their own way; the joints are only where things are.
 */
import { capsule, clipRows, ellipse, polygon, type FillOptions, type Paint, type Picture, type Point, type Shape } from './picture.ts'
import type { Rng } from './rng.ts'
import { PART, type Framing, type Part, type Pose, type Rgb } from './types.ts'

export type HairStyle = 'short' | 'long' | 'bun' | 'curly' | 'bald' | 'ponytail'
export type Build = 'slim' | 'average' | 'broad' | 'curvy' | 'plus'

export interface Figure {
  width: number
  height: number
  /** Figure height in pixels, head top to soles. */
  H: number
  top: number
  cx: number
  floorY: number
  pose: Pose
  framing: Framing
  fullLength: boolean
  /** Body turn in radians: widths shrink by its cosine, the far side more, the face shifts; negative turns left. */
  turn: number
  build: Build
  skin: Rgb
  hair: Rgb
  hairStyle: HairStyle
  /** Pixel row of a fraction of the figure's height. */
  at(f: number): number
  /** Pixel column of a body-relative offset (H units) on side s (-1 left, +1 right), with the turn. */
  x(s: number, u: number): number
  shoulderHalf: number
  waistHalf: number
  hipHalf: number
  limb: number
}

export const SKIN_TONES: Rgb[] = [
  [253, 228, 210],
  [241, 203, 178],
  [229, 184, 150],
  [214, 160, 122],
  [194, 137, 100],
  [168, 112, 78],
  [141, 90, 60],
  [112, 70, 46],
  [86, 54, 38],
  [62, 40, 30],
]
export const HAIR_COLOURS: Rgb[] = [
  [20, 17, 15],
  [52, 36, 26],
  [96, 64, 40],
  [150, 110, 70],
  [206, 172, 112],
  [140, 60, 30],
  [170, 168, 165],
]

const BUILDS: Record<Build, { shoulder: number; waist: number; hip: number; limb: number }> = {
  slim: { shoulder: 0.92, waist: 0.86, hip: 0.9, limb: 0.88 },
  average: { shoulder: 1, waist: 1, hip: 1, limb: 1 },
  broad: { shoulder: 1.16, waist: 1.1, hip: 1.02, limb: 1.1 },
  curvy: { shoulder: 0.98, waist: 0.96, hip: 1.2, limb: 1.08 },
  plus: { shoulder: 1.14, waist: 1.35, hip: 1.3, limb: 1.28 },
}

const ASPECTS: [number, number][] = [
  [2, 3],
  [3, 4],
  [9, 16],
  [4, 5],
  [1, 1],
]

/** A shopper: frame size and aspect, framing, pose and looks, from the random source. */
export function makeFigure(rng: Rng, skin: Rgb): Figure {
  const [aw, ah] = rng.pick(ASPECTS)
  const width = Math.round(rng.between(360, 720) / 8) * 8
  const height = Math.round((width * ah) / aw / 8) * 8
  const framing: Framing = rng.chance(0.14) ? 'knee' : 'full'
  const pose = rng.weighted<Pose>({ front: 0.55, turn: 0.25, 'arms-out': 0.2 })
  const headRoom = height * rng.between(0.015, 0.16)
  // The figure (arms out included) must fit across the frame.
  const widest = width / (pose === 'arms-out' ? 0.75 : 0.5)
  let H: number
  let top: number
  if (framing === 'full') {
    const footRoom = height * rng.between(0.02, 0.12)
    H = Math.min(height - headRoom - footRoom, widest)
    top = Math.min(headRoom, height - H - height * 0.02)
  } else {
    // The frame ends between the knee and the middle of the shin, whatever the head room comes to.
    const cut = rng.between(0.74, 0.86)
    H = Math.min((height - headRoom) / cut, widest)
    top = height - cut * H
  }
  const build = rng.weighted<Build>({ slim: 0.22, average: 0.34, broad: 0.14, curvy: 0.16, plus: 0.14 })
  const b = BUILDS[build]
  const turn = pose === 'turn' ? rng.pick([-1, 1]) * rng.between(0.25, 0.5) : 0
  const cx = width / 2 + rng.between(-0.12, 0.12) * Math.max(0, width - H * 0.5)
  const hairStyle = rng.weighted<HairStyle>({ short: 0.3, long: 0.25, bun: 0.12, curly: 0.13, bald: 0.06, ponytail: 0.14 })
  const figure: Figure = {
    width,
    height,
    H,
    top,
    cx,
    floorY: top + H,
    pose,
    framing,
    fullLength: framing === 'full' && top >= height * 0.01 && top + H <= height * 0.99,
    turn,
    build,
    skin,
    hair: rng.pick(HAIR_COLOURS),
    hairStyle,
    at: (f) => top + f * H,
    // The far side of a turned body is foreshortened a little more than the near side.
    x: (s, u) => cx + s * u * H * Math.cos(turn) * (turn !== 0 && s !== Math.sign(turn) ? 0.82 : 1),
    shoulderHalf: 0.102 * b.shoulder,
    waistHalf: 0.072 * b.waist,
    hipHalf: 0.094 * b.hip,
    limb: b.limb,
  }
  return figure
}

export interface BodyPiece {
  shape: Shape
  part: Part
  /** -1 or +1 for a limb, 0 for the trunk and head. */
  side: number
  /** The piece on the far side of a turned body, drawn before the trunk. */
  far: boolean
}

/** Where the elbow and the wrist are for the pose, in H units from the centre (x) and head top (y). */
export function armJoints(figure: Figure): { shoulder: Point; elbow: Point; wrist: Point } {
  const sh = figure.shoulderHalf
  if (figure.pose === 'arms-out') return { shoulder: [sh * 0.92, 0.205], elbow: [sh + 0.085, 0.32], wrist: [sh + 0.17, 0.42] }
  return { shoulder: [sh * 0.92, 0.205], elbow: [sh + 0.022, 0.36], wrist: [sh + 0.03, 0.5] }
}

/** The body as capsules, ellipses and polygons, in drawing order (far limbs, legs, trunk, near limbs, head). */
export function anatomy(figure: Figure): BodyPiece[] {
  const { at, H, limb } = figure
  const X = (s: number, u: number) => figure.x(s, u)
  const near = figure.turn === 0 ? 0 : Math.sign(figure.turn)
  const isFar = (s: number) => near !== 0 && s !== near
  const pieces: BodyPiece[] = []
  const arm = armJoints(figure)
  for (const s of [-1, 1]) {
    const P = (p: Point): Point => [X(s, p[0]), at(p[1])]
    const far = isFar(s)
    pieces.push({ shape: capsule(P(arm.shoulder), 0.03 * H * limb, P(arm.elbow), 0.024 * H * limb), part: PART.upperArm, side: s, far })
    pieces.push({ shape: capsule(P(arm.elbow), 0.023 * H * limb, P(arm.wrist), 0.017 * H * limb), part: PART.forearm, side: s, far })
    const [wx, wy] = P(arm.wrist)
    pieces.push({ shape: ellipse(wx, wy + 0.028 * H, 0.018 * H, 0.032 * H), part: PART.hand, side: s, far })
  }
  for (const s of [-1, 1]) {
    const far = isFar(s)
    const hipJoint: Point = [X(s, figure.hipHalf * 0.52), at(0.5)]
    const knee: Point = [X(s, 0.05), at(0.73)]
    const ankle: Point = [X(s, 0.048), at(0.955)]
    pieces.push({ shape: capsule(hipJoint, 0.056 * H * limb, knee, 0.037 * H * limb), part: PART.thigh, side: s, far })
    pieces.push({ shape: capsule(knee, 0.036 * H * limb, ankle, 0.023 * H * limb), part: PART.shin, side: s, far })
    const toe = X(s, 0.048) + s * 0.012 * H + Math.sign(figure.turn) * 0.01 * H
    pieces.push({ shape: ellipse(toe, at(0.978), 0.034 * H, 0.021 * H), part: PART.foot, side: s, far })
  }
  const sh = figure.shoulderHalf
  const w = figure.waistHalf
  const hip = figure.hipHalf
  const trunk = (points: [number, number][]): Shape => polygon(points.map(([u, f]): Point => [X(Math.sign(u) || 1, Math.abs(u)), at(f)]))
  pieces.push({
    shape: trunk([
      [-hip, 0.5],
      [-w * 1.02, 0.4],
      [w * 1.02, 0.4],
      [hip, 0.5],
      [hip * 0.7, 0.545],
      [-hip * 0.7, 0.545],
    ]),
    part: PART.hips,
    side: 0,
    far: false,
  })
  pieces.push({
    shape: trunk([
      [-sh * 0.55, 0.18],
      [sh * 0.55, 0.18],
      [sh, 0.2],
      [sh * 0.92, 0.27],
      [w * 1.02, 0.4],
      [-w * 1.02, 0.4],
      [-sh * 0.92, 0.27],
      [-sh, 0.2],
    ]),
    part: PART.torso,
    side: 0,
    far: false,
  })
  const headX = figure.cx + Math.sin(figure.turn) * 0.02 * H
  pieces.push({ shape: capsule([headX, at(0.11)], 0.024 * H, [figure.cx, at(0.19)], 0.028 * H), part: PART.neck, side: 0, far: false })
  pieces.push({ shape: ellipse(headX, at(0.066), 0.047 * H, 0.062 * H), part: PART.face, side: 0, far: false })
  return pieces
}

/** Hair in two pieces: what falls behind the shoulders (drawn before the trunk) and what covers the head. */
export function hairPieces(figure: Figure): { behind: Shape[]; onHead: Shape[] } {
  const { at, H } = figure
  const hx = figure.cx + Math.sin(figure.turn) * 0.02 * H
  switch (figure.hairStyle) {
    case 'bald':
      return { behind: [], onHead: [] }
    case 'long':
      return {
        behind: [capsule([hx, at(0.08)], 0.052 * H, [hx, at(0.28)], 0.062 * H)],
        onHead: [ellipse(hx, at(0.032), 0.053 * H, 0.036 * H)],
      }
    case 'ponytail':
      return {
        behind: [capsule([hx + 0.03 * H, at(0.06)], 0.014 * H, [hx + 0.05 * H, at(0.2)], 0.02 * H)],
        onHead: [ellipse(hx, at(0.03), 0.051 * H, 0.034 * H)],
      }
    case 'bun':
      return { behind: [], onHead: [ellipse(hx, at(0.03), 0.051 * H, 0.034 * H), ellipse(hx, at(-0.002), 0.026 * H, 0.02 * H)] }
    case 'curly':
      return { behind: [ellipse(hx, at(0.07), 0.07 * H, 0.07 * H)], onHead: [ellipse(hx, at(0.028), 0.062 * H, 0.042 * H)] }
    default:
      return { behind: [], onHead: [ellipse(hx, at(0.03), 0.051 * H, 0.033 * H)] }
  }
}

/** Paints the hair with its parts: hair above the chin is the head's, below it hair falls over the shoulders. */
export function fillHair(picture: Picture, figure: Figure, shapes: Shape[], paint: Paint | Rgb, options: FillOptions = {}): void {
  const chin = figure.at(0.127)
  for (const shape of shapes) {
    picture.fill(clipRows(shape, -Infinity, chin), paint, { ...options, part: PART.hair })
    picture.fill(clipRows(shape, chin, Infinity), paint, { ...options, part: PART.longHair })
  }
}
