import { describe, expect, it } from "@effect/vitest"
import { CallbackRegistration } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import { call, layer } from "./support.js"

/** The refusals counted for `reason`, as `/metrics` renders them (0 when absent). */
const scraped = (reason: string) =>
  Effect.map(call("GET", "/metrics"), (reply) => {
    const line = reply.text
      .split("\n")
      .find((l) => l.startsWith(`tillflow_callback_refusals_total{reason="${reason}"} `))
    return line === undefined ? 0 : Number(line.split(" ")[1])
  })

describe("the worker's callback route under unauthenticated deliveries", () => {
  it.layer(layer, { timeout: 60_000 })((it) => {
    it.effect(
      "every refusal is counted on /metrics by reason; only a bounded sample is written to the log",
      () =>
        Effect.gen(function* () {
          const before = yield* scraped("UnknownAttempt")
          for (let i = 0; i < 30; i++) {
            const attemptId = `6f9619ff-8b86-4d01-b42d-${(0x200000000000 + i).toString(16)}`
            const reply = yield* call("POST", `/callbacks/${attemptId}`, { body: "{}", token: null })
            expect(reply.status).toBe(401)
          }
          expect((yield* scraped("UnknownAttempt")) - before).toBe(30)
          const store = yield* EventStore.EventStore
          const written = yield* Effect.orDie(store.readStream(CallbackRegistration.securityStream))
          expect(written.length).toBe(10)
        })
    )
  })
})
