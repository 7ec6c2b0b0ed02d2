import { describe, expect, it } from "@effect/vitest"
import * as ProfileSummary from "../src/ProfileSummary.js"

const frame = (functionName: string, url: string, lineNumber = 0) => ({
  functionName,
  url,
  lineNumber,
  columnNumber: 0
})

// root → run (workspace) → decode (effect) ; run → query (pg) ; root → (idle)
const profile: ProfileSummary.CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame("(root)", ""), children: [2, 5] },
    {
      id: 2,
      callFrame: frame("run", "file:///repo/packages/core/src/DurableEngine.ts", 9),
      children: [3, 4]
    },
    { id: 3, callFrame: frame("decode", "file:///repo/node_modules/effect/dist/esm/ParseResult.js", 99) },
    { id: 4, callFrame: frame("query", "file:///repo/node_modules/pg/lib/client.js", 5) },
    { id: 5, callFrame: frame("(idle)", "") }
  ],
  samples: [3, 3, 4, 2, 5, 5],
  timeDeltas: [1000, 1000, 1000, 500, 3000, 3500],
  startTime: 0,
  endTime: 10_000
}

describe("ProfileSummary", () => {
  it("self time goes to the sampled function; idle is reported apart from the functions", () => {
    const summary = ProfileSummary.summarise(profile)
    expect(summary.totalMs).toBe(10)
    expect(summary.pseudo).toEqual([{ name: "(idle)", where: "", selfMs: 6.5, share: 0.65 }])
    expect(summary.functions.map((f) => [f.name, f.selfMs])).toEqual([
      ["decode", 2],
      ["query", 1],
      ["run", 0.5]
    ])
    expect(summary.functions[0]?.where).toBe("effect/dist/esm/ParseResult.js:100")
  })

  it("self time is grouped by package: npm package name, or the workspace package", () => {
    const summary = ProfileSummary.summarise(profile)
    expect(summary.packages.map((p) => [p.name, p.selfMs])).toEqual([
      ["effect", 2],
      ["pg", 1],
      ["packages/core", 0.5]
    ])
    expect(ProfileSummary.packageOf("file:///x/node_modules/@effect/sql/dist/esm/a.js")).toBe("@effect/sql")
    expect(ProfileSummary.packageOf("node:internal/crypto/util")).toBe("node:internal")
  })

  it("self time is grouped broadly: Schema apart from Effect's runtime, idle apart from work", () => {
    const summary = ProfileSummary.summarise(profile)
    expect(summary.groups.map((g) => [g.name, g.selfMs])).toEqual([
      ["idle (waiting for I/O)", 6.5],
      ["effect Schema (build, parse, encode)", 2],
      ["PostgreSQL client (pg, @effect/sql)", 1],
      ["tillflow code (packages, apps)", 0.5]
    ])
  })

  it("a workspace function's inclusive time counts every sample on its stack, its callees included", () => {
    const summary = ProfileSummary.summarise(profile)
    expect(summary.inclusive.map((f) => [f.name, f.where, f.selfMs])).toEqual([
      ["run", "packages/core/src/DurableEngine.ts:10", 3.5]
    ])
  })

  it("source lines come from the map: generated columns map back to their source line", () => {
    // Segments are [generated column, source, source line, source column], relative:
    // "AAAA" → column 0, line 0; "UAUA" → column +10, line +10; "KACA" → column +5, line +1.
    expect(ProfileSummary.decodeMappingLine("AAAA,UAUA,KACA", { sourceLine: 0 })).toEqual([
      [0, 0],
      [10, 10],
      [15, 11]
    ])
    const withLines = ProfileSummary.summarise(profile, 25, (url) =>
      url.includes("DurableEngine") ? 41 : undefined
    )
    expect(withLines.inclusive[0]?.where).toBe("packages/core/src/DurableEngine.ts:42")
  })
})
