/** A mistake in the command line: the CLI prints it with the usage and exits with 2. */
export class UsageError extends Error {}

export const integer = (value: string | undefined, name: string, min: number): number => {
  if (value === undefined || !/^-?\d+$/.test(value) || BigInt(value) < BigInt(min)) {
    throw new UsageError(`${name} must be an integer of at least ${min}`)
  }
  // Beyond 2^53 a JavaScript number is no longer exact (…993 would be stored as …992): refuse rather than round.
  if (BigInt(value) > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new UsageError(`${name} must be at most ${Number.MAX_SAFE_INTEGER} (2^53 - 1); ${value} cannot be handled exactly`)
  }
  return Number(value)
}

export const uuid = (value: string | undefined, name: string): string => {
  if (!value || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) {
    throw new UsageError(`${name} must be a UUID`)
  }
  return value
}

const SECONDS_PER_UNIT = { s: 1, m: 60, h: 3600, d: 86_400 } as const

/** `90s`, `30m`, `24h`, `7d` or `0`, in seconds; at most a year. */
export const duration = (value: string | undefined, name: string): number => {
  const match = /^(\d{1,6})([smhd])?$/.exec(value ?? '')
  if (!match || (match[2] === undefined && match[1] !== '0'))
    throw new UsageError(`${name} must be a duration such as 30m, 24h or 7d (or 0)`)
  const seconds = Number(match[1]) * SECONDS_PER_UNIT[(match[2] ?? 's') as keyof typeof SECONDS_PER_UNIT]
  if (seconds > 366 * 86_400) throw new UsageError(`${name} must be at most a year`)
  return seconds
}

/** A calendar day, `2026-11-23`, checked to exist. */
export const day = (value: string | undefined, name: string): string => {
  const parsed = /^\d{4}-\d{2}-\d{2}$/.test(value ?? '') ? new Date(`${value}T00:00:00Z`) : null
  if (!parsed || Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== value) {
    throw new UsageError(`${name} must be a date such as 2026-11-23`)
  }
  return value!
}

/** A day (midnight UTC) or an ISO 8601 time with its offset, `2026-11-23T10:00:00+01:00`. */
export const instant = (value: string | undefined, name: string): Date => {
  if (value !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(value)) return new Date(`${day(value, name)}T00:00:00Z`)
  const time = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value ?? '') ? new Date(value!) : null
  if (!time || Number.isNaN(time.getTime())) {
    throw new UsageError(`${name} must be a date (2026-11-23, midnight UTC) or a time with its offset (2026-11-23T10:00:00Z)`)
  }
  return time
}
