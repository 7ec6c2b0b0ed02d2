/**
 * Listing executions by workflow, status and search attributes; the operators' search:
 * newest first with keyset paging, creation time ranges, and a search by id prefix or by
 * any of several attributes; counting what matches.
 */
import { expect } from "@effect/vitest"
import { ExecutionQueue } from "../../index.js"
import * as Effect from "effect/Effect"
import { type QueueTests, unique, enqueue, status } from "./Executions.js"

/** Registers this concern's tests on the queue contract's shared layer. */
export const suite = (it: QueueTests): void => {
  it.effect("lists executions by workflow, status and search attributes", () =>
    Effect.gen(function* () {
      const queue = yield* ExecutionQueue.ExecutionQueue
      const workflow = unique()
      const sender = unique()
      const a = yield* enqueue(workflow, { attributes: { sender, locker: "L1", amount: "1000" } })
      const b = yield* enqueue(workflow, { attributes: { sender, locker: "L2", amount: "1000" } })
      yield* queue.claim({ workerId: "A", workflowNames: [workflow], limit: 1, leaseMs: 100, now: 2_000 })
      yield* queue.setAttributes(b, { trackingNumber: "ref-b" })
      const ids = (infos: ReadonlyArray<ExecutionQueue.ExecutionInfo>) =>
        infos.map((info) => info.executionId)
      expect(ids(yield* queue.list({ workflowName: workflow }))).toEqual([a, b])
      expect(ids(yield* queue.list({ workflowName: workflow, status: "running" }))).toEqual([a])
      expect(ids(yield* queue.list({ status: ["pending", "suspended"], attributes: { sender } }))).toEqual([
        b
      ])
      expect(ids(yield* queue.list({ attributes: { sender, amount: "1000", locker: "L1" } }))).toEqual([a])
      expect(ids(yield* queue.list({ attributes: { trackingNumber: "ref-b" } }))).toEqual([b])
      expect(ids(yield* queue.list({ workflowName: workflow, limit: 1 }))).toEqual([a])
      expect((yield* status(b)).attributes).toEqual({
        sender,
        locker: "L2",
        amount: "1000",
        trackingNumber: "ref-b"
      })
    })
  )

  it.effect(
    "pages newest first by keyset (no page repeats or skips, an execution added meanwhile stays out of later pages), filters by time and searches by id prefix or any attribute",
    () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const workflow = unique()
        // Hexadecimal ids, as the engine derives them; two share each creation time.
        const hex = () => unique().replaceAll("-", "")
        const ids: Array<string> = []
        for (let i = 0; i < 25; i++) {
          const executionId = hex()
          ids.push(executionId)
          yield* queue.enqueue({
            executionId,
            workflowName: workflow,
            concurrencyKey: undefined,
            parentId: undefined,
            attributes: {
              n: String(i),
              parity: i % 2 === 0 ? "even" : "odd",
              ...(i === 7 ? { ref: "R-7" } : {})
            },
            now: 10_000 + Math.floor(i / 2)
          })
        }
        const expected = ids
          .map((executionId, i) => ({ executionId, createdAt: 10_000 + Math.floor(i / 2) }))
          .sort((a, b) => b.createdAt - a.createdAt || (a.executionId < b.executionId ? 1 : -1))
          .map((e) => e.executionId)
        const seen: Array<string> = []
        let after: ExecutionQueue.ListPosition | undefined
        let pages = 0
        // Bounded: a queue that ignored `after` would answer its first page for ever.
        while (pages < 5) {
          const page = yield* queue.list({ workflowName: workflow, order: "newest", limit: 10, after })
          if (pages === 0) {
            // Added after the first page was read: newer than every position paged from.
            yield* enqueue(workflow, { now: 99_999 })
          }
          pages++
          seen.push(...page.map((e) => e.executionId))
          const last = page[page.length - 1]
          if (page.length < 10 || last === undefined) break
          after = { createdAt: last.createdAt, executionId: last.executionId }
        }
        expect(pages).toBe(3)
        expect(seen).toEqual(expected)
        const count = (filter: ExecutionQueue.ListFilter) =>
          queue.count === undefined
            ? Effect.map(queue.list(filter), (all) => all.length)
            : queue.count(filter)
        expect(yield* count({ workflowName: workflow })).toBe(26)
        expect(yield* count({ workflowName: workflow, attributes: { parity: "odd" } })).toBe(12)
        // The tally (a metrics scrape's read): every execution of the workflow, by status.
        const tally = queue.tally ?? Effect.map(queue.list({}), ExecutionQueue.tallyOf)
        expect((yield* tally).filter((t) => t.workflowName === workflow)).toEqual([
          { workflowName: workflow, status: "pending", count: 26 }
        ])
        // A time range: created at or after `createdFrom`, before `createdBefore`.
        const ranged = yield* queue.list({
          workflowName: workflow,
          order: "newest",
          createdFrom: 10_002,
          createdBefore: 10_004
        })
        expect(ranged.map((e) => e.attributes["n"]).sort()).toEqual(["4", "5", "6", "7"])
        // A search: the id's first 8 characters, or any of several attributes.
        const target = ids[13] ?? ""
        const byPrefix = yield* queue.list({
          workflowName: workflow,
          anyOf: { idPrefix: target.slice(0, 8) }
        })
        expect(byPrefix.map((e) => e.executionId)).toEqual([target])
        const byEither = yield* queue.list({
          workflowName: workflow,
          order: "newest",
          anyOf: { idPrefix: target.slice(0, 8), attributes: [{ ref: "R-7" }, { ref: "absent" }] }
        })
        expect(byEither.map((e) => e.executionId)).toEqual([target, ids[7]])
        expect(yield* count({ workflowName: workflow, anyOf: { attributes: [{ ref: "R-7" }] } })).toBe(1)
        // Not hexadecimal: matches no id, and no LIKE wildcard reaches the statement.
        expect(yield* queue.list({ workflowName: workflow, anyOf: { idPrefix: "%" } })).toEqual([])
      })
  )
}
