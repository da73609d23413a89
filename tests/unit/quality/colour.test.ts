import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ciede2000, deltaE, labImage, labOf, rgbOf, type Lab } from '../../../shared/quality/colour.ts'

describe('the evaluation colour difference', () => {
  // Pairs and expected values from Sharma, Wu and Dalal (2005), Table 1: https://hajim.rochester.edu/ece/sites/gsharma/ciede2000/
  const sharma: [Lab, Lab, number][] = [
    [[50, 2.6772, -79.7751], [50, 0, -82.7485], 2.0425],
    [[50, 3.1571, -77.2803], [50, 0, -82.7485], 2.8615],
    [[50, 2.8361, -74.02], [50, 0, -82.7485], 3.4412],
    [[50, -1.3802, -84.2814], [50, 0, -82.7485], 1.0],
    [[50, 0, 0], [50, -1, 2], 2.3669],
    [[50, 2.49, -0.001], [50, -2.49, 0.0009], 7.1792],
    [[50, 2.5, 0], [73, 25, -18], 27.1492],
    [[60.2574, -34.0099, 36.2677], [60.4626, -34.1751, 39.4387], 1.2644],
    [[63.0109, -31.0961, -5.8663], [62.8187, -29.7946, -4.0864], 1.263],
    [[22.7233, 20.0904, -46.694], [23.0331, 14.973, -42.5619], 2.0373],
    [[2.0776, 0.0795, -1.135], [0.9033, -0.0636, -0.5514], 0.9082],
  ]

  it("matches Sharma's published test pairs to four decimals", () => {
    for (const [a, b, expected] of sharma) {
      expect(ciede2000(a, b)).toBeCloseTo(expected, 4)
      expect(ciede2000(b, a)).toBeCloseTo(expected, 4)
    }
  })

  it('converts sRGB white, black and a primary to their published L*a*b*', () => {
    const near = (lab: Lab, expected: Lab) => {
      for (const i of [0, 1, 2]) expect(lab[i]).toBeCloseTo(expected[i], 1)
    }
    near(labOf([255, 255, 255]), [100, 0, 0])
    near(labOf([0, 0, 0]), [0, 0, 0])
    // sRGB red under D65 (Bruce Lindbloom's calculator): L 53.24, a 80.09, b 67.20.
    near(labOf([255, 0, 0]), [53.24, 80.09, 67.2])
  })

  it('goes back from L*a*b* to the same sRGB, and labImage agrees with labOf (fast-check)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), (r, g, b) => {
        expect(rgbOf(labOf([r, g, b]))).toEqual([r, g, b])
        const lab = labImage(Uint8Array.from([r, g, b, 255]), 1)
        const exact = labOf([r, g, b])
        for (const i of [0, 1, 2]) expect(lab[i]).toBeCloseTo(exact[i], 3)
      }),
    )
  })

  it('is never more than 2.1 times CIE76, the bound the oracle uses to skip unchanged pixels (fast-check)', () => {
    const rgb = fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }))
    fc.assert(
      fc.property(
        rgb,
        fc.integer({ min: -12, max: 12 }),
        fc.integer({ min: -12, max: 12 }),
        fc.integer({ min: -12, max: 12 }),
        (c, dr, dg, db) => {
          const a = labOf(c)
          const b = labOf([c[0] + dr, c[1] + dg, c[2] + db].map((v) => Math.max(0, Math.min(255, v))) as [number, number, number])
          expect(ciede2000(a, b)).toBeLessThanOrEqual(2.1 * Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]) + 1e-9)
        },
      ),
      { numRuns: 2000 },
    )
  })

  it('weighs lightness less with kL = 2: a shade of a fabric is nearer than with kL = 1, a hue change is not', () => {
    const red: [number, number, number] = [196, 30, 42]
    const shade: [number, number, number] = [150, 22, 32]
    expect(deltaE(red, shade, 2)).toBeLessThan(deltaE(red, shade, 1))
    expect(deltaE(red, [234, 148, 178], 2)).toBeGreaterThan(12)
  })
})
