import type { GarmentCategory, TrainSpec } from '../types.ts'

const REGION: Record<GarmentCategory, string> = {
  top: 'Replace only the upper-body garment; keep the lower-body clothing as it is.',
  bottom: 'Replace only the lower-body garment (trousers, skirt or shorts); keep the top as it is.',
  dress: 'The garment is a one-piece: it replaces both the upper- and lower-body clothing.',
  outerwear: 'The garment is outerwear: it is worn over the current clothing.',
}

/**
 * The instruction sent with the two images. Written in English (the language the image models follow best);
 * the caller's locale names the language of the shop's garment description and of any words in the answer.
 */
export function tryOnPrompt(request: { category?: GarmentCategory; clothingType?: string; locale?: string; train?: TrainSpec }): string {
  const language = languageName(request.locale)
  const lines = [
    'Virtual fitting room. Image 1 is a photo of a shopper. Image 2 is a product photo of a garment.',
    'Generate one photorealistic image of the same person from image 1 wearing the garment from image 2.',
    "Keep the person's face, identity, body shape, skin tone, hair, pose, the framing and the background of image 1 unchanged.",
    'Reproduce the garment faithfully: colour, pattern, print, fabric, cut and length.',
  ]
  if (request.category) lines.push(REGION[request.category])
  const description = sanitize(request.clothingType)
  if (description) lines.push(`The shop describes the garment as "${description}"${language ? ` (written in ${language})` : ''}.`)
  if (request.train && request.train.length > 0) lines.push(trainInstruction(request.train))
  lines.push('Do not add any text, captions, logos or watermarks to the image.')
  if (language && language !== 'English') lines.push(`If you write anything besides the image, write it in ${language}.`)
  return lines.join('\n')
}

/** Wedding-dress mode: the gown's train is the point of the picture, so it must be fully on the floor and visible. */
function trainInstruction(train: TrainSpec): string {
  const reach = Math.round(train.length * 100)
  const spread = Math.round(train.spread * 10) / 10
  return [
    'This is a wedding gown with a train. Show the person full length, from head to feet.',
    'Render the full train spread out on the floor behind and around the feet, continuous with the skirt, ' +
      `reaching about ${reach}% of the person's height beyond the feet and about ${spread} times as wide as the hem.`,
    'The whole train must be visible and lie flat on the floor, not folded, cropped or hidden behind the person.',
  ].join(' ')
}

/** The caller's free text inside our quotes: no quotes, backticks or line breaks of its own. */
function sanitize(text: string | undefined): string | undefined {
  const clean = text
    ?.replace(/[\r\n\t"`\\]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 100)
  return clean ? clean : undefined
}

export function languageName(locale: string | undefined): string | undefined {
  if (!locale) return undefined
  const tag = locale.replace(/_/g, '-')
  try {
    const name = new Intl.DisplayNames(['en'], { type: 'language' }).of(tag.split('-')[0])
    return name && name.toLowerCase() !== tag.split('-')[0].toLowerCase() ? name : undefined
  } catch {
    return undefined
  }
}

/** Gemini's supported aspect ratios; the one nearest the shopper photo keeps the framing. */
const ASPECT_RATIOS = ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9'] as const

export function nearestAspectRatio(width: number, height: number): string {
  const target = Math.log(width / height)
  let best: string = '1:1'
  let distance = Infinity
  for (const ratio of ASPECT_RATIOS) {
    const [w, h] = ratio.split(':').map(Number)
    const d = Math.abs(Math.log(w / h) - target)
    if (d < distance) {
      best = ratio
      distance = d
    }
  }
  return best
}
