/**
 * `IntakeClient` as a named operator: logged in with a name and secret (the worker's console
 * sessions), its calls carry the session and are attributed to the operator; a viewer's
 * action comes back as `Forbidden` naming the role and the action (never `Unavailable`); a
 * wrong secret is refused without being repeated; a session logged out is refused, saying to
 * log in again.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpServer from "@effect/platform/HttpServer"
import { expect, layer } from "@effect/vitest"
import { LifecycleEvent, Money, TransactionHistory } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import { Intake, IntakeClient } from "@tillflow/intake"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { layerWith, operators } from "./support.js"

const baseUrl = Effect.map(HttpServer.HttpServer, (server) =>
  server.address._tag === "TcpAddress" ? `http://127.0.0.1:${server.address.port}` : ""
)

/** A sale of 50.00 EUR recorded in its transaction's history. */
const sale = (guid: string) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    yield* TransactionHistory.record(store, {
      guid,
      kind: "sale",
      amount: Money.make(5000n, "EUR"),
      at: yield* DateTime.now
    })
  })

const actionEvents = (guid: string) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const events = yield* LifecycleEvent.registry.decodeAll(
      yield* store.readStream(LifecycleEvent.transactionStream(guid))
    )
    return events.filter((e) => e.type === "OperatorActionRequested")
  })

/** The client intake of the served worker, logged in as `name` (secret `<name>-secret`). */
const clientAs = (name: string) =>
  Effect.gen(function* () {
    const url = yield* baseUrl
    const session = yield* IntakeClient.login(url, name, Redacted.make(`${name}-secret`))
    const intake = yield* IntakeClient.make({
      baseUrl: url,
      credential: { _tag: "Session", operator: session.operator, session: session.session }
    }).pipe(Effect.provide(FetchHttpClient.layer))
    return { url, session, intake }
  })

const refund = {
  action: "refund",
  amount: "15.00",
  currency: "EUR",
  reason: "the customer returned it"
} as const

layer(layerWith({ operators }), { timeout: 60_000, excludeTestServices: true })(
  "IntakeClient as a named operator",
  (it) => {
    it.effect("a viewer's action is Forbidden naming the role and the action, and nothing is recorded", () =>
      Effect.gen(function* () {
        const guid = "1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e"
        yield* sale(guid)
        const { intake, session } = yield* clientAs("vic")
        expect([session.operator, session.role]).toEqual(["vic", "viewer"])
        const error = yield* Effect.flip(intake.act(guid, refund, { name: "ignored", via: "operator" }))
        expect(error._tag).toBe("Forbidden")
        expect(error).toBeInstanceOf(Intake.Forbidden)
        expect(error.message).toMatch(new RegExp(`^forbidden: viewer may not refund transaction ${guid} `))
        expect(error instanceof Intake.Forbidden && error.role).toBe("viewer")
        expect(yield* actionEvents(guid)).toHaveLength(0)
        // What a viewer may do, it does: reads.
        expect(Array.isArray(yield* intake.list({}))).toBe(true)
      })
    )

    it.effect("an operator's action is recorded with the operator's name, not the token's", () =>
      Effect.gen(function* () {
        const guid = "2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f"
        yield* sale(guid)
        const { intake } = yield* clientAs("ana")
        const view = yield* intake.act(
          guid,
          { action: "reverse", reason: "double charge at the till" },
          { name: "not-sent", via: "token" }
        )
        expect(view.workflow).toBe("Reversal.Reverse")
        const recorded = yield* actionEvents(guid)
        expect(recorded.map((e) => e.data)).toMatchObject([
          { action: "reverse", operator: "ana", via: "operator", reason: "double charge at the till" }
        ])
      })
    )

    it.effect("a wrong secret is refused without repeating it; a session logged out is refused", () =>
      Effect.gen(function* () {
        const url = yield* baseUrl
        const wrong = yield* Effect.flip(IntakeClient.login(url, "ana", Redacted.make("not-the-secret-42")))
        expect(wrong._tag).toBe("InvalidRequest")
        expect(wrong.message).toContain("refused the login of ana (401)")
        expect(wrong.message).not.toContain("not-the-secret-42")

        const { intake, session } = yield* clientAs("ana")
        expect(Array.isArray(yield* intake.list({}))).toBe(true)
        yield* IntakeClient.logout(url, session.session)
        const after = yield* Effect.flip(intake.list({}))
        expect(after._tag).toBe("InvalidRequest")
        expect(after.message).toContain("does not know the session of operator ana")
        expect(after.message).toContain(`tillflow login --worker ${url} --operator ana`)
      })
    )
  }
)
