import type { LargeString } from '../encoding/json-bytes.ts'
import type { ProductKind } from '../engine/types.ts'
import type { Scenario } from './scenarios.ts'

/** What a try-on is asked to do, read from the request by the HTTP layer (shared/http/request.ts). */
export interface TryOnInput {
  /** A large value (an image as base64) stays in the request's bytes, where intake decodes it. */
  userPhoto: string | LargeString
  productImage: string | LargeString
  productKind: ProductKind
  clothingType?: string
  parentUrl?: string
  locale?: string
  scenario?: Scenario
}
