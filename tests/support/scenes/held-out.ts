/**
 * Which scenes may be looked at and tuned on, and which are held out: declared on 2026-11-25, before the scene
 * styles, the oracle or any quality check existed, and never to be moved afterwards (add a new set instead).
 *
 * A scene is a (style, seed) pair; each set gives every seed of its range one style, in turn.
 * - tuning: seeds 1-99999, styles flat, soft, photo, studio, dim (seed s has style TUNING_STYLES[s % 5]).
 *   Anyone may look at these scenes, their results and contact sheets, and tune checks, thresholds or engines on them.
 * - held-out: seeds 900000-900399, all six styles (seed s has style ALL_STYLES[s % 6]), including the whole style
 *   `window` that no tuning set ever shows. Measured once, at the end, totals only: no scene of it is listed,
 *   drawn on a contact sheet or run alone.
 * - generator: seeds 500000-500099, any style: for whoever writes the scene generator to look at what a style
 *   draws (the held-out style included). Never used to tune a check or an engine.
 * - held-out-2: seeds 910000-910399, all six styles, declared on 2026-11-26 before the held-out set's one run: the
 *   unseen set of the next round, once the held-out set's totals have been read (a set whose totals were read and
 *   tuned against would be a tuning set). Measured once, at the end of that round, totals only.
 */
export const DECLARED = '2026-11-25'

export const TUNING_STYLES = ['flat', 'soft', 'photo', 'studio', 'dim'] as const
export const HELD_OUT_STYLE = 'window'
export const ALL_STYLES = [...TUNING_STYLES, HELD_OUT_STYLE] as const

export type StyleName = (typeof ALL_STYLES)[number]

export interface SceneSet {
  name: 'tuning' | 'held-out' | 'generator' | 'held-out-2'
  /** Inclusive seed range. */
  first: number
  last: number
  styles: readonly StyleName[]
}

export const SETS = {
  tuning: { name: 'tuning', first: 1, last: 99_999, styles: TUNING_STYLES },
  'held-out': { name: 'held-out', first: 900_000, last: 900_399, styles: ALL_STYLES },
  generator: { name: 'generator', first: 500_000, last: 500_099, styles: ALL_STYLES },
  'held-out-2': { name: 'held-out-2', first: 910_000, last: 910_399, styles: ALL_STYLES },
} as const satisfies Record<string, SceneSet>

/** The style a set draws for one of its seeds. */
export function styleOf(set: SceneSet, seed: number): StyleName {
  if (!Number.isSafeInteger(seed) || seed < set.first || seed > set.last) throw new RangeError(`seed ${seed} is not in the ${set.name} set`)
  return set.styles[seed % set.styles.length]
}

/** Whether a (style, seed) pair belongs to the held-out evaluation: never to be looked at one by one. */
export function isHeldOut(style: StyleName, seed: number): boolean {
  if (style === HELD_OUT_STYLE) return seed < SETS.generator.first || seed > SETS.generator.last
  return [SETS['held-out'], SETS['held-out-2']].some((held) => seed >= held.first && seed <= held.last)
}
