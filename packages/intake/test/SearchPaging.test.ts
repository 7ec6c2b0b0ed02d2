/**
 * The executions' search at scale, through the intake API (`GET /v1/monitor/executions`):
 * keyset paging newest first over 3,000 executions seeded in the queue (every one seen
 * once, none skipped, a start meanwhile shifting nothing), the outcome filter (not the
 * engine's status), a time range, the amount asked and the merchant, and the search by id
 * prefix, customer reference and card's last four digits.
 */
import { describe, expect, layer as layerOf } from "@effect/vitest"
import { ExecutionQueue } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import { call, layer } from "./support.js"

const seeded = 3_000
const hex = () => globalThis.crypto.randomUUID().replaceAll("-", "")

interface Page {
  readonly executions: ReadonlyArray<{ executionId: string; createdAt: number; status: string }>
  readonly total: number
  readonly next?: string
}

const search = (query: string) =>
  Effect.map(call("GET", `/v1/monitor/executions?${query}`), (reply): Page => {
    expect(reply.status).toBe(200)
    return reply.json
  })

describe("the executions' search at scale", () => {
  layerOf(layer, { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect(
      "pages newest first through 3,000 executions by cursor, filters by outcome and time, finds by id prefix, customer reference and last four digits",
      () =>
        Effect.gen(function* () {
          const queue = yield* ExecutionQueue.ExecutionQueue
          const workflow = `Seeded${hex().slice(0, 8)}`
          const outcomes = ["approved", "declined", "failed"] as const
          const start = Date.UTC(2026, 10, 28, 9, 0, 0)
          const rows = Array.from({ length: seeded }, (_, i) => ({
            executionId: hex(),
            // Three share each millisecond: the cursor's id breaks the ties.
            createdAt: start + Math.floor(i / 3) * 1_000,
            outcome: outcomes[i % 3]!
          }))
          yield* Effect.forEach(
            rows,
            (row, i) =>
              queue.enqueue({
                executionId: row.executionId,
                workflowName: workflow,
                concurrencyKey: undefined,
                parentId: undefined,
                attributes: {
                  outcome: row.outcome,
                  customerReference: `customer-${i}`,
                  cardLast4: String(1000 + (i % 9000)).padStart(4, "0")
                },
                now: row.createdAt
              }),
            { concurrency: 8 }
          )
          const newestFirst = [...rows]
            .sort((a, b) => b.createdAt - a.createdAt || (a.executionId < b.executionId ? 1 : -1))
            .map((row) => row.executionId)

          // Every page of 500, by cursor: each execution once, in order.
          const seen: Array<string> = []
          let after: string | undefined
          let pages = 0
          do {
            const page = yield* search(
              `workflow=${workflow}&limit=500${after === undefined ? "" : `&after=${after}`}`
            )
            // `total` counts what matches now: the one started meanwhile too.
            expect(page.total).toBe(pages === 0 ? seeded : seeded + 1)
            if (pages === 0) {
              // Started after the first page was read: newer than every page that follows.
              yield* queue.enqueue({
                executionId: hex(),
                workflowName: workflow,
                concurrencyKey: undefined,
                parentId: undefined,
                attributes: {},
                now: start + 10_000_000
              })
            }
            seen.push(...page.executions.map((e) => e.executionId))
            after = page.next
            pages++
          } while (after !== undefined && pages < 20)
          expect(pages).toBe(6)
          expect(seen).toEqual(newestFirst)

          // The outcome, not the engine's status: 1,000 declined, all of them pending here.
          const declined = yield* search(`workflow=${workflow}&outcome=declined&limit=500`)
          expect(declined.total).toBe(1_000)
          const declinedIds = new Set(rows.filter((r) => r.outcome === "declined").map((r) => r.executionId))
          expect(declined.executions.every((e) => declinedIds.has(e.executionId))).toBe(true)
          expect((yield* search(`workflow=${workflow}&outcome=in-progress&limit=1`)).total).toBe(seeded + 1)
          expect((yield* search(`workflow=${workflow}&outcome=approved&status=succeeded`)).total).toBe(0)

          // A time range in UTC (written, or implied): [09:10:00, 09:10:10) holds 10 seconds of 3 each.
          const ranged = yield* search(
            `workflow=${workflow}&from=2026-11-28T09:10:00Z&to=2026-11-28T09:10:10`
          )
          expect(ranged.total).toBe(30)

          // The id the table shows (8 characters), a customer reference, the last four digits.
          const target = rows[1234]!
          const byPrefix = yield* search(
            `workflow=${workflow}&q=${target.executionId.slice(0, 8).toUpperCase()}`
          )
          expect(byPrefix.executions.map((e) => e.executionId)).toEqual([target.executionId])
          const byCustomer = yield* search(`workflow=${workflow}&q=customer-1234`)
          expect(byCustomer.executions.map((e) => e.executionId)).toEqual([target.executionId])
          const byLastFour = yield* search(`workflow=${workflow}&q=2234&limit=500`)
          expect(byLastFour.executions.map((e) => e.executionId)).toContain(target.executionId)

          const bad = yield* call("GET", `/v1/monitor/executions?after=not-a-cursor`)
          expect(bad.status).toBe(400)
          expect(bad.json.message).toContain("is not a page cursor")
        })
    )

    it.effect(
      "filters by the amount asked (with its currency) and by merchant; a half-given or bad filter is 400",
      () =>
        Effect.gen(function* () {
          const queue = yield* ExecutionQueue.ExecutionQueue
          const workflow = `Priced${hex().slice(0, 8)}`
          const now = Date.UTC(2026, 10, 28, 12, 0, 0)
          const seed = (amount: string, currency: string, tenant: string, i: number) =>
            Effect.gen(function* () {
              const executionId = hex()
              yield* queue.enqueue({
                executionId,
                workflowName: workflow,
                concurrencyKey: undefined,
                parentId: undefined,
                attributes: { operation: "sale", amount, currency },
                now: now + i,
                tenant
              })
              return executionId
            })
          const cafeTen = yield* seed("10.50", "EUR", "cafe-sol", 1)
          const teaTen = yield* seed("10.50", "EUR", "tea-house", 2)
          yield* seed("10.50", "USD", "cafe-sol", 3)
          yield* seed("20.00", "EUR", "cafe-sol", 4)
          const ids = (page: Page) => page.executions.map((e) => e.executionId).sort()

          // "10.5" is 10.50: amounts compare as money, in the currency given.
          expect(ids(yield* search(`workflow=${workflow}&amount=10.5&currency=eur`))).toEqual(
            [cafeTen, teaTen].sort()
          )
          expect((yield* search(`workflow=${workflow}&amount=10.50&currency=USD`)).total).toBe(1)
          expect(
            ids(yield* search(`workflow=${workflow}&merchant=cafe-sol&amount=10.50&currency=EUR`))
          ).toEqual([cafeTen])
          expect((yield* search(`workflow=${workflow}&merchant=tea-house`)).total).toBe(1)
          expect((yield* search(`workflow=${workflow}&merchant=nobody`)).total).toBe(0)

          for (const [query, says] of [
            ["amount=10.50", "with its currency"],
            ["amount=10.505&currency=EUR", "too many decimals"],
            ["amount=ten&currency=EUR", "not a valid EUR amount"],
            ["amount=10&currency=EURO", "not an ISO 4217"],
            ["merchant=a%20b", "not a merchant id"]
          ] as const) {
            const reply = yield* call("GET", `/v1/monitor/executions?workflow=${workflow}&${query}`)
            expect([query, reply.status, reply.json.message]).toEqual([
              query,
              400,
              expect.stringContaining(says)
            ])
          }
        })
    )
  })
})
