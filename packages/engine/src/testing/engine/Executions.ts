/**
 * What a contract test observes of an execution: its status in the queue, awaited while
 * time creeps, and the events of its stream.
 */
import { EngineEvent, EventStore, ExecutionQueue } from "../../index.js"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { tick } from "./Nodes.js"

/** An id unique to this run, for payloads whose execution must be new. */
export const unique = () => globalThis.crypto.randomUUID()

/** Lets time creep until the execution's row satisfies `predicate`; fails naming `what` if it never does. */
export const awaitInfo = (
  executionId: string,
  predicate: (info: ExecutionQueue.ExecutionInfo) => boolean,
  what: string
): Effect.Effect<ExecutionQueue.ExecutionInfo, Error, ExecutionQueue.ExecutionQueue> =>
  Effect.gen(function* () {
    const queue = yield* ExecutionQueue.ExecutionQueue
    for (let i = 0; i < 1_000; i++) {
      const info = yield* Effect.orDie(queue.get(executionId))
      if (Option.isSome(info) && predicate(info.value)) return info.value
      yield* tick
    }
    const last = yield* Effect.orDie(queue.get(executionId))
    return yield* Effect.fail(
      new Error(`execution ${executionId} never became ${what}: ${JSON.stringify(last)}`)
    )
  })

/** Lets time creep until the execution has `status`. */
export const awaitStatus = (executionId: string, status: ExecutionQueue.ExecutionStatus) =>
  awaitInfo(executionId, (info) => info.status === status, status)

/** The types of the events in the execution's stream, in order. */
export const historyTypes = (executionId: string) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const events = yield* store.readStream(EngineEvent.streamId(executionId))
    return events.map((event) => event.type)
  })

/** The engine's own events in the execution's stream, decoded (domain events left out). */
export const engineEvents = (executionId: string) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const events = yield* store.readStream(EngineEvent.streamId(executionId))
    return events.flatMap((event) => {
      const decoded = EngineEvent.fromStored(event)
      return Option.isSome(decoded) && decoded.value._tag === "Right" ? [decoded.value.right] : []
    })
  })
