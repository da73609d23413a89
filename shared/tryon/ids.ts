import { randomBase62 } from '../encoding/base62.ts'

export interface IdSource {
  tryOnId(): string
  shortId(): string
}

export const randomIds: IdSource = {
  tryOnId: () => crypto.randomUUID(),
  shortId: () => randomBase62(10),
}
