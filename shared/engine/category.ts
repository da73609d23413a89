import type { GarmentCategory, ProductKind } from './types.ts'

/** `\b(<alternatives>)<suffix>\b`, the alternatives written over several lines. */
const anyWord = (alternatives: string, suffix = '') => new RegExp(`\\b(${alternatives})${suffix}\\b`)

const words: [GarmentCategory, RegExp][] = [
  ['dress', anyWord('dress|gown|robe|kleid|vestido|abito|jumpsuit|romper|playsuit|overall|sari|saree|kimono|one[- ]?piece', 's?')],
  [
    'outerwear',
    anyWord(
      'jacket|coat|blazer|parka|anorak|cardigan|veste|manteau|jacke|mantel|chaqueta|abrigo|' +
        'giacca|cappotto|windbreaker|puffer|gilet|poncho',
      's?',
    ),
  ],
  [
    'bottom',
    anyWord('pants?|trousers?|jeans?|skirts?|shorts?|leggings?|joggers?|chinos?|culottes?|pantalon|jupe|hose|rock|falda|gonna|bottoms?'),
  ],
  [
    'top',
    anyWord(
      't-?shirts?|tee|shirts?|tops?|blouses?|sweaters?|jumpers?|hoodies?|sweatshirts?|polos?|tanks?|camis?|pullovers?|vests?|' +
        'chemise|hemd|camisa|camiseta|maglia|pull',
    ),
  ],
]

/**
 * Maps the free-text `clothingType` hint to the region a garment covers.
 * The last category word in the text wins ("jacket dress" is a dress); no word → undefined,
 * and the engine guesses from the garment image.
 */
export function garmentCategoryOf(clothingType: string | undefined, productKind: ProductKind): GarmentCategory | undefined {
  if (productKind === 'wedding-dress') return 'dress'
  if (!clothingType) return undefined
  const text = clothingType.toLowerCase()
  let best: { category: GarmentCategory; at: number } | undefined
  for (const [category, pattern] of words) {
    for (const match of text.matchAll(new RegExp(pattern.source, 'g'))) {
      if (!best || match.index > best.at) best = { category, at: match.index }
    }
  }
  return best?.category
}

/** The skirts among the bottoms: a bridal skirt may have a train. */
const SKIRT = anyWord('skirts?|jupes?|rock|faldas?|gonna|gonne')

/**
 * Whether the `clothingType` hint names a garment that has no train whatever its photo shows: a top, a jacket or coat,
 * trousers or shorts (not a skirt, not a dress or gown). A wedding-dress request for one is a standard try-on.
 */
export function namesTrainlessGarment(clothingType: string | undefined): boolean {
  const category = garmentCategoryOf(clothingType, 'standard')
  if (category === 'top' || category === 'outerwear') return true
  if (category !== 'bottom') return false
  // The last bottom word decides, as the category's last word does ("leggings under a skirt" is a skirt).
  const text = (clothingType ?? '').toLowerCase()
  const last = (pattern: RegExp) => Math.max(-1, ...[...text.matchAll(new RegExp(pattern.source, 'g'))].map((m) => m.index))
  return last(SKIRT) < last(words.find(([c]) => c === 'bottom')![1])
}
