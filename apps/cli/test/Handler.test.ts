import { describe, expect, it } from "@effect/vitest"
import * as Handler from "@tillflow/cli/Handler"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"

const interrupted = Exit.interrupt(FiberId.none)

describe("the exit code of a run stopped by a signal", () => {
  it("an operation stopped by SIGINT or SIGTERM is never 0 (which says approved): 130, 143", () => {
    expect(Handler.processExitCode(interrupted, Option.some("SIGINT"), Handler.stopsOnSignal(["sale"]))).toBe(
      130
    )
    expect(
      Handler.processExitCode(interrupted, Option.some("SIGTERM"), Handler.stopsOnSignal(["sale"]))
    ).toBe(143)
  })

  it("tillflow worker stopped by SIGINT or SIGTERM stops gracefully with 0, as npm start does", () => {
    expect(
      Handler.processExitCode(interrupted, Option.some("SIGTERM"), Handler.stopsOnSignal(["worker"]))
    ).toBe(0)
    expect(
      Handler.processExitCode(interrupted, Option.some("SIGINT"), Handler.stopsOnSignal(["worker"]))
    ).toBe(0)
    // Interrupted without a signal is not a stop it was asked for.
    expect(Handler.processExitCode(interrupted, Option.none(), Handler.stopsOnSignal(["worker"]))).toBe(1)
  })
})
