import type { DecodedImageInfo, DisplayTransform } from '../images/types.ts'
import type { DecodeBudget } from '../images/codecs/raster.ts'

/** What the shopper tries on: a wedding dress adds the train steps, and is priced and refunded by its own rules. */
export type ProductKind = 'standard' | 'wedding-dress'

/** What an engine is asked to dress the person in. `undefined` lets the engine guess from the garment. */
export type GarmentCategory = 'top' | 'bottom' | 'dress' | 'outerwear'

/**
 * An input image after intake: validated bytes plus what its header said. Its width and height are as displayed
 * (after its EXIF orientation); decode it through shared/images/upright.ts to get the pixels the shopper saw.
 */
export interface InputImage extends DecodedImageInfo, DisplayTransform {
  bytes: Uint8Array
  /**
   * Rows of floor the bridal pre-treatment added below a shopper photo, so a train fits in the frame. They
   * show nobody: the photo is analysed without them (and only engines that read our analysis care).
   */
  addedFloorRows?: number
}

export interface GeneratedImage {
  bytes: Uint8Array
  contentType: 'image/jpeg' | 'image/png' | 'image/webp'
  /** The engine that produced it, when that is not simply the engine asked (a fallback chain). */
  engine?: string
}

/**
 * A result still arriving from the provider's URL (FASHN's): its first bytes were read and are an image; the
 * rest streams into storage as it comes, under the download's guards (size cap, timeout, deadline).
 */
export interface StreamedImage {
  stream: ReadableStream<Uint8Array>
  /** The length the provider's server declared, when it did. */
  length: number | null
  contentType: 'image/jpeg' | 'image/png' | 'image/webp'
  engine?: string
  /** Why the download stopped short (an ImageFetchError), once it has: a failed upload's cause, or not. */
  downloadError(): unknown
}

/** What an engine generated: the bytes, or a download of them under way. */
export type ResultImage = GeneratedImage | StreamedImage

/** A wedding gown's train as the bridal pre-treatment prepared it: fabric spread on the floor past the feet. */
export interface TrainSpec {
  /** How far the train reaches past the feet, as a fraction of the wearer's height; 0 draws none. */
  length: number
  /** Width of the train at its widest, as a multiple of the gown's hem width (at least 1). */
  spread: number
}

export interface TryOnRequest {
  person: InputImage
  garment: InputImage
  /** Fitted region; undefined means "best guess from the garment image". */
  category: GarmentCategory | undefined
  /** Free-text hint as the caller sent it (providers may use it in a prompt). */
  clothingType?: string
  locale?: string
  /** Wedding-dress mode: render this train below the hem (engines without train support ignore it). */
  train?: TrainSpec
  signal?: AbortSignal
  /** Milliseconds until `signal` aborts, when known: lets an adapter skip a wait it could not finish. */
  remainingMs?: () => number
  /** Decoded pixels this request may still allocate, shared by every step that decodes its images. */
  decodeBudget?: DecodeBudget
}

/**
 * Expected outcomes are values so billing can settle on them; only bugs throw.
 * rejected → 422, invalid_input and no_person (nobody in the shopper photo) → 400, failed → 500.
 */
export type EngineOutcome<Image extends ResultImage = ResultImage> =
  | { kind: 'generated'; image: Image }
  | { kind: 'rejected'; reason: string }
  | { kind: 'invalid_input'; reason: string }
  | { kind: 'no_person'; reason: string }
  /**
   * `outage`: the provider could not be reached, timed out or answered 429/5xx (what a circuit breaker counts).
   * `modelNotServed`: the configured model is retired or the provider answered 404 NOT_FOUND for it: a configuration
   * error, not retried, and the breaker opens at once.
   */
  | { kind: 'failed'; reason: string; outage?: boolean; modelNotServed?: boolean }

/** Every outcome but an image: what any engine may answer. */
export type NoImageOutcome = Exclude<EngineOutcome, { kind: 'generated' }>

/** An engine; one that always answers with the bytes (no download under way) is a TryOnEngine<GeneratedImage>. */
export interface TryOnEngine<Image extends ResultImage = ResultImage> {
  readonly name: string
  generate(request: TryOnRequest): Promise<EngineOutcome<Image>>
  /**
   * A fallback chain's engines after the one named (the engine an image records): what a result that failed its
   * quality check is generated again on. Undefined when none follows, or for a single engine.
   */
  after?(name: string): TryOnEngine | undefined
}
