/** Outcomes a test key may force with X-Tryon-Scenario (docs/api.md, "Test keys and scenarios"), and the product type each applies to. */
export const scenarios = {
  content_rejected: 'any',
  generation_failed: 'any',
  train_score_low: 'wedding-dress',
  train_score_unavailable: 'wedding-dress',
  train_pretreatment_unavailable: 'wedding-dress',
  bridal_preprocessing_crash: 'wedding-dress',
  quality_failed: 'any',
} as const

export type Scenario = keyof typeof scenarios
