/**
 * The rules of the `ExecutionQueue` port, run against each implementation (memory,
 * PGlite, PostgreSQL): claims, leases and their expiry, heartbeats, suspension and
 * wake-ups, concurrency keys, visibility, and concurrent claimers never sharing a row.
 * Times are plain numbers: the queue never reads a clock itself.
 */
import { expect, it, layer as testLayer } from "@effect/vitest"
import { ExecutionQueue } from "../index.js"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"

const unique = () => globalThis.crypto.randomUUID()

const enqueue = (
  workflowName: string,
  options: { readonly key?: string; readonly attributes?: Record<string, string>; readonly now?: number } = {}
) =>
  Effect.gen(function* () {
    const queue = yield* ExecutionQueue.ExecutionQueue
    const executionId = unique()
    const created = yield* queue.enqueue({
      executionId,
      workflowName,
      concurrencyKey: options.key,
      parentId: undefined,
      attributes: options.attributes ?? {},
      now: options.now ?? 1_000
    })
    expect(created).toBe(true)
    return executionId
  })

const status = (executionId: string) =>
  Effect.gen(function* () {
    const queue = yield* ExecutionQueue.ExecutionQueue
    const info = yield* queue.get(executionId)
    return Option.getOrThrow(info)
  })

export const queueContract = <E>(name: string, layer: Layer.Layer<ExecutionQueue.ExecutionQueue, E>) =>
  it.layer(layer, { timeout: 60_000 })(`ExecutionQueue on ${name}`, (it) => {
    it.effect("enqueue is idempotent on the execution id", () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const workflow = unique()
        const id = yield* enqueue(workflow, { attributes: { terminal: "T1" } })
        const again = yield* queue.enqueue({
          executionId: id,
          workflowName: workflow,
          concurrencyKey: "other",
          parentId: undefined,
          attributes: { terminal: "T2" },
          now: 5_000
        })
        expect(again).toBe(false)
        const info = yield* status(id)
        expect([info.status, info.attributes, info.concurrencyKey, info.createdAt]).toEqual([
          "pending",
          { terminal: "T1" },
          null,
          1_000
        ])
      })
    )

    it.effect("a claim leases due executions oldest first; an expired lease makes it claimable again", () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const workflow = unique()
        const first = yield* enqueue(workflow, { now: 1_000 })
        const second = yield* enqueue(workflow, { now: 1_001 })
        const notYet = yield* enqueue(workflow, { now: 9_000 })
        const claimA = yield* queue.claim({
          workerId: "A",
          workflowNames: [workflow],
          limit: 10,
          leaseMs: 100,
          now: 2_000
        })
        expect(claimA.map((claim) => claim.executionId)).toEqual([first, second])
        expect(claimA.map((claim) => [claim.claims, claim.leaseUntil])).toEqual([
          [1, 2_100],
          [1, 2_100]
        ])
        const info = yield* status(first)
        expect([info.status, info.leaseOwner, info.dueAt]).toEqual(["running", "A", 2_100])
        // Held: nobody else gets them before the lease ends.
        expect(
          yield* queue.claim({
            workerId: "B",
            workflowNames: [workflow],
            limit: 10,
            leaseMs: 100,
            now: 2_050
          })
        ).toEqual([])
        const claimB = yield* queue.claim({
          workerId: "B",
          workflowNames: [workflow],
          limit: 1,
          leaseMs: 100,
          now: 2_101
        })
        expect(claimB.map((claim) => [claim.executionId, claim.claims])).toEqual([[first, 2]])
        expect((yield* status(notYet)).status).toBe("pending")
        // A's release of a claim it lost is ignored.
        expect(
          yield* queue.release({ executionId: first, workerId: "A", release: { _tag: "Stuck" }, now: 2_102 })
        ).toBe(false)
        expect((yield* status(first)).leaseOwner).toBe("B")
      })
    )

    it.effect("a heartbeat renews only the leases the worker still holds", () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const workflow = unique()
        const one = yield* enqueue(workflow)
        const two = yield* enqueue(workflow)
        yield* queue.claim({ workerId: "A", workflowNames: [workflow], limit: 2, leaseMs: 100, now: 1_000 })
        yield* queue.claim({ workerId: "B", workflowNames: [workflow], limit: 1, leaseMs: 100, now: 1_200 })
        const held = yield* queue.heartbeat({
          workerId: "A",
          executionIds: [one, two],
          leaseMs: 100,
          now: 1_250
        })
        expect(held).toHaveLength(1)
        const kept = held[0] ?? ""
        expect((yield* status(kept)).dueAt).toBe(1_350)
        const lost = kept === one ? two : one
        expect((yield* status(lost)).leaseOwner).toBe("B")
      })
    )

    it.effect(
      "a suspended execution sleeps until its timer, or until woken; a wake during a run is not lost",
      () =>
        Effect.gen(function* () {
          const queue = yield* ExecutionQueue.ExecutionQueue
          const workflow = unique()
          const timed = yield* enqueue(workflow)
          const signalled = yield* enqueue(workflow)
          const raced = yield* enqueue(workflow)
          yield* queue.claim({
            workerId: "A",
            workflowNames: [workflow],
            limit: 3,
            leaseMs: 1_000,
            now: 1_000
          })
          yield* queue.release({
            executionId: timed,
            workerId: "A",
            release: { _tag: "Suspended", wakeAt: 5_000 },
            now: 1_100
          })
          yield* queue.release({
            executionId: signalled,
            workerId: "A",
            release: { _tag: "Suspended", wakeAt: undefined },
            now: 1_100
          })
          // A signal arrives while `raced` is still running: its suspension must not sleep.
          yield* queue.wake({ executionId: raced, now: 1_150 })
          yield* queue.release({
            executionId: raced,
            workerId: "A",
            release: { _tag: "Suspended", wakeAt: undefined },
            now: 1_200
          })
          expect((yield* status(raced)).status).toBe("pending")
          expect(Option.getOrUndefined(yield* queue.nextDueAt([workflow]))).toBe(1_200)

          const early = yield* queue.claim({
            workerId: "B",
            workflowNames: [workflow],
            limit: 10,
            leaseMs: 1_000,
            now: 4_999
          })
          expect(early.map((claim) => claim.executionId)).toEqual([raced])
          yield* queue.wake({ executionId: signalled, now: 5_000 })
          const due = yield* queue.claim({
            workerId: "B",
            workflowNames: [workflow],
            limit: 10,
            leaseMs: 1_000,
            now: 5_000
          })
          expect(due.map((claim) => claim.executionId).sort()).toEqual([timed, signalled].sort())
        })
    )

    it.effect(
      "executions in progress (woken, retrying) are claimed before new ones due earlier, so a burst does not starve them",
      () =>
        Effect.gen(function* () {
          const queue = yield* ExecutionQueue.ExecutionQueue
          const workflow = unique()
          const claimAt = (now: number, limit: number) =>
            queue
              .claim({ workerId: "A", workflowNames: [workflow], limit, leaseMs: 1_000, now })
              .pipe(Effect.map((claims) => claims.map((claim) => claim.executionId).sort()))
          // Two executions start, then wait: one for a signal, one to retry after a crash.
          const woken = yield* enqueue(workflow, { now: 100 })
          const retrying = yield* enqueue(workflow, { now: 101 })
          expect(yield* claimAt(200, 2)).toEqual([woken, retrying].sort())
          yield* queue.release({
            executionId: woken,
            workerId: "A",
            release: { _tag: "Suspended", wakeAt: undefined },
            now: 300
          })
          yield* queue.release({
            executionId: retrying,
            workerId: "A",
            release: { _tag: "Retry", runAt: 2_500 },
            now: 300
          })
          // A burst of new executions, all due before either of them.
          const burst: Array<string> = []
          for (let i = 0; i < 20; i++) burst.push(yield* enqueue(workflow, { now: 1_000 + i }))
          yield* queue.wake({ executionId: woken, now: 2_000 })
          expect(Option.getOrUndefined(yield* queue.nextDueAt([workflow]))).toBe(1_000)

          // The ones in progress first, then the burst oldest first (the order of the
          // claims handed back is not the claim order: compared as sets).
          expect(yield* claimAt(3_000, 3)).toEqual([woken, retrying, burst[0]].sort())
          expect(yield* claimAt(3_000, 5)).toEqual(burst.slice(1, 6).sort())
          // A lease that ran out puts its execution ahead of the rest of the burst too.
          expect(yield* claimAt(5_000, 9)).toEqual([woken, retrying, ...burst.slice(0, 7)].sort())
        })
    )

    it.effect(
      "a claim answers the next time something falls due by the clock after its now (timers, retries, other workers' leases), not the leases it grants nor rows made due by an enqueue or a wake",
      () =>
        Effect.gen(function* () {
          const queue = yield* ExecutionQueue.ExecutionQueue
          const claimWithNextDue = queue.claimWithNextDue
          if (claimWithNextDue === undefined) return expect.fail("the queue has no claimWithNextDue")
          const workflow = unique()
          const other = unique()
          const later = yield* enqueue(workflow, { now: 9_000 })
          yield* enqueue(other, { now: 1_500 })
          const first = yield* claimWithNextDue({
            workerId: "A",
            workflowNames: [workflow],
            limit: 10,
            leaseMs: 100,
            now: 1_000
          })
          // Nothing due; the run enqueued at 9 000 is announced by its enqueue, not slept for
          // (and the other workflow's 1 500 is not asked for).
          expect(first.claims).toEqual([])
          expect(first.nextDueAt).toEqual(Option.none())
          const timer = yield* enqueue(workflow, { now: 1_000 })
          const leased = yield* enqueue(workflow, { now: 1_000 })
          const retried = yield* enqueue(workflow, { now: 1_000 })
          const claimed = yield* claimWithNextDue({
            workerId: "A",
            workflowNames: [workflow],
            limit: 3,
            leaseMs: 100_000,
            now: 1_000
          })
          expect(claimed.claims.map((claim) => claim.executionId).sort()).toEqual(
            [timer, leased, retried].sort()
          )
          // Its own leases (101 000) are not answered.
          expect(claimed.nextDueAt).toEqual(Option.none())
          yield* queue.release({
            executionId: timer,
            workerId: "A",
            release: { _tag: "Suspended", wakeAt: 5_000 },
            now: 1_100
          })
          yield* queue.release({
            executionId: retried,
            workerId: "A",
            release: { _tag: "Retry", runAt: 4_000 },
            now: 1_100
          })
          const byB = yield* claimWithNextDue({
            workerId: "B",
            workflowNames: [workflow],
            limit: 10,
            leaseMs: 100,
            now: 1_200
          })
          expect(byB.claims).toEqual([])
          expect(byB.nextDueAt).toEqual(Option.some(4_000))
          // At 4 000 the retry is claimed; A's lease (101 000) is the next after the timer.
          const atRetry = yield* claimWithNextDue({
            workerId: "B",
            workflowNames: [workflow],
            limit: 10,
            leaseMs: 1_000_000,
            now: 4_000
          })
          expect(atRetry.claims.map((claim) => claim.executionId)).toEqual([retried])
          expect(atRetry.nextDueAt).toEqual(Option.some(5_000))
          const afterAll = yield* claimWithNextDue({
            workerId: "B",
            workflowNames: [workflow],
            limit: 10,
            leaseMs: 1_000_000,
            now: 9_000
          })
          expect(afterAll.claims.map((claim) => claim.executionId).sort()).toEqual([timer, later].sort())
          expect(afterAll.nextDueAt).toEqual(Option.some(101_000))
          expect(
            (yield* claimWithNextDue({
              workerId: "B",
              workflowNames: [workflow],
              limit: 0,
              leaseMs: 1,
              now: 9_001
            })).nextDueAt
          ).toEqual(Option.some(101_000))
          expect(yield* status(leased)).toMatchObject({ status: "running", leaseOwner: "A" })
        })
    )

    it.effect("only the given workflows are claimed", () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const mine = unique()
        const other = unique()
        const id = yield* enqueue(mine)
        yield* enqueue(other)
        const claims = yield* queue.claim({
          workerId: "A",
          workflowNames: [mine],
          limit: 10,
          leaseMs: 100,
          now: 2_000
        })
        expect(claims.map((claim) => claim.executionId)).toEqual([id])
      })
    )

    it.effect(
      "a concurrency key is held by one unfinished execution, suspended or stuck, until it finishes",
      () =>
        Effect.gen(function* () {
          const queue = yield* ExecutionQueue.ExecutionQueue
          const workflow = unique()
          const key = `terminal:${unique()}`
          const first = yield* enqueue(workflow, { key })
          const second = yield* enqueue(workflow, { key })
          const free = yield* enqueue(workflow, { key: `terminal:${unique()}` })
          const claimed = yield* queue.claim({
            workerId: "A",
            workflowNames: [workflow],
            limit: 10,
            leaseMs: 100,
            now: 2_000
          })
          expect(claimed.map((claim) => claim.executionId).sort()).toEqual([first, free].sort())
          yield* queue.release({
            executionId: first,
            workerId: "A",
            release: { _tag: "Suspended", wakeAt: undefined },
            now: 2_001
          })
          yield* queue.wake({ executionId: first, now: 2_002 })
          // Woken again, the holder can be claimed; the other execution of its key cannot.
          const again = yield* queue.claim({
            workerId: "B",
            workflowNames: [workflow],
            limit: 10,
            leaseMs: 100,
            now: 2_003
          })
          expect(again.map((claim) => claim.executionId)).toEqual([first])
          yield* queue.release({ executionId: first, workerId: "B", release: { _tag: "Stuck" }, now: 2_004 })
          const whileStuck = yield* queue.claim({
            workerId: "B",
            workflowNames: [workflow],
            limit: 10,
            leaseMs: 100,
            now: 3_000
          })
          expect(whileStuck.map((claim) => claim.executionId)).not.toContain(second)
          expect(whileStuck.map((claim) => claim.executionId)).not.toContain(first)
          yield* queue.wake({ executionId: first, now: 3_001, resumeStuck: true })
          yield* queue.claim({ workerId: "B", workflowNames: [workflow], limit: 1, leaseMs: 100, now: 3_002 })
          yield* queue.release({
            executionId: first,
            workerId: "B",
            release: { _tag: "Finished", status: "succeeded" },
            now: 3_003
          })
          const next = yield* queue.claim({
            workerId: "C",
            workflowNames: [workflow],
            limit: 10,
            leaseMs: 100,
            now: 3_004
          })
          expect(next.map((claim) => claim.executionId)).toEqual([second])
        })
    )

    it.effect("concurrent claimers never receive the same execution, nor two executions of one key", () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const workflow = unique()
        const keys = Array.from({ length: 5 }, () => `terminal:${unique()}`)
        const ids: Array<string> = []
        for (let i = 0; i < 40; i++) ids.push(yield* enqueue(workflow))
        for (let i = 0; i < 20; i++) ids.push(yield* enqueue(workflow, { key: keys[i % keys.length] ?? "" }))
        const claims = yield* Effect.all(
          Array.from({ length: 12 }, (_, worker) =>
            queue.claim({
              workerId: `W${worker}`,
              workflowNames: [workflow],
              limit: 6,
              leaseMs: 60_000,
              now: 2_000
            })
          ),
          { concurrency: "unbounded" }
        )
        const claimed = claims.flat().map((claim) => claim.executionId)
        expect(new Set(claimed).size).toBe(claimed.length)
        const withKey = yield* Effect.forEach(claimed, status)
        const heldKeys = withKey.flatMap((info) =>
          info.concurrencyKey === null ? [] : [info.concurrencyKey]
        )
        expect(new Set(heldKeys).size).toBe(heldKeys.length)
        // Whatever was left unclaimed is still there for the next claim.
        const rest = yield* queue.claim({
          workerId: "late",
          workflowNames: [workflow],
          limit: 100,
          leaseMs: 60_000,
          now: 2_001
        })
        const all = [...claimed, ...rest.map((claim) => claim.executionId)]
        expect(new Set(all).size).toBe(all.length)
        expect(all.filter((id) => ids.slice(0, 40).includes(id))).toHaveLength(40)
      })
    )

    it.effect("lists executions by workflow, status and search attributes", () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const workflow = unique()
        const merchant = unique()
        const a = yield* enqueue(workflow, { attributes: { merchant, terminal: "T1", amount: "1000" } })
        const b = yield* enqueue(workflow, { attributes: { merchant, terminal: "T2", amount: "1000" } })
        yield* queue.claim({ workerId: "A", workflowNames: [workflow], limit: 1, leaseMs: 100, now: 2_000 })
        yield* queue.setAttributes(b, { transactionReference: "ref-b" })
        const ids = (infos: ReadonlyArray<ExecutionQueue.ExecutionInfo>) =>
          infos.map((info) => info.executionId)
        expect(ids(yield* queue.list({ workflowName: workflow }))).toEqual([a, b])
        expect(ids(yield* queue.list({ workflowName: workflow, status: "running" }))).toEqual([a])
        expect(
          ids(yield* queue.list({ status: ["pending", "suspended"], attributes: { merchant } }))
        ).toEqual([b])
        expect(ids(yield* queue.list({ attributes: { merchant, amount: "1000", terminal: "T1" } }))).toEqual([
          a
        ])
        expect(ids(yield* queue.list({ attributes: { transactionReference: "ref-b" } }))).toEqual([b])
        expect(ids(yield* queue.list({ workflowName: workflow, limit: 1 }))).toEqual([a])
        expect((yield* status(b)).attributes).toEqual({
          merchant,
          terminal: "T2",
          amount: "1000",
          transactionReference: "ref-b"
        })
      })
    )
  })

/** The SQL queue announces changes on LISTEN/NOTIFY (the memory queue has nothing to say). */
export const queueNotificationContract = <E>(
  name: string,
  layer: Layer.Layer<ExecutionQueue.ExecutionQueue, E>
) =>
  testLayer(layer, { timeout: 60_000, excludeTestServices: true })(
    `ExecutionQueue notifications on ${name}`,
    (it) => {
      it.effect(
        "announces executions that become due or finish, so other processes need not wait for a poll",
        () =>
          Effect.gen(function* () {
            const queue = yield* ExecutionQueue.ExecutionQueue
            const workflow = unique()
            const heard = yield* Queue.unbounded<string>()
            yield* queue.changes.pipe(
              Stream.runForEach((id) => Queue.offer(heard, id)),
              Effect.forkScoped
            )
            const next = Queue.take(heard).pipe(Effect.timeout("10 seconds"))
            // Give the LISTEN a moment to be in place before the first NOTIFY.
            yield* Effect.sleep("200 millis")
            const id = yield* enqueue(workflow)
            expect(yield* next).toBe(id)
            yield* queue.claim({
              workerId: "A",
              workflowNames: [workflow],
              limit: 1,
              leaseMs: 1_000,
              now: 2_000
            })
            yield* queue.release({
              executionId: id,
              workerId: "A",
              release: { _tag: "Suspended", wakeAt: 9_000 },
              now: 2_001
            })
            expect(yield* next).toBe(id)
            yield* queue.claim({
              workerId: "A",
              workflowNames: [workflow],
              limit: 1,
              leaseMs: 1_000,
              now: 9_000
            })
            yield* queue.release({
              executionId: id,
              workerId: "A",
              release: { _tag: "Finished", status: "succeeded" },
              now: 9_001
            })
            expect(yield* next).toBe(id)
            // A running execution flagged by a wake is not announced (its worker will see it),
            // nor a suspension without a timer; a wake that makes it due is.
            const other = yield* enqueue(workflow, { now: 10_000 })
            expect(yield* next).toBe(other)
            yield* queue.claim({
              workerId: "A",
              workflowNames: [workflow],
              limit: 1,
              leaseMs: 1_000,
              now: 10_000
            })
            yield* queue.wake({ executionId: other, now: 10_001 })
            yield* queue.release({
              executionId: other,
              workerId: "A",
              release: { _tag: "Suspended", wakeAt: undefined },
              now: 10_002
            })
            expect(yield* next).toBe(other)
            expect((yield* status(other)).status).toBe("pending")
            yield* queue.claim({
              workerId: "A",
              workflowNames: [workflow],
              limit: 1,
              leaseMs: 1_000,
              now: 10_003
            })
            yield* queue.release({
              executionId: other,
              workerId: "A",
              release: { _tag: "Suspended", wakeAt: undefined },
              now: 10_004
            })
            yield* queue.wake({ executionId: other, now: 10_005 })
            expect(yield* next).toBe(other)
            // Nothing else was announced: the claims, the flagging wake and the suspension
            // without a timer sent nothing (a marker enqueued last is the next one heard).
            const marker = yield* enqueue(workflow, { now: 10_006 })
            expect(yield* next).toBe(marker)
          }).pipe(Effect.scoped)
      )
    }
  )
