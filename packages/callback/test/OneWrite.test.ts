/**
 * On tillflow's engine the receiver records a delivered result and resolves its workflow's
 * deferred in one write (`EventStore.appendStreams`): a process that stops right after
 * that write leaves both or neither, never a result whose deferred was not resolved.
 */
import { describe, expect, it } from "@effect/vitest"
import { CallbackReceiver } from "@tillflow/callback"
import { CallbackRegistration } from "@tillflow/core"
import { DurableEngine, EngineEvent, EventStore, ExecutionQueue, MemoryEventStore } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import { register } from "./support.js"

const attemptId = "0b5e8a4c-3f2d-4e1a-9c7b-5d6e7f8a9b0c"
const token = "s3cret-token-value-for-tests-only"
const result = (finStatus: string) =>
  JSON.stringify({ finStatus, totalAmount: 1050, currency: "EUR", maskedCardNumber: "411111******1111" })
const executionStream = EngineEvent.streamId("not-running")
const resolvedIn = (events: ReadonlyArray<EventStore.RecordedEvent>) =>
  events.filter((e) => e.type === "DeferredResolved" || JSON.stringify(e.data).includes('"DeferredResolved"'))

/**
 * The memory store, with the process stopping once armed: the first write after `armed`
 * lands, every later one never returns (what a SIGKILL right after it leaves).
 */
const stoppingStore = Effect.gen(function* () {
  const { store } = yield* MemoryEventStore.make()
  const state = { armed: false, writes: 0 }
  const gate = <A, E>(write: Effect.Effect<A, E>): Effect.Effect<A, E> =>
    Effect.suspend(() => {
      if (!state.armed) return write
      state.writes++
      return state.writes === 1 ? write : Effect.never
    })
  const stopping: EventStore.Service = {
    ...store,
    append: (streamId, expected, events) => gate(store.append(streamId, expected, events)),
    appendStreams: (appends) => gate(store.appendStreams(appends))
  }
  return { store, stopping, state }
})

const engineOn = (store: EventStore.Service) =>
  DurableEngine.layer().pipe(
    Layer.provide(ExecutionQueue.layerMemory),
    Layer.provide(Layer.succeed(EventStore.EventStore, store))
  )

describe("CallbackReceiver on tillflow's engine", () => {
  it.live(
    "the result and its deferred's resolution are one write: a process stopped right after it leaves both",
    () =>
      Effect.gen(function* () {
        const { state, stopping, store } = yield* stoppingStore
        yield* register(attemptId, token).pipe(Effect.provideService(EventStore.EventStore, store))
        state.armed = true
        // The receiver's scope is never closed: its process stopped.
        const stopped = yield* Scope.make()
        const reply = yield* Effect.gen(function* () {
          const receiver = yield* CallbackReceiver.make()
          return yield* receiver.receive({ attemptId, token: Option.some(token), body: result("AUTHORISED") })
        }).pipe(
          Effect.provide(engineOn(stopping)),
          Effect.provideService(EventStore.EventStore, stopping),
          Scope.extend(stopped)
        )
        // Whatever the forwarding writes after the reply never lands.
        yield* Effect.sleep("50 millis")
        expect(reply).toMatchObject({ _tag: "Acknowledged", duplicate: false })
        const attempt = yield* store.readStream(CallbackRegistration.attemptStream(attemptId))
        expect(attempt.map((e) => e.type)).toEqual([
          CallbackRegistration.AttemptRegistered.type,
          CallbackRegistration.ResultReceived.type
        ])
        const resolved = resolvedIn(yield* store.readStream(executionStream))
        expect(resolved).toHaveLength(1)
        expect(JSON.stringify(resolved[0]?.data)).toContain(
          CallbackRegistration.resultDeferred(attemptId).name
        )
        expect(JSON.stringify(resolved[0]?.data)).toContain('"finStatus":"AUTHORISED"')
        // The only write since the receiver was armed: the result and the resolution together.
        expect(state.writes).toBe(1)
      })
  )

  it.live(
    "a second, different result of an attempt whose deferred is resolved already is recorded alone; the first resolution stands",
    () =>
      Effect.gen(function* () {
        const { store } = yield* MemoryEventStore.make()
        yield* register(attemptId, token).pipe(Effect.provideService(EventStore.EventStore, store))
        const replies = yield* Effect.scoped(
          Effect.gen(function* () {
            const receiver = yield* CallbackReceiver.make()
            const first = yield* receiver.receive({
              attemptId,
              token: Option.some(token),
              body: result("AUTHORISED")
            })
            const second = yield* receiver.receive({
              attemptId,
              token: Option.some(token),
              body: result("DECLINED")
            })
            yield* receiver.forwarded
            return [first, second]
          }).pipe(Effect.provide(engineOn(store)), Effect.provideService(EventStore.EventStore, store))
        )
        expect(replies).toMatchObject([
          { _tag: "Acknowledged", duplicate: false },
          { _tag: "Acknowledged", duplicate: false }
        ])
        const attempt = yield* store.readStream(CallbackRegistration.attemptStream(attemptId))
        expect(attempt.filter((e) => e.type === CallbackRegistration.ResultReceived.type)).toHaveLength(2)
        const resolved = resolvedIn(yield* store.readStream(executionStream))
        expect(resolved).toHaveLength(1)
        expect(JSON.stringify(resolved[0]?.data)).toContain('"finStatus":"AUTHORISED"')
      })
  )
})
