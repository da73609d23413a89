/** How the service would name a scene's product to the measured checks (shared/quality/measure.ts). */
import type { QualityCategory, QualityProductKind } from '../shared/quality/measure.ts'
import type { ProductKind } from '../tests/support/scenes/types.ts'

export function checkCategoryOf(kind: ProductKind): { category: QualityCategory; productKind?: QualityProductKind } {
  switch (kind) {
    case 'tshirt':
    case 'shirt':
      return { category: 'top' }
    case 'jacket':
      return { category: 'outerwear' }
    case 'trousers':
      return { category: 'bottom', productKind: 'trousers' }
    case 'skirt':
      return { category: 'bottom', productKind: 'skirt' }
    case 'dress':
      return { category: 'dress' }
    case 'gown':
    case 'train-gown':
      return { category: 'dress', productKind: 'gown' }
    case 'shoes':
      return { category: 'shoes' }
    case 'bag':
      return { category: 'bag' }
  }
}
