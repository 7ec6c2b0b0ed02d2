/**
 * Effect's metric registry in the Prometheus text exposition format (version 0.0.4):
 * counters, gauges, histograms (cumulative buckets, `+Inf`, sum, count), frequencies (one
 * series per occurrence) and summaries (quantiles). Small on purpose: no client library
 * needed for one endpoint. The exposition passes `promtool check metrics`: every family has
 * a HELP line, every counter's name ends in `_total`, and Effect's own runtime series
 * (which have neither a description nor that suffix, and one of which goes down) are
 * rendered as Prometheus expects them (`runtimeSeries`).
 */
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricKeyType from "effect/MetricKeyType"
import type * as MetricPair from "effect/MetricPair"
import * as MetricState from "effect/MetricState"
import * as Option from "effect/Option"

const escapeLabel = (value: string): string =>
  value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"')

const sanitizeName = (name: string): string => name.replace(/[^a-zA-Z0-9_:]/g, "_")

const labels = (pairs: ReadonlyArray<readonly [string, string]>): string =>
  pairs.length === 0 ? "" : `{${pairs.map(([k, v]) => `${sanitizeName(k)}="${escapeLabel(v)}"`).join(",")}}`

const number = (value: number | bigint): string =>
  typeof value === "bigint"
    ? value.toString()
    : Number.isNaN(value)
      ? "NaN"
      : value === Infinity
        ? "+Inf"
        : value === -Infinity
          ? "-Inf"
          : String(value)

/**
 * Effect's runtime series: their help, and the type they are in Prometheus' terms
 * (`effect_fiber_active` is a counter in Effect that goes down as fibers end: a gauge).
 */
export const runtimeSeries: Readonly<Record<string, { readonly help: string; readonly type?: "gauge" }>> = {
  effect_fiber_started: { help: "fibers started by the Effect runtime" },
  effect_fiber_active: { help: "fibers of the Effect runtime running now", type: "gauge" },
  effect_fiber_successes: { help: "fibers of the Effect runtime that ended in success" },
  effect_fiber_failures: { help: "fibers of the Effect runtime that ended in failure" },
  effect_fiber_lifetimes: { help: "lifetimes of the Effect runtime's fibers (in the time_unit label's unit)" }
}

type Kind = "counter" | "gauge" | "histogram" | "summary"

const kindOf = (keyType: MetricPair.MetricPair.Untyped["metricKey"]["keyType"]): Kind =>
  MetricKeyType.isCounterKey(keyType)
    ? "counter"
    : MetricKeyType.isGaugeKey(keyType)
      ? "gauge"
      : MetricKeyType.isHistogramKey(keyType)
        ? "histogram"
        : MetricKeyType.isSummaryKey(keyType)
          ? "summary"
          : "gauge"

/** The family's name, type and help as exposed: counters end in `_total`; every family has help. */
const family = (
  metric: MetricPair.MetricPair.Untyped["metricKey"]
): { readonly name: string; readonly type: Kind; readonly help: string } => {
  const base = sanitizeName(metric.name)
  const runtime = runtimeSeries[base]
  const type = runtime?.type ?? kindOf(metric.keyType)
  const name = type === "counter" && !base.endsWith("_total") ? `${base}_total` : base
  const help = Option.getOrElse(metric.description, () => runtime?.help ?? `${base} (no description given)`)
  return { name, type, help }
}

/** Renders metric pairs as Prometheus text. */
export const render = (pairs: ReadonlyArray<MetricPair.MetricPair.Untyped>): string => {
  const byName = new Map<string, Array<MetricPair.MetricPair.Untyped>>()
  for (const pair of pairs) {
    const name = family(pair.metricKey).name
    const group = byName.get(name)
    if (group === undefined) byName.set(name, [pair])
    else group.push(pair)
  }
  const out: Array<string> = []
  for (const [name, group] of Array.from(byName.entries()).sort(([a], [b]) => a.localeCompare(b))) {
    const first = group[0]
    if (first === undefined) continue
    const { help, type } = family(first.metricKey)
    out.push(`# HELP ${name} ${help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}`)
    out.push(`# TYPE ${name} ${type}`)
    for (const pair of group) {
      const tags = pair.metricKey.tags.map((t) => [t.key, t.value] as const)
      const state = pair.metricState
      if (MetricState.isCounterState(state)) {
        out.push(`${name}${labels(tags)} ${number(state.count)}`)
      } else if (MetricState.isGaugeState(state)) {
        out.push(`${name}${labels(tags)} ${number(state.value)}`)
      } else if (MetricState.isHistogramState(state)) {
        for (const [boundary, count] of state.buckets) {
          if (boundary === Infinity) continue
          out.push(`${name}_bucket${labels([...tags, ["le", number(boundary)]])} ${count}`)
        }
        out.push(`${name}_bucket${labels([...tags, ["le", "+Inf"]])} ${state.count}`)
        out.push(`${name}_sum${labels(tags)} ${number(state.sum)}`)
        out.push(`${name}_count${labels(tags)} ${state.count}`)
      } else if (MetricState.isFrequencyState(state)) {
        for (const [occurrence, count] of state.occurrences) {
          out.push(`${name}${labels([...tags, ["key", occurrence]])} ${count}`)
        }
      } else if (MetricState.isSummaryState(state)) {
        for (const [quantile, value] of state.quantiles) {
          if (Option.isSome(value))
            out.push(`${name}${labels([...tags, ["quantile", String(quantile)]])} ${number(value.value)}`)
        }
        out.push(`${name}_sum${labels(tags)} ${number(state.sum)}`)
        out.push(`${name}_count${labels(tags)} ${state.count}`)
      }
    }
  }
  return out.join("\n") + "\n"
}

/** Every metric of Effect's global registry, as Prometheus text. */
export const scrape: Effect.Effect<string> = Effect.map(Metric.snapshot, render)
