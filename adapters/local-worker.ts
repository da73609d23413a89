/**
 * A worker thread of adapters/local-workers.ts: runs the local engine, bridal steps, measured check and providers' image
 * re-encodes on what the main thread sends,
 * each call with its own decoding budget (what the request had left) and abort signal, and answers with the outcome
 * and what the call spent of the budget.
 */
import { parentPort } from 'node:worker_threads'
import type { TrainGuidance } from '../shared/bridal/ports.ts'
import { createDecodeBudget, type DecodeBudget } from '../shared/images/codecs/raster.ts'
import { inThreadLocalSteps } from '../shared/engine/local/steps.ts'
import { prepareInput } from '../shared/engine/providers/images.ts'
import type { HeldCopy, LocalCall, LocalReply } from './local-workers.ts'

const steps = inThreadLocalSteps()
const bridal = new Map<TrainGuidance, ReturnType<typeof steps.bridal>>()
const running = new Map<number, AbortController>()

parentPort!.on('message', async (message: LocalCall | { cancel: number }) => {
  if ('cancel' in message) return running.get(message.cancel)?.abort()
  const abort = new AbortController()
  running.set(message.id, abort)
  const budget = message.budget ? createDecodeBudget(message.budget.pixels, message.budget.work) : undefined
  const common = { signal: abort.signal, decodeBudget: budget }
  let reply: LocalReply
  try {
    let value: unknown
    let shopperCopy: HeldCopy | undefined
    if (message.op === 'generate') value = await steps.engine.generate({ ...message.request, ...common })
    else if (message.op === 'measure') value = await steps.measure({ ...message.request, ...common })
    else if (message.op === 'reencode') {
      const { image, field, policy, held } = message.request
      if (held) budget?.copies?.set(image.bytes, held)
      value = prepareInput(image, field, policy, budget)
    } else {
      const guidance = message.guidance
      if (!bridal.has(guidance)) bridal.set(guidance, steps.bridal(guidance))
      const { pretreatment, scorer } = bridal.get(guidance)!
      value =
        message.op === 'prepare'
          ? await pretreatment.prepare({ ...message.request, ...common })
          : await scorer.score({ ...message.request, ...common })
      if (message.op === 'prepare') shopperCopy = heldCopy(budget, message.request.person.bytes)
    }
    const spent = budget && message.budget ? { pixels: message.budget.pixels - budget.remaining, work: budget.workSpent } : undefined
    reply = { id: message.id, ok: true, value, spent, shopperCopy }
  } catch (error) {
    reply = {
      id: message.id,
      ok: false,
      error: { name: (error as Error)?.name ?? 'Error', message: (error as Error)?.message ?? String(error) },
    }
  } finally {
    running.delete(message.id)
  }
  parentPort!.postMessage(reply, transferables(reply))
})

/** The call's decoded copy of `bytes`, its pixels in a buffer of their own so it can be moved. */
function heldCopy(budget: DecodeBudget | undefined, bytes: Uint8Array): HeldCopy | undefined {
  const held = budget?.copies?.get(bytes)
  if (!held || 'error' in held) return undefined
  const { data } = held.image
  const whole = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength ? data : data.slice()
  return { side: held.side, image: { ...held.image, data: whole } }
}

/** A generated image's bytes, and a decoded copy handed back, go back without a copy. */
function transferables(reply: LocalReply): ArrayBuffer[] {
  const value = reply.ok
    ? (reply.value as { kind?: string; image?: { bytes?: Uint8Array }; reencoded?: boolean; bytes?: Uint8Array })
    : undefined
  // A generated image, or a re-encoded input image (a PreparedImage): the caller's own bytes, sent as they were, stay.
  const buffer = value?.kind === 'generated' ? value.image?.bytes?.buffer : value?.reencoded ? value.bytes?.buffer : undefined
  const copy = reply.ok ? reply.shopperCopy?.image.data.buffer : undefined
  return [buffer, copy].filter((b): b is ArrayBuffer => b instanceof ArrayBuffer)
}
