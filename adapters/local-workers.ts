import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import type {
  BridalSteps,
  PretreatmentOutcome,
  ScoreOutcome,
  TrainGuidance,
  TrainPretreatment,
  TrainScorer,
} from '../shared/bridal/ports.ts'
import type { DecodeBudget, RgbaImage } from '../shared/images/codecs/raster.ts'
import type { LocalSteps } from '../shared/engine/local/steps.ts'
import type { EngineOutcome, GeneratedImage, InputImage, TryOnRequest } from '../shared/engine/types.ts'
import { InputPreparationError, type InputPolicy, type PreparedImage } from '../shared/engine/providers/images.ts'
import type { ImageField } from '../shared/images/types.ts'
import type { QualityMeasurement } from '../shared/quality/measure.ts'
import type { MeasureJob } from '../shared/quality/measured-check.ts'

/**
 * What the main thread asks a worker: one call of the local engine, a bridal step, the measured check or a provider's
 * image re-encode, with what it may decode.
 */
export type LocalCall = { id: number; budget?: { pixels: number; work: number } } & LocalRequest

type LocalRequest =
  | { op: 'generate'; request: Omit<TryOnRequest, 'signal' | 'remainingMs' | 'decodeBudget'> }
  | { op: 'prepare'; guidance: TrainGuidance; request: { person: InputImage; garment: InputImage; clothingType?: string } }
  | { op: 'score'; guidance: TrainGuidance; request: { result: GeneratedImage; person: InputImage; garment: InputImage } }
  | { op: 'measure'; request: Omit<MeasureJob, 'signal' | 'decodeBudget'> }
  | { op: 'reencode'; request: { image: InputImage; field: ImageField; policy: InputPolicy; held?: HeldCopy } }

export type LocalReply =
  | { id: number; ok: true; value: unknown; spent?: { pixels: number; work: number }; shopperCopy?: HeldCopy }
  | { id: number; ok: false; error: { name: string; message: string } }

/** A pre-treatment's decoded shopper photo (DecodedCopy's image), moved back to the request's thread. */
export interface HeldCopy {
  side: number | undefined
  image: RgbaImage
}

interface Pending {
  worker: Worker
  resolve(value: unknown): void
  reject(error: Error): void
  budget?: DecodeBudget
  keep?: (copy: HeldCopy) => void
}

/**
 * The local engine and bridal steps on `threads` worker threads (node:worker_threads), so their seconds of decoding
 * and image work leave the server's event loop free for other requests. Calls beyond the threads wait for one (the
 * work gate in front keeps them to its concurrency; the measured check, outside the gate, takes its turn here too).
 * A call's images are copied once and moved to the worker; its result comes back moved.
 */
export function createWorkerLocalSteps(options: { threads: number }): LocalSteps & { close(): Promise<void> } {
  // The worker is TypeScript like the rest of the dev stack: it registers tsx's loader (found from here), then imports it.
  const tsx = new URL('dist/esm/api/index.mjs', pathToFileURL(createRequire(import.meta.url).resolve('tsx/package.json'))).href
  const entry = new URL('./local-worker.ts', import.meta.url).href
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}) })`
  const workers: Worker[] = []
  const pending = new Map<number, Pending>()
  const idle: Worker[] = []
  const waiting: ((worker: Worker) => void)[] = []
  let nextId = 1
  let closed = false

  // Started on first use, so a server that never runs local work keeps no threads.
  const start = (): Worker => {
    const worker = new Worker(bootstrap, { eval: true })
    worker.unref()
    worker.on('message', (reply: LocalReply) => {
      const call = pending.get(reply.id)
      if (!call) return
      pending.delete(reply.id)
      if (!reply.ok) return call.reject(Object.assign(new Error(reply.error.message), { name: reply.error.name }))
      if (reply.spent && call.budget) {
        call.budget.spend(reply.spent.pixels)
        call.budget.spendWork(reply.spent.work)
      }
      if (reply.shopperCopy) call.keep?.(reply.shopperCopy)
      call.resolve(reply.value)
    })
    worker.on('error', (error) => {
      for (const [id, call] of pending) {
        if (call.worker !== worker) continue
        pending.delete(id)
        call.reject(error)
      }
    })
    workers.push(worker)
    return worker
  }

  const acquire = (): Promise<Worker> => {
    const worker = idle.pop() ?? (workers.length < options.threads ? start() : undefined)
    return worker ? Promise.resolve(worker) : new Promise((resolve) => waiting.push(resolve))
  }
  const release = (worker: Worker) => {
    const next = waiting.shift()
    if (next) next(worker)
    else idle.push(worker)
  }

  async function call<T>(
    message: LocalRequest,
    signal?: AbortSignal,
    budget?: DecodeBudget,
    transfer: ArrayBuffer[] = [],
    keep?: (copy: HeldCopy) => void,
  ): Promise<T> {
    if (closed) throw new Error('the local workers are closed')
    const worker = await acquire()
    const id = nextId++
    const onAbort = () => worker.postMessage({ cancel: id })
    signal?.addEventListener('abort', onAbort, { once: true })
    try {
      return await new Promise<T>((resolve, reject) => {
        pending.set(id, { worker, resolve: resolve as (value: unknown) => void, reject, budget, keep })
        const full: LocalCall = { ...message, id, budget: budget && { pixels: budget.remaining, work: budget.workRemaining } }
        worker.postMessage(full, transfer)
      })
    } finally {
      signal?.removeEventListener('abort', onAbort)
      release(worker)
    }
  }

  // Each image a call sends is copied once, to exactly its own bytes (a view of a request's body would otherwise take
  // the whole body along), and that copy is moved to the worker rather than cloned a second time.
  const moving = () => {
    const moved: ArrayBuffer[] = []
    const own = <T extends { bytes: Uint8Array }>(image: T): T => {
      const bytes = image.bytes.slice()
      moved.push(bytes.buffer as ArrayBuffer)
      return { ...image, bytes }
    }
    return { own, moved }
  }
  const bridal = (guidance: TrainGuidance): BridalSteps => {
    const pretreatment: TrainPretreatment = {
      name: 'local',
      // The shopper photo it decoded comes back (moved, not copied) as the request's copy of it, as when the step runs
      // in the request's thread: a provider's re-encode then starts from it rather than decoding the photo again.
      prepare: ({ person, garment, clothingType, signal, decodeBudget }) => {
        const { own, moved } = moving()
        return call<PretreatmentOutcome>(
          { op: 'prepare', guidance, request: { person: own(person), garment: own(garment), clothingType } },
          signal,
          decodeBudget,
          moved,
          (copy) => {
            const held = decodeBudget?.copies?.get(person.bytes)
            if (!held || 'error' in held) decodeBudget?.copies?.set(person.bytes, copy)
          },
        )
      },
    }
    const scorer: TrainScorer = {
      name: 'local',
      score: ({ result, person, garment, signal, decodeBudget }) => {
        const { own, moved } = moving()
        return call<ScoreOutcome>(
          { op: 'score', guidance, request: { result: own(result), person: own(person), garment: own(garment) } },
          signal,
          decodeBudget,
          moved,
        )
      },
    }
    return { pretreatment, scorer }
  }

  return {
    engine: {
      name: 'local',
      generate: ({ signal, remainingMs: _, decodeBudget, ...request }) => {
        const { own, moved } = moving()
        return call<EngineOutcome<GeneratedImage>>(
          { op: 'generate', request: { ...request, person: own(request.person), garment: own(request.garment) } },
          signal,
          decodeBudget,
          moved,
        )
      },
    },
    bridal,
    // The request's thread keeps nothing of this check but the answer; copying a 40 MP JPEG's 8 MB takes a few ms. The
    // photos are decoded there from their bytes at the check's scale, as the request's thread did before: it held no
    // decoded copy of them but a pre-treatment's shopper photo, which the check never reused (its scores stay as they were).
    measure: ({ signal, decodeBudget, ...job }) => {
      const { own, moved } = moving()
      const request = { ...job, shopper: own(job.shopper), product: own(job.product), result: own(job.result) }
      return call<QualityMeasurement>({ op: 'measure', request }, signal, decodeBudget, moved)
    },
    // A provider's input image, decoded and re-encoded here (prepareInput). The request's decoded copy of it, when it
    // has one, goes along (copied: the request keeps its own), so the worker re-encodes from it as the thread would.
    prepareImage: async (image, field, policy, budget, signal) => {
      const { own, moved } = moving()
      const copy = budget?.copies?.get(image.bytes)
      const held = copy && 'image' in copy ? { side: copy.side, image: { ...copy.image, data: copy.image.data.slice() } } : undefined
      if (held) moved.push(held.image.data.buffer as ArrayBuffer)
      try {
        return await call<PreparedImage>({ op: 'reencode', request: { image: own(image), field, policy, held } }, signal, budget, moved)
      } catch (error) {
        // What the provider adapters answer `invalid_input` for, as thrown in the request's thread.
        if ((error as Error).name === 'InputPreparationError') throw new InputPreparationError(field, (error as Error).message)
        throw error
      }
    },
    async close() {
      closed = true
      await Promise.all(workers.map((worker) => worker.terminate()))
    },
  }
}
