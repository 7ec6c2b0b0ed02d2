/**
 * The race between the receiver and the protocol's conclusion about an attempt, played
 * in a fixed order: the store is wrapped so that a delivery is received, or a forwarding
 * let through, at the exact point of the workflow's steps where it hurts. Whatever the
 * interleaving, a result the conclusion did not weigh is noted once as late, with one
 * `ResultMismatch` when it disagrees; one the conclusion weighed is not late.
 */
import { describe, expect, it } from "@effect/vitest"
import { CallbackReceiver } from "@tillflow/callback"
import { Identifiers, Money, RemoteError, TerminalOperations } from "@tillflow/core"
import { type ScriptedTerminalCloud } from "@tillflow/core/testing"
import { EventStore, MemoryEventStore } from "@tillflow/engine"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Cloud, everything, firstAttempt, layer, runToEnd } from "./support.js"

const terminal = {
  serialNumber: Identifiers.SerialNumber.make("0821032398"),
  terminalType: Identifiers.TerminalType.make("A920")
}

/** What the test does around the store's operations; each does nothing unless set. */
interface Hooks {
  beforeRead: (streamId: string) => Effect.Effect<void>
  afterRead: (streamId: string) => Effect.Effect<void>
  beforeAppend: (streamId: string, events: ReadonlyArray<EventStore.NewEvent>) => Effect.Effect<void>
  afterAppend: (streamId: string, events: ReadonlyArray<EventStore.NewEvent>) => Effect.Effect<void>
  /** Types of the events of every append refused as a duplicate. */
  readonly refused: Array<ReadonlyArray<string>>
}

const makeHooks = (): Hooks => ({
  beforeRead: () => Effect.void,
  afterRead: () => Effect.void,
  beforeAppend: () => Effect.void,
  afterAppend: () => Effect.void,
  refused: []
})

/** The memory store, with the hooks run around its reads and appends. */
const hookedStore = (hooks: Hooks) =>
  Layer.effect(
    EventStore.EventStore,
    Effect.map(MemoryEventStore.make(), ({ store }): EventStore.Service => ({
      ...store,
      readStream: (streamId, options) =>
        Effect.gen(function* () {
          yield* hooks.beforeRead(streamId)
          const events = yield* store.readStream(streamId, options)
          yield* hooks.afterRead(streamId)
          return events
        }),
      append: (streamId, expected, events) =>
        Effect.gen(function* () {
          yield* hooks.beforeAppend(streamId, events)
          const done = yield* store
            .append(streamId, expected, events)
            .pipe(
              Effect.tapErrorTag("DuplicateEventId", () =>
                Effect.sync(() => hooks.refused.push(events.map((e) => e.type)))
              )
            )
          yield* hooks.afterAppend(streamId, events)
          return done
        })
    }))
  )

const isAttempt = (streamId: string) => streamId.startsWith("attempt-")
const isPayment = (streamId: string) => streamId.startsWith("payment-")
const has = (events: ReadonlyArray<EventStore.NewEvent>, type: string) => events.some((e) => e.type === type)
const settledByStatus = (events: ReadonlyArray<EventStore.NewEvent>) =>
  events.some(
    (e) =>
      e.type === "ReconciliationChecked" &&
      typeof e.data === "object" &&
      e.data !== null &&
      "verdict" in e.data &&
      e.data["verdict"] === "Settled"
  )

/** A delivery of `finStatus` to the first attempt, with the token the cloud was sent, as the terminal makes it. */
const deliver = (finStatus: string) =>
  Effect.gen(function* () {
    const receiver = yield* CallbackReceiver.CallbackReceiver
    const { attemptId, token } = yield* firstAttempt
    const reply = yield* receiver.receive({
      attemptId,
      token: Option.some(token),
      body: JSON.stringify({
        finStatus,
        totalAmount: 1050,
        currency: "EUR",
        maskedCardNumber: "411111******1111"
      })
    })
    expect(reply._tag).toBe("Acknowledged")
  })

/** Reads of the payment's streams wait until `open` is done (the receiver's forwarding held back). */
const holdPaymentReads = (hooks: Hooks) =>
  Effect.gen(function* () {
    const open = yield* Deferred.make<void>()
    hooks.beforeRead = (streamId) => (isPayment(streamId) ? Deferred.await(open) : Effect.void)
    return Deferred.succeed(open, undefined)
  })

/** The hooks run inside the store, outside the test's context: they get its services this way. */
const withServices = Effect.map(
  Effect.context<Cloud | CallbackReceiver.CallbackReceiver | EventStore.EventStore>(),
  (context) =>
    <A>(effect: Effect.Effect<A, never, Cloud | CallbackReceiver.CallbackReceiver | EventStore.EventStore>) =>
      Effect.provide(effect, context)
)

const ofType = (events: ReadonlyArray<EventStore.RecordedEvent>, type: string) =>
  events.filter((e) => e.type === type)

const sale = (key: string, options: { readonly retryNotCharged?: boolean } = {}) =>
  TerminalOperations.sale(
    { ...terminal, amount: Money.make(1050n, "EUR") },
    { idempotencyKey: key, delivery: "callback", ...options }
  )

// No callback in time: the status endpoint settles the sale DECLINED.
const declinedByStatus: ReadonlyArray<ScriptedTerminalCloud.Script> = [
  { result: { finStatus: "DECLINED" }, deliver: false }
]

// The request's answer is lost (502) and the terminal never had it: the status endpoint
// finds nothing, and after 90 s the attempt is proved not charged.
const unknownThenNotFound: ReadonlyArray<ScriptedTerminalCloud.Script> = [
  {
    answer: new RemoteError.OutcomeUnknown({ message: "502", reason: "ServerError", status: 502 }),
    processed: false
  }
]

describe("The receiver and the settle step, racing", () => {
  it.effect(
    "a result appended after settle's read and forwarded before its outcome landed: one late note, one mismatch",
    () => {
      const hooks = makeHooks()
      return Effect.gen(function* () {
        const run = yield* withServices
        let armed = false
        let forwardedBeforeOutcome: boolean | undefined
        hooks.afterAppend = (streamId, events) =>
          Effect.sync(() => {
            if (isPayment(streamId) && settledByStatus(events)) armed = true
          })
        // Settle's first read of the attempt's stream has happened: the terminal's callback
        // comes now, and is forwarded at once, before settle appends its outcome.
        hooks.afterRead = (streamId) =>
          !(armed && isAttempt(streamId))
            ? Effect.void
            : run(
                Effect.gen(function* () {
                  armed = false
                  yield* deliver("AUTHORISED")
                  yield* (yield* CallbackReceiver.CallbackReceiver).forwarded
                  const all = yield* everything
                  forwardedBeforeOutcome =
                    ofType(all, "PaymentDeclined").length === 0 &&
                    ofType(all, "LateResultRecorded").length === 0
                })
              )
        const exit = yield* runToEnd(sale("race-1"))
        expect(Exit.isSuccess(exit) && exit.value._tag).toBe("Declined")
        yield* (yield* CallbackReceiver.CallbackReceiver).forwarded
        expect(forwardedBeforeOutcome).toBe(true)
        const all = yield* everything
        expect(ofType(all, "PaymentDeclined")).toHaveLength(1)
        expect(ofType(all, "LateResultRecorded")).toHaveLength(1)
        const mismatches = ofType(all, "ResultMismatch")
        expect(mismatches).toHaveLength(1)
        expect(mismatches[0]?.data).toMatchObject({ recorded: "DECLINED", received: "AUTHORISED" })
      }).pipe(Effect.provide(layer({ scripts: declinedByStatus, store: hookedStore(hooks) })))
    }
  )

  it.effect(
    "both the receiver and settle note the same late result: the second is refused as a duplicate, one note and one mismatch stay",
    () => {
      const hooks = makeHooks()
      return Effect.gen(function* () {
        const run = yield* withServices
        const receiver = yield* CallbackReceiver.CallbackReceiver
        const release = yield* holdPaymentReads(hooks)
        let reads = 0
        let armed = false
        hooks.afterAppend = (streamId, events) =>
          Effect.sync(() => {
            if (isPayment(streamId) && settledByStatus(events)) armed = true
          })
        // After settle's first read the callback comes (its forwarding held back); after the
        // next read of the attempt's stream, once the outcome has landed, the forwarding
        // runs to its end: both sides find the result late, the receiver writes first.
        hooks.afterRead = (streamId) =>
          !(armed && isAttempt(streamId))
            ? Effect.void
            : run(
                Effect.gen(function* () {
                  reads++
                  if (reads === 1) return yield* deliver("AUTHORISED")
                  armed = false
                  yield* release
                  yield* receiver.forwarded
                })
              )
        const exit = yield* runToEnd(sale("race-2"))
        expect(Exit.isSuccess(exit) && exit.value._tag).toBe("Declined")
        yield* release
        yield* receiver.forwarded
        const all = yield* everything
        expect(ofType(all, "LateResultRecorded")).toHaveLength(1)
        expect(ofType(all, "ResultMismatch")).toHaveLength(1)
        // Settle wrote the notes after the receiver had: refused, and taken as done.
        expect(hooks.refused.some((types) => types.includes("LateResultRecorded"))).toBe(true)
      }).pipe(Effect.provide(layer({ scripts: declinedByStatus, store: hookedStore(hooks) })))
    }
  )

  it.effect(
    "a result settle weighed, forwarded after the outcome landed: its one mismatch, and it is not late",
    () => {
      const hooks = makeHooks()
      return Effect.gen(function* () {
        const run = yield* withServices
        const receiver = yield* CallbackReceiver.CallbackReceiver
        const release = yield* holdPaymentReads(hooks)
        hooks.afterAppend = (streamId, events) =>
          run(
            Effect.gen(function* () {
              if (!isPayment(streamId)) return
              // Reconciliation settled it; the callback comes before settle reads the attempt.
              if (settledByStatus(events)) yield* deliver("AUTHORISED")
              // The outcome has landed: the forwarding reads the payment's stream only now.
              if (has(events, "PaymentDeclined")) {
                yield* release
                yield* receiver.forwarded
              }
            })
          )
        const exit = yield* runToEnd(sale("race-3"))
        expect(Exit.isSuccess(exit) && exit.value._tag).toBe("Declined")
        yield* release
        yield* receiver.forwarded
        const all = yield* everything
        expect(ofType(all, "ResultMismatch")).toHaveLength(1)
        expect(ofType(all, "ResultMismatch")[0]?.data).toMatchObject({
          recorded: "DECLINED",
          received: "AUTHORISED"
        })
        expect(ofType(all, "LateResultRecorded")).toHaveLength(0)
      }).pipe(Effect.provide(layer({ scripts: declinedByStatus, store: hookedStore(hooks) })))
    }
  )

  // With or without retries of attempts proved not charged: a new attempt could charge the
  // card twice, so none is sent either way.
  for (const retryNotCharged of [false, true]) {
    it.effect(
      `a charge delivered while reconciliation proves the attempt not charged, forwarded before that lands: noted with a mismatch, no new attempt, the operation unresolved (retryNotCharged ${retryNotCharged})`,
      () => {
        const hooks = makeHooks()
        return Effect.gen(function* () {
          const run = yield* withServices
          const receiver = yield* CallbackReceiver.CallbackReceiver
          const cloud = yield* Cloud
          let done = false
          // Just before AttemptNotCharged is appended the callback comes and is forwarded:
          // no conclusion yet for the receiver to note it against.
          hooks.beforeAppend = (streamId, events) =>
            done || !isPayment(streamId) || !has(events, "AttemptNotCharged")
              ? Effect.void
              : run(
                  Effect.gen(function* () {
                    done = true
                    yield* deliver("AUTHORISED")
                    yield* receiver.forwarded
                  })
                )
          const exit = yield* runToEnd(sale(`race-not-charged-${retryNotCharged}`, { retryNotCharged }))
          expect(done).toBe(true)
          expect(Exit.isFailure(exit)).toBe(true)
          if (Exit.isFailure(exit)) {
            expect(Option.map(Cause.failureOption(exit.cause), (e) => e._tag)).toEqual(
              Option.some("OutcomeUnresolved")
            )
          }
          expect(cloud.recorded.sends).toHaveLength(1)
          yield* receiver.forwarded
          const all = yield* everything
          expect(ofType(all, "AttemptRecorded")).toHaveLength(1)
          expect(ofType(all, "PaymentNotCharged")).toHaveLength(0)
          expect(ofType(all, "OutcomeUnresolved")).toHaveLength(1)
          expect(ofType(all, "LateResultRecorded")).toHaveLength(1)
          const mismatches = ofType(all, "ResultMismatch")
          expect(mismatches).toHaveLength(1)
          expect(mismatches[0]?.data).toMatchObject({ recorded: "NOT_CHARGED", received: "AUTHORISED" })
        }).pipe(Effect.provide(layer({ scripts: unknownThenNotFound, store: hookedStore(hooks) })))
      }
    )
  }
})
