import { untilAborted } from '../abort.ts'

/** What readCapped reads: a Response, or a Request's body. */
export interface BodySource {
  headers: Headers
  body: ReadableStream<Uint8Array> | null
}

/**
 * Reads a body of at most `maxBytes`. A Content-Length above the cap is refused before reading;
 * the byte counter is what enforces it, so a missing or lying length is cut off while streaming.
 * `tooLarge` builds the error, given the declared length when that was the reason.
 *
 * With a Content-Length (and no content coding, which the runtime undoes, so the length would be the coded
 * one) the bytes are copied into one array of that size as they arrive: the body is held once, not as its
 * chunks and then again joined. `reserveBefore` leaves that many bytes in front of the body, for the caller.
 */
export async function readCapped(
  source: BodySource,
  maxBytes: number,
  signal: AbortSignal | undefined,
  tooLarge: (declared: number | null) => Error,
  options: { reserveBefore?: number } = {},
): Promise<Uint8Array<ArrayBuffer>> {
  const declared = declaredLength(source.headers)
  if (declared !== null && declared > maxBytes) {
    source.body?.cancel().catch(() => {})
    throw tooLarge(declared)
  }
  const before = options.reserveBefore ?? 0
  if (!source.body) return new Uint8Array(before)

  const reader = source.body.getReader()
  // The chunks so far when the length is unknown (or proved wrong), else one array filled in place.
  const chunks: Uint8Array[] = []
  let filled = declared !== null && !coded(source.headers) ? new Uint8Array(before + declared) : undefined
  let total = 0
  try {
    for (;;) {
      const { done, value } = await (signal ? untilAborted(reader.read(), signal) : reader.read())
      if (done) break
      total += value.byteLength
      if (total > maxBytes) throw tooLarge(null)
      if (filled && before + total <= filled.byteLength) {
        filled.set(value, before + total - value.byteLength)
        continue
      }
      if (filled) {
        chunks.push(filled.subarray(before, before + total - value.byteLength))
        filled = undefined
      }
      chunks.push(value)
    }
  } catch (error) {
    reader.cancel().catch(() => {})
    throw error
  }
  if (filled) return before + total === filled.byteLength ? filled : filled.subarray(0, before + total)
  const bytes = new Uint8Array(before + total)
  let offset = before
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}

function declaredLength(headers: Headers): number | null {
  const declared = headers.get('content-length')
  return declared !== null && /^\d+$/.test(declared.trim()) ? Number(declared) : null
}

function coded(headers: Headers): boolean {
  const coding = headers.get('content-encoding')
  return coding !== null && coding.trim().toLowerCase() !== 'identity' && coding.trim() !== ''
}
