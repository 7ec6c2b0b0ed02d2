import { describe, expect, it } from "@effect/vitest"
import { DeviceCommandWorkflow, Identifiers, LifecycleEvent, Lifecycles } from "@tillflow/core"
import { ScriptedTerminalLessCloud } from "@tillflow/core/testing"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { stepClock, atStart, environment, eventsOf, inEnvironment } from "./support/lifecycle.js"

const run = inEnvironment(environment(Lifecycles.layer))
const control = ScriptedTerminalLessCloud.ScriptedControl
const device = {
  serialNumber: Identifiers.SerialNumber.make("T-7"),
  terminalType: Identifiers.TerminalType.make("A920")
}
const send = (
  requestId: string,
  command: DeviceCommandWorkflow.Accepted["command"],
  body: Record<string, unknown>
) => DeviceCommandWorkflow.Send.execute({ requestId, ...device, command, body })

describe("DeviceCommandWorkflow", () => {
  it.effect("each command within its range is sent and recorded as an event", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        yield* send("c-1", "set-unattended-mode", { status: true })
        yield* send("c-2", "set-locale", { locale: "fr_CA" })
        yield* send("c-3", "set-password-protected", { status: false })
        yield* send("c-4", "reboot", { force: false })
        yield* send("c-5", "set-screen-brightness", {
          minimumBrightnessLevel: 0,
          maximumBrightnessLevel: 100
        })
        yield* send("c-6", "set-reboot-time", { hour: 23 })
        const calls = (yield* (yield* control).calls).map(
          (c) => c.request as { command: { command: string; body: unknown } }
        )
        expect(calls.map((c) => [c.command.command, { ...(c.command.body as object) }])).toEqual([
          ["set-unattended-mode", { status: true }],
          ["set-locale", { locale: "fr_CA" }],
          ["set-password-protected", { status: false }],
          ["reboot", { force: false }],
          ["set-screen-brightness", { minimumBrightnessLevel: 0, maximumBrightnessLevel: 100 }],
          ["set-reboot-time", { hour: 23 }]
        ])
        const events = yield* eventsOf(LifecycleEvent.deviceStream("T-7"))
        expect(events.filter((e) => e.type === "DeviceCommandAccepted")).toHaveLength(6)
        expect(events.find((e) => e.type === "DeviceCommandRequested")?.data).toMatchObject({
          command: "set-unattended-mode",
          body: { status: true }
        })
      })
    )
  )

  it.effect(
    "out-of-range and malformed values are refused locally, naming the rule, and recorded as refused",
    () =>
      run(
        Effect.gen(function* () {
          yield* atStart
          const cases: ReadonlyArray<
            readonly [DeviceCommandWorkflow.Accepted["command"], Record<string, unknown>, string]
          > = [
            ["set-screen-brightness", { minimumBrightnessLevel: 0, maximumBrightnessLevel: 101 }, "0..100"],
            ["set-screen-brightness", { minimumBrightnessLevel: -1, maximumBrightnessLevel: 50 }, "0..100"],
            [
              "set-screen-brightness",
              { minimumBrightnessLevel: 60, maximumBrightnessLevel: 50 },
              "minimum not above maximum"
            ],
            ["set-screen-brightness", { minimumBrightnessLevel: 10.5, maximumBrightnessLevel: 50 }, "0..100"],
            ["set-reboot-time", { hour: 24 }, "0..23"],
            ["set-reboot-time", { hour: -1 }, "0..23"],
            ["set-locale", { locale: "en-US" }, "en_US"],
            ["set-locale", { locale: "english" }, "en_US"],
            ["reboot", { force: "yes" }, "force is a boolean"],
            ["set-unattended-mode", {}, "status is a boolean"],
            ["set-password-protected", { status: true, extra: 1 }, "status is a boolean"]
          ]
          for (const [i, [command, body, rule]] of cases.entries()) {
            const error = yield* Effect.flip(send(`bad-${i}`, command, body))
            expect(error._tag).toBe("InvalidDeviceCommand")
            expect(error._tag === "InvalidDeviceCommand" ? error.rule : "").toContain(rule)
          }
          expect(yield* (yield* control).count("deviceCommand")).toBe(0)
          const events = yield* eventsOf(LifecycleEvent.deviceStream("T-7"))
          expect(events.map((e) => e.type)).toEqual(cases.map(() => "OperationRefused"))
        })
      )
  )

  it.effect("a 5xx on a set- command is resent; on a reboot it is not (kept in doubt)", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        const c = yield* control
        yield* c.next("deviceCommand", { _tag: "AppliedThen503" })
        const fiber = yield* Effect.fork(send("c-1", "set-reboot-time", { hour: 3 }))
        yield* stepClock("2 seconds")
        yield* Fiber.join(fiber)
        expect(yield* c.count("deviceCommand")).toBe(2)
        yield* c.next("deviceCommand", { _tag: "AppliedThen503" })
        const reboot = yield* Effect.flip(send("c-2", "reboot", { force: true }))
        expect(reboot._tag).toBe("OutcomeUnknown")
        expect(yield* c.count("deviceCommand")).toBe(3)
        const last = (yield* eventsOf(LifecycleEvent.deviceStream("T-7"))).at(-1)
        expect(last?.type).toBe("OperationInDoubt")
      })
    )
  )
})
