import { describe, expect, it } from "@effect/vitest"
import * as Measure from "../src/internal/Measure.js"

describe("Measure", () => {
  it("median of an odd and an even count, ignoring values that are not finite", () => {
    expect(Measure.median([5, 1, 3])).toBe(3)
    expect(Measure.median([4, 1, 3, 2])).toBe(2.5)
    expect(Measure.median([Number.NaN, 7, Number.POSITIVE_INFINITY])).toBe(7)
    expect(Measure.median([])).toBeNaN()
  })

  it("percentile is the nearest rank: p99 of 100 values is the 99th smallest", () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i)
    expect(Measure.percentile(values, 99)).toBe(99)
    expect(Measure.percentile(values, 50)).toBe(50)
    expect(Measure.percentile(values, 100)).toBe(100)
  })

  it("the ratio is the median of per-round ratios, not the ratio of the medians", () => {
    // Round 2 ran under load for both sides: per round the figure is half its baseline.
    const figure = [50, 10, 60]
    const baseline = [100, 20, 120]
    expect(Measure.ratioOfRounds(figure, baseline)).toBe(0.5)
    expect(Measure.median(figure) / Measure.median(baseline)).toBe(0.5)
    // With the load spread differently, the ratio of medians drifts; the paired one does not.
    expect(Measure.ratioOfRounds([10, 60, 50], [20, 120, 100])).toBe(0.5)
    expect(Measure.ratioOfRounds([10, 55, 70], [20, 100, 90])).toBeCloseTo(0.55)
    expect(Measure.ratioOfRounds([1, 2], [0, 4])).toBe(0.5)
  })

  it("interleave runs round 1 of every case before round 2 of any, and keeps each case's values in round order", async () => {
    const calls: Array<string> = []
    const values = await Measure.interleave(2, [
      { name: "baseline", run: async (round) => (calls.push(`baseline ${round}`), 100 + round) },
      { name: "figure", run: async (round) => (calls.push(`figure ${round}`), 50 + round) }
    ])
    expect(calls).toEqual(["baseline 0", "figure 0", "baseline 1", "figure 1"])
    expect(values.get("baseline")).toEqual([100, 101])
    expect(values.get("figure")).toEqual([50, 51])
  })

  const figure = (
    target: Measure.Target,
    rounds: Array<number>,
    baseline?: Array<number>
  ): Measure.Figure => ({
    section: "s",
    name: "f",
    unit: "ops/s",
    rounds,
    baseline: baseline === undefined ? undefined : { name: "raw", rounds: baseline },
    target
  })

  it("a throughput target is met at or above its ratio, and a miss says by how much of the target", () => {
    expect(Measure.meets(figure({ _tag: "RatioAtLeast", ratio: 0.8 }, [80], [100]))).toBe(true)
    const miss = figure({ _tag: "RatioAtLeast", ratio: 0.8 }, [40], [100])
    expect(Measure.meets(miss)).toBe(false)
    expect(Measure.verdict(miss)).toBe("missed by 50 %")
  })

  it("a latency target is met at or below its ratio; an absolute bound compares the value itself", () => {
    expect(Measure.verdict(figure({ _tag: "RatioAtMost", ratio: 2 }, [20], [10]))).toBe("met")
    expect(Measure.verdict(figure({ _tag: "RatioAtMost", ratio: 2 }, [30], [10]))).toBe("missed by 50 %")
    expect(Measure.verdict(figure({ _tag: "AtMost", value: 512 }, [400]))).toBe("met")
    expect(Measure.verdict(figure({ _tag: "AtMost", value: 3 }, [3.3]))).toBe("missed by 10 %")
  })

  it("the summary table shows the median, the baseline, the ratio, the target and the verdict", () => {
    const table = Measure.summaryTable([
      figure({ _tag: "RatioAtLeast", ratio: 0.7 }, [600, 700, 800], [1000, 1000, 1000])
    ])
    expect(table).toContain("| s | f | 700 ops/s | raw | 1,000 ops/s | 0.70× | ≥ 0.7× | met |")
  })
})
