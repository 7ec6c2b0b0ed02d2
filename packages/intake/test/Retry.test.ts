/**
 * An operator tries again a terminal operation that charged nothing (`POST
 * /v1/executions/{id}/retry`), against a running worker and the simulator: a sale on a
 * terminal that is offline until its deadline ends `unavailable`; once the terminal is back,
 * the retry sends the same request under `retry-<id>` with a fresh reference and is approved;
 * asked again it answers the same execution; the request is recorded with the operator, the
 * time and the reason, and the ended sale's timeline shows it. An approved sale is refused
 * 422 with the rule (a retry could charge twice); an unknown execution is 404. A stop naming
 * the execution it stops needs a reason and an operation on that terminal (400 otherwise).
 */
import { describe, expect, layer } from "@effect/vitest"
import { LifecycleEvent } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import { Stack } from "@tillflow/intake"
import { adminClient } from "@tillflow/simulator/testing"
import * as Effect from "effect/Effect"
import { call, running } from "./support.js"

const stack = running(13)

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

describe("retrying an operation that charged nothing", () => {
  layer(stack, { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect(
      "an unavailable sale is tried again once the terminal is back: approved, recorded, in its timeline",
      () =>
        Effect.gen(function* () {
          const cloud = yield* Stack.Cloud
          const first = cloud.terminals[0]
          if (first === undefined || cloud.adminUrl === undefined) throw new Error("no built-in simulator")
          const admin = adminClient(cloud.adminUrl)
          yield* admin("PATCH", `/terminals/${first.serialNumber}`, { online: false })
          const sale = (key: string) =>
            call("POST", "/v1/operations", {
              body: JSON.stringify({
                idempotencyKey: key,
                deadlineSeconds: 1,
                waitSeconds: 60,
                request: {
                  operation: "sale",
                  serial_number: first.serialNumber,
                  amount: "1250",
                  currency: "EUR"
                }
              })
            })
          const failed = yield* sale(`retry-me-${Date.now()}`)
          expect([failed.status, failed.json?.report?.verdict]).toEqual([200, "unavailable"])
          const executionId = String(failed.json.executionId)
          yield* admin("PATCH", `/terminals/${first.serialNumber}`, { online: true })

          const retry = (id: string, reason = "the terminal is back online") =>
            call("POST", `/v1/executions/${id}/retry`, { body: JSON.stringify({ reason, waitSeconds: 60 }) })
          const retried = yield* retry(executionId)
          expect(retried.status, retried.text).toBe(200)
          const view: Json = retried.json
          expect(view.report?.verdict).toBe("approved")
          expect(view.attributes.idempotencyKey).toBe(`retry-${executionId}`)
          // A fresh reference: the first attempt's may have reached the service.
          expect(view.attributes.transactionReference).not.toBe(failed.json.attributes.transactionReference)
          // Asked again: the same retry, recorded once.
          const again = yield* retry(executionId, "double click")
          expect(again.json?.executionId).toBe(view.executionId)
          const store = yield* EventStore.EventStore
          const recorded = yield* LifecycleEvent.registry.decodeAll(
            yield* store.readStream(LifecycleEvent.executionActionsStream(executionId))
          )
          expect(recorded.map((e) => [e.type, (e.data as Json).via, (e.data as Json).reason])).toEqual([
            ["ExecutionActionRequested", "token", "the terminal is back online"]
          ])
          const timeline = yield* call("GET", `/v1/audit/timeline/${executionId}`)
          expect((timeline.json.lines as ReadonlyArray<string>).join("\n")).toContain(
            `retry of execution ${executionId} asked by the intake's bearer token: the terminal is back online (execution ${view.executionId})`
          )

          // An approved sale: refused, nothing started.
          const refused = yield* retry(String(view.executionId))
          expect([refused.status, refused.json?.rule]).toEqual([422, "retry-only-when-nothing-charged"])
          expect((yield* retry("0123456789abcdef0123456789abcdef")).status).toBe(404)

          // A stop of an execution is recorded with a reason, and names an operation on that terminal.
          const stop = (serial: string, body: unknown) =>
            call("POST", `/v1/terminals/${serial}/stop`, { body: JSON.stringify(body) })
          const noReason = yield* stop(first.serialNumber, { of: view.executionId })
          expect([noReason.status, noReason.json?.message]).toEqual([400, expect.stringContaining("reason")])
          const second = cloud.terminals[1]
          if (second !== undefined) {
            const elsewhere = yield* stop(second.serialNumber, {
              of: view.executionId,
              reason: "wrong terminal"
            })
            expect([elsewhere.status, elsewhere.json?.message]).toEqual([
              400,
              expect.stringContaining("not an operation on terminal")
            ])
          }
        })
    )
  })
})
