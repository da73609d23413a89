import { encodeBase64 } from '../../images/base64.ts'

/**
 * Bytes that go out as a JSON string of their base64, after an ASCII prefix when there is one (a data URI's
 * `data:image/jpeg;base64,`). A request body holds these instead of base64 strings: the base64 is only ever
 * written a chunk at a time, as the body is sent.
 */
export class Base64Bytes {
  constructor(
    readonly bytes: Uint8Array,
    readonly prefix = '',
  ) {
    if (!/^[\x20-\x7e]*$/.test(prefix) || /["\\]/.test(prefix))
      throw new Error('a base64 prefix must be printable ASCII without quotes or backslashes')
  }

  /** What a log line shows instead of the bytes. */
  toJSON(): string {
    return `${this.prefix}[${this.bytes.byteLength} bytes as base64]`
  }
}

/** A JSON request body, written as it is sent. */
export interface JsonBody {
  /** Its length in bytes, known before a byte is written. */
  readonly length: number
  /** The body from its first byte, a chunk (a text run, or 64 KB of base64) per read: one stream per attempt. */
  stream(): ReadableStream<Uint8Array>
  /** The whole body in one array. */
  bytes(): Uint8Array<ArrayBuffer>
}

/** Raw bytes per base64 chunk: a multiple of 3, so chunks join without padding between them. */
const CHUNK = 3 * 16 * 1024
const encoder = new TextEncoder()

/**
 * `value` as a JSON body, each Base64Bytes in it written as its string. The JSON around them is small and
 * serialized at once; the images are only base64-encoded chunk by chunk as the body is read, so sending a
 * request of two 6 MB images never holds its 16 MB of base64, nor a JSON text of it, nor a copy of either.
 */
export function jsonBody(value: unknown): JsonBody {
  const images: Base64Bytes[] = []
  // A placeholder for each image that no other string in the body can equal.
  const marker = `\u0000${crypto.randomUUID()}:`
  const text = JSON.stringify(value, function (key, replaced) {
    const original = (this as Record<string, unknown>)[key]
    if (!(original instanceof Base64Bytes)) return replaced
    images.push(original)
    return `${marker}${images.length - 1}`
  })
  if (text === undefined) throw new TypeError('a JSON body must be a JSON value')
  const parts: (Uint8Array | Base64Bytes)[] = []
  const placeholder = new RegExp(`${JSON.stringify(marker).slice(1, -1).replace(/\\/g, '\\\\')}(\\d+)`, 'g')
  let at = 0
  for (const match of text.matchAll(placeholder)) {
    parts.push(encoder.encode(text.slice(at, match.index)))
    parts.push(images[Number(match[1])])
    at = match.index + match[0].length
  }
  parts.push(encoder.encode(text.slice(at)))
  const length = parts.reduce(
    (sum, part) => sum + (part instanceof Uint8Array ? part.byteLength : part.prefix.length + Math.ceil(part.bytes.byteLength / 3) * 4),
    0,
  )

  function* chunks(): Generator<Uint8Array> {
    for (const part of parts) {
      if (part instanceof Uint8Array) {
        if (part.byteLength > 0) yield part
        continue
      }
      if (part.prefix !== '') yield encoder.encode(part.prefix)
      for (let i = 0; i < part.bytes.byteLength; i += CHUNK) yield encoder.encode(encodeBase64(part.bytes.subarray(i, i + CHUNK)))
    }
  }

  return {
    length,
    stream() {
      const pending = chunks()
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          const next = pending.next()
          if (next.done) controller.close()
          else controller.enqueue(next.value)
        },
      })
    },
    bytes() {
      const out = new Uint8Array(length)
      let offset = 0
      for (const chunk of chunks()) {
        out.set(chunk, offset)
        offset += chunk.byteLength
      }
      return out
    },
  }
}
