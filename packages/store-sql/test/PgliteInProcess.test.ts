/**
 * On PGlite (one process per database) the store's and the queue's notifications of what
 * already committed go in process, without a statement on the one session, and a
 * subscription woken by a burst of appends reads them together: what the embedded worker's
 * statements per sale were measured down to (docs/performance.md, "The time tillflow adds
 * to a payment").
 */
import { expect, it } from "@effect/vitest"
import { EventStore, ExecutionQueue } from "@tillflow/engine"
import { PgliteClient, PgliteEventStore, SqlExecutionQueue } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"

/** Counts the statements PGlite runs whose text includes `marker`, from now on. */
const countStatements = (client: PgliteClient.PgliteClient, marker: string) => {
  let count = 0
  const pglite = client.pglite
  const query = pglite.query.bind(pglite)
  pglite.query = ((text: string, ...rest: Array<never>) => {
    if (text.includes(marker)) count++
    return query(text, ...rest)
  }) as typeof pglite.query
  return () => count
}

const enqueue = (queue: ExecutionQueue.ExecutionQueue["Type"], executionId: string) =>
  queue.enqueue({
    executionId,
    workflowName: "w",
    concurrencyKey: undefined,
    parentId: undefined,
    attributes: {},
    now: 1_000
  })

it.live(
  "a queue's announcements on PGlite reach another queue on the same client at once, without a NOTIFY statement, and not the announcing queue itself",
  () =>
    Effect.gen(function* () {
      const client = yield* PgliteClient.PgliteClient
      const announcer = yield* ExecutionQueue.ExecutionQueue
      const other = yield* SqlExecutionQueue.make
      const heardByOther = yield* Queue.unbounded<string>()
      const heardBySelf = yield* Queue.unbounded<string>()
      yield* other.changes.pipe(
        Stream.runForEach((id) => Queue.offer(heardByOther, id)),
        Effect.forkScoped
      )
      yield* announcer.changes.pipe(
        Stream.runForEach((id) => Queue.offer(heardBySelf, id)),
        Effect.forkScoped
      )
      // Let both listeners be in place.
      yield* Effect.sleep("200 millis")
      const notifies = countStatements(client, "pg_notify")
      const id = globalThis.crypto.randomUUID()
      expect(yield* enqueue(announcer, id)).toBe(true)
      expect(yield* Queue.take(heardByOther).pipe(Effect.timeout("10 seconds"))).toBe(id)
      // What the announcing queue made, its own process knows: it is not reported back to it.
      yield* Effect.sleep("200 millis")
      expect(yield* Queue.size(heardBySelf)).toBe(0)
      expect(notifies()).toBe(0)
    }).pipe(
      Effect.scoped,
      Effect.provide(SqlExecutionQueue.layer.pipe(Layer.provideMerge(PgliteClient.layer({}))))
    ),
  60_000
)

it.live(
  "a subscription on PGlite woken by a burst of appends reads them together, after the gather interval",
  () =>
    Effect.gen(function* () {
      const client = yield* PgliteClient.PgliteClient
      const store = yield* EventStore.EventStore
      const stream = `burst-${globalThis.crypto.randomUUID()}`
      const seen = yield* Queue.unbounded<EventStore.RecordedEvent>()
      const subscriber = yield* store
        .subscribe(EventStore.Checkpoint.start, { pollInterval: "1 minute" })
        .pipe(
          Stream.runForEach((event) => Queue.offer(seen, event)),
          Effect.fork
        )
      // Caught up with the empty log, the subscription waits for a wake-up.
      yield* Effect.sleep("300 millis")
      const reads = countStatements(client, "pg_snapshot_xmin")
      // A payment's appends come some milliseconds apart: each wakes the subscription.
      for (let n = 0; n < 10; n++) {
        yield* store.append(stream, EventStore.AnyVersion, [{ type: "Burst", data: { n } }])
        yield* Effect.sleep("20 millis")
      }
      const delivered = yield* Effect.forEach(Array.from({ length: 10 }), () =>
        Queue.take(seen).pipe(Effect.timeout("10 seconds"))
      )
      expect(delivered.map((event) => (event.data as { readonly n: number }).n)).toEqual([
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9
      ])
      // Ten appends, each a wake-up: read by one or two statements, not one per append.
      expect(reads()).toBeLessThanOrEqual(3)
      yield* Fiber.interrupt(subscriber)
    }).pipe(Effect.scoped, Effect.provide(PgliteEventStore.layer({ subscriptionGather: "1 second" }))),
  60_000
)
