import { describe, expect, it } from "@effect/vitest"
import { tillflow } from "@tillflow/cli/Commands"
import * as Examples from "@tillflow/cli/Examples"
import * as Help from "@tillflow/cli/Help"
import * as Output from "@tillflow/cli/Output"
import * as Presentation from "@tillflow/cli/Presentation"
import type * as Intake from "@tillflow/intake/Intake"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"

const view = (overrides: Partial<Intake.ExecutionView>): Intake.ExecutionView => ({
  executionId: "e1",
  workflow: "TerminalOperation",
  status: "succeeded",
  attributes: { operation: "sale", serialNumber: "S1", amount: "10.50", currency: "EUR" },
  createdAt: 0,
  updatedAt: 0,
  ...overrides
})

describe("Presentation: what --json shows", () => {
  it("unwraps an encoded Exit and writes every amount in major units beside its currency", () => {
    const stored = {
      _id: "Exit",
      _tag: "Success",
      value: {
        _tag: "Approved",
        facts: {
          totalAmount: { amount: "1050", currency: "EUR" },
          tipAmount: { amount: "0", currency: "JPY" }
        }
      }
    }
    expect(Presentation.plain(stored)).toEqual({
      _tag: "Approved",
      facts: {
        totalAmount: { amount: "10.50", currency: "EUR" },
        tipAmount: { amount: "0", currency: "JPY" }
      }
    })
    // A status entry's minor-unit numbers beside its currency.
    expect(Presentation.plain({ currency: "BHD", totalAmount: 1234, type: "SALE" })).toEqual({
      currency: "BHD",
      totalAmount: { amount: "1.234", currency: "BHD" },
      type: "SALE"
    })
  })

  it("a failed Exit is its first failure, not the Cause encoding", () => {
    const stored = {
      _id: "Exit",
      _tag: "Failure",
      cause: { _id: "Cause", _tag: "Fail", failure: { _tag: "NotFound", message: "no such guid" } }
    }
    expect(Presentation.plain(stored)).toEqual({ error: { _tag: "NotFound", message: "no such guid" } })
  })

  it("a declined payment's status is declined, and the engine's 'succeeded' reads 'completed'", () => {
    const doc = Presentation.executionJson(
      view({ report: { verdict: "declined", reconciled: false, summary: "sale on S1: DECLINED" } })
    ) as Record<string, unknown>
    expect(doc["status"]).toBe("declined")
    expect(doc["execution"]).toBe("completed")
    expect(doc["amount"]).toEqual({ amount: "10.50", currency: "EUR" })
    expect(JSON.stringify(doc)).not.toContain("succeeded")
  })

  it("an efttimestamp is the terminal's wall clock, never presented as UTC", () => {
    expect(Presentation.terminalTime("20261124015151307")).toBe("2026-11-24 01:51:51.307 terminal time")
  })
})

describe("Help: examples and the help index", () => {
  it("every command has one or two examples, each starting with tillflow", () => {
    for (const path of Help.commandPaths(tillflow)) {
      const shown = Examples.examples[path.join(" ")] ?? []
      expect(shown.length, `examples of '${path.join(" ")}'`).toBeGreaterThanOrEqual(1)
      expect(shown.length).toBeLessThanOrEqual(2)
      for (const example of shown) expect(example).toMatch(/^(\w+=\S+ )?tillflow\b/)
    }
  })

  it("the index holds every command's help, subcommands included, within 100 columns", async () => {
    const index = await Effect.runPromise(
      Help.index(tillflow, { name: "tillflow", version: "0.1.0" }).pipe(Effect.provide(NodeContext.layer))
    )
    expect(Object.keys(index)).toEqual(
      expect.arrayContaining(["", "sale", "executions list", "moto preauth"])
    )
    for (const [key, help] of Object.entries(index)) {
      expect(help.plain, key).toContain("EXAMPLES")
      expect(
        help.plain.split("\n").filter((line) => line.length > 100),
        key
      ).toEqual([])
    }
  }, 120_000)
})

describe("Output: the live progress line", () => {
  const running = (progress: Intake.ExecutionView["progress"]): Intake.ExecutionView => ({
    executionId: "e1",
    workflow: "TerminalOperation",
    status: "running",
    attributes: { operation: "sale", serialNumber: "0821032398" },
    createdAt: 0,
    updatedAt: 0,
    ...(progress === undefined ? {} : { progress })
  })

  it("follows the steps recorded: the step and how long ago, then what it waits for", () => {
    const sent = Output.progressLine(
      running({
        phase: "sending",
        attempt: 1,
        waitingFor: "the service to take attempt 1",
        step: "attempt 1 recorded, sending it to the service",
        stepAt: 1_000
      }),
      500,
      0,
      1_500
    )
    expect(sent).toContain(
      "sale on 0821032398: sending, 0.5 s; attempt 1 recorded, sending it to the service 0.5 s ago"
    )
    const taken = Output.progressLine(
      running({
        phase: "waiting",
        attempt: 1,
        waitingFor: "the terminal's result (callback)",
        step: "attempt 1 accepted: the terminal has the operation",
        stepAt: 2_000
      }),
      9_000,
      1,
      10_000
    )
    expect(taken).toContain(
      "attempt 1 accepted: the terminal has the operation 8.0 s ago; waiting for the terminal's result (callback)"
    )
    expect(taken).not.toBe(sent)
  })
})
