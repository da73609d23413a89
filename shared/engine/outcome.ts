import { readCapped } from '../streams/read-capped.ts'
import { TryOnFailure } from '../failure.ts'
import type { EngineOutcome, GeneratedImage, ResultImage } from './types.ts'

/** The image of a generated outcome; any other outcome becomes the failure the caller is told of. */
export function generatedImageOf<Image extends ResultImage>(outcome: EngineOutcome<Image>): Image {
  switch (outcome.kind) {
    case 'generated':
      return outcome.image
    case 'rejected':
      throw new TryOnFailure('ai_content_rejected', `the engine rejected the content: ${outcome.reason}`)
    case 'invalid_input':
      throw new TryOnFailure('unsupported_image', `${outcome.reason}. No credits were charged.`, { tellsCaller: true })
    case 'no_person':
      throw new TryOnFailure('person_not_found', outcome.reason)
    case 'failed':
      throw generationFailed()
  }
}

/**
 * The image as bytes, for a step that reads them (the train scorer): a download under way is read to its end,
 * into one array of its declared size. A download that stops short (its cap, its timeout) is a failed
 * generation, refunded like any other.
 */
export async function wholeImage(image: ResultImage): Promise<GeneratedImage> {
  if ('bytes' in image) return image
  const headers = new Headers(image.length === null ? {} : { 'content-length': String(image.length) })
  try {
    const bytes = await readCapped(
      { headers, body: image.stream },
      Number.MAX_SAFE_INTEGER,
      undefined,
      () => new Error('unreachable: the download has its own cap'),
    )
    return { bytes, contentType: image.contentType, engine: image.engine }
  } catch {
    throw generationFailed()
  }
}

/** The generation produced no usable image. */
export function generationFailed(): TryOnFailure {
  return new TryOnFailure('generation_failed', 'the generation produced no usable image')
}
