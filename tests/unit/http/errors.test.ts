import { describe, expect, it } from 'vitest'
import { onServiceSide, TryOnFailure, type FailureKind } from '../../../shared/failure.ts'
import { errorCatalogue, toApiError, type ErrorCode } from '../../../shared/http/errors.ts'

const codes = Object.keys(errorCatalogue) as ErrorCode[]

describe('toApiError, the one translation of a domain failure', () => {
  it("logs as the service's own exactly the failures the catalogue answers with a 5xx", () => {
    const mismatched = codes.filter((code) => onServiceSide(code as FailureKind) !== errorCatalogue[code].status >= 500)
    expect(mismatched).toEqual([])
  })

  it("answers the catalogue's words unless the failure's own are the caller's, with Retry-After when it says when", () => {
    const busy = toApiError(new TryOnFailure('service_busy', 'every slot is taken', { retryAfterSeconds: 2 }))
    expect(busy).toMatchObject({ code: 'service_busy', status: 503, message: errorCatalogue.service_busy.message })
    expect(busy.headers).toEqual({ 'Retry-After': '2' })
    const refused = toApiError(new TryOnFailure('image_too_small', 'userPhoto: image is smaller than 1 KB', { tellsCaller: true }))
    expect(refused).toMatchObject({ code: 'image_too_small', status: 400, message: 'userPhoto: image is smaller than 1 KB' })
    expect(refused.headers).toEqual({})
  })

  it('names the try-on in a settlement_unknown answer', () => {
    const answer = toApiError(new TryOnFailure('settlement_unknown', 'lost reply', { tryOnId: 'a1b2' }))
    expect(answer).toMatchObject({ code: 'settlement_unknown', status: 500 })
    expect(answer.message).toContain('try-on a1b2 was charged')
  })
})
