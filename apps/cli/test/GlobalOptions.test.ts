import { describe, expect, it } from "@effect/vitest"
import * as GlobalOptions from "@tillflow/cli/GlobalOptions"

describe("the global options before the subcommand", () => {
  it("moves --worker URL, --worker=URL, --json and -v given first after the command's words", () => {
    expect(GlobalOptions.hoist(["--worker", "http://w:8080", "devices"])).toEqual([
      "devices",
      "--worker",
      "http://w:8080"
    ])
    expect(
      GlobalOptions.hoist(["--json", "--worker=http://w", "-v", "executions", "list", "--limit", "5"])
    ).toEqual(["executions", "list", "--limit", "5", "--json", "--worker=http://w", "-v"])
  })

  it("leaves everything else where it is", () => {
    expect(GlobalOptions.hoist(["devices", "--worker", "http://w"])).toEqual([
      "devices",
      "--worker",
      "http://w"
    ])
    expect(GlobalOptions.hoist(["--limit", "5", "executions"])).toEqual(["--limit", "5", "executions"])
    // `--worker` without its value: left for the parser to say so.
    expect(GlobalOptions.hoist(["--worker"])).toEqual(["--worker"])
  })
})
