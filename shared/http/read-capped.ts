import { untilAborted } from '../abort.ts'

/**
 * Reads a response body of at most `maxBytes`. A Content-Length above the cap is refused before reading;
 * the byte counter is what enforces it, so a missing or lying length is cut off while streaming.
 * `tooLarge` builds the error, given the declared length when that was the reason.
 */
export async function readCapped(
  response: Response,
  maxBytes: number,
  signal: AbortSignal | undefined,
  tooLarge: (declared: number | null) => Error,
): Promise<Uint8Array> {
  const declared = response.headers.get('content-length')
  if (declared !== null && /^\d+$/.test(declared.trim()) && Number(declared) > maxBytes) {
    response.body?.cancel().catch(() => {})
    throw tooLarge(Number(declared))
  }
  if (!response.body) return new Uint8Array(0)

  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  try {
    for (;;) {
      const { done, value } = await (signal ? untilAborted(reader.read(), signal) : reader.read())
      if (done) break
      total += value.byteLength
      if (total > maxBytes) throw tooLarge(null)
      chunks.push(value)
    }
  } catch (error) {
    reader.cancel().catch(() => {})
    throw error
  }
  const bytes = new Uint8Array(total)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}
