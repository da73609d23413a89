import type { BridalSteps, TrainGuidance } from '../../bridal/ports.ts'
import { createLocalPretreatment } from '../../bridal/local-pretreatment.ts'
import { createLocalTrainScorer } from '../../bridal/local-scorer.ts'
import type { QualityMeasurement } from '../../quality/measure.ts'
import { measureJob, type MeasureJob } from '../../quality/measured-check.ts'
import { prepareInThread, type ImagePreparer } from '../providers/images.ts'
import type { GeneratedImage, TryOnEngine } from '../types.ts'
import { createLocalEngine } from './index.ts'

/**
 * The CPU-heavy local work (the local engine, the local bridal steps, the measured quality check, providers' image
 * re-encodes) as a platform runs
 * it: in the request's own thread by default; the Node dev stack runs it on worker threads (adapters/local-workers.ts),
 * so a decode of seconds holds no other request. Supabase's Edge Runtime has no Web Worker API (its "Limits" page),
 * so there the decoding budget alone keeps a request's work bounded.
 */
export interface LocalSteps {
  engine: TryOnEngine<GeneratedImage>
  bridal(guidance: TrainGuidance): BridalSteps
  /** Decodes the photos and the result and measures the result (shared/quality/measured-check.ts). */
  measure(job: MeasureJob): Promise<QualityMeasurement>
  /** Decodes and re-encodes a provider's input image (prepareInput): in the request's thread when the platform has no other. */
  prepareImage: ImagePreparer
}

export function inThreadLocalSteps(): LocalSteps {
  return {
    engine: createLocalEngine(),
    bridal: (guidance) => ({ pretreatment: createLocalPretreatment({ guidance }), scorer: createLocalTrainScorer() }),
    measure: async (job) => measureJob(job),
    prepareImage: prepareInThread,
  }
}
