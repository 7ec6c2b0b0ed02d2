import { describe, expect, it } from "@effect/vitest"
import * as Report from "../src/internal/Report.js"

describe("Report", () => {
  const page = [
    "# Performance",
    "",
    "Prose that people wrote.",
    "",
    "<!-- bench:store:begin -->",
    "old table",
    "<!-- bench:store:end -->",
    "",
    "Why the target was missed.",
    ""
  ].join("\n")

  it("a run replaces the generated block of its section and leaves the prose around it", () => {
    const updated = Report.replaceBlock(page, "store", "Event store", "new table")
    expect(updated).toContain("<!-- bench:store:begin -->\nnew table\n<!-- bench:store:end -->")
    expect(updated).not.toContain("old table")
    expect(updated).toContain("Prose that people wrote.")
    expect(updated).toContain("Why the target was missed.")
  })

  it("a section without a block on the page gets one, under its heading, at the end", () => {
    const updated = Report.replaceBlock(page, "engine", "Workflow engine", "engine table")
    expect(
      updated.endsWith(
        "## Workflow engine\n\n<!-- bench:engine:begin -->\nengine table\n<!-- bench:engine:end -->\n"
      )
    ).toBe(true)
    expect(updated).toContain("old table")
  })
})
