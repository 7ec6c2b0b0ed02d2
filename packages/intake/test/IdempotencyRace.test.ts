/**
 * One idempotency key, two different requests, sent at the same moment: exactly one of
 * them owns the key (2xx), the other is told 409 with the owner's execution id, and one
 * charge is made per key. The intake starts and then compares: the start is one atomic
 * append in the store, so no read-then-write window lets both through.
 */
import { describe, expect, it } from "@effect/vitest"
import { EngineWorker, type ExecutionQueue } from "@tillflow/engine"
import { Stack } from "@tillflow/intake"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { call, layer } from "./support.js"

// The served intake's layer holds the execution queue too (its database), without naming it.
const served = layer as Layer.Layer<
  Layer.Layer.Success<typeof layer> | ExecutionQueue.ExecutionQueue,
  unknown
>
const withWorker = EngineWorker.layer({ concurrency: 8 }).pipe(Layer.provideMerge(served))

const pairs = 20

const sale = (idempotencyKey: string, serialNumber: string, amount: number) =>
  JSON.stringify({
    idempotencyKey,
    request: { operation: "sale", serial_number: serialNumber, amount: String(amount), currency: "EUR" }
  })

const sales = (adminUrl: string, serialNumber: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${adminUrl}/counters`)
    const counters = (await response.json()) as {
      readonly terminals: Record<string, { readonly charges: number }>
    }
    return counters.terminals[serialNumber]?.charges ?? 0
  })

describe("one owner per idempotency key", () => {
  it.live(
    "20 concurrent pairs of different requests under one key: one 2xx and one 409 naming the owner's execution, one charge per pair",
    () =>
      Effect.gen(function* () {
        const cloud = yield* Stack.Cloud
        const terminal = cloud.terminals[0]
        if (terminal === undefined || cloud.adminUrl === undefined)
          return yield* Effect.dieMessage("the built-in simulator has no terminal or admin API")
        const serial = terminal.serialNumber
        const before = yield* sales(cloud.adminUrl, serial)
        const replies = yield* Effect.forEach(
          Array.from({ length: pairs }, (_, i) => i),
          (i) =>
            Effect.all(
              [
                call("POST", "/v1/operations", { body: sale(`race-${i}`, serial, 1000 + i) }),
                call("POST", "/v1/operations", { body: sale(`race-${i}`, serial, 2000 + i) })
              ],
              { concurrency: 2 }
            ),
          { concurrency: "unbounded" }
        )
        const owners: Array<string> = []
        for (const [i, [a, b]] of replies.entries()) {
          const statuses = [a.status, b.status].map((s) => (s >= 200 && s < 300 ? "2xx" : s)).sort()
          expect({ pair: i, statuses }).toEqual({ pair: i, statuses: ["2xx", 409].sort() })
          const owner = a.status === 409 ? b : a
          const loser = a.status === 409 ? a : b
          expect(loser.json).toMatchObject({
            _tag: "IdempotencyConflict",
            executionId: owner.json.executionId
          })
          expect(loser.json.message).toContain(`race-${i}`)
          owners.push(owner.json.executionId)
        }
        expect(new Set(owners).size).toBe(pairs)
        // Every owner's sale ends; the requests told 409 charged nothing.
        for (const executionId of owners) {
          const ended = yield* call("GET", `/v1/executions/${executionId}?wait=60`)
          expect(ended.json.status).toBe("succeeded")
        }
        expect((yield* sales(cloud.adminUrl, serial)) - before).toBe(pairs)
        // The same key and the same request still answer the owner's execution.
        const again = yield* call("POST", "/v1/operations", { body: sale("race-0", serial, 1000) })
        const againOther = yield* call("POST", "/v1/operations", { body: sale("race-0", serial, 2000) })
        const ownerOf0 = [again, againOther].find((r) => r.status < 300)
        expect(ownerOf0?.json.executionId).toBe(owners[0])
      }).pipe(Effect.provide(withWorker)),
    { timeout: 180_000 }
  )
})
