/**
 * `/metrics` as Prometheus reads it: every documented series there from the first scrape,
 * and the exposition clean under `promtool check metrics` (Prometheus' own linter; CI
 * installs it, `.ci/run`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Prometheus } from "@tillflow/intake"
import * as Effect from "effect/Effect"
import * as MetricKey from "effect/MetricKey"
import * as MetricPair from "effect/MetricPair"
import * as MetricState from "effect/MetricState"
import { spawnSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { call, layer } from "./support.js"

/** The series docs/operations.md documents, with their types. */
const documented: ReadonlyArray<readonly [string, string]> = [
  ["tillflow_executions", "gauge"],
  ["tillflow_operation_outcomes_total", "counter"],
  ["tillflow_operation_latency_seconds", "histogram"],
  ["tillflow_operation_overhead_seconds", "histogram"],
  ["tillflow_reconciliation_checks_total", "counter"],
  ["tillflow_unknown_outcomes_total", "counter"],
  ["tillflow_callback_deliveries_total", "counter"],
  ["tillflow_result_mismatches_total", "counter"],
  ["tillflow_callback_refusals_total", "counter"],
  ["tillflow_alerts_open", "gauge"],
  ["tillflow_terminals", "gauge"],
  ["tillflow_intake_auth_failures_total", "counter"],
  ["tillflow_intake_auth_lockouts_total", "counter"]
]

const promtool = spawnSync("promtool", ["--version"]).status === 0

describe("the Prometheus exposition", () => {
  it("counters end in _total, every family has help, and Effect's fiber gauge is a gauge", () => {
    const pair = (name: string, count: number) =>
      MetricPair.unsafeMake(MetricKey.counter(name), MetricState.counter(count))
    const lines = Prometheus.render([
      pair("effect_fiber_started", 3),
      pair("effect_fiber_active", 2),
      pair("some_library_requests", 1)
    ]).split("\n")
    expect(lines).toContain("# TYPE effect_fiber_started_total counter")
    expect(lines).toContain("# HELP effect_fiber_started_total fibers started by the Effect runtime")
    expect(lines).toContain("# TYPE effect_fiber_active gauge")
    expect(lines).toContain("# TYPE some_library_requests_total counter")
    expect(lines).toContain("# HELP some_library_requests_total some_library_requests (no description given)")
  })

  it.layer(layer, { timeout: 60_000 })((it) => {
    it.effect("every documented series is on the first scrape, before anything was counted", () =>
      Effect.gen(function* () {
        const scrape = yield* call("GET", "/metrics")
        expect(scrape.status).toBe(200)
        const lines = scrape.text.split("\n")
        for (const [name, type] of documented) {
          expect(lines, name).toContain(`# TYPE ${name} ${type}`)
          expect(
            lines.some((l) => l.startsWith(`# HELP ${name} `)),
            name
          ).toBe(true)
        }
        expect(lines).toContain("tillflow_result_mismatches_total 0")
        expect(lines).toContain('tillflow_callback_refusals_total{reason="WrongToken"} 0')
        expect(lines).toContain('tillflow_operation_overhead_seconds_count{operation="sale"} 0')
        // Something to page on: open alerts by kind, terminals busy and offline.
        expect(lines).toContain('tillflow_alerts_open{kind="mismatch",state="open"} 0')
        expect(lines.some((l) => /^tillflow_terminals\{state="idle"\} \d+$/.test(l))).toBe(true)
        expect(lines).toContain('tillflow_terminals{state="offline"} 0')
      })
    )

    it.effect.runIf(promtool || process.env.CI !== undefined)(
      "the scrape passes promtool check metrics",
      () =>
        Effect.gen(function* () {
          const scrape = yield* call("GET", "/metrics")
          // For CI's own promtool step (.ci/run).
          mkdirSync("build", { recursive: true })
          writeFileSync("build/metrics.prom", scrape.text)
          const checked = spawnSync("promtool", ["check", "metrics"], {
            input: scrape.text,
            encoding: "utf8"
          })
          expect(checked.error, "promtool must be installed (.ci/run installs it)").toBeUndefined()
          expect(`${checked.stdout}${checked.stderr}`).toBe("")
          expect(checked.status).toBe(0)
        })
    )
  })
})
