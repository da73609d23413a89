import type { GeneratedImage, InputImage, TrainSpec } from '../engine/types.ts'

/**
 * Train pre-treatment: reads the gown from the product image and prepares what the engine needs to render
 * its train. `unavailable` means "this step cannot run here" (the try-on goes on without a train, 1 credit);
 * a thrown error is a crash of the bridal pre-processing (503, nothing charged, generation never starts).
 */
export interface TrainPretreatment {
  readonly name: string
  prepare(request: { person: InputImage; garment: InputImage; signal?: AbortSignal }): Promise<PretreatmentOutcome>
}

export type PretreatmentOutcome =
  | { kind: 'prepared'; garment: InputImage; train: TrainSpec }
  | { kind: 'unavailable'; reason: string }

/**
 * Train scorer: how well the generated image shows a train, in [0, 1]. `unavailable` (or a thrown error)
 * means the score cannot be evaluated: the result is delivered with `trainScore: null` and charged in full.
 */
export interface TrainScorer {
  readonly name: string
  score(request: { result: GeneratedImage; person: InputImage; garment: InputImage; signal?: AbortSignal }): Promise<ScoreOutcome>
}

export type ScoreOutcome = { kind: 'scored'; score: number } | { kind: 'unavailable'; reason: string }

/** The two bridal steps around generation, as one pair per key mode (like the engines). */
export interface BridalSteps {
  pretreatment: TrainPretreatment
  scorer: TrainScorer
}
