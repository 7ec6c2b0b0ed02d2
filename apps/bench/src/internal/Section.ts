/**
 * What a section of the suite is: a name for `--only`, a title, and a run that returns its
 * figures (each beside its baseline) and a Markdown block of details for
 * docs/performance.md.
 */
import type { Figure } from "./Measure.js"

/** What every section gets from the suite. */
export interface Context {
  /** `--quick`: fewer rounds and smaller sizes, for iterating; the numbers are rougher. */
  readonly quick: boolean
  /** Rounds of the interleaved measurements (5 by default, 3 with `--quick`). */
  readonly rounds: number
  /** A progress line on stderr. */
  readonly log: (line: string) => void
  /** `--profile DIR`: child processes run with `--cpu-prof` and write their profiles there. */
  readonly profileDir: string | undefined
  /** `--payments N`: how many payments the long end-to-end run completes (its default otherwise). */
  readonly payments: number | undefined
}

/** What a section hands back. */
export interface Result {
  readonly figures: ReadonlyArray<Figure>
  /** Markdown for docs/performance.md: how it was measured, the rounds, extra tables. */
  readonly details: string
}

/** One section of the suite. */
export interface Section {
  readonly name: string
  readonly title: string
  readonly run: (context: Context) => Promise<Result>
  /** Runs only when named by `--only` (a section too long for the full run). */
  readonly optIn?: boolean
}
