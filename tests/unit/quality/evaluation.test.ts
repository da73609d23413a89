import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { decodeImage } from '../../../shared/images/codecs/index.ts'
import { goals, qualityOf, report, reportByKind, summarise, type Outcome } from '../../support/scenes/evaluation.ts'
import { contactSheet } from '../../support/scenes/sheet.ts'

const good = { broken: false, issues: [], measures: {} }
const brokenJudgement = { broken: true, issues: ['garment_missing' as const], measures: {} }

function outcome(overrides: Partial<Outcome>): Outcome {
  return {
    style: 'soft',
    seed: 1,
    kind: 'tshirt',
    hasTrain: false,
    wedding: false,
    fullLength: true,
    status: 200,
    creditsCharged: 1,
    judgement: good,
    ms: 100,
    description: 'a scene',
    ...overrides,
  }
}

describe('reading the quality object', () => {
  it('takes it when it has the documented shape and treats it as absent otherwise', () => {
    expect(qualityOf({ success: true })).toBeUndefined()
    expect(qualityOf(null)).toBeUndefined()
    expect(qualityOf({ quality: 'passed' })).toBeUndefined()
    expect(qualityOf({ quality: { checked: 'yes', passed: true } })).toBeUndefined()
    expect(qualityOf({ quality: { checked: true, passed: false, score: 0.2, issues: ['colour_changed', 7] } })).toEqual({
      checked: true,
      passed: false,
      score: 0.2,
      issues: ['colour_changed'],
    })
    expect(qualityOf({ quality: { checked: false, passed: true, score: null, issues: [] } })).toMatchObject({ checked: false, score: null })
  })
})

describe('the evaluation figures', () => {
  it('counts broken composites charged, and not those a failed check refunded', () => {
    const figures = summarise([
      outcome({ seed: 1, judgement: brokenJudgement, creditsCharged: 1 }),
      outcome({
        seed: 2,
        judgement: brokenJudgement,
        creditsCharged: 0,
        quality: { checked: true, passed: false, score: 0.1, issues: ['garment_off_body'] },
      }),
      outcome({ seed: 3 }),
      outcome({ seed: 4, status: 500, errorCode: 'generation_failed', judgement: undefined, creditsCharged: undefined }),
    ])
    expect(figures.brokenCharged).toEqual({ count: 1, of: 3 })
    expect(figures.brokenDelivered).toBe(2)
    expect(figures.credits).toEqual({ 0: 1, 1: 2 })
    expect(figures.errors).toEqual({ '500 generation_failed': 1 })
    expect(figures.brokenBy).toEqual({ garment_missing: 2 })
  })

  it('counts good results a check failed only among answers that carry a check, and says when none did', () => {
    const without = summarise([outcome({ seed: 1 }), outcome({ seed: 2 })])
    expect(without.withQuality).toBe(0)
    expect(goals(without)[1]).toMatchObject({ value: 'no check in the answers', met: null })
    const failed = { checked: true, passed: false, score: 0.3, issues: ['colour_changed'] }
    const passed = { checked: true, passed: true, score: 0.9, issues: [] }
    const withCheck = summarise([
      outcome({ seed: 1, quality: failed, creditsCharged: 0 }),
      outcome({ seed: 2, quality: passed }),
      outcome({ seed: 3, quality: { checked: false, passed: true, score: null, issues: [] } }),
      outcome({ seed: 4 }),
    ])
    expect(withCheck.goodFailedCheck).toEqual({ count: 1, of: 2 })
    expect(goals(withCheck)[1].met).toBe(false)
    // A check that failed the result but charged for it anyway contradicts the rule: counted apart.
    expect(summarise([outcome({ quality: failed, creditsCharged: 1 })]).failedButCharged).toBe(1)
  })

  it('counts trains applied and non-train products not applied on full-length photos only', () => {
    const bridal = (applied: boolean) => ({
      applied,
      trainScore: applied ? 0.8 : null,
      reason: applied ? 'train_rendered' : 'train_pretreatment_unavailable',
    })
    const figures = summarise([
      outcome({ seed: 1, kind: 'train-gown', hasTrain: true, wedding: true, bridal: bridal(true), creditsCharged: 2 }),
      outcome({ seed: 2, kind: 'train-gown', hasTrain: true, wedding: true, bridal: bridal(false) }),
      outcome({
        seed: 3,
        kind: 'train-gown',
        hasTrain: true,
        wedding: true,
        status: 400,
        errorCode: 'person_not_found',
        judgement: undefined,
      }),
      outcome({ seed: 4, kind: 'train-gown', hasTrain: true, wedding: true, fullLength: false, bridal: bridal(false) }),
      outcome({ seed: 5, kind: 'gown', wedding: true, bridal: bridal(false) }),
      outcome({ seed: 6, kind: 'dress', wedding: true, bridal: bridal(true), creditsCharged: 2 }),
      outcome({ seed: 7, kind: 'gown', wedding: false }),
    ])
    expect(figures.trainApplied).toEqual({ count: 1, of: 3 })
    expect(figures.nonTrainNotApplied).toEqual({ count: 1, of: 2 })
    expect(figures.engineFailures).toEqual({ count: 1, of: 6 })
    expect(report(figures)).toContain('| train gowns applied (full-length photos) | 1/3 = 33.3% | ≥ 90% | no |')
  })

  it('reports each goal for standard garments and wedding dresses apart, beside all of them', () => {
    const table = reportByKind([
      outcome({ seed: 1, creditsCharged: 1, judgement: brokenJudgement }),
      outcome({ seed: 2 }),
      outcome({
        seed: 3,
        kind: 'train-gown',
        hasTrain: true,
        wedding: true,
        status: 500,
        errorCode: 'generation_failed',
        judgement: undefined,
      }),
    ])
    expect(table).toContain('| broken composites charged | 1/2 = 50.0% | none | 1/2 = 50.0% | 0 |')
    expect(table).toContain(
      '| engine failures (5xx, person_not_found) on valid full-length photos | 0/2 = 0.0% | 1/1 = 100.0% | 1/3 = 33.3% | ≤ 1% |',
    )
  })

  it('counts 5xx and person_not_found on valid full-length photos as engine failures, not on cropped ones', () => {
    const figures = summarise([
      outcome({ seed: 1, status: 500, errorCode: 'generation_failed', judgement: undefined }),
      outcome({ seed: 2, status: 400, errorCode: 'person_not_found', judgement: undefined, fullLength: false }),
      outcome({ seed: 3, status: 400, errorCode: 'unsupported_image', judgement: undefined }),
      outcome({ seed: 4 }),
    ])
    expect(figures.engineFailures).toEqual({ count: 1, of: 3 })
    expect(figures.byStyle.soft).toEqual({ scenes: 4, brokenCharged: 0, engineFailures: 1, good: 1 })
  })
})

describe('contact sheets', () => {
  it('lay out shopper, product, result and a verdict panel at one height, a cross where there is no result', () => {
    const image = (width: number, height: number, v: number) => ({ width, height, data: new Uint8Array(width * height * 4).fill(v) })
    const png = contactSheet([image(300, 600, 10), image(400, 400, 20), null], ['soft 1: tshirt', 'oracle: good'], 'good')
    const sheet = decodeImage(png, 'png')
    expect(sheet.height).toBe(420)
    // 210 + 420 + 252 (the missing result) + gaps + 420 of text.
    expect(sheet.width).toBe(210 + 6 + 420 + 6 + 252 + 6 + 420)
    const at = (x: number, y: number) => [...sheet.data.subarray((y * sheet.width + x) * 4, (y * sheet.width + x) * 4 + 3)]
    expect(at(5, 5)).toEqual([10, 10, 10])
    expect(at(216 + 5, 5)).toEqual([20, 20, 20])
    // The text panel holds dark letters on its pale green.
    const panel = 210 + 6 + 420 + 6 + 252 + 6
    let dark = 0
    for (let y = 0; y < 40; y++) for (let x = panel; x < sheet.width; x++) if (at(x, y)[0] < 60) dark++
    expect(dark).toBeGreaterThan(100)
  })
})

describe('npm run eval:quality', () => {
  const run = promisify(execFile)
  const root = fileURLToPath(new URL('../../../', import.meta.url))
  const refused = async (...args: string[]) => {
    const error = await run('npx', ['tsx', 'scripts/evaluate-quality.ts', ...args], { cwd: root }).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    )
    expect(error?.code).toBe(2)
    return error!.stderr
  }

  it('refuses to show held-out scenes one by one, and tuning runs outside the tuning seeds', { timeout: 60_000 }, async () => {
    expect(await refused('--set', 'held-out', '--sheet', '/tmp/nowhere')).toMatch(/held-out set runs whole/)
    expect(await refused('--set', 'held-out', '--seeds', '900001')).toMatch(/held-out set runs whole/)
    expect(await refused('--set', 'held-out-2', '--list')).toMatch(/held-out-2 set runs whole/)
    expect(await refused('--seeds', '900001-900002')).toMatch(/not a tuning seed/)
    expect(await refused('--set', 'everything')).toMatch(/--set is tuning, held-out or held-out-2/)
  })
})
