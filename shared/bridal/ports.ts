import type { DecodeBudget } from '../images/codecs/raster.ts'
import type { GarmentCategory, GeneratedImage, InputImage, TrainSpec } from '../engine/types.ts'

/**
 * Train pre-treatment: reads the gown from the product image and prepares what the engine needs to render
 * its train. `unavailable` means "this step cannot run here" (the try-on goes on without a train, 1 credit);
 * a thrown error is a crash of the bridal pre-processing (503, nothing charged, generation never starts).
 */
export interface TrainPretreatment {
  readonly name: string
  prepare(request: {
    person: InputImage
    garment: InputImage
    /** The caller's `clothingType` hint: a garment it names a top, a jacket or trousers has no train to prepare. */
    clothingType?: string
    signal?: AbortSignal
    decodeBudget?: DecodeBudget
  }): Promise<PretreatmentOutcome>
}

export type PretreatmentOutcome =
  /** `person`, when given, replaces the shopper photo for generation and scoring (e.g. padded with floor room). */
  | { kind: 'prepared'; garment: InputImage; train: TrainSpec; person?: InputImage }
  /**
   * `category`: what the garment was read as when it has no train at all (a short or plain floor-length dress,
   * trousers; undefined for a top or anything unclear): it is tried on as that, not forced into a gown.
   */
  | { kind: 'unavailable'; reason: string; category?: GarmentCategory | 'unknown' }

/**
 * What an engine does with a train (README "What the pre-treatment supplies, per engine"):
 * `draws` renders it from the TrainSpec (local); `prompt` is asked for it in words, sized from the TrainSpec
 * (Gemini); `none` takes no guidance at all and renders the gown as its product photo shows it (FASHN, Vertex).
 */
export type TrainGuidance = 'draws' | 'prompt' | 'none'

/**
 * Train scorer: how well the generated image shows a train, in [0, 1]. `unavailable` (or a thrown error)
 * means the score cannot be evaluated: the result is delivered with `trainScore: null` and charged in full.
 */
export interface TrainScorer {
  readonly name: string
  score(request: {
    result: GeneratedImage
    person: InputImage
    garment: InputImage
    signal?: AbortSignal
    decodeBudget?: DecodeBudget
  }): Promise<ScoreOutcome>
}

/** `modelNotServed`: the judge's model is retired or its provider answered 404 NOT_FOUND for it (a configuration error). */
export type ScoreOutcome = { kind: 'scored'; score: number } | { kind: 'unavailable'; reason: string; modelNotServed?: boolean }

/** The two bridal steps around generation, as one pair per key mode (like the engines). */
export interface BridalSteps {
  pretreatment: TrainPretreatment
  scorer: TrainScorer
}
