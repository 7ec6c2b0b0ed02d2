/**
 * The protocol on tillflow's own engine (DurableEngine + ExecutionQueue + EngineWorker, in
 * memory): what the in-memory engine of @effect/workflow cannot show — one operation per
 * terminal across workers, and a worker stopped in the middle of a POST.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  CallbackRegistration,
  Identifiers,
  Money,
  OperationOutcome,
  PaymentProtocol,
  ProtocolSettings,
  TerminalCloud,
  TerminalOperations
} from "@tillflow/core"
import { ScriptedTerminalCloud } from "@tillflow/core/testing"
import {
  DurableEngine,
  EngineWorker,
  EventStore,
  ExecutionQueue,
  HashChain,
  MemoryEventStore
} from "@tillflow/engine"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Option from "effect/Option"
import {
  advanceUntil,
  callbackBase,
  Cloud,
  everything,
  receive,
  runToEnd,
  typesOf
} from "./support/protocol.js"

const terminal = {
  serialNumber: Identifiers.SerialNumber.make("0821032398"),
  terminalType: Identifiers.TerminalType.make("A920")
}
const other = { ...terminal, serialNumber: Identifiers.SerialNumber.make("0821099999") }

const engineLayer = (
  scripts: ReadonlyArray<ScriptedTerminalCloud.Script>,
  store: Layer.Layer<EventStore.EventStore> = MemoryEventStore.layer()
) => {
  const cloud = Layer.scopedContext(
    Effect.map(ScriptedTerminalCloud.make({ scripts, deliver: receive({ badTokens: [] }) }), (handle) =>
      Context.make(Cloud, handle).pipe(Context.add(TerminalCloud.TerminalCloud, handle.service))
    )
  )
  return PaymentProtocol.layer.pipe(
    Layer.provideMerge(cloud),
    Layer.provideMerge(ProtocolSettings.layer({ callbackBaseUrl: Option.some(callbackBase) })),
    Layer.provideMerge(DurableEngine.layer()),
    Layer.provideMerge(ExecutionQueue.layerMemory),
    Layer.provideMerge(store)
  )
}

const sale = (key: string, who = terminal, delivery: "polling" | "callback" = "polling") =>
  TerminalOperations.sale(
    { ...who, amount: Money.make(1050n, "EUR") },
    { idempotencyKey: key, delivery, deadline: "10 minutes" }
  )

describe("PaymentProtocol on the durable engine", () => {
  it.effect(
    "a sale settled by the status endpoint whose answers name the card holder stores the name only wrapped, wherever it is recorded (the poll's and the status check's steps): removed, no event holds it",
    () =>
      Effect.gen(function* () {
        const worker = yield* Layer.build(EngineWorker.layer({ concurrency: 8 }))
        void worker
        const exit = yield* runToEnd(sale("status-personal"), { step: "5 seconds", max: "1 hour" })
        expect(Exit.isSuccess(exit) && exit.value.facts.source).toBe("status")
        const stored = yield* everything
        const holding = stored.filter((event) => JSON.stringify(event.data).includes("JANE ROE"))
        // The engine's records of the poll step and of the status check's entry.
        expect(holding.length).toBeGreaterThanOrEqual(2)
        expect(new Set(holding.map((event) => event.type))).toEqual(new Set(["ActivityCompleted"]))
        for (const event of holding) {
          expect(JSON.stringify(event.data)).toContain(HashChain.personalKey)
          expect(JSON.stringify(HashChain.erasePersonal(event.data))).not.toContain("JANE ROE")
        }
      }).pipe(
        Effect.scoped,
        Effect.provide(
          engineLayer([
            {
              result: { finStatus: "UNDEFINED", cardHolderName: "JANE ROE" },
              statusResult: { finStatus: "AUTHORISED", cardHolderName: "JANE ROE" },
              inProgressChecks: 1
            }
          ])
        )
      )
  )

  it.effect("concurrent sales to one terminal run one after the other: none gets 1001", () =>
    Effect.gen(function* () {
      const worker = yield* Layer.build(EngineWorker.layer({ concurrency: 8 }))
      void worker
      const exits = yield* runToEnd(
        Effect.all([sale("a"), sale("b"), sale("c"), sale("x", other)], { concurrency: "unbounded" })
      )
      expect(Exit.isSuccess(exits)).toBe(true)
      const cloud = yield* Cloud
      expect(cloud.recorded.busyAnswers).toBe(0)
      const mine = cloud.recorded.sends.filter((s) => s.request.serialNumber === terminal.serialNumber)
      expect(mine).toHaveLength(3)
      // Each sale's result takes 5 s: serialised sends are at least that far apart.
      const times = mine.map((s) => s.at).sort((x, y) => x - y)
      expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(5_000)
      expect((times[2] ?? 0) - (times[1] ?? 0)).toBeGreaterThanOrEqual(5_000)
      // The other terminal is not held up by this one.
      const theirs = cloud.recorded.sends.find((s) => s.request.serialNumber === other.serialNumber)
      expect(theirs?.at).toBeLessThan(times[1] ?? 0)
    }).pipe(Effect.scoped, Effect.provide(engineLayer([{}, {}, {}, {}])))
  )

  it.effect(
    "a sale queued behind the terminal's operation past its own deadline ends TerminalUnavailable (QueuedPastDeadline) at that deadline, not sent, while the first still runs",
    () =>
      Effect.gen(function* () {
        const worker = yield* Layer.build(EngineWorker.layer({ concurrency: 8 }))
        void worker
        const first = yield* Effect.fork(
          TerminalOperations.sale(
            { ...terminal, amount: Money.make(1050n, "EUR") },
            { idempotencyKey: "long", delivery: "polling", deadline: "10 minutes" }
          )
        )
        const cloud = yield* Cloud
        yield* advanceUntil(() => cloud.recorded.sends.length === 1)
        const queuedAt = yield* Clock.currentTimeMillis
        const exit = yield* runToEnd(
          TerminalOperations.sale(
            { ...terminal, amount: Money.make(2000n, "EUR") },
            { idempotencyKey: "queued", delivery: "polling", deadline: "1 minute" }
          ),
          { step: "5 seconds", max: "15 minutes" }
        )
        const endedAt = yield* Clock.currentTimeMillis
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit)) {
          const error = Cause.squash(exit.cause) as OperationOutcome.TerminalUnavailable
          expect(error).toBeInstanceOf(OperationOutcome.TerminalUnavailable)
          expect(error.lastReason).toBe("QueuedPastDeadline")
          expect(error.attempts).toBe(0)
        }
        // At its deadline (a few seconds of polling after it), not when the first ends (3 min).
        expect(endedAt - queuedAt).toBeGreaterThanOrEqual(60_000)
        expect(endedAt - queuedAt).toBeLessThan(2 * 60_000)
        expect(cloud.recorded.sends).toHaveLength(1)
        expect(Option.isNone(yield* Fiber.poll(first))).toBe(true)
        // The first was never disturbed: it ends approved when its result comes (3 min).
        const firstExit = yield* runToEnd(Fiber.join(first), { step: "10 seconds", max: "1 hour" })
        expect(Exit.isSuccess(firstExit) && firstExit.value._tag).toBe("Approved")
      }).pipe(Effect.scoped, Effect.provide(engineLayer([{ takes: "3 minutes" }]))),
    120_000
  )

  it.effect("a worker stopped during the POST: another resumes, reconciles, and never sends it again", () =>
    Effect.gen(function* () {
      const cloud = yield* Cloud
      const first = yield* Scope.make()
      yield* Layer.buildWithScope(EngineWorker.layer({ shutdownTimeout: "1 second" }), first)
      const caller = yield* Effect.fork(sale("crash"))
      yield* advanceUntil(() => cloud.recorded.sends.length === 1)
      // Closing the worker's scope lets it wait a grace period (on the test clock), then interrupts the run.
      expect(Exit.isSuccess(yield* runToEnd(Scope.close(first, Exit.void)))).toBe(true)
      yield* Layer.build(EngineWorker.layer({ workerId: "second" }))
      const exit = yield* runToEnd(Fiber.join(caller))
      expect(Exit.isSuccess(exit) && exit.value._tag).toBe("Approved")
      if (Exit.isSuccess(exit)) expect(exit.value.facts.source).toBe("status")
      expect(cloud.recorded.sends).toHaveLength(1)
      expect(cloud.recorded.processed).toHaveLength(1)
      const executionId = yield* PaymentProtocol.TerminalOperation.executionId({
        idempotencyKey: "crash",
        request: { operation: "pingDevice", ...terminal },
        requestedAt: 0
      })
      const types = yield* typesOf(`payment-${executionId}`)
      expect(types).toContain("AttemptOutcomeUnknown")
      expect(types.at(-1)).toBe("PaymentAuthorised")
    }).pipe(Effect.scoped, Effect.provide(engineLayer([{ hang: true }])))
  )

  it.effect("callback mode on the durable engine: the workflow suspends and the delivery wakes it", () =>
    Effect.gen(function* () {
      yield* Layer.build(EngineWorker.layer())
      const exit = yield* runToEnd(sale("cb", terminal, "callback"))
      expect(Exit.isSuccess(exit) && exit.value._tag).toBe("Approved")
      if (Exit.isSuccess(exit)) expect(exit.value.facts.source).toBe("callback")
      const cloud = yield* Cloud
      expect(cloud.recorded.statusQueries).toHaveLength(0)
      expect(cloud.recorded.sends).toHaveLength(1)
    }).pipe(Effect.scoped, Effect.provide(engineLayer([{}])))
  )
})

/**
 * The memory store, with `afterRead` and `afterAppend` run after each read and each append
 * that landed (a test's hooks into the order of the workflow's steps).
 */
const hookedStore = (hooks: {
  afterRead: (streamId: string) => Effect.Effect<void>
  afterAppend: (streamId: string, events: ReadonlyArray<EventStore.NewEvent>) => Effect.Effect<void>
}) =>
  Layer.effect(
    EventStore.EventStore,
    Effect.map(MemoryEventStore.make(), ({ store }): EventStore.Service => ({
      ...store,
      readStream: (streamId, options) =>
        Effect.tap(store.readStream(streamId, options), () => hooks.afterRead(streamId)),
      append: (streamId, expected, events) =>
        Effect.tap(store.append(streamId, expected, events), () => hooks.afterAppend(streamId, events))
    }))
  )

describe("PaymentProtocol on the durable engine: settle run again", () => {
  // The status endpoint settles the sale DECLINED (no callback in time). Right after settle
  // has read the attempt's stream, an AUTHORISED callback is recorded there, as the receiver
  // does, and its forwarding found no outcome to note it against. Settle's worker then stops
  // at `stopAt`; another runs settle again.
  for (const stopAt of ["PaymentDeclined", "LateResultRecorded"] as const) {
    it.effect(
      `stopped after appending its ${stopAt === "PaymentDeclined" ? "outcome" : "notes"}, settle run again notes the late result once, with one mismatch`,
      () => {
        let armed = false
        let stopped = false
        const hooks = {
          afterRead: (streamId: string): Effect.Effect<void> =>
            !(armed && streamId.startsWith("attempt-"))
              ? Effect.void
              : Effect.gen(function* () {
                  armed = false
                  const attemptId = streamId.slice("attempt-".length)
                  const result = { finStatus: "AUTHORISED", totalAmount: 1050, currency: "EUR" }
                  yield* appendDirect(
                    streamId,
                    CallbackRegistration.resultReceivedEvent({
                      attemptId,
                      resultHash: yield* CallbackRegistration.resultHash(result),
                      finStatus: "AUTHORISED",
                      recovered: false,
                      result,
                      redactedFields: [],
                      receivedAt: 0
                    })
                  )
                }),
          afterAppend: (
            streamId: string,
            events: ReadonlyArray<EventStore.NewEvent>
          ): Effect.Effect<void> => {
            if (!streamId.startsWith("payment-")) return Effect.void
            if (events.some((e) => e.type === "ReconciliationChecked" && isSettled(e.data))) armed = true
            if (!stopped && events.some((e) => e.type === stopAt)) {
              stopped = true
              return Effect.never
            }
            return Effect.void
          }
        }
        let appendDirect: (streamId: string, event: EventStore.NewEvent) => Effect.Effect<void> = () =>
          Effect.void
        return Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          appendDirect = (streamId, event) =>
            Effect.orDie(Effect.asVoid(store.append(streamId, EventStore.AnyVersion, [event])))
          const first = yield* Scope.make()
          yield* Layer.buildWithScope(EngineWorker.layer({ shutdownTimeout: "1 second" }), first)
          const caller = yield* Effect.fork(sale("settle-again", terminal, "callback"))
          yield* advanceUntil(() => stopped, "10 minutes")
          expect(Exit.isSuccess(yield* runToEnd(Scope.close(first, Exit.void)))).toBe(true)
          yield* Layer.build(EngineWorker.layer({ workerId: "second" }))
          const exit = yield* runToEnd(Fiber.join(caller))
          expect(Exit.isSuccess(exit) && exit.value._tag).toBe("Declined")
          const all = yield* Effect.orDie(everything)
          const count = (type: string) => all.filter((e) => e.type === type).length
          expect(count("PaymentDeclined")).toBe(1)
          expect(count("LateResultRecorded")).toBe(1)
          expect(count("ResultMismatch")).toBe(1)
          expect(all.find((e) => e.type === "ResultMismatch")?.data).toMatchObject({
            recorded: "DECLINED",
            received: "AUTHORISED"
          })
        }).pipe(
          Effect.scoped,
          Effect.provide(
            engineLayer([{ result: { finStatus: "DECLINED" }, deliver: false }], hookedStore(hooks))
          )
        )
      }
    )
  }
})

const isSettled = (data: EventStore.Json): boolean =>
  typeof data === "object" && data !== null && "verdict" in data && data["verdict"] === "Settled"
