import { describe, expect, it } from "@effect/vitest"
import { Stack } from "@tillflow/intake"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { call, layer, type Reply, written } from "./support.js"

const terminal = Effect.map(Stack.Cloud, (cloud) => {
  const first = cloud.terminals[0]
  if (first === undefined) throw new Error("the simulator has no terminal")
  return first
})

const serial = Effect.map(terminal, (first) => first.serialNumber)

const sale = (idempotencyKey: string, serialNumber: string, extra: Record<string, unknown> = {}) => ({
  idempotencyKey,
  request: { operation: "sale", serial_number: serialNumber, amount: "1000", currency: "EUR", ...extra }
})

/** The body of a refusal: JSON, with a tag and a message. */
const expectJsonError = (reply: { readonly contentType: string | null; readonly json: unknown }) => {
  expect(reply.contentType).toMatch(/application\/json/)
  expect(reply.json).toEqual(
    expect.objectContaining({ _tag: expect.any(String), message: expect.any(String) })
  )
}

/** Runs `self` and checks that the store holds no more executions or events after it. */
const writesNothing = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const before = yield* written
    const result = yield* self
    expect(yield* written).toEqual(before)
    return result
  })

/** A refusal (`label` says which) with `status`, a JSON error body, and `mentions` in its text. */
const expectRefused = (label: string, reply: Reply, status: number, mentions: string) => {
  expect({ label, status: reply.status }).toEqual({ label, status })
  expectJsonError(reply)
  expect({ label, text: reply.text }).toEqual({ label, text: expect.stringContaining(mentions) })
}

describe("hostile input", () => {
  it.layer(layer, { timeout: 60_000 })((it) => {
    it.effect(
      "a body above 1 MiB is refused 413 with a JSON error naming the limit, and nothing is written",
      () =>
        writesNothing(
          Effect.gen(function* () {
            const body = JSON.stringify(
              sale("big-body", yield* serial, { padding: "x".repeat(2 * 1024 * 1024) })
            )
            const reply = yield* call("POST", "/v1/operations", { body })
            expect(reply.status).toBe(413)
            expectJsonError(reply)
            expect(reply.json.message).toContain("1 MiB")
          })
        )
    )

    it.effect(
      "a chunked body above 1 MiB is cut off at the limit: nothing is written and the server answers on",
      () =>
        writesNothing(
          Effect.gen(function* () {
            const chunk = new TextEncoder().encode(
              `{"idempotencyKey":"chunked","request":{"padding":"${"x".repeat(64 * 1024)}`
            )
            let sent = 0
            const chunked = new ReadableStream<Uint8Array>({
              pull: (controller) => {
                if (sent > 2 * 1024 * 1024) return controller.close()
                sent += chunk.length
                controller.enqueue(chunk)
              }
            })
            // Without a length the body is refused while it is read, past the limit; the
            // platform then closes the connection, so the caller may see it reset instead.
            const exit = yield* Effect.exit(call("POST", "/v1/operations", { body: chunked }))
            if (Exit.isSuccess(exit)) {
              expect(exit.value.status).toBe(413)
              expectJsonError(exit.value)
            } else {
              expect(String(Cause.squash(exit.cause))).toMatch(/fetch failed/)
            }
            expect((yield* call("GET", "/v1/executions")).status).toBe(200)
          })
        )
    )

    it.effect("a body that is not JSON is refused 400 with a JSON error, and nothing is written", () =>
      writesNothing(
        Effect.gen(function* () {
          for (const body of ['{"idempotencyKey": "k", "request": {', "not json"]) {
            const reply = yield* call("POST", "/v1/operations", { body })
            expect({ body, status: reply.status }).toEqual({ body, status: 400 })
            expectJsonError(reply)
            expect(reply.json.message).toMatch(/JSON/)
          }
        })
      )
    )

    it.effect(
      "a NUL byte or a lone surrogate in a key or an id is refused 400 naming the field, and nothing is written",
      () =>
        writesNothing(
          Effect.gen(function* () {
            const serialNumber = yield* serial
            const cases: ReadonlyArray<readonly [string, string, unknown, string]> = [
              ["/v1/operations", "idempotencyKey", sale("nul\u0000key", serialNumber), "idempotencyKey"],
              ["/v1/operations", "idempotencyKey", sale("lone\ud800", serialNumber), "idempotencyKey"],
              [
                "/v1/operations",
                "request.transactionReference",
                sale("nul-in-reference", serialNumber, { transactionReference: "ab\u0000cd" }),
                "transactionReference"
              ],
              [
                "/v1/operations",
                "a key of request",
                sale("nul-in-a-key", serialNumber, { "bad\u0000key": "x" }),
                "request"
              ],
              [
                "/v1/lifecycle/Batch.Close",
                "payload.requestId",
                { payload: { requestId: "req\udc00", serialNumber } },
                "requestId"
              ],
              [
                "/v1/terminals/" + serialNumber + "/stop",
                "idempotencyKey",
                { serialNumber, idempotencyKey: "s\u0000" },
                "idempotencyKey"
              ]
            ]
            for (const [path, what, payload, field] of cases) {
              const reply = yield* call("POST", path, { body: JSON.stringify(payload) })
              expectRefused(what, reply, 400, field)
            }
          })
        )
    )

    it.effect("a request nested deeper than 32 levels is refused 400 saying so, and nothing is written", () =>
      writesNothing(
        Effect.gen(function* () {
          const serialNumber = yield* serial
          const nest = (depth: number): unknown => (depth === 0 ? "leaf" : { inner: nest(depth - 1) })
          const deep = yield* call("POST", "/v1/operations", {
            body: JSON.stringify(sale("too-deep", serialNumber, { metadata: nest(40) }))
          })
          expect(deep.status).toBe(400)
          expectJsonError(deep)
          expect(deep.text).toContain("deeper than 32 levels")
          const abyss = `{"idempotencyKey":"abyss","request":{"metadata":${"[".repeat(100_000)}${"]".repeat(100_000)}}}`
          const reply = yield* call("POST", "/v1/operations", { body: abyss })
          expect(reply.status).toBe(400)
          expectJsonError(reply)
        })
      )
    )

    it.effect("%00 in a path is refused 400 naming the parameter, and nothing is written", () =>
      writesNothing(
        Effect.gen(function* () {
          const cases: ReadonlyArray<readonly [string, string, string]> = [
            ["GET", "/v1/executions/ab%00cd", "executionId"],
            ["GET", "/v1/executions/ab%00cd/history", "executionId"],
            ["GET", "/v1/audit/timeline/ab%00cd", "reference"],
            ["POST", "/v1/terminals/ab%00cd/stop", "serialNumber"],
            ["POST", "/v1/lifecycle/Batch%00Close", "workflow"]
          ]
          for (const [method, path, field] of cases) {
            const reply = yield* call(
              method,
              path,
              method === "POST" ? { body: JSON.stringify({ payload: {} }) } : {}
            )
            expectRefused(path, reply, 400, field)
          }
        })
      )
    )

    it.effect("401 and 404 are answered with JSON bodies saying what was wrong", () =>
      Effect.gen(function* () {
        const anonymous = yield* call("GET", "/v1/executions", { token: null })
        expect(anonymous.status).toBe(401)
        expectJsonError(anonymous)
        const wrong = yield* call("GET", "/v1/executions", { token: "not-the-token" })
        expect(wrong.status).toBe(401)
        expectJsonError(wrong)
        const unknown = yield* call("GET", "/v1/nowhere")
        expect(unknown.status).toBe(404)
        expectJsonError(unknown)
        expect(unknown.json.message).toContain("/v1/nowhere")
      })
    )

    it.effect(
      "an amount above 12 digits of minor units is refused 400 naming the limit, on a terminal operation and a terminal-less one, and nothing is written",
      () =>
        writesNothing(
          Effect.gen(function* () {
            const { serialNumber, terminalType } = yield* terminal
            // 2^53 + 1: was accepted, charged by the simulator, and its result could not be decoded.
            const huge = "9007199254740993"
            const cases: ReadonlyArray<readonly [string, string, unknown]> = [
              [
                "sale",
                "/v1/operations",
                sale("huge-sale", serialNumber, { terminal_type: terminalType, amount: huge })
              ],
              [
                "preAuthorization, one above the limit",
                "/v1/operations",
                {
                  idempotencyKey: "huge-preauth",
                  request: {
                    operation: "preAuthorization",
                    serial_number: serialNumber,
                    terminal_type: terminalType,
                    amount: "1000000000000",
                    currency: "EUR"
                  }
                }
              ],
              [
                "Moto.Sale",
                "/v1/lifecycle/Moto.Sale",
                {
                  payload: {
                    requestId: "huge-moto",
                    cardToken: "tok_1234",
                    amount: { amount: huge, currency: "EUR" }
                  }
                }
              ],
              [
                "TipAdjustment.Adjust",
                "/v1/lifecycle/TipAdjustment.Adjust",
                {
                  payload: {
                    requestId: "huge-tip",
                    originalGuid: "6a4f1b0e-9d7c-4e2a-8f3b-1c2d3e4f5a6b",
                    tip: { amount: huge, currency: "EUR" }
                  }
                }
              ]
            ]
            for (const [what, path, payload] of cases) {
              const reply = yield* call("POST", path, { body: JSON.stringify(payload) })
              expectRefused(what, reply, 400, "at most 999999999999 minor units")
            }
          })
        )
    )

    it.effect(
      "bad input is refused at the door with 400 naming the field, and nothing is written: a negative MOTO sale, a guid that is no path segment, an unknown serial or terminal type, control characters in keys, a limit out of range",
      () =>
        writesNothing(
          Effect.gen(function* () {
            const { serialNumber, terminalType } = yield* terminal
            const guid = "6a4f1b0e-9d7c-4e2a-8f3b-1c2d3e4f5a6b"
            const cases: ReadonlyArray<readonly [string, string, string, unknown, string]> = [
              [
                "a MOTO sale of -100",
                "POST",
                "/v1/lifecycle/Moto.Sale",
                {
                  payload: {
                    requestId: "moto-negative",
                    cardToken: "tok_1234",
                    amount: { amount: "-100", currency: "EUR" }
                  }
                },
                "payload.amount"
              ],
              [
                "a MOTO sale whose billing is given in a stored form (a removal's digest)",
                "POST",
                "/v1/lifecycle/Moto.Sale",
                {
                  payload: {
                    requestId: "moto-stored-form",
                    cardToken: "tok_1234",
                    amount: { amount: "100", currency: "EUR" },
                    billing: { $personalDigest: "00" }
                  }
                },
                "not an input"
              ],
              [
                "a MOTO refund of 0",
                "POST",
                "/v1/lifecycle/Moto.Refund",
                {
                  payload: {
                    requestId: "refund-zero",
                    originalGuid: guid,
                    amount: { amount: "0", currency: "EUR" }
                  }
                },
                "payload.amount"
              ],
              [
                "a capture of -1",
                "POST",
                "/v1/lifecycle/PreAuthorization.Capture",
                {
                  payload: {
                    requestId: "capture-negative",
                    originalGuid: guid,
                    amount: { amount: "-1", currency: "EUR" }
                  }
                },
                "payload.amount"
              ],
              [
                "a negative tip",
                "POST",
                "/v1/lifecycle/TipAdjustment.Adjust",
                {
                  payload: {
                    requestId: "tip-negative",
                    originalGuid: guid,
                    tip: { amount: "-5", currency: "EUR" }
                  }
                },
                "payload.tip"
              ],
              [
                "a tip adjustment whose originalGuid is ../../x",
                "POST",
                "/v1/lifecycle/TipAdjustment.Adjust",
                {
                  payload: {
                    requestId: "tip-traversal",
                    originalGuid: "../../x",
                    tip: { amount: "100", currency: "EUR" }
                  }
                },
                "payload.originalGuid"
              ],
              [
                "a token whose originalGuid holds a slash",
                "POST",
                "/v1/lifecycle/DeferredTokenization.Tokenize",
                { payload: { requestId: "token-slash", originalGuid: "abc/def" } },
                "payload.originalGuid"
              ],
              [
                "an unknown serial given with a terminal_type",
                "POST",
                "/v1/operations",
                sale("unknown-serial", "9999999999", { terminal_type: terminalType }),
                "request.serial_number"
              ],
              [
                "an unknown terminal_type",
                "POST",
                "/v1/operations",
                sale("unknown-type", serialNumber, { terminal_type: "TOASTER" }),
                "request.terminal_type"
              ],
              [
                "ESC in an idempotency key",
                "POST",
                "/v1/operations",
                sale("key\u001b[31m", serialNumber, { terminal_type: terminalType }),
                "idempotencyKey"
              ],
              [
                "CR LF in an idempotency key",
                "POST",
                "/v1/operations",
                sale("key\r\nX-Injected: 1", serialNumber, { terminal_type: terminalType }),
                "idempotencyKey"
              ],
              [
                "LF in a lifecycle's requestId",
                "POST",
                "/v1/lifecycle/Batch.Close",
                { payload: { requestId: "batch\nclose", serialNumber } },
                "payload.requestId"
              ],
              [
                "ESC in a stop's idempotency key",
                "POST",
                `/v1/terminals/${serialNumber}/stop`,
                { idempotencyKey: "stop\u001b" },
                "idempotencyKey"
              ],
              ["limit=1e9 on the executions", "GET", "/v1/executions?limit=1e9", undefined, "limit"],
              ["limit=1e9 on the events", "GET", "/v1/events?limit=1e9", undefined, "limit"],
              ["limit=1e9 on the entries", "GET", "/v1/audit/entries?limit=1e9", undefined, "limit"],
              ["limit=0 on the executions", "GET", "/v1/executions?limit=0", undefined, "limit"]
            ]
            const replies = yield* Effect.forEach(cases, ([, method, path, body]) =>
              // A request left waiting (for an original that does not exist) is a door left open too.
              call(method, path, {
                timeoutMs: 10_000,
                ...(body === undefined ? {} : { body: JSON.stringify(body) })
              })
            )
            // Every case at once, so that a failure lists every door left open.
            expect(
              replies.map((reply, i) => ({
                what: cases[i]?.[0],
                status: reply.status,
                json: typeof reply.json?.message === "string",
                names: reply.text.includes(cases[i]?.[4] ?? "")
              }))
            ).toEqual(cases.map(([what]) => ({ what, status: 400, json: true, names: true })))
          })
        ),
      240_000
    )

    it.effect("a well-formed start below the limit is accepted and written (the counts above can move)", () =>
      Effect.gen(function* () {
        const { serialNumber, terminalType } = yield* terminal
        const before = yield* written
        // With its type, so that no device lookup (through the simulator) can refuse it.
        const reply = yield* call("POST", "/v1/operations", {
          body: JSON.stringify(sale("a-good-one", serialNumber, { terminal_type: terminalType }))
        })
        expect({ status: reply.status, text: reply.text }).toEqual({ status: 200, text: expect.any(String) })
        // The global log shows an event once every older transaction on the server ended (any
        // database's: another test file's may hold one a moment), so its events are waited for.
        let after = yield* written
        for (let i = 0; i < 100 && after.events <= before.events; i++) {
          // Real time: this suite runs under the test clock.
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
          after = yield* written
        }
        expect({ before, after }).toEqual({
          before,
          after: { executions: before.executions + 1, events: expect.any(Number) }
        })
        expect(after.events).toBeGreaterThan(before.events)
      })
    )
  })
})
