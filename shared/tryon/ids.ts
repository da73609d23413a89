const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

export interface IdSource {
  tryOnId(): string
  shortId(): string
}

/** Uniform base62 from the platform's CSPRNG (bytes ≥ 248 are rejected to avoid bias). */
export function randomBase62(length: number): string {
  let out = ''
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < 248) out += BASE62[byte % 62]
      if (out.length === length) break
    }
  }
  return out
}

export const randomIds: IdSource = {
  tryOnId: () => crypto.randomUUID(),
  shortId: () => randomBase62(10),
}
