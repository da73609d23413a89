import type { RgbaImage } from '../../images/codecs/raster.ts'
import { analyseBody, defaultLayout, type BodyLayout } from './person.ts'
import { looksLikePerson } from './presence.ts'
import { segmentForeground, type Segmentation } from './segmentation.ts'

/** The long side of the copy a shopper photo is read on: landmarks need shape, not detail. */
export const READING_SIDE = 320

/** A shopper photo read: its silhouette, the landmarks read from it, and the person they show. */
export interface ShopperReading {
  segmentation: Segmentation
  /** The landmarks the silhouette shows, found or not, before the person-presence test. */
  silhouette: BodyLayout
  /** The silhouette's landmarks when they show a person (presence.ts), else the centred default (not `found`). */
  body: BodyLayout
}

/**
 * Reads where the shopper is in a small copy of their photo. A figure against a brick wall is often lost the first
 * time: bricks of other tones than the wall's edges stand out as subject and join the head or the arms. When no person
 * came out, a second reading clears such a wall by its tones (SegmentOptions.wallColours) and is kept if it shows one.
 * The engine and the quality check read a photo through here, so they read the same figure.
 */
export function readShopper(photo: RgbaImage): ShopperReading {
  const first = read(photo, segmentForeground(photo, { backdrop: 'room' }))
  if (first.body.found) return first
  const cleared = segmentForeground(photo, { backdrop: 'room', wallColours: true })
  if (!cleared.wallColoursCleared) return first
  const second = read(photo, cleared)
  return second.body.found ? second : first
}

function read(photo: RgbaImage, segmentation: Segmentation): ShopperReading {
  const silhouette = analyseBody(segmentation.mask, segmentation.coverage)
  const person = silhouette.found && looksLikePerson(photo, segmentation.mask, silhouette)
  return { segmentation, silhouette, body: person ? silhouette : defaultLayout(photo.width, photo.height) }
}
