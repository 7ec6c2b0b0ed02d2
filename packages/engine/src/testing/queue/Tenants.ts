/**
 * Tenants in the queue: the tenant an execution is started for is kept on its row and
 * answered with it; a listing scoped to tenants sees only theirs; a claim given a
 * `tenantLimit` holds each tenant to that many running executions (fair shares), and a
 * start leased does not get round it; the tally by tenant counts what runs and what waits.
 */
import { expect } from "@effect/vitest"
import { ExecutionQueue } from "../../index.js"
import * as Effect from "effect/Effect"
import { type QueueTests, unique, status } from "./Executions.js"

/** Enqueues a new execution of `workflowName` for `tenant` (none when undefined), due at `now`. */
const enqueueFor = (workflowName: string, tenant: string | undefined, now = 1_000) =>
  Effect.gen(function* () {
    const queue = yield* ExecutionQueue.ExecutionQueue
    const executionId = unique()
    const created = yield* queue.enqueue({
      executionId,
      workflowName,
      concurrencyKey: undefined,
      parentId: undefined,
      attributes: {},
      tenant,
      now
    })
    expect(created).toBe(true)
    return executionId
  })

const claimFair = (workflowName: string, options: { limit: number; tenantLimit: number; now: number }) =>
  Effect.flatMap(ExecutionQueue.ExecutionQueue, (queue) =>
    queue.claim({ workerId: "W", workflowNames: [workflowName], leaseMs: 1_000, ...options })
  )

/** How many of the claims are of each execution group. */
const countIn = (claims: ReadonlyArray<ExecutionQueue.Claim>, ids: ReadonlyArray<string>) =>
  claims.filter((claim) => ids.includes(claim.executionId)).length

/** Registers this concern's tests on the queue contract's shared layer. */
export const suite = (it: QueueTests): void => {
  it.effect(
    "an execution's tenant is kept on its row (enqueued alone, together, or leased); one without a tenant has none",
    () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const workflow = unique()
        const alone = yield* enqueueFor(workflow, "cafe-sol")
        const none = yield* enqueueFor(workflow, undefined)
        // Enqueued at once: a SQL queue sends most of them as one statement (group commit).
        const together = yield* Effect.all(
          Array.from({ length: 24 }, (_, i) => enqueueFor(workflow, `t-${i % 3}`)),
          { concurrency: "unbounded" }
        )
        expect((yield* status(alone)).tenant).toBe("cafe-sol")
        expect((yield* status(none)).tenant).toBeNull()
        const tenants = yield* Effect.forEach(together, (id) => Effect.map(status(id), (info) => info.tenant))
        expect(tenants).toEqual(together.map((_, i) => `t-${i % 3}`))
        const listed = yield* queue.list({ workflowName: workflow })
        expect(listed.find((info) => info.executionId === alone)?.tenant).toBe("cafe-sol")
        if (queue.enqueueLeased === undefined) return
        const leasedId = unique()
        const answer = yield* queue.enqueueLeased({
          executionId: leasedId,
          workflowName: workflow,
          concurrencyKey: undefined,
          parentId: undefined,
          attributes: {},
          tenant: "cafe-luna",
          now: 1_000,
          workerId: "A",
          leaseMs: 100
        })
        expect(answer.claim?.executionId).toBe(leasedId)
        expect(yield* status(leasedId)).toMatchObject({ tenant: "cafe-luna", status: "running" })
      })
  )

  it.effect(
    "a listing scoped to tenants sees only theirs, pages newest first through them and counts them; no tenant, or an empty list, matches nothing",
    () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const workflow = unique()
        const [t1, t2, t3] = [unique(), unique(), unique()]
        const enqueued: Array<{ executionId: string; tenant: string | undefined; createdAt: number }> = []
        for (let i = 0; i < 30; i++) {
          const tenant = i % 3 === 0 ? t1 : i % 3 === 1 ? t2 : i % 6 === 2 ? undefined : t3
          const now = 10_000 + Math.floor(i / 4)
          enqueued.push({ executionId: yield* enqueueFor(workflow, tenant, now), tenant, createdAt: now })
        }
        const newestOf = (tenants: ReadonlyArray<string>) =>
          enqueued
            .filter((e) => e.tenant !== undefined && tenants.includes(e.tenant))
            .sort((a, b) => b.createdAt - a.createdAt || (a.executionId < b.executionId ? 1 : -1))
            .map((e) => e.executionId)
        // Pages newest first by keyset through the executions of `tenants`, `size` at a time.
        const pageThrough = (tenants: ReadonlyArray<string>, size: number) =>
          Effect.gen(function* () {
            const seen: Array<string> = []
            let after: ExecutionQueue.ListPosition | undefined
            // Bounded: a queue that ignored `after` would answer its first page for ever.
            for (let pages = 0; pages < 10; pages++) {
              const page = yield* queue.list({
                workflowName: workflow,
                tenants,
                order: "newest",
                limit: size,
                after
              })
              expect(page.every((info) => info.tenant !== null && tenants.includes(info.tenant))).toBe(true)
              seen.push(...page.map((info) => info.executionId))
              const last = page[page.length - 1]
              if (page.length < size || last === undefined) break
              after = { createdAt: last.createdAt, executionId: last.executionId }
            }
            return seen
          })
        expect(yield* pageThrough([t1], 4)).toEqual(newestOf([t1]))
        // Several tenants: each page is the newest of all of theirs together.
        expect(yield* pageThrough([t1, t3], 4)).toEqual(newestOf([t1, t3]))
        expect(yield* pageThrough([t2, t3, unique()], 6)).toEqual(newestOf([t2, t3]))
        const count = (filter: ExecutionQueue.ListFilter) =>
          queue.count === undefined
            ? Effect.map(queue.list(filter), (all) => all.length)
            : queue.count(filter)
        expect(yield* count({ workflowName: workflow, tenants: [t1] })).toBe(10)
        expect(yield* count({ workflowName: workflow, tenants: [t1, t2] })).toBe(20)
        expect(yield* count({ workflowName: workflow, tenants: [t3] })).toBe(5)
        expect(yield* count({ workflowName: workflow })).toBe(30)
        const both = yield* queue.list({ workflowName: workflow, tenants: [t2, t3] })
        expect(both.map((info) => info.tenant).sort()).toEqual(
          [...Array.from({ length: 10 }, () => t2), ...Array.from({ length: 5 }, () => t3)].sort()
        )
        expect(yield* queue.list({ workflowName: workflow, tenants: [] })).toEqual([])
        expect(yield* count({ workflowName: workflow, tenants: [] })).toBe(0)
        expect(yield* queue.list({ workflowName: workflow, tenants: [unique()] })).toEqual([])
      })
  )

  it.effect(
    "a claim with a tenant limit skips a tenant at its limit while another tenant's execution is claimed, and executions without a tenant are never limited",
    () =>
      Effect.gen(function* () {
        const workflow = unique()
        const [a, b] = [unique(), unique()]
        const firstOfA = [yield* enqueueFor(workflow, a, 100), yield* enqueueFor(workflow, a, 101)]
        const taken = yield* claimFair(workflow, { limit: 10, tenantLimit: 2, now: 1_000 })
        expect(taken.map((claim) => claim.executionId).sort()).toEqual([...firstOfA].sort())
        // Tenant A runs two: its older rows wait while B's newer one, and those without a
        // tenant, are claimed.
        const moreOfA = [yield* enqueueFor(workflow, a, 200), yield* enqueueFor(workflow, a, 201)]
        const ofB = yield* enqueueFor(workflow, b, 300)
        const untenanted = [
          yield* enqueueFor(workflow, undefined, 301),
          yield* enqueueFor(workflow, undefined, 302)
        ]
        const next = yield* claimFair(workflow, { limit: 10, tenantLimit: 2, now: 1_100 })
        expect(next.map((claim) => claim.executionId).sort()).toEqual([ofB, ...untenanted].sort())
        expect((yield* status(moreOfA[0] ?? "")).status).toBe("pending")
        // One of A's finishes: one place frees, and one more of A is claimed.
        const queue = yield* ExecutionQueue.ExecutionQueue
        yield* queue.release({
          executionId: firstOfA[0] ?? "",
          workerId: "W",
          release: { _tag: "Finished", status: "succeeded" },
          now: 1_200
        })
        const freed = yield* claimFair(workflow, { limit: 10, tenantLimit: 2, now: 1_300 })
        expect(freed.map((claim) => claim.executionId)).toEqual([moreOfA[0]])
        // A lease that ran out holds no place: A's other first one is claimed again in it.
        const expired = yield* claimFair(workflow, { limit: 10, tenantLimit: 2, now: 2_050 })
        expect(expired.map((claim) => claim.executionId)).toEqual([firstOfA[1]])
      })
  )

  it.effect(
    "one claim of limit 10 over 20 due executions of tenant A and 5 of B takes each tenant only up to the limit, B's reached behind A's",
    () =>
      Effect.gen(function* () {
        const workflow = unique()
        const [a, b] = [unique(), unique()]
        const ofA: Array<string> = []
        for (let i = 0; i < 20; i++) ofA.push(yield* enqueueFor(workflow, a, 100 + i))
        const ofB: Array<string> = []
        for (let i = 0; i < 5; i++) ofB.push(yield* enqueueFor(workflow, b, 200 + i))
        const claims = yield* claimFair(workflow, { limit: 10, tenantLimit: 4, now: 1_000 })
        expect(countIn(claims, ofA)).toBe(4)
        // B's are behind A's twenty, and still reached by the same claim.
        expect(countIn(claims, ofB)).toBe(4)
        // Both at their limit: the next claim takes nothing.
        expect(yield* claimFair(workflow, { limit: 10, tenantLimit: 4, now: 1_001 })).toEqual([])
        // Without a limit, the claim is as before: the oldest due first, whatever the tenant.
        const queue = yield* ExecutionQueue.ExecutionQueue
        const unlimited = yield* queue.claim({
          workerId: "W",
          workflowNames: [workflow],
          limit: 5,
          leaseMs: 1_000,
          now: 1_002
        })
        expect(countIn(unlimited, ofA)).toBe(5)
      })
  )

  it.effect(
    "a start leased of a tenant at its limit is inserted pending, not leased; another tenant's starts leased",
    () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const enqueueLeased = queue.enqueueLeased
        if (enqueueLeased === undefined) return
        const workflow = unique()
        const [a, b] = [unique(), unique()]
        const start = (tenant: string) =>
          Effect.gen(function* () {
            const executionId = unique()
            const answer = yield* enqueueLeased({
              executionId,
              workflowName: workflow,
              concurrencyKey: undefined,
              parentId: undefined,
              attributes: {},
              tenant,
              now: 1_000,
              workerId: "A",
              leaseMs: 1_000,
              tenantLimit: 2
            })
            return { executionId, answer }
          })
        const first = yield* start(a)
        const second = yield* start(a)
        expect([first.answer.claim?.executionId, second.answer.claim?.executionId]).toEqual([
          first.executionId,
          second.executionId
        ])
        const third = yield* start(a)
        expect(third.answer).toEqual({ inserted: true, claim: undefined })
        expect(yield* status(third.executionId)).toMatchObject({
          status: "pending",
          leaseOwner: null,
          tenant: a
        })
        const other = yield* start(b)
        expect(other.answer.claim?.executionId).toBe(other.executionId)
        // The one left pending is claimed once a place frees.
        expect(yield* claimFair(workflow, { limit: 10, tenantLimit: 2, now: 1_010 })).toEqual([])
        yield* queue.release({
          executionId: first.executionId,
          workerId: "A",
          release: { _tag: "Finished", status: "succeeded" },
          now: 1_020
        })
        const claimed = yield* claimFair(workflow, { limit: 10, tenantLimit: 2, now: 1_030 })
        expect(claimed.map((claim) => claim.executionId)).toEqual([third.executionId])
      })
  )

  it.effect(
    "with tenantSlots, a claim holds a tenant to its fair part of the slots among the tenants with work: 2 each of 10 slots among five busy tenants, tenantLimit 8 for one alone; a start leased in a free slot is held to tenantLimit only",
    () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        // Far later than any other test's leases, so only this test's runs count as running.
        const t0 = 8_000_000_000_000_000
        const fair = (workflowName: string, now: number, tenantSlots?: number) =>
          queue.claim({
            workerId: "W",
            workflowNames: [workflowName],
            leaseMs: 1_000,
            limit: 40,
            tenantLimit: 8,
            now,
            ...(tenantSlots === undefined ? {} : { tenantSlots })
          })
        const busy = (workflow: string, at: number) =>
          Effect.gen(function* () {
            const tenants = [unique(), unique(), unique(), unique(), unique()]
            const rows: Array<Array<string>> = []
            for (const tenant of tenants) {
              const ofTenant: Array<string> = []
              for (let i = 0; i < 4; i++) ofTenant.push(yield* enqueueFor(workflow, tenant, at + i))
              rows.push(ofTenant)
            }
            return { tenants, rows }
          })

        // Five tenants with work and 10 slots: each is held to 2 (ceil(10 ÷ 5)), not 8.
        const divided = unique()
        const five = yield* busy(divided, t0)
        const claims = yield* fair(divided, t0 + 10, 10)
        expect(five.rows.map((ofTenant) => countIn(claims, ofTenant))).toEqual([2, 2, 2, 2, 2])
        // A start leased takes a slot free now, which no one waits for: held to tenantLimit
        // only, not to the fair part (its tenant runs 2 already, and the start is leased).
        const enqueueLeased = queue.enqueueLeased
        if (enqueueLeased !== undefined) {
          const started = yield* enqueueLeased({
            executionId: unique(),
            workflowName: divided,
            concurrencyKey: undefined,
            parentId: undefined,
            attributes: {},
            tenant: five.tenants[0] ?? "",
            now: t0 + 20,
            workerId: "W",
            leaseMs: 1_000,
            tenantLimit: 8
          })
          expect(started.claim).toBeDefined()
        }

        // Without tenantSlots, the same five tenants each run all four (tenantLimit 8).
        const t1 = t0 + 100_000
        const fixed = unique()
        const again = yield* busy(fixed, t1)
        const unshared = yield* fair(fixed, t1 + 10)
        expect(again.rows.map((ofTenant) => countIn(unshared, ofTenant))).toEqual([4, 4, 4, 4, 4])

        // One tenant alone with work: its fair part is all 10 slots, so tenantLimit 8 holds.
        const t2 = t0 + 200_000
        const alone = unique()
        const only = unique()
        for (let i = 0; i < 12; i++) yield* enqueueFor(alone, only, t2 + i)
        expect((yield* fair(alone, t2 + 20, 10)).length).toBe(8)
      })
  )

  it.effect("the tally by tenant counts each tenant's running executions and those waiting due", () =>
    Effect.gen(function* () {
      const queue = yield* ExecutionQueue.ExecutionQueue
      const workflow = unique()
      const [a, b] = [unique(), unique()]
      for (let i = 0; i < 3; i++) yield* enqueueFor(workflow, a, 100 + i)
      yield* enqueueFor(workflow, b, 200)
      yield* enqueueFor(workflow, undefined, 201)
      // Due later: not waiting yet.
      yield* enqueueFor(workflow, b, 50_000)
      yield* claimFair(workflow, { limit: 10, tenantLimit: 2, now: 1_000 })
      const tally = queue.tallyByTenant
      if (tally === undefined) return expect.fail("the queue has no tallyByTenant")
      const ours = (now: number) =>
        Effect.map(tally({ now }), (all) =>
          [a, b].flatMap((tenant) => all.filter((counted) => counted.tenant === tenant))
        )
      expect(yield* ours(1_500)).toEqual([
        { tenant: a, running: 2, waiting: 1 },
        { tenant: b, running: 1, waiting: 0 }
      ])
      // The leases ran out: nothing runs (the one due later is still not waiting).
      expect(yield* ours(5_000)).toEqual([{ tenant: a, running: 0, waiting: 1 }])
    })
  )
}
