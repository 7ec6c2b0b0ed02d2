/**
 * Group commit in the SQL execution queue, on PostgreSQL (fresh database, PGlite when
 * DATABASE_URL is unset) and PGlite in memory: concurrent wakes and releases, and concurrent
 * enqueues, go as ONE statement, each caller getting its own row's answer under exactly the
 * rules of the statements alone (the memory queue's); a failing entry fails only its
 * caller; calls inside a caller's transaction are never coalesced. And the announcements:
 * many ids in few notifications.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { describe, expect, it, layer } from "@effect/vitest"
import { ExecutionQueue } from "@tillflow/engine"
import { PgliteClient, SqlExecutionQueue, TestDatabase } from "@tillflow/store-sql"
import * as Arr from "effect/Array"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as StatementCensus from "./StatementCensus.js"

const unique = () => globalThis.crypto.randomUUID()

type Service = ExecutionQueue.ExecutionQueue["Type"]

/**
 * The statements an effect sent, by kind: a coalesced statement of wakes and releases
 * (`transitions`) or of enqueues (`enqueues`), a statement alone (`wake`, `release`,
 * `enqueue`), or its text.
 */
const statementsOf = StatementCensus.statementsOf((text) =>
  text.includes("jsonb_to_recordset")
    ? text.includes("INSERT")
      ? "enqueues"
      : "transitions"
    : text.includes("INSERT INTO tillflow_executions")
      ? "enqueue"
      : text.includes("SET wake_requested = (status = 'running')")
        ? "wake"
        : text.includes("lease_owner = NULL")
          ? "release"
          : text
)

/**
 * Group commit under control: `queue` (ONE statement of each kind in flight at most) gets
 * both slots taken by a wake and an enqueue blocked by a transaction (a row lock and an
 * uncommitted insert; PGlite: its only session), then `launch` forks calls, which therefore
 * wait; the transaction then commits, and the waiting calls go as the coalesced statements
 * that follow.
 */
const whileSlotsTaken = <A, E, R>(queue: Service, launch: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const blocker = unique()
    const inserted = unique()
    yield* queue.enqueue({
      executionId: blocker,
      workflowName: "blocker",
      concurrencyKey: undefined,
      parentId: undefined,
      attributes: {},
      now: 1
    })
    const locked = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const holder =
      yield* sql`SELECT execution_id FROM tillflow_executions WHERE execution_id = ${blocker} FOR UPDATE`.pipe(
        Effect.zipRight(
          sql`INSERT INTO tillflow_executions (execution_id, workflow_name, status, due_at, created_at, updated_at)
            VALUES (${inserted}, 'blocker', 'succeeded', NULL, 1, 1)`
        ),
        Effect.zipRight(Deferred.succeed(locked, undefined)),
        Effect.zipRight(Deferred.await(release)),
        sql.withTransaction,
        Effect.fork
      )
    yield* Deferred.await(locked)
    const blockedWake = yield* Effect.fork(queue.wake({ executionId: blocker, now: 2 }))
    const blockedEnqueue = yield* Effect.fork(
      queue.enqueue({
        executionId: inserted,
        workflowName: "blocker",
        concurrencyKey: undefined,
        parentId: undefined,
        attributes: {},
        now: 2
      })
    )
    yield* Effect.sleep("200 millis")
    const launched = yield* launch
    yield* Effect.sleep("200 millis")
    yield* Deferred.succeed(release, undefined)
    yield* Fiber.join(holder)
    yield* Fiber.join(blockedWake)
    // The transaction inserted it first.
    expect(yield* Fiber.join(blockedEnqueue)).toBe(false)
    return launched
  })

const worker = "W"
const key = () => `key-${unique()}`

/**
 * Executions in every state a wake or a release can meet, made by calls alone: the ids by
 * name, the workflow, and the key `keyed` holds (`waitingOnKey` waits for it).
 */
const prepare = (queue: Service) =>
  Effect.gen(function* () {
    const workflow = unique()
    const sharedKey = key()
    const names = [
      "suspendedNoTimer",
      "suspendedTimer",
      "runningWoken",
      "runningSuspends",
      "runningOtherWorker",
      "keyed",
      "runningRetries",
      "runningStuck",
      "stuckStays",
      "stuckResumed",
      "finished",
      "pendingLater"
    ] as const
    const ids = Object.fromEntries(names.map((name) => [name, unique()])) as Record<
      (typeof names)[number] | "waitingOnKey" | "missingWake" | "missingRelease",
      string
    >
    ids.waitingOnKey = unique()
    ids.missingWake = unique()
    ids.missingRelease = unique()
    for (const name of names) {
      yield* queue.enqueue({
        executionId: ids[name],
        workflowName: workflow,
        concurrencyKey: name === "keyed" ? sharedKey : undefined,
        parentId: undefined,
        attributes: {},
        now: name === "pendingLater" ? 90_000 : 1_000
      })
    }
    yield* queue.enqueue({
      executionId: ids.waitingOnKey,
      workflowName: workflow,
      concurrencyKey: sharedKey,
      parentId: undefined,
      attributes: {},
      now: 1_001
    })
    const claimed = yield* queue.claim({
      workerId: worker,
      workflowNames: [workflow],
      limit: 100,
      leaseMs: 1_000_000,
      now: 10_000
    })
    expect(claimed).toHaveLength(names.length - 1)
    const releaseAlone = (executionId: string, release: ExecutionQueue.Release) =>
      queue.release({ executionId, workerId: worker, release, now: 11_000 })
    yield* releaseAlone(ids.suspendedNoTimer, { _tag: "Suspended", wakeAt: undefined })
    yield* releaseAlone(ids.suspendedTimer, { _tag: "Suspended", wakeAt: 50_000 })
    yield* releaseAlone(ids.stuckStays, { _tag: "Stuck" })
    yield* releaseAlone(ids.stuckResumed, { _tag: "Stuck" })
    yield* releaseAlone(ids.finished, { _tag: "Finished", status: "succeeded" })
    return { workflow, ids }
  })

/** The concurrent calls of the scenario, each answering what its caller got. */
const concurrentCalls = (queue: Service, ids: Record<string, string>) => {
  const now = 20_000
  const wake = (executionId: string, resumeStuck?: boolean) =>
    Effect.as(queue.wake({ executionId, now, resumeStuck }), "woken" as const)
  const release = (executionId: string, release: ExecutionQueue.Release, workerId = worker) =>
    queue.release({ executionId, workerId, release, now })
  const calls: Array<Effect.Effect<boolean | "woken", ExecutionQueue.ExecutionQueueError>> = [
    wake(ids.suspendedNoTimer),
    wake(ids.suspendedTimer),
    wake(ids.runningWoken),
    release(ids.runningSuspends, { _tag: "Suspended", wakeAt: 60_000 }),
    release(ids.runningOtherWorker, { _tag: "Suspended", wakeAt: 60_000 }, "X"),
    release(ids.keyed, { _tag: "Finished", status: "failed" }),
    release(ids.runningRetries, { _tag: "Retry", runAt: 70_000 }),
    release(ids.runningStuck, { _tag: "Stuck" }),
    wake(ids.stuckStays),
    wake(ids.stuckResumed, true),
    wake(ids.finished),
    wake(ids.pendingLater),
    wake(ids.missingWake),
    release(ids.missingRelease, { _tag: "Retry", runAt: 1 })
  ]
  return calls
}

/** Where every execution of the scenario stands, then after the woken running one suspends. */
const outcome = (
  queue: Service,
  workflow: string,
  ids: Record<string, string>,
  answers: ReadonlyArray<unknown>
) =>
  Effect.gen(function* () {
    const state = (executionId: string) =>
      Effect.map(queue.get(executionId), (info) =>
        Option.match(info, {
          onNone: () => "absent",
          onSome: (info) => [info.status, info.dueAt, info.leaseOwner, info.updatedAt]
        })
      )
    const states = yield* Effect.forEach(Object.values(ids), state)
    // The wake flagged it while it ran: its suspension does not sleep.
    const suspended = yield* queue.release({
      executionId: ids.runningWoken,
      workerId: worker,
      release: { _tag: "Suspended", wakeAt: 99_000 },
      now: 30_000
    })
    const woken = yield* state(ids.runningWoken)
    // The finished execution freed its key: the one waiting on it is claimed.
    const claimed = yield* queue.claim({
      workerId: "Z",
      workflowNames: [workflow],
      limit: 100,
      leaseMs: 1_000,
      now: 30_001
    })
    return {
      answers,
      states,
      suspended,
      woken,
      claimed: claimed.map((claim) => claim.executionId)
    }
  })

/** The scenario on the memory queue: the rules every other queue must follow. */
const expected = Effect.gen(function* () {
  const queue = yield* ExecutionQueue.makeMemory
  const { ids, workflow } = yield* prepare(queue)
  const answers = yield* Effect.all(concurrentCalls(queue, ids))
  return { ids, result: yield* outcome(queue, workflow, ids, answers) }
})

/** The scenario's outcome with its ids replaced by their names, so two runs compare. */
const byName = (value: { readonly claimed: ReadonlyArray<string> }, ids: Record<string, string>): unknown => {
  const names = new Map(Object.entries(ids).map(([name, id]) => [id, name]))
  return JSON.parse(
    JSON.stringify({ ...value, claimed: value.claimed.map((id) => names.get(id) ?? id).sort() }),
    (_key, field) => (typeof field === "string" && names.has(field) ? names.get(field) : field)
  )
}

const nul = "\u0000"

const suite = (name: string, database: Layer.Layer<SqlClient.SqlClient, unknown>) =>
  layer(SqlExecutionQueue.layer.pipe(Layer.provideMerge(database)), {
    timeout: 60_000,
    excludeTestServices: true
  })(`SqlExecutionQueue group commit on ${name}`, (it) => {
    it.scoped(
      "concurrent wakes and releases go as ONE statement; each caller gets its own row's answer, under the rules of the statements alone",
      () =>
        Effect.gen(function* () {
          const queue = yield* SqlExecutionQueue.makeWith({ maxInFlight: 1 })
          const { ids, workflow } = yield* prepare(queue)
          const { result: fibers, sent } = yield* whileSlotsTaken(
            queue,
            statementsOf(Effect.forEach(concurrentCalls(queue, ids), (call) => Effect.fork(call)))
          )
          const answers = yield* Effect.forEach(fibers, Fiber.join)
          // The fourteen calls made while the slot was taken went together.
          expect(sent).toEqual(["transitions"])
          const result = yield* outcome(queue, workflow, ids, answers)
          const memory = yield* expected
          expect(byName(result, ids)).toEqual(byName(memory.result, memory.ids))
          // What the rules say, spelled out for the reader (the memory queue agrees above).
          expect(answers).toEqual([
            "woken",
            "woken",
            "woken",
            true,
            false,
            true,
            true,
            true,
            "woken",
            "woken",
            "woken",
            "woken",
            "woken",
            false
          ])
          expect(result.woken).toEqual(["pending", 30_000, null, 30_000])
          expect(result.claimed).toContain(ids.waitingOnKey)
        })
    )

    it.scoped(
      "concurrent enqueues go as ONE statement; each caller learns whether its own row was inserted",
      () =>
        Effect.gen(function* () {
          const queue = yield* SqlExecutionQueue.makeWith({ maxInFlight: 1 })
          const workflow = unique()
          const existing = unique()
          const enqueue = (executionId: string, now: number) =>
            queue.enqueue({
              executionId,
              workflowName: workflow,
              concurrencyKey: now === 5 ? "k" : undefined,
              parentId: now === 6 ? existing : undefined,
              attributes: { n: String(now) },
              stream: `stream-${now}`,
              now
            })
          expect(yield* enqueue(existing, 1)).toBe(true)
          const fresh = Arr.range(2, 7).map(() => unique())
          const { result: fibers, sent } = yield* whileSlotsTaken(
            queue,
            statementsOf(
              Effect.forEach([existing, ...fresh], (id, i) =>
                Effect.fork(enqueue(id, i + 1 === 1 ? 100 : i + 1))
              )
            )
          )
          expect(yield* Effect.forEach(fibers, Fiber.join)).toEqual([
            false,
            true,
            true,
            true,
            true,
            true,
            true
          ])
          expect(sent).toEqual(["enqueues"])
          const infos = yield* Effect.forEach([existing, ...fresh], (id) =>
            Effect.map(queue.get(id), Option.getOrThrow)
          )
          expect(
            infos.map((info) => [
              info.status,
              info.dueAt,
              info.concurrencyKey,
              info.parentId,
              info.attributes,
              info.createdAt
            ])
          ).toEqual([
            ["pending", 1, null, null, { n: "1" }, 1],
            ...Arr.range(2, 7).map((n) => [
              "pending",
              n,
              n === 5 ? "k" : null,
              n === 6 ? existing : null,
              { n: String(n) },
              n
            ])
          ])
        })
    )

    it.scoped("a failing entry fails only its caller: the coalesced statement's entries go again alone", () =>
      Effect.gen(function* () {
        const queue = yield* SqlExecutionQueue.makeWith({ maxInFlight: 1 })
        const workflow = unique()
        const [first, last] = [unique(), unique()]
        for (const id of [first, last]) {
          yield* queue.enqueue({
            executionId: id,
            workflowName: workflow,
            concurrencyKey: undefined,
            parentId: undefined,
            attributes: {},
            now: 1
          })
          yield* queue.claim({
            workerId: worker,
            workflowNames: [workflow],
            limit: 1,
            leaseMs: 1_000,
            now: 2
          })
        }
        // PostgreSQL refuses a NUL character in text: that entry's statement fails, alone or not.
        const { result: fibers, sent } = yield* whileSlotsTaken(
          queue,
          statementsOf(
            Effect.forEach(
              [
                queue.release({
                  executionId: first,
                  workerId: worker,
                  release: { _tag: "Suspended", wakeAt: 9 },
                  now: 3
                }),
                queue.wake({ executionId: `bad${nul}id`, now: 3 }),
                queue.release({
                  executionId: last,
                  workerId: worker,
                  release: { _tag: "Finished", status: "succeeded" },
                  now: 3
                }),
                queue.enqueue({
                  executionId: `bad${nul}id`,
                  workflowName: workflow,
                  concurrencyKey: undefined,
                  parentId: undefined,
                  attributes: {},
                  now: 3
                }),
                queue.enqueue({
                  executionId: unique(),
                  workflowName: workflow,
                  concurrencyKey: undefined,
                  parentId: undefined,
                  attributes: {},
                  now: 3
                })
              ],
              (call) =>
                Effect.fork(Effect.either(call as Effect.Effect<unknown, ExecutionQueue.ExecutionQueueError>))
            )
          )
        )
        const [released, badWake, finished, badEnqueue, enqueued] = yield* Effect.forEach(fibers, Fiber.join)
        expect(released).toMatchObject({ _tag: "Right", right: true })
        expect(finished).toMatchObject({ _tag: "Right", right: true })
        expect(enqueued).toMatchObject({ _tag: "Right", right: true })
        expect(badWake).toMatchObject({
          _tag: "Left",
          left: { _tag: "ExecutionQueueError", operation: "wake" }
        })
        expect(badEnqueue).toMatchObject({
          _tag: "Left",
          left: { _tag: "ExecutionQueueError", operation: "enqueue" }
        })
        // Each coalesced statement failed as a whole; its entries then went alone.
        expect(sent.filter((kind) => kind === "transitions")).toHaveLength(1)
        expect(sent.filter((kind) => kind === "enqueues")).toHaveLength(1)
        expect(sent.filter((kind) => kind === "wake")).toHaveLength(1)
        expect(sent.filter((kind) => kind === "release")).toHaveLength(2)
        expect(sent.filter((kind) => kind === "enqueue")).toHaveLength(2)
        expect(sent).toHaveLength(7)
        expect((yield* queue.get(first)).pipe(Option.map((info) => [info.status, info.dueAt]))).toEqual(
          Option.some(["suspended", 9])
        )
        expect((yield* queue.get(last)).pipe(Option.map((info) => info.status))).toEqual(
          Option.some("succeeded")
        )
      })
    )

    it.scoped(
      "calls inside a caller's transaction are never coalesced: they do not wait for the slot and roll back with the caller",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const queue = yield* SqlExecutionQueue.makeWith({ maxInFlight: 1 })
          const workflow = unique()
          const shared = unique()
          const suspended = unique()
          const inside = unique()
          const enqueue = (executionId: string) =>
            queue.enqueue({
              executionId,
              workflowName: workflow,
              concurrencyKey: undefined,
              parentId: undefined,
              attributes: {},
              now: 1
            })
          yield* enqueue(suspended)
          yield* queue.claim({
            workerId: worker,
            workflowNames: [workflow],
            limit: 1,
            leaseMs: 1_000,
            now: 1
          })
          yield* queue.release({
            executionId: suspended,
            workerId: worker,
            release: { _tag: "Suspended", wakeAt: undefined },
            now: 1
          })
          const begun = yield* Deferred.make<void>()
          const outsideSent = yield* Deferred.make<void>()
          // The transaction enqueues `shared`; an enqueue of `shared` and a wake of
          // `suspended` outside it then take the queue's only slots and wait for the
          // transaction (its uncommitted row; PGlite: its session). Calls inside the
          // transaction that waited for those slots would never return.
          const transaction = yield* enqueue(shared).pipe(
            Effect.zipRight(queue.wake({ executionId: suspended, now: 2 })),
            Effect.zipRight(Deferred.succeed(begun, undefined)),
            Effect.zipRight(Deferred.await(outsideSent)),
            Effect.zipRight(
              Effect.all([enqueue(inside), queue.wake({ executionId: unique(), now: 3 })], {
                concurrency: "unbounded"
              })
            ),
            Effect.zipRight(Effect.fail("roll back" as const)),
            sql.withTransaction,
            Effect.timeout("10 seconds"),
            Effect.flip,
            Effect.fork
          )
          yield* Deferred.await(begun)
          const outside = yield* Effect.fork(
            Effect.all([enqueue(shared), queue.wake({ executionId: suspended, now: 4 })], {
              concurrency: "unbounded"
            })
          )
          yield* Effect.sleep("200 millis")
          yield* Deferred.succeed(outsideSent, undefined)
          expect(yield* Fiber.join(transaction)).toBe("roll back")
          expect(yield* Fiber.join(outside)).toEqual([true, undefined])
          expect(Option.isNone(yield* queue.get(inside))).toBe(true)
          expect((yield* queue.get(suspended)).pipe(Option.map((info) => [info.status, info.dueAt]))).toEqual(
            Option.some(["pending", 4])
          )
        })
    )

    it.scoped(
      "announcements made close together share notifications: many ids, few NOTIFYs, every id heard",
      () =>
        Effect.gen(function* () {
          const sender = yield* SqlExecutionQueue.makeWith({ notifyInterval: "1 second" })
          const listener = yield* SqlExecutionQueue.makeWith()
          const heard = yield* Queue.unbounded<string>()
          yield* listener.changes.pipe(
            Stream.runForEach((id) => Queue.offer(heard, id)),
            Effect.forkScoped
          )
          // The notifications themselves, as the database delivers them.
          const pg = yield* Effect.serviceOption(PgClient.PgClient)
          const pglite = yield* Effect.serviceOption(PgliteClient.PgliteClient)
          const listen = Option.getOrThrow(
            Option.orElse(
              Option.map(pg, (client) => client.listen),
              () => Option.map(pglite, (client) => client.listen)
            )
          )
          let notifications = 0
          yield* listen("tillflow_executions").pipe(
            Stream.runForEach(() => Effect.sync(() => notifications++)),
            Effect.forkScoped
          )
          // Give the LISTENs a moment to be in place before the first NOTIFY.
          yield* Effect.sleep("200 millis")
          const workflow = unique()
          // Ids of ~100 characters: more than one notification's payload in all.
          const ids = Arr.range(1, 120).map((n) => `${unique()}-${"x".repeat(60)}-${n}`)
          const { sent } = yield* statementsOf(
            Effect.forEach(
              ids,
              (executionId) =>
                sender.enqueue({
                  executionId,
                  workflowName: workflow,
                  concurrencyKey: undefined,
                  parentId: undefined,
                  attributes: {},
                  now: 1
                }),
              { discard: true }
            )
          )
          expect(sent.filter((kind) => kind === "enqueue")).toHaveLength(ids.length)
          const got: Array<string> = []
          while (got.length < ids.length) {
            got.push(yield* Queue.take(heard).pipe(Effect.timeout("10 seconds")))
          }
          expect(new Set(got)).toEqual(new Set(ids))
          // The first at once, the rest within the interval after it: a few notifications
          // (one per id before).
          expect(notifications).toBeGreaterThan(1)
          expect(notifications).toBeLessThanOrEqual(6)
        })
    )
  })

suite("PostgreSQL (fresh database)", TestDatabase.layer)
suite("PGlite in memory", PgliteClient.layer({}))

describe("SqlExecutionQueue.payloads", () => {
  it("packs ids into newline-separated payloads under PostgreSQL's 8000-byte limit, in order, none lost", () => {
    const ids = Arr.range(1, 300).map((n) => `${"é".repeat(40)}-${n}`)
    const texts = SqlExecutionQueue.payloads(ids)
    expect(texts.length).toBeGreaterThan(1)
    for (const text of texts) expect(new TextEncoder().encode(text).length).toBeLessThan(8_000)
    expect(texts.flatMap((text) => text.split("\n"))).toEqual(ids)
    expect(SqlExecutionQueue.payloads(["a", "b"])).toEqual(["a\nb"])
    // An id too long for any payload is left out rather than failing the others.
    expect(SqlExecutionQueue.payloads(["a", "y".repeat(9_000), "b"])).toEqual(["a\nb"])
  })
})
