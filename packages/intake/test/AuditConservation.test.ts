/**
 * `GET /v1/audit/verify` (what `tillflow audit verify` and `tf.audit.verify()` read) checks
 * each transaction's money conservation beside the hash chains: a log written straight to
 * the store whose sale was refunded in full and then reversed (credited back twice what it
 * charged) keeps every chain intact, and is reported not ok, naming the transaction.
 */
import { expect, layer } from "@effect/vitest"
import { LifecycleEvent, Money } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { call, layer as intake } from "./support.js"

const eur = (minor: bigint) => Money.make(minor, "EUR")

layer(intake, { timeout: 60_000 })("audit verify checks money conservation per transaction", (it) => {
  it.effect("a transaction credited back above what it charged is reported, the chains intact", () =>
    Effect.gen(function* () {
      const clean = yield* call("GET", "/v1/audit/verify")
      expect(clean.json).toMatchObject({ ok: true, conservation: { broken: [] } })

      const store = yield* EventStore.EventStore
      const at = DateTime.unsafeMake("2026-03-01T10:00:00Z")
      const events = yield* Effect.forEach(
        [
          LifecycleEvent.TransactionRecorded.make({
            guid: "sale-twice",
            kind: "sale",
            amount: eur(5101n),
            at
          }),
          LifecycleEvent.Refunded.make({ requestId: "r1", at, amount: eur(5101n), reconciled: false }),
          LifecycleEvent.Reversed.make({
            requestId: "v1",
            at,
            target: "transaction",
            amount: eur(5101n),
            reconciled: false
          })
        ],
        (e) => LifecycleEvent.registry.encode(e)
      )
      yield* store.append(LifecycleEvent.transactionStream("sale-twice"), EventStore.NoStream, events)

      // The global log shows an event once every older transaction on the server ended (other
      // databases' included): the audit reads it, so it may see the new log a moment late.
      let reply = yield* call("GET", "/v1/audit/verify")
      for (let i = 0; i < 100 && reply.json?.ok === true; i++) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
        reply = yield* call("GET", "/v1/audit/verify")
      }
      expect(reply.status).toBe(200)
      expect(reply.json).toMatchObject({
        ok: false,
        broken: [],
        conservation: {
          broken: [
            {
              guid: "sale-twice",
              currency: "EUR",
              charged: "5101",
              credited: "10202",
              message: "transaction sale-twice credited back 102.02 EUR, above the 51.01 EUR it charged"
            }
          ]
        }
      })
      const one = yield* call(
        "GET",
        `/v1/audit/verify?stream=${LifecycleEvent.transactionStream("sale-twice")}`
      )
      expect(one.json).toMatchObject({ ok: false, conservation: { transactionsChecked: 1 } })
    })
  )

  it.effect("a release stating another amount than the hold it ended is a disagreement: not ok, named", () =>
    Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      const at = DateTime.unsafeMake("2026-03-01T10:00:00Z")
      const events = yield* Effect.forEach(
        [
          LifecycleEvent.PreAuthorizationOpened.make({
            guid: "hold-off",
            via: "preAuthorization",
            amount: eur(9000n),
            at,
            scheme: "VISA",
            mcc: "7011"
          }),
          LifecycleEvent.Reversed.make({
            requestId: "v1",
            at,
            target: "hold",
            amount: eur(5000n),
            reconciled: false
          })
        ],
        (e) => LifecycleEvent.registry.encode(e)
      )
      const streamId = LifecycleEvent.transactionStream("hold-off")
      yield* store.append(streamId, EventStore.NoStream, events)
      const reply = yield* call("GET", `/v1/audit/verify?stream=${streamId}`)
      expect(reply.json).toMatchObject({
        ok: false,
        broken: [],
        conservation: {
          broken: [],
          disagreements: [
            {
              guid: "hold-off",
              version: 2,
              eventType: "Reversed",
              what: "release",
              stated: "50.00",
              folded: "90.00",
              currency: "EUR",
              message:
                "transaction hold-off: the release at version 2 (Reversed) states 50.00 EUR, where the history says 90.00 EUR"
            }
          ]
        }
      })
    })
  )
})
