/**
 * `tillflow replay` as an operator runs it: the replay corpus from an export file replays
 * (exit 0); a history the code no longer replays is reported with its execution and step
 * (exit 4, and in the `--json` report); a file that is not an export is a usage error.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Bin from "./support/Bin.js"

const buildDir = Bin.testBuildDir()
const corpus = Path.join(Bin.root, "packages/intake/test/fixtures/replay-corpus.jsonl")

afterAll(() => Fs.rmSync(buildDir, { recursive: true, force: true }))

describe("tillflow replay", () => {
  it("replays an export file: the corpus replays, a changed history is reported with its step", async () => {
    const ok = await Bin.run(buildDir, ["replay", "--from", corpus], { DATABASE_URL: "" })
    expect(ok.status, ok.stderr).toBe(0)
    const lines = Fs.readFileSync(corpus, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
    expect(ok.stdout).toContain(`${lines.length} executions replayed, 0 would not replay`)

    // One sale's second step recorded under another name: the code asks for its own.
    const index = lines.findIndex((line) => line.includes('"workflowName":"TerminalOperation"'))
    const history = JSON.parse(lines[index] as string) as {
      executionId: string
      events: Array<{ type: string; data: { seq?: number; name?: string } }>
    }
    for (const event of history.events) {
      if (event.type === "ActivityCompleted" && event.data.seq === 1) event.data.name = `${event.data.name}V0`
    }
    const changed = Path.join(buildDir, "changed.jsonl")
    Fs.writeFileSync(changed, `${JSON.stringify(history)}\n`)
    const failed = await Bin.run(buildDir, ["replay", "--from", changed, "--json"], { DATABASE_URL: "" })
    expect(failed.status, failed.stderr).toBe(4)
    const report = JSON.parse(failed.stdout) as {
      replayed: number
      divergences: Array<Record<string, unknown>>
    }
    expect(report.replayed).toBe(1)
    expect(report.divergences).toHaveLength(1)
    expect(report.divergences[0]).toMatchObject({ executionId: history.executionId, step: 1 })

    const notExport = Path.join(buildDir, "not-an-export.jsonl")
    Fs.writeFileSync(notExport, "hello\n")
    const refused = await Bin.run(buildDir, ["replay", "--from", notExport], { DATABASE_URL: "" })
    expect(refused.status).toBe(2)
    expect(refused.stderr).toContain("line 1")
  }, 300_000)
})
