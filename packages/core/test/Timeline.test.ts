import { describe, expect, it } from "@effect/vitest"
import {
  Identifiers,
  LifecycleEvent,
  Lifecycles,
  PreAuthorizationWorkflow,
  ReversalWorkflow,
  Timeline,
  TipAdjustmentWorkflow
} from "@tillflow/core"
import { ScriptedTerminalLessCloud } from "@tillflow/core/testing"
import * as Effect from "effect/Effect"
import {
  advance,
  atStart,
  environment,
  eur,
  inEnvironment,
  openPreAuth,
  recordTxn
} from "./support/lifecycle.js"

const run = inEnvironment(environment(Lifecycles.layer))

describe("Timeline", () => {
  it.effect(
    "a pre-authorization's full story — open, increase, decrease, capture, reversal of the capture — reads back as lines",
    () =>
      run(
        Effect.gen(function* () {
          yield* atStart
          const guid = Identifiers.Guid.make("pa-story")
          yield* openPreAuth({ guid, amount: eur(10000n), scheme: "MasterCard", mcc: "7011" })
          yield* advance("1 hours")
          yield* PreAuthorizationWorkflow.Increase.execute({
            requestId: "inc-1",
            originalGuid: guid,
            amount: eur(2500n)
          })
          yield* advance("22 hours")
          yield* PreAuthorizationWorkflow.Decrease.execute({
            requestId: "dec-1",
            originalGuid: guid,
            amount: eur(500n)
          })
          yield* advance("1 days")
          yield* PreAuthorizationWorkflow.Capture.execute({
            requestId: "cap-1",
            originalGuid: guid,
            amount: eur(13000n)
          })
          yield* advance("9 hours")
          const reversal = yield* ReversalWorkflow.Reverse.execute({ requestId: "rev-1", originalGuid: guid })
          expect(reversal.target).toBe("capture")
          const status = yield* (yield* ScriptedTerminalLessCloud.ScriptedControl).txn(guid)
          expect(status?.finStatus).toBe("AUTHORISED")

          const lines = yield* Timeline.read(LifecycleEvent.transactionStream(guid))
          expect(lines).toEqual([
            "2025-03-01 10:00:00 UTC  pre-authorization pa-story opened (preAuthorization): 100.00 EUR held; MasterCard, MCC 7011: capture within 30 days, up to 20% over the hold (rule mastercard)",
            "2025-03-01 11:00:00 UTC  [inc-1] increase of 25.00 EUR requested",
            "2025-03-01 11:00:00 UTC  [inc-1] hold increased by 25.00 EUR to 125.00 EUR",
            "2025-03-02 09:00:00 UTC  [dec-1] decrease of 5.00 EUR requested",
            "2025-03-02 09:00:00 UTC  [dec-1] hold decreased by 5.00 EUR to 120.00 EUR",
            "2025-03-03 09:00:00 UTC  [cap-1] capture of 130.00 EUR requested: limit 144.00 EUR by rule mastercard",
            "2025-03-03 09:00:00 UTC  [cap-1] captured 130.00 EUR: status CAPTURED",
            "2025-03-03 18:00:00 UTC  [rev-1] reversal of the capture requested (CUSTOMER_CANCELLATION)",
            "2025-03-03 18:00:00 UTC  [rev-1] capture of 130.00 EUR reversed: status AUTHORISED, withheld funds released"
          ])
        })
      )
  )

  it.effect(
    "refusals, failures and tip adjustments read back too; the last tip is marked as the one that stands",
    () =>
      run(
        Effect.gen(function* () {
          yield* atStart
          const sale = Identifiers.Guid.make("sale-story")
          yield* recordTxn({ guid: sale, kind: "sale", amount: eur(4000n) })
          yield* TipAdjustmentWorkflow.Adjust.execute({
            requestId: "tip-1",
            originalGuid: sale,
            tip: eur(400n)
          })
          yield* advance("10 minutes")
          yield* TipAdjustmentWorkflow.Adjust.execute({
            requestId: "tip-2",
            originalGuid: sale,
            tip: eur(600n)
          })
          yield* Effect.flip(
            PreAuthorizationWorkflow.Capture.execute({
              requestId: "cap-x",
              originalGuid: sale,
              amount: eur(100n)
            })
          )
          const lines = yield* Timeline.read(LifecycleEvent.transactionStream(sale))
          expect(lines).toEqual([
            "2025-03-01 10:00:00 UTC  sale sale-story recorded: 40.00 EUR",
            "2025-03-01 10:00:00 UTC  [tip-1] tip of 4.00 EUR requested",
            "2025-03-01 10:00:00 UTC  [tip-1] tip set to 4.00 EUR (replaced later)",
            "2025-03-01 10:10:00 UTC  [tip-2] tip of 6.00 EUR requested",
            "2025-03-01 10:10:00 UTC  [tip-2] tip set to 6.00 EUR, replacing 4.00 EUR (stands)",
            "2025-03-01 10:10:00 UTC  [cap-x] capture refused before sending: capture applies to a pre-authorization; sale-story is a sale"
          ])
        })
      )
  )
})
