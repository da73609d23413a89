import type { BridalSteps, TrainPretreatment } from '../bridal/ports.ts'
import type { EngineOutcome, TryOnEngine } from '../engine/types.ts'
import { raceDeadline } from './deadline.ts'
import type { Scenario } from './scenarios.ts'
import type { WorkGate } from './work-gate.ts'

/**
 * The wrappers an engine and the wedding-dress steps get, in one place. Once, when the service is wired
 * (shared/service.ts): the local ones wait for a slot of the work gate. Per request (shared/tryon/run.ts): a test
 * key's scenario, then the request's deadline.
 */

/** The engine a request runs: its scenario forced, held to its deadline. */
export function engineForRequest(engine: TryOnEngine, scenario: Scenario | undefined, deadline: AbortSignal): TryOnEngine {
  return bounded(withScenario(engine, scenario), deadline)
}

/** The wedding-dress steps a request runs: its scenario forced, held to its deadline when it has one. */
export function bridalStepsForRequest(
  steps: BridalSteps,
  scenario: Scenario | undefined,
  threshold: number,
  deadline: AbortSignal | undefined,
): BridalSteps {
  const forced = withBridalScenario(steps, scenario, threshold)
  return deadline ? boundedSteps(forced, deadline) : forced
}

const FORCED = 'forced by X-Tryon-Scenario'

/**
 * A test key's X-Tryon-Scenario forces the engine's answer, so integrators can
 * exercise their error handling (and our refunds) without a real failure.
 */
export function withScenario(engine: TryOnEngine, scenario: Scenario | undefined): TryOnEngine {
  const forced: EngineOutcome | undefined =
    scenario === 'content_rejected'
      ? { kind: 'rejected', reason: `${FORCED}: content_rejected` }
      : scenario === 'generation_failed'
        ? { kind: 'failed', reason: `${FORCED}: generation_failed` }
        : undefined
  if (!forced) return engine
  return { name: engine.name, generate: async () => forced }
}

/** The train a forced score is given when the product photo shows none (the shortest the pre-treatment prepares). */
const FORCED_TRAIN = { length: 0.12, spread: 1.4 }

/**
 * A forced score needs a train to score: a product the pre-treatment finds no train in (a trainless gown, a top)
 * is prepared as it is with the shortest train, so the scenario's outcome is the one answered whatever the photo holds.
 */
function alwaysPrepared(pretreatment: TrainPretreatment): TrainPretreatment {
  return {
    name: pretreatment.name,
    prepare: async (request) => {
      const prepared = await pretreatment.prepare(request)
      return prepared.kind === 'prepared' ? prepared : { kind: 'prepared', garment: request.garment, train: FORCED_TRAIN }
    },
  }
}

/** A test key's X-Tryon-Scenario forces a bridal branch (docs/api.md, "Test keys and scenarios"). */
export function withBridalScenario(steps: BridalSteps, scenario: Scenario | undefined, threshold: number): BridalSteps {
  switch (scenario) {
    case 'bridal_preprocessing_crash':
      return {
        ...steps,
        pretreatment: { name: steps.pretreatment.name, prepare: () => Promise.reject(new Error(`${FORCED}: bridal_preprocessing_crash`)) },
      }
    case 'train_pretreatment_unavailable':
      return {
        ...steps,
        pretreatment: {
          name: steps.pretreatment.name,
          prepare: async () => ({ kind: 'unavailable', reason: `${FORCED}: train_pretreatment_unavailable` }),
        },
      }
    case 'train_score_low':
      // Half the threshold (rounded like any score): low whatever the threshold is set to (0 makes every score pass).
      return {
        pretreatment: alwaysPrepared(steps.pretreatment),
        scorer: { name: steps.scorer.name, score: async () => ({ kind: 'scored', score: threshold / 2 }) },
      }
    case 'train_score_unavailable':
      return {
        pretreatment: alwaysPrepared(steps.pretreatment),
        scorer: { name: steps.scorer.name, score: async () => ({ kind: 'unavailable', reason: `${FORCED}: train_score_unavailable` }) },
      }
    default:
      return steps
  }
}

/** The engine, held to the request's deadline even if it ignores the abort signal. */
function bounded(engine: TryOnEngine, deadline: AbortSignal): TryOnEngine {
  return { name: engine.name, generate: (request) => raceDeadline(engine.generate(request), deadline, 'generation') }
}

function boundedSteps(steps: BridalSteps, deadline: AbortSignal): BridalSteps {
  return {
    pretreatment: {
      name: steps.pretreatment.name,
      prepare: (r) => raceDeadline(steps.pretreatment.prepare(r), deadline, 'train pre-treatment'),
    },
    scorer: { name: steps.scorer.name, score: (r) => raceDeadline(steps.scorer.score(r), deadline, 'train scoring') },
  }
}

/** The local engine, one generation per slot. */
export function gatedEngine(engine: TryOnEngine, gate: WorkGate): TryOnEngine {
  return { name: engine.name, generate: (request) => gate.run(() => engine.generate(request), { signal: request.signal }) }
}

/**
 * The local bridal steps, each in a slot. The pre-treatment comes first and may be refused; the scorer runs after
 * the image was generated, so it waits for its turn instead (a refusal there would charge an unscored result).
 */
export function gatedBridalSteps(steps: BridalSteps, gate: WorkGate): BridalSteps {
  return {
    pretreatment: {
      name: steps.pretreatment.name,
      // Refused, it never ran: a TryOnFailure, which the bridal pipeline passes on rather than counting as a crash.
      prepare: (request) => gate.run(() => steps.pretreatment.prepare(request), { signal: request.signal }),
    },
    scorer: {
      name: steps.scorer.name,
      score: (request) => gate.run(() => steps.scorer.score(request), { signal: request.signal, admitted: true }),
    },
  }
}
