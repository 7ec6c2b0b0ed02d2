/**
 * Alerts with a lifecycle: an alert raised by the log is open, an operator acknowledges it
 * and resolves it with a reason (a viewer is refused), each step is an event of the
 * alert's own stream (so a step another worker stored is seen here), a step taken twice
 * is stored once, a resolved alert is hidden unless asked for, and the gauges tell open
 * from acknowledged alerts and count a terminal waiting to come back online as offline
 * (the scrape still passing promtool).
 */
import { describe, expect, it, layer as layerOf } from "@effect/vitest"
import { LifecycleEvent } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import { Monitor, Stack } from "@tillflow/intake"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { spawnSync } from "node:child_process"
import { call, layerWith, login, mismatchNoted, operators, send } from "./support.js"

const sale = (idempotencyKey: string, serialNumber: string) => ({
  idempotencyKey,
  request: { operation: "sale", serial_number: serialNumber, amount: "1000", currency: "EUR" }
})

/** Polls `effect` until `done` holds (the log follower runs in its own fiber). */
const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>, done: (a: A) => boolean) =>
  effect.pipe(
    Effect.filterOrFail(done, () => "not yet"),
    Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.intersect(Schedule.recurs(100))))
  )

interface Alert {
  readonly id: string
  readonly kind: string
  readonly state: string
  readonly acknowledged?: { operator: string; reason: string; at: number }
  readonly resolved?: { operator: string; reason: string; at: number }
}

const list = (query = "") =>
  Effect.map(call("GET", `/v1/monitor/alerts${query}`), (r): ReadonlyArray<Alert> => r.json.alerts)

const scrape = Effect.map(call("GET", "/metrics"), (r) => r.text)

const promtool = spawnSync("promtool", ["--version"]).status === 0

describe("alerts with a lifecycle", () => {
  layerOf(layerWith({ operators }), { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect(
      "open → acknowledged → resolved with who and why, stored once, a viewer refused, resolved ones hidden",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const [serial = ""] = (yield* Stack.Cloud).terminals.map((t) => t.serialNumber)
          const started = (yield* call("POST", "/v1/operations", {
            body: JSON.stringify(sale("alert-1", serial))
          })).json
          const id = yield* mismatchNoted(started.executionId, 3)
          const raised = yield* eventually(list(), (alerts) => alerts.some((a) => a.id === id))
          expect(raised.find((a) => a.id === id)).toMatchObject({ kind: "mismatch", state: "open" })
          expect(yield* scrape).toContain('tillflow_alerts_open{kind="mismatch",state="open"} 1')

          const vic = yield* login("vic")
          const refused = yield* send("POST", `/v1/monitor/alerts/${id}/acknowledge`, {
            cookie: vic,
            body: { reason: "looking" }
          })
          expect(refused.status).toBe(403)
          expect(refused.json).toMatchObject({ _tag: "Forbidden", role: "viewer" })

          const ana = yield* login("ana")
          const noReason = yield* send("POST", `/v1/monitor/alerts/${id}/acknowledge`, {
            cookie: ana,
            body: { reason: "  " }
          })
          expect(noReason.status).toBe(400)
          expect(JSON.stringify(noReason.json)).toContain("say why")
          const unknown = yield* send("POST", `/v1/monitor/alerts/stuck.nosuchexecution/acknowledge`, {
            cookie: ana,
            body: { reason: "x" }
          })
          expect(unknown.status).toBe(404)
          const malformed = yield* send("POST", `/v1/monitor/alerts/whatever/acknowledge`, {
            cookie: ana,
            body: { reason: "x" }
          })
          expect(malformed.status).toBe(400)

          // A double click: one acknowledgement stored, the same answer twice.
          const acks = yield* Effect.all(
            [1, 2].map(() =>
              send("POST", `/v1/monitor/alerts/${id}/acknowledge`, {
                cookie: ana,
                body: { reason: "calling the acquirer" }
              })
            ),
            { concurrency: 2 }
          )
          for (const ack of acks) {
            expect(ack.status).toBe(200)
            expect(ack.json).toMatchObject({
              id,
              state: "acknowledged",
              acknowledged: { operator: "ana", reason: "calling the acquirer" }
            })
          }
          const steps = yield* store.readStream(Monitor.alertStreamOf(id))
          expect(steps.map((e) => e.type)).toEqual(["AlertAcknowledged"])
          expect(steps[0]?.data).toMatchObject({
            alertId: id,
            operator: "ana",
            reason: "calling the acquirer"
          })
          const lines = (yield* scrape).split("\n")
          expect(lines).toContain('tillflow_alerts_open{kind="mismatch",state="open"} 0')
          expect(lines).toContain('tillflow_alerts_open{kind="mismatch",state="acknowledged"} 1')

          const resolved = yield* send("POST", `/v1/monitor/alerts/${id}/resolve`, {
            cookie: ana,
            body: { reason: "the acquirer confirms the decline" }
          })
          expect(resolved.status).toBe(200)
          expect(resolved.json).toMatchObject({
            state: "resolved",
            acknowledged: { operator: "ana" },
            resolved: { operator: "ana", reason: "the acquirer confirms the decline" }
          })
          expect((yield* list()).some((a) => a.id === id)).toBe(false)
          expect((yield* list("?state=resolved")).map((a) => a.id)).toContain(id)
          expect((yield* list("?state=all")).find((a) => a.id === id)?.state).toBe("resolved")
          const late = yield* send("POST", `/v1/monitor/alerts/${id}/acknowledge`, {
            cookie: ana,
            body: { reason: "again" }
          })
          expect(late.status).toBe(409)
          expect(late.json).toMatchObject({ _tag: "AlertStateConflict", state: "resolved" })
          const scraped = (yield* scrape).split("\n")
          expect(scraped).toContain('tillflow_alerts_open{kind="mismatch",state="acknowledged"} 0')
        })
    )

    it.effect("a step another worker stored (an event of the alert's stream) is what this worker shows", () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const [, serial = ""] = (yield* Stack.Cloud).terminals.map((t) => t.serialNumber)
        const started = (yield* call("POST", "/v1/operations", {
          body: JSON.stringify(sale("alert-2", serial))
        })).json
        const { nextVersion } = yield* store.append(`payment-${started.executionId}`, EventStore.AnyVersion, [
          { type: "OutcomeUnresolved", data: { attemptId: "a2", attempt: 2, message: "no answer", at: 4 } }
        ])
        const id = Monitor.alertIdOf("unresolved", started.executionId, nextVersion)
        yield* store.append(Monitor.alertStreamOf(id), EventStore.NoStream, [
          {
            type: "AlertAcknowledged",
            data: { alertId: id, operator: "bo", reason: "on it from worker 2", at: 5 }
          }
        ])
        const seen = yield* eventually(list(), (alerts) =>
          alerts.some((a) => a.id === id && a.state === "acknowledged")
        )
        expect(seen.find((a) => a.id === id)?.acknowledged).toEqual({
          operator: "bo",
          reason: "on it from worker 2",
          at: 5
        })
      })
    )

    it.effect("an operator's resolution of the unresolved outcome resolves its alert, in their name", () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const [, serial = ""] = (yield* Stack.Cloud).terminals.map((t) => t.serialNumber)
        const started = (yield* call("POST", "/v1/operations", {
          body: JSON.stringify(sale("alert-3", serial))
        })).json
        const { nextVersion } = yield* store.append(`payment-${started.executionId}`, EventStore.AnyVersion, [
          { type: "OutcomeUnresolved", data: { attemptId: "a3", attempt: 3, message: "no answer", at: 7 } }
        ])
        const id = Monitor.alertIdOf("unresolved", started.executionId, nextVersion)
        yield* eventually(list(), (alerts) => alerts.some((a) => a.id === id && a.state === "open"))
        yield* store.append(
          LifecycleEvent.executionActionsStream(started.executionId),
          EventStore.AnyVersion,
          yield* LifecycleEvent.registry.encodeAll([
            LifecycleEvent.TerminalOutcomeResolved.make({
              requestId: "resolve-a3",
              at: yield* DateTime.now,
              executionId: started.executionId,
              attemptId: "a3",
              operation: "sale",
              resolution: "notApplied",
              operator: "cy",
              reason: "the terminal's journal has no such sale"
            })
          ])
        )
        const seen = yield* eventually(list("?state=all"), (alerts) =>
          alerts.some((a) => a.id === id && a.state === "resolved")
        )
        expect(seen.find((a) => a.id === id)?.resolved).toMatchObject({
          operator: "cy",
          reason: "the outcome was resolved as not applied: the terminal's journal has no such sale"
        })
      })
    )

    it.effect(
      "a terminal whose operation waits for it to come back online counts as offline; promtool passes",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const serials = (yield* Stack.Cloud).terminals.map((t) => t.serialNumber)
          const serial = serials[serials.length - 1] ?? ""
          const started = (yield* call("POST", "/v1/operations", {
            body: JSON.stringify(sale("offline-1", serial))
          })).json
          const before = (yield* scrape).split("\n")
          const offlineBefore = Number(
            before.find((l) => l.startsWith('tillflow_terminals{state="offline"}'))?.split(" ")[1]
          )
          yield* store.append(`payment-${started.executionId}`, EventStore.AnyVersion, [
            {
              type: "AttemptNotProcessed",
              data: {
                attempt: 1,
                attemptId: "a1",
                at: 6,
                reason: "DeviceOffline",
                message: "Terminal is offline"
              }
            }
          ])
          const text = yield* scrape
          expect(text.split("\n")).toContain(`tillflow_terminals{state="offline"} ${offlineBefore + 1}`)
          if (promtool || process.env.CI !== undefined) {
            const checked = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" })
            expect(`${checked.stdout}${checked.stderr}`).toBe("")
            expect(checked.status).toBe(0)
          }
        })
    )
  })
})

describe("the alert of a stalled execution", () => {
  const minute = 60_000
  const base = { executionId: "exec-1", workflowName: "TerminalOperation", updatedAt: 1_764_300_000_000 }
  it("is one alert while the stall lasts, a new open one when the execution stalls again", () => {
    const now = base.updatedAt + Monitor.overdueAfterMillis + minute
    const first = Monitor.executionAlertOf({ ...base, status: "running" }, now)
    const later = Monitor.executionAlertOf({ ...base, status: "running" }, now + 30 * minute)
    expect(first?.kind).toBe("overdue")
    expect(later?.id).toBe(first?.id)
    // It moved on, then stalled again: not the alert an operator may already have resolved.
    const again = Monitor.executionAlertOf(
      { ...base, status: "running", updatedAt: base.updatedAt + 20 * minute },
      now + 40 * minute
    )
    expect(again?.id).not.toBe(first?.id)
    const stuck = Monitor.executionAlertOf({ ...base, status: "stuck" }, base.updatedAt)
    const stuckAgain = Monitor.executionAlertOf(
      { ...base, status: "stuck", updatedAt: base.updatedAt + minute },
      now
    )
    expect([stuck?.kind, stuckAgain?.kind]).toEqual(["stuck", "stuck"])
    expect(stuckAgain?.id).not.toBe(stuck?.id)
    // Every id it makes is one the routes take.
    for (const a of [first, again, stuck, stuckAgain])
      expect(Either.isRight(Schema.decodeUnknownEither(Monitor.AlertId)(a?.id))).toBe(true)
    expect(Monitor.executionAlertOf({ ...base, status: "running" }, base.updatedAt + minute)).toBeUndefined()
  })
})
