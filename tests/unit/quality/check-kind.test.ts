import { describe, expect, it } from 'vitest'
import { productKindOf } from '../../../shared/tryon/quality.ts'
import { paintedComposite } from '../../support/scenes/composites.ts'
import { PART } from '../../support/scenes/types.ts'
import { measureScene, SLOW, tuningScene } from './check-support.ts'

describe('how far the caller says a product reaches', { timeout: SLOW }, () => {
  it('reads wedding, bridal and maxi dresses as reaching the ankles, as gowns do, and a dress or a top as not', () => {
    for (const named of [
      'Wedding dress',
      'wedding dresses',
      'Bridal gown',
      'Maxi dress',
      'Evening gown',
      'Evening dress',
      'evening dresses',
      'Ball gown',
    ])
      expect(productKindOf(named), named).toBe('gown')
    for (const named of ['Dress', 'Mini dress', 'T-shirt', 'Top', undefined]) expect(productKindOf(named), String(named)).toBeUndefined()
    expect(productKindOf('Wedding trousers')).toBe('trousers')
  })

  it('fails a wedding dress tried on without a train that stops at the knees, and passes it down to the ankles', () => {
    // Tried on without a train (its pre-treatment could not read it), the gown is measured as what the caller named it.
    const s = tuningScene(63, 'gown')
    const asNamed = { category: 'dress' as const, productKind: productKindOf('Wedding dress'), weddingDress: false }
    const toKnees = paintedComposite(s, { parts: [PART.torso, PART.hips, PART.thigh] })
    expect(measureScene(s, toKnees, asNamed).issues).toContain('garment_missing')
    // Named a dress, the same result would pass: nothing says it should reach further.
    expect(measureScene(s, toKnees, { ...asNamed, productKind: undefined }).passed).toBe(true)
    expect(measureScene(s, paintedComposite(s), asNamed).passed).toBe(true)
  })
})
