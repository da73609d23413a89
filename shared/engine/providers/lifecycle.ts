/** Where a model is served: the same id can retire on one platform and stay on another (gemini-2.5-flash-image). */
export type ModelPlatform = 'gemini-api' | 'vertex-ai' | 'fashn'

export interface ModelLifecycle {
  platform: ModelPlatform
  model: string
  /** The day (UTC) the provider stops serving it, as announced: from that day it is never called. */
  shutdown?: string
  /** The earliest day it may retire ("or later"): warned about from 30 days before, still called after. */
  notBefore?: string
  /** What to set instead, for this service's use of it (a try-on image model, or the train judge). */
  successor?: string
  source: string
  /** When the source was read: providers move their dates. */
  readOn: string
  note?: string
}

const GEMINI_DEPRECATIONS = 'https://ai.google.dev/gemini-api/docs/deprecations'
const VERTEX_VERSIONS = 'https://docs.cloud.google.com/gemini-enterprise-agent-platform/models/model-versions'
const READ_ON = '2026-11-25'

/**
 * The models this service may be configured with, and when each stops being served (docs/engines.md#model-lifecycle
 * lists the same rows). Read again before relying on a date, and move `readOn` with it.
 */
export const MODEL_LIFECYCLE: readonly ModelLifecycle[] = [
  { platform: 'gemini-api', model: 'gemini-3.1-flash-image', source: GEMINI_DEPRECATIONS, readOn: READ_ON },
  { platform: 'gemini-api', model: 'gemini-3-pro-image', source: GEMINI_DEPRECATIONS, readOn: READ_ON },
  { platform: 'gemini-api', model: 'gemini-3.5-flash', source: GEMINI_DEPRECATIONS, readOn: READ_ON },
  { platform: 'gemini-api', model: 'gemini-3.5-flash-lite', source: GEMINI_DEPRECATIONS, readOn: READ_ON },
  {
    platform: 'gemini-api',
    model: 'gemini-3.1-flash-lite',
    shutdown: '2027-05-07',
    successor: 'gemini-3.5-flash',
    source: GEMINI_DEPRECATIONS,
    readOn: READ_ON,
  },
  {
    platform: 'gemini-api',
    model: 'gemini-2.5-flash-image',
    shutdown: '2026-10-02',
    successor: 'gemini-3.1-flash-image',
    source: GEMINI_DEPRECATIONS,
    readOn: READ_ON,
  },
  {
    platform: 'gemini-api',
    model: 'gemini-3.1-flash-image-preview',
    shutdown: '2026-06-25',
    successor: 'gemini-3.1-flash-image',
    source: GEMINI_DEPRECATIONS,
    readOn: READ_ON,
  },
  {
    platform: 'gemini-api',
    model: 'gemini-3-pro-image-preview',
    shutdown: '2026-06-25',
    successor: 'gemini-3-pro-image',
    source: GEMINI_DEPRECATIONS,
    readOn: READ_ON,
  },
  {
    platform: 'gemini-api',
    model: 'gemini-2.5-flash',
    shutdown: '2026-10-16',
    successor: 'gemini-3.5-flash',
    source: GEMINI_DEPRECATIONS,
    readOn: READ_ON,
    note:
      'sources disagree on the day (October 16, November 12, December 1, 2026) and on whether calls fail or go to ' +
      'another model at its price; the earliest is kept',
  },
  {
    platform: 'gemini-api',
    model: 'gemini-2.0-flash',
    shutdown: '2026-06-01',
    successor: 'gemini-3.5-flash',
    source: GEMINI_DEPRECATIONS,
    readOn: READ_ON,
  },
  {
    platform: 'vertex-ai',
    model: 'virtual-try-on-001',
    shutdown: '2027-01-20',
    successor: 'gemini-3.1-flash-image',
    source: 'https://docs.cloud.google.com/gemini-enterprise-agent-platform/models/vto/virtual-try-on-001',
    readOn: READ_ON,
    note: 'GoogleCloudPlatform/vertex-ai-creative-studio#1891 names gemini-3.1-flash-image and gemini-3-pro-image',
  },
  {
    platform: 'vertex-ai',
    model: 'gemini-2.5-flash-image',
    shutdown: '2027-03-15',
    successor: 'gemini-3.1-flash-image',
    source: VERTEX_VERSIONS,
    readOn: READ_ON,
  },
  { platform: 'vertex-ai', model: 'gemini-3.1-flash-image', notBefore: '2027-05-28', source: VERTEX_VERSIONS, readOn: READ_ON },
  { platform: 'vertex-ai', model: 'gemini-3-pro-image', notBefore: '2027-05-28', source: VERTEX_VERSIONS, readOn: READ_ON },
  { platform: 'vertex-ai', model: 'gemini-3.5-flash', notBefore: '2027-05-19', source: VERTEX_VERSIONS, readOn: READ_ON },
  { platform: 'vertex-ai', model: 'gemini-3.5-flash-lite', notBefore: '2027-07-21', source: VERTEX_VERSIONS, readOn: READ_ON },
  { platform: 'vertex-ai', model: 'gemini-3.1-flash-lite', notBefore: '2027-05-07', source: VERTEX_VERSIONS, readOn: READ_ON },
  ...['gemini-2.5-flash', 'gemini-2.5-flash-lite', 'gemini-2.5-pro'].map(
    (model): ModelLifecycle => ({
      platform: 'vertex-ai',
      model,
      shutdown: '2026-10-16',
      successor: 'gemini-3.5-flash',
      source: VERTEX_VERSIONS,
      readOn: READ_ON,
      note: 'another copy of the page gives October 20, 2026',
    }),
  ),
  { platform: 'fashn', model: 'tryon-v1.6', source: 'https://docs.fashn.ai/api-reference/tryon-v1-6', readOn: READ_ON },
  {
    platform: 'fashn',
    model: 'tryon-max',
    source: 'https://docs.fashn.ai/api-reference/tryon-max',
    readOn: READ_ON,
    note: 'marked experimental by FASHN',
  },
]

/** How long before a date the operator is warned: Vertex blocks new access to a model a month before it retires. */
export const WARN_DAYS = 30
const DAY_MS = 86_400_000

export type LifecycleVerdict =
  /** Past its shutdown day: never called. */
  | { state: 'retired'; since: string; entry: ModelLifecycle }
  /** Within WARN_DAYS of a shutdown, or of (or past) an earliest retirement day: called, and warned about. */
  | { state: 'retiring'; on: string; daysLeft: number; firm: boolean; entry: ModelLifecycle }
  | { state: 'served'; entry: ModelLifecycle }
  | { state: 'unknown' }

export function lifecycleEntry(platform: ModelPlatform, model: string): ModelLifecycle | undefined {
  return MODEL_LIFECYCLE.find((e) => e.platform === platform && e.model === model)
}

/** What the table says of a model on a platform at `now` (ms since the epoch); a day starts at 00:00 UTC. */
export function lifecycleVerdict(platform: ModelPlatform, model: string, now: number): LifecycleVerdict {
  const entry = lifecycleEntry(platform, model)
  if (!entry) return { state: 'unknown' }
  const day = entry.shutdown ?? entry.notBefore
  if (!day) return { state: 'served', entry }
  const daysLeft = Math.ceil((Date.parse(`${day}T00:00:00Z`) - now) / DAY_MS)
  if (entry.shutdown && daysLeft <= 0) return { state: 'retired', since: entry.shutdown, entry }
  if (daysLeft <= WARN_DAYS) return { state: 'retiring', on: day, daysLeft, firm: entry.shutdown !== undefined, entry }
  return { state: 'served', entry }
}

/** A default that is past its shutdown gives way to its successor (in turn checked), so defaults stay models served today. */
export function servedDefault(platform: ModelPlatform, model: string, now: number): string {
  let current = model
  for (let hops = 0; hops < 5; hops++) {
    const verdict = lifecycleVerdict(platform, current, now)
    if (verdict.state !== 'retired' || !verdict.entry.successor) return current
    current = verdict.entry.successor
  }
  return current
}

const PLATFORM_NAME: Record<ModelPlatform, string> = { 'gemini-api': 'the Gemini API', 'vertex-ai': 'Vertex AI', fashn: 'FASHN' }

/** A model as configured: the setting that names it, so a log line can say what to change. */
export interface ConfiguredModel {
  setting: string
  platform: ModelPlatform
  model: string
}

/** The operator's sentence for a verdict that needs action; undefined for a model served with no date near. */
export function lifecycleNotice(configured: ConfiguredModel, verdict: LifecycleVerdict): string | undefined {
  const { setting, platform, model } = configured
  const where = PLATFORM_NAME[platform]
  const instead = (entry: ModelLifecycle) => (entry.successor ? `; set ${setting}=${entry.successor}` : '')
  const source = (entry: ModelLifecycle) => ` (${entry.source}, read on ${entry.readOn})`
  switch (verdict.state) {
    case 'retired': {
      const shut = `${where} shut down on ${verdict.since}${source(verdict.entry)}`
      return `${setting} names ${model}, which ${shut}: it is not called${instead(verdict.entry)}`
    }
    case 'retiring': {
      const when =
        verdict.daysLeft > 0
          ? `${verdict.firm ? 'shuts down' : 'may retire'} on ${verdict.on}, in ${verdict.daysLeft} day${verdict.daysLeft === 1 ? '' : 's'}`
          : `may retire any day since ${verdict.on}`
      return `${setting} names ${model}, which ${where} ${when}${source(verdict.entry)}${instead(verdict.entry)}`
    }
    default:
      return undefined
  }
}

/** The sentence for a provider that answered 404 NOT_FOUND for the model: the same shape as the table's. */
export function notServedNotice(configured: ConfiguredModel, now: number): string {
  const { setting, platform, model } = configured
  const verdict = lifecycleVerdict(platform, model, now)
  const entry = verdict.state === 'unknown' ? undefined : verdict.entry
  const since = entry?.shutdown && verdict.state === 'retired' ? ` since ${entry.shutdown}` : ''
  const instead = entry?.successor ? `set ${setting}=${entry.successor}` : `set ${setting} to a model ${PLATFORM_NAME[platform]} serves`
  return `${setting} names ${model}, which ${PLATFORM_NAME[platform]} does not serve${since} (it answered 404 NOT_FOUND): ${instead}`
}
