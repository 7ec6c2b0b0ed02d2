/**
 * The measurement rules every benchmark of the suite follows, in one place: a figure is
 * always measured beside its raw baseline in the same run, in rounds interleaved so both
 * see the same machine load (the machines are shared and noisy: absolute numbers move,
 * ratios hold); the value shown is the median of the rounds, and the ratio is the median
 * of the per-round ratios, steadier under a varying load than a ratio of medians.
 */
import { performance } from "node:perf_hooks"

/** The median of some values (NaN for none). */
export const median = (values: ReadonlyArray<number>): number => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b)
  if (sorted.length === 0) return Number.NaN
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1
    ? (sorted[mid] ?? Number.NaN)
    : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2
}

/** The nearest-rank percentile `p` (0–100) of some values (NaN for none). */
export const percentile = (values: ReadonlyArray<number>, p: number): number => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b)
  if (sorted.length === 0) return Number.NaN
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)))
  return sorted[rank - 1] ?? Number.NaN
}

/**
 * The median of the per-round ratios figure ÷ baseline: round i of the figure ran right
 * next to round i of its baseline, so each pair saw the same load.
 */
export const ratioOfRounds = (figure: ReadonlyArray<number>, baseline: ReadonlyArray<number>): number =>
  median(
    figure.flatMap((value, round) => {
      const base = baseline[round]
      return base === undefined || !(base > 0) || !Number.isFinite(value) ? [] : [value / base]
    })
  )

/** Runs `body` and returns `count / seconds`, where `body` returns the count of what it did. */
export const rate = async (body: () => Promise<number>): Promise<number> => {
  const started = performance.now()
  const count = await body()
  return count / ((performance.now() - started) / 1000)
}

/** One measured case: each round returns one value (a rate, a latency …). */
export interface Case {
  readonly name: string
  readonly run: (round: number) => Promise<number>
}

/**
 * Runs the cases round by round, interleaved (round 1 of every case, then round 2 …),
 * so a figure and its baseline see the same machine; returns the values of each case by
 * name, one per round.
 *
 * `warmup` rounds of every case run first, interleaved the same way, and are not kept:
 * the figures are steady-state rates, and the first calls of a case in a fresh process
 * run before V8 has optimised its code (the store's single appends take ~2,000 calls to
 * settle, the raw side, with less code, ~1,500: see `StoreBench`). Warm-up rounds are numbered after the
 * measured ones (`rounds`, `rounds + 1` …), so cases that name their data by round never
 * reuse a name.
 */
export const interleave = async (
  rounds: number,
  cases: ReadonlyArray<Case>,
  log: (line: string) => void = () => {},
  options: { readonly warmup?: number } = {}
): Promise<ReadonlyMap<string, ReadonlyArray<number>>> => {
  const warmup = options.warmup ?? 0
  for (let w = 0; w < warmup; w++) {
    for (const c of cases) {
      const value = await c.run(rounds + w)
      log(`  warm-up ${w + 1}/${warmup}  ${c.name}: ${formatNumber(value)} (not kept)`)
    }
  }
  const values = new Map<string, Array<number>>(cases.map((c) => [c.name, []]))
  for (let round = 0; round < rounds; round++) {
    for (const c of cases) {
      const value = await c.run(round)
      values.get(c.name)?.push(value)
      log(`  round ${round + 1}/${rounds}  ${c.name}: ${formatNumber(value)}`)
    }
  }
  return values
}

/** What a figure must reach. */
export type Target =
  /** figure ÷ baseline at least `ratio` (throughput). */
  | { readonly _tag: "RatioAtLeast"; readonly ratio: number }
  /** figure ÷ baseline at most `ratio` (latency, growth). */
  | { readonly _tag: "RatioAtMost"; readonly ratio: number }
  /** The figure itself at most `value` (an absolute bound: memory, start-up time). */
  | { readonly _tag: "AtMost"; readonly value: number }

/** One line of the result table: a figure, its baseline, the ratio and the target. */
export interface Figure {
  readonly section: string
  readonly name: string
  readonly unit: string
  /** One value per round (a single value when measured once). */
  readonly rounds: ReadonlyArray<number>
  readonly baseline?: { readonly name: string; readonly rounds: ReadonlyArray<number> } | undefined
  readonly target?: Target | undefined
  /** Shown beside the figure (how it was measured, a caveat). */
  readonly note?: string | undefined
}

/** The value shown for a figure: the median of its rounds. */
export const valueOf = (figure: Figure): number => median(figure.rounds)

/** The ratio of a figure to its baseline (median of per-round ratios), if it has one. */
export const ratioOf = (figure: Figure): number | undefined =>
  figure.baseline === undefined ? undefined : ratioOfRounds(figure.rounds, figure.baseline.rounds)

/** Whether the figure meets its target (undefined without one). */
export const meets = (figure: Figure): boolean | undefined => {
  const target = figure.target
  if (target === undefined) return undefined
  switch (target._tag) {
    case "RatioAtLeast": {
      const ratio = ratioOf(figure)
      return ratio !== undefined && ratio >= target.ratio
    }
    case "RatioAtMost": {
      const ratio = ratioOf(figure)
      return ratio !== undefined && ratio <= target.ratio
    }
    case "AtMost":
      return valueOf(figure) <= target.value
  }
}

/** The target as text ("≥ 0.8×", "≤ 512 MB"). */
export const describeTarget = (figure: Figure): string => {
  const target = figure.target
  if (target === undefined) return ""
  switch (target._tag) {
    case "RatioAtLeast":
      return `≥ ${target.ratio}×`
    case "RatioAtMost":
      return `≤ ${target.ratio}×`
    case "AtMost":
      return `≤ ${formatNumber(target.value)} ${figure.unit}`
  }
}

/**
 * How far a figure is from its target, relative to the target ("missed by 31 %"), or
 * "met". Empty without a target.
 */
export const verdict = (figure: Figure): string => {
  const target = figure.target
  const met = meets(figure)
  if (target === undefined || met === undefined) return ""
  if (met) return "met"
  switch (target._tag) {
    case "RatioAtLeast": {
      const ratio = ratioOf(figure) ?? 0
      return `missed by ${Math.round(((target.ratio - ratio) / target.ratio) * 100)} %`
    }
    case "RatioAtMost": {
      const ratio = ratioOf(figure) ?? Number.POSITIVE_INFINITY
      return `missed by ${Math.round(((ratio - target.ratio) / target.ratio) * 100)} %`
    }
    case "AtMost":
      return `missed by ${Math.round(((valueOf(figure) - target.value) / target.value) * 100)} %`
  }
}

/** A number for a table: integers with thousands separators, small values with 2–3 digits. */
export const formatNumber = (value: number): string => {
  if (!Number.isFinite(value)) return "n/a"
  const magnitude = Math.abs(value)
  if (magnitude >= 100) return Math.round(value).toLocaleString("en-US")
  if (magnitude >= 10) return value.toFixed(1)
  return value.toFixed(2)
}

const cell = (text: string) => text.replace(/\|/g, "\\|")

/** The summary table (Markdown): figure, value, baseline, ratio, target, verdict. */
export const summaryTable = (figures: ReadonlyArray<Figure>): string => {
  const lines = [
    "| section | figure | median | baseline (same run) | baseline median | ratio | target | verdict |",
    "|---|---|---:|---|---:|---:|---|---|"
  ]
  for (const figure of figures) {
    const ratio = ratioOf(figure)
    lines.push(
      `| ${cell(figure.section)} | ${cell(figure.name)} | ${formatNumber(valueOf(figure))} ${figure.unit} | ${cell(
        figure.baseline?.name ?? ""
      )} | ${figure.baseline === undefined ? "" : `${formatNumber(median(figure.baseline.rounds))} ${figure.unit}`} | ${
        ratio === undefined ? "" : `${ratio.toFixed(2)}×`
      } | ${describeTarget(figure)} | ${verdict(figure)} |`
    )
  }
  return lines.join("\n")
}

/** The rounds of each figure and its baseline (Markdown), to show the spread. */
export const roundsTable = (figures: ReadonlyArray<Figure>): string => {
  const lines = ["| figure | unit | rounds | baseline rounds | per-round ratios |", "|---|---|---|---|---|"]
  const list = (values: ReadonlyArray<number>) => values.map(formatNumber).join(", ")
  for (const figure of figures) {
    const base = figure.baseline?.rounds
    lines.push(
      `| ${cell(figure.name)}${figure.note === undefined ? "" : ` (${cell(figure.note)})`} | ${figure.unit} | ${list(
        figure.rounds
      )} | ${base === undefined ? "" : list(base)} | ${
        base === undefined
          ? ""
          : figure.rounds
              .map((value, round) => {
                const b = base[round]
                return b === undefined || !(b > 0) ? "n/a" : (value / b).toFixed(2)
              })
              .join(", ")
      } |`
    )
  }
  return lines.join("\n")
}
