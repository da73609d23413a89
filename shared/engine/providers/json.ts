/** Narrowing helpers for provider answers: JSON we did not write is `unknown` until checked. */
export function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {}
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : []
}

/** The first of several spellings that is present (the Gemini API answers in camelCase, documents snake_case). */
export function field(record: Record<string, unknown>, ...names: string[]): unknown {
  for (const name of names) if (record[name] !== undefined && record[name] !== null) return record[name]
  return undefined
}
