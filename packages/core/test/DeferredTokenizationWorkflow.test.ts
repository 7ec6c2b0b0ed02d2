import { describe, expect, it } from "@effect/vitest"
import {
  DeferredTokenizationWorkflow,
  Identifiers,
  LifecycleEvent,
  Lifecycles,
  TransactionHistory
} from "@tillflow/core"
import { ScriptedTerminalLessCloud } from "@tillflow/core/testing"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import {
  advance,
  atStart,
  environment,
  eur,
  eventsOf,
  inEnvironment,
  recordTxn
} from "./support/lifecycle.js"

const run = inEnvironment(environment(Lifecycles.layer))
const control = ScriptedTerminalLessCloud.ScriptedControl
const { Tokenize } = DeferredTokenizationWorkflow

describe("DeferredTokenizationWorkflow", () => {
  it.effect("every eligible transaction type is tokenized and the token recorded", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        for (const kind of ["sale", "refund", "preAuthorizationCapture", "moToSale", "moToRefund"] as const) {
          const guid = Identifiers.Guid.make(`txn-${kind}`)
          yield* recordTxn({ guid, kind, amount: eur(1000n) })
          const token = yield* Tokenize.execute({ requestId: `tok-${kind}`, originalGuid: guid })
          expect(token.cardToken).toMatch(/^tok_/)
          const state = Option.getOrThrow(
            TransactionHistory.fold(yield* eventsOf(LifecycleEvent.transactionStream(guid)))
          )
          expect(state.cardToken).toBe(token.cardToken)
        }
        expect(yield* (yield* control).count("deferredToken")).toBe(5)
      })
    )
  )

  it.effect("a pre-authorization (not yet captured) is not tokenized: a typed error, nothing sent", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        const guid = Identifiers.Guid.make("pa-1")
        yield* recordTxn({ guid, kind: "preAuthorization", amount: eur(1000n) })
        const error = yield* Effect.flip(Tokenize.execute({ requestId: "tok-1", originalGuid: guid }))
        expect(error._tag).toBe("TokenizationNotEligible")
        expect(yield* (yield* control).count("deferredToken")).toBe(0)
      })
    )
  )

  it.effect("within 12 calendar months of the recorded transaction, and not a moment after", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        const inTime = Identifiers.Guid.make("sale-in-time")
        const late = Identifiers.Guid.make("sale-late")
        yield* recordTxn({ guid: inTime, kind: "sale", amount: eur(1000n) })
        yield* recordTxn({ guid: late, kind: "sale", amount: eur(1000n) })
        yield* advance("365 days") // 2026-03-01T10:00:00Z: exactly 12 months
        yield* Tokenize.execute({ requestId: "tok-1", originalGuid: inTime })
        yield* advance("1 millis")
        const error = yield* Effect.flip(Tokenize.execute({ requestId: "tok-2", originalGuid: late }))
        expect(error._tag).toBe("TokenizationWindowClosed")
        expect(error.message).toContain("closed at 2026-03-01T10:00:00.000Z")
        expect(yield* (yield* control).count("deferredToken")).toBe(1)
      })
    )
  )

  it.effect("tokenizing does not block other operations, and needs a recorded history", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        const missing = yield* Effect.flip(
          Tokenize.execute({ requestId: "tok-1", originalGuid: Identifiers.Guid.make("nope") })
        )
        expect(missing._tag).toBe("TransactionNotRecorded")
        const guid = Identifiers.Guid.make("sale-1")
        yield* recordTxn({ guid, kind: "sale", amount: eur(1000n) })
        yield* Tokenize.execute({ requestId: "tok-2", originalGuid: guid })
        const state = Option.getOrThrow(
          TransactionHistory.fold(yield* eventsOf(LifecycleEvent.transactionStream(guid)))
        )
        expect(state.pending).toBeUndefined()
      })
    )
  )
})
