import { describe, expect, it } from "@effect/vitest"
import { Enumerations, Identifiers, Money, PreAuthorization, TerminalCloud } from "@tillflow/core"
import { ScriptedTerminalLessCloud } from "@tillflow/core/testing"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

const guid = Schema.decodeSync(Identifiers.Guid)
const decimal = Schema.decodeSync(Money.DecimalString)
const reference = Schema.decodeSync(Identifiers.TransactionReference)("7f1c2a9e-8b4d-4c3e-9a51-2d6f0b8e4c11")

describe("ScriptedTerminalLessCloud", () => {
  it.effect(
    "its status rows say what the service says: a type of the spec's TransactionType enumeration",
    () =>
      Effect.gen(function* () {
        const { control, service } = yield* ScriptedTerminalLessCloud.make
        const cloud: TerminalCloud.Service = service
        yield* control.seed({
          guid: "pa-1",
          kind: "preAuthorization",
          amount: Money.make(10000n, "EUR"),
          reference
        })
        yield* cloud.preAuthorizationIncrease(
          new PreAuthorization.PreAuthorizationIncreaseRequest({
            originalGuid: guid("pa-1"),
            increaseAmount: decimal("20.00")
          })
        )
        yield* cloud.preAuthorizationCapture(
          new PreAuthorization.PreAuthorizationCaptureRequest({
            originalGuid: guid("pa-1"),
            capturedAmount: decimal("110.00")
          })
        )
        const rows = yield* cloud.transactionStatus(reference, "all")
        expect(rows.length).toBeGreaterThanOrEqual(3)
        const spec: ReadonlyArray<string> = Enumerations.TransactionType.literals
        for (const row of rows) expect(spec).toContain(row.type)
      })
  )
})
