/**
 * The SQL queue's `streamVersions`: with the event store in the same database, each claim
 * answers the version of the claimed execution's stream as the claiming statement saw it;
 * without the option, or for a row enqueued without its stream, no version (the engine
 * then reads). On PostgreSQL (PGlite when DATABASE_URL is unset) and PGlite in memory.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { expect, it, layer } from "@effect/vitest"
import { EventStore, ExecutionQueue } from "@tillflow/engine"
import { PgliteClient, PgliteEventStore, SqlExecutionQueue, TestDatabase } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"

const unique = () => globalThis.crypto.randomUUID()

const event = (type: string): EventStore.NewEvent => ({ type, data: { n: 1 } })

const enqueue = (queue: ExecutionQueue.ExecutionQueue["Type"], executionId: string, stream?: string) =>
  queue.enqueue({
    executionId,
    workflowName: "versioned",
    concurrencyKey: undefined,
    parentId: undefined,
    attributes: {},
    stream,
    now: 1_000
  })

const claimAll = (queue: ExecutionQueue.ExecutionQueue["Type"], workerId: string, now: number) =>
  queue.claim({ workerId, workflowNames: ["versioned"], limit: 100, leaseMs: 10_000, now })

const streamVersions = (
  name: string,
  stores: Layer.Layer<EventStore.EventStore | SqlClient.SqlClient, unknown>
) =>
  layer(SqlExecutionQueue.layerWith({ streamVersions: true }).pipe(Layer.provideMerge(stores)), {
    timeout: 60_000,
    excludeTestServices: true
  })(`SqlExecutionQueue streamVersions on ${name}`, (it) => {
    it.effect("a claim answers the stream's version as it was when the claim was made", () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const store = yield* EventStore.EventStore
        const withStream = `x-${unique()}`
        const streamless = `x-${unique()}`
        const unwritten = `x-${unique()}`
        const stream = `execution-${withStream}`
        yield* enqueue(queue, withStream, stream)
        yield* enqueue(queue, streamless)
        yield* enqueue(queue, unwritten, `execution-${unwritten}`)
        yield* store.append(stream, EventStore.NoStream, [event("A"), event("B"), event("C")])
        // Another worker's lease, so later claims must take it over: claims > 0.
        const first = yield* claimAll(queue, "w1", 2_000)
        const byId = new Map(first.map((claim) => [claim.executionId, claim]))
        expect(byId.get(withStream)?.streamVersion).toBe(3)
        // No stream given at enqueue, or no stream yet: no version, so the engine reads.
        expect(byId.get(streamless)?.streamVersion).toBeUndefined()
        expect(byId.get(unwritten)?.streamVersion).toBeUndefined()

        // The holder appends two more, then its lease runs out: the next claim counts them.
        yield* store.append(stream, EventStore.exactVersion(3), [event("D"), event("E")])
        const second = yield* claimAll(queue, "w2", 20_000)
        expect(second.find((claim) => claim.executionId === withStream)?.streamVersion).toBe(5)

        // The same tables through a queue without the option: never a version.
        const plain = yield* SqlExecutionQueue.make
        const third = yield* claimAll(plain, "w3", 40_000)
        expect(third.map((claim) => claim.executionId)).toContain(withStream)
        expect(third.every((claim) => claim.streamVersion === undefined)).toBe(true)
      }).pipe(Effect.scoped)
    )
  })

streamVersions("PostgreSQL (fresh database)", TestDatabase.layer)
streamVersions("PGlite in memory", PgliteEventStore.layer())

it.effect("streamVersions refuses to start without the event store's tables in the database", () =>
  Effect.gen(function* () {
    const built = yield* Effect.exit(
      Effect.scoped(
        Layer.build(
          SqlExecutionQueue.layerWith({ streamVersions: true }).pipe(Layer.provide(PgliteClient.layer({})))
        )
      )
    )
    expect(Exit.isFailure(built)).toBe(true)
    // Without the option the same database is fine.
    const plain = yield* Effect.exit(
      Effect.scoped(Layer.build(SqlExecutionQueue.layer.pipe(Layer.provide(PgliteClient.layer({})))))
    )
    expect(Exit.isSuccess(plain)).toBe(true)
  })
)
