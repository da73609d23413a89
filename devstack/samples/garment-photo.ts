import type { RgbaImage } from '../../shared/images/codecs/raster.ts'
import { Canvas, ellipse, polygon, random, shade, subtract, union, valueNoise, type Point, type Rgb, type Shape } from './drawing.ts'

/** `gown` reaches the floor with a narrow hem; `gown-with-train` is photographed with its train spread wide. */
export type GarmentKind = 'tshirt' | 'trousers' | 'dress' | 'gown' | 'gown-with-train' | 'jacket'

export interface GarmentPhotoOptions {
  kind: GarmentKind
  color: Rgb
  width: number
  height: number
  transparentBackground?: boolean
  seed?: number
}

/** Height over width of each garment's bounding box as drawn (a flat product shot). */
const ASPECT: Record<GarmentKind, number> = { tshirt: 0.95, trousers: 2.3, dress: 1.3, gown: 1.6, 'gown-with-train': 1.3, jacket: 1.15 }

/** Outline pieces in unit coordinates: x in [-0.5, 0.5] across the garment, y in [0, 1] down it. */
function outline(kind: GarmentKind): { body: Shape[]; holes: Shape[]; trims: Shape[] } {
  const mirror = (points: Point[]): Point[] => points.map(([x, y]) => [-x, y])
  if (kind === 'tshirt') {
    const sleeve: Point[] = [
      [0.2, 0.03],
      [0.5, 0.27],
      [0.4, 0.44],
      [0.27, 0.34],
    ]
    return {
      body: [
        polygon([
          [-0.26, 0.03],
          [0.26, 0.03],
          [0.27, 0.3],
          [0.27, 1],
          [-0.27, 1],
          [-0.27, 0.3],
        ]),
        polygon(sleeve),
        polygon(mirror(sleeve)),
      ],
      holes: [ellipse(0, 0.0, 0.11, 0.09)],
      trims: [
        polygon([
          [-0.27, 0.965],
          [0.27, 0.965],
          [0.27, 1],
          [-0.27, 1],
        ]),
      ],
    }
  }
  if (kind === 'trousers') {
    const leg: Point[] = [
      [-0.42, 0.03],
      [0.02, 0.03],
      [0, 0.3],
      [-0.06, 1],
      [-0.5, 1],
      [-0.46, 0.32],
    ]
    return {
      body: [polygon(leg), polygon(mirror(leg))],
      holes: [],
      trims: [
        polygon([
          [-0.42, 0],
          [0.42, 0],
          [0.42, 0.045],
          [-0.42, 0.045],
        ]),
      ],
    }
  }
  if (kind === 'gown') {
    const strap: Point[] = [
      [0.15, 0],
      [0.2, 0],
      [0.22, 0.06],
      [0.12, 0.06],
    ]
    return {
      body: [
        polygon([
          [-0.22, 0.05],
          [0.22, 0.05],
          [0.17, 0.26],
          [-0.17, 0.26],
        ]),
        polygon([
          [-0.17, 0.25],
          [0.17, 0.25],
          [0.36, 1],
          [-0.36, 1],
        ]),
        polygon(strap),
        polygon(mirror(strap)),
      ],
      holes: [ellipse(0, 0.04, 0.1, 0.05)],
      trims: [
        polygon([
          [-0.17, 0.24],
          [0.17, 0.24],
          [0.17, 0.265],
          [-0.17, 0.265],
        ]),
      ],
    }
  }
  if (kind === 'dress' || kind === 'gown-with-train') {
    const top = kind === 'dress' ? 0.26 : 0.17
    const waist = kind === 'dress' ? 0.2 : 0.13
    const waistY = kind === 'dress' ? 0.36 : 0.27
    const strap: Point[] = [
      [top - 0.09, 0],
      [top - 0.02, 0],
      [top, 0.07],
      [top - 0.12, 0.07],
    ]
    const hem = kind === 'dress' ? 0.5 : 0.36
    const body = [
      polygon([
        [-top, 0.06],
        [top, 0.06],
        [waist, waistY],
        [-waist, waistY],
      ]),
      polygon([
        [-waist, waistY - 0.01],
        [waist, waistY - 0.01],
        [hem, kind === 'dress' ? 1 : 0.9],
        [-hem, kind === 'dress' ? 1 : 0.9],
      ]),
      polygon(strap),
      polygon(mirror(strap)),
    ]
    // The train lies spread on the floor around the hem, wider than the skirt, ending in a rounded edge.
    if (kind === 'gown-with-train') body.push(ellipse(0, 0.9, 0.5, 0.1))
    return {
      body,
      holes: [ellipse(0, 0.05, top - 0.12, 0.07)],
      trims: [
        polygon([
          [-waist, waistY - 0.02],
          [waist, waistY - 0.02],
          [waist, waistY + 0.01],
          [-waist, waistY + 0.01],
        ]),
      ],
    }
  }
  const sleeve: Point[] = [
    [0.24, 0.04],
    [0.4, 0.1],
    [0.5, 0.86],
    [0.37, 0.88],
    [0.29, 0.3],
  ]
  const lapel: Point[] = [
    [-0.08, 0.02],
    [0, 0.42],
    [-0.02, 0.42],
    [-0.15, 0.12],
  ]
  return {
    body: [
      polygon([
        [-0.3, 0.04],
        [0.3, 0.04],
        [0.31, 1],
        [-0.31, 1],
      ]),
      polygon(sleeve),
      polygon(mirror(sleeve)),
    ],
    holes: [
      polygon([
        [-0.08, 0.0],
        [0.08, 0.0],
        [0.0, 0.4],
      ]),
    ],
    trims: [
      polygon(lapel),
      polygon(mirror(lapel)),
      polygon([
        [-0.006, 0.4],
        [0.006, 0.4],
        [0.006, 1],
        [-0.006, 1],
      ]),
    ],
  }
}

/** A flat product shot of a garment on a light studio backdrop, or cut out on transparency. */
export function drawGarment(options: GarmentPhotoOptions): { image: RgbaImage; box: [number, number, number, number] } {
  const { width, height, kind, color } = options
  const seed = options.seed ?? 11
  const aspect = ASPECT[kind]
  const garmentHeight = Math.min(0.84 * height, 0.84 * width * aspect)
  const garmentWidth = garmentHeight / aspect
  const x0 = (width - garmentWidth) / 2
  const y0 = (height - garmentHeight) / 2
  const toPixels = (shape: Shape): Shape => ({
    distance: (x, y) => shape.distance((x - x0) / garmentWidth - 0.5, (y - y0) / garmentHeight) * garmentWidth,
    bounds: [
      x0 + (shape.bounds[0] + 0.5) * garmentWidth,
      y0 + shape.bounds[1] * garmentHeight,
      x0 + (shape.bounds[2] + 0.5) * garmentWidth,
      y0 + shape.bounds[3] * garmentHeight,
    ],
  })
  const { body, holes, trims } = outline(kind)
  const canvas = new Canvas(width, height)
  if (!options.transparentBackground) {
    const grain = random(seed)
    canvas.fillAll((x, y) => {
      const v = 247 - 6 * Math.hypot(x / width - 0.5, y / height - 0.5) + (grain() - 0.5) * 3
      return [v, v, v - 2]
    })
  }
  const noise = valueNoise(seed, Math.max(2, garmentWidth / 60))
  const fabric = (x: number, y: number): Rgb =>
    shade(color, 1 + 0.05 * noise(x, y) + 0.02 * Math.sin(x * 1.7) * Math.sin(y * 1.3) - 0.05 * ((y - y0) / garmentHeight))
  canvas.fill(toPixels(subtract(union(...body), ...holes)), fabric)
  for (const trim of trims) canvas.fill(toPixels(trim), (x, y) => shade(fabric(x, y), 0.8))
  return { image: canvas.toRgba(), box: [x0, y0, x0 + garmentWidth, y0 + garmentHeight] }
}
