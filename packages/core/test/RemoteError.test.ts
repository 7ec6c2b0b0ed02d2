import { describe, expect, it } from "@effect/vitest"
import { RemoteError } from "@tillflow/core"
import { FastCheck as fc } from "effect"

const numbered = (n: number | string, message = "Device busy") =>
  JSON.stringify({ error: { statusCode: 400, name: "BadRequestError", message: { error: n, message } } })

const business = (fields: Record<string, unknown>) =>
  JSON.stringify({ error: { statusCode: 400, name: "BadRequestError", ...fields } })

describe("RemoteError.fromResponse", () => {
  it.each([
    ["1001 → DeviceBusy", 400, numbered(1001), "DeviceBusy"],
    ["1002 → DeviceOffline", 400, numbered(1002, "Device offline"), "DeviceOffline"],
    ["1003 → CancelNotAllowed", 400, numbered(1003, "Cancel not allowed"), "CancelNotAllowed"],
    ["1001 given as a string", 400, numbered("1001"), "DeviceBusy"],
    [
      "bad tip-adjustment guid (string message)",
      400,
      business({ message: "Invalid guid [not-a-guid]" }),
      "GatewayRejected"
    ],
    [
      "business error with code and details",
      400,
      business({
        message: "Refund amount exceeds sale",
        code: "E4005",
        details: { errorGuid: "eg-1", errorCode: "4005", description: "Refund above sale", httpStatus: "400" }
      }),
      "GatewayRejected"
    ],
    ["code 3107", 400, business({ message: "CVV required", code: 3107 }), "SecurityCodeRequired"],
    [
      "details.errorCode 3107",
      400,
      business({ message: "x", details: { errorCode: "3107", description: "Security code required" } }),
      "SecurityCodeRequired"
    ],
    ["3107 under a 422", 422, business({ message: "x", code: "3107" }), "SecurityCodeRequired"],
    ["403 with an empty body", 403, "", "Forbidden"],
    ["401 of older status endpoints", 401, "Unauthorized", "Forbidden"],
    ["404 with text", 404, "Not Found", "NotFound"],
    [
      "422 VALIDATION_FAILED",
      422,
      JSON.stringify({
        error: { statusCode: 422, name: "UnprocessableEntityError", message: "VALIDATION_FAILED" }
      }),
      "ValidationFailed"
    ],
    ["500 with an HTML page", 500, "<html><body>Internal Server Error</body></html>", "OutcomeUnknown"],
    ["502", 502, "Bad Gateway", "OutcomeUnknown"],
    ["503 empty", 503, "", "OutcomeUnknown"],
    ["504", 504, "", "OutcomeUnknown"],
    ["408", 408, "", "OutcomeUnknown"],
    ["1001 under a 5xx is not a definite no", 500, numbered(1001), "OutcomeUnknown"],
    ["400 that is not JSON", 400, "Bad Request", "GatewayRejected"],
    ["400 with a JSON array", 400, "[1,2]", "GatewayRejected"],
    ["409", 409, "{}", "GatewayRejected"]
  ] as const)("%s", (_, status, body, tag) => {
    const error = RemoteError.fromResponse(status, body)
    expect(error._tag).toBe(tag)
    expect(error.body).toBe(body)
    expect(error.message.length).toBeGreaterThan(0)
    expect(RemoteError.statusOf(error)).toBe(status)
  })

  it("carries what the business body says", () => {
    const body = business({
      message: "Refund amount exceeds sale",
      code: "E4005",
      details: { errorGuid: "eg-1", errorCode: "4005", description: "Refund above sale", httpStatus: "400" }
    })
    const error = RemoteError.fromResponse(400, body)
    expect(error).toMatchObject({
      _tag: "GatewayRejected",
      code: "E4005",
      errorCode: "4005",
      errorGuid: "eg-1"
    })
    expect(error.message).toContain("Refund amount exceeds sale")
  })

  it("puts the body's message into the human message", () => {
    expect(RemoteError.fromResponse(400, numbered(1001, "Terminal busy with a sale")).message).toContain(
      "Terminal busy with a sale"
    )
    expect(RemoteError.fromResponse(400, business({ message: "Invalid guid [x]" })).message).toContain(
      "Invalid guid"
    )
  })

  it("marks only 1001 and 1002 as definitely not processed", () => {
    expect(RemoteError.isNotProcessed(RemoteError.fromResponse(400, numbered(1001)))).toBe(true)
    expect(RemoteError.isNotProcessed(RemoteError.fromResponse(400, numbered(1002)))).toBe(true)
    expect(RemoteError.isNotProcessed(RemoteError.fromResponse(400, numbered(1003)))).toBe(false)
    expect(RemoteError.isNotProcessed(RemoteError.fromResponse(503, ""))).toBe(false)
  })

  it("never fails, whatever the status and body", () => {
    fc.assert(
      fc.property(fc.integer({ min: 400, max: 599 }), fc.oneof(fc.string(), fc.json()), (status, body) => {
        const error = RemoteError.fromResponse(status, body)
        expect(error.body).toBe(body)
        expect(RemoteError.statusOf(error)).toBe(status)
      })
    )
  })

  it("a canonical wire body written by a server maps back to the same error", () => {
    const make = (message: string): ReadonlyArray<RemoteError.RemoteError> => [
      new RemoteError.DeviceBusy({ message, body: "" }),
      new RemoteError.DeviceOffline({ message, body: "" }),
      new RemoteError.CancelNotAllowed({ message, body: "" }),
      new RemoteError.SecurityCodeRequired({ message, status: 400, body: "" }),
      new RemoteError.ValidationFailed({ message, body: "" }),
      new RemoteError.Forbidden({ message, status: 403, body: "" }),
      new RemoteError.Forbidden({ message, status: 401, body: "" }),
      new RemoteError.NotFound({ message, body: "" }),
      new RemoteError.GatewayRejected({ message, status: 400, body: "" }),
      new RemoteError.GatewayRejected({ message, status: 409, body: "" }),
      new RemoteError.OutcomeUnknown({ message, reason: "ServerError", status: 503 })
    ]
    fc.assert(
      fc.property(fc.string(), (message) => {
        for (const error of make(message)) {
          const rebuilt = RemoteError.fromResponse(RemoteError.statusOf(error), RemoteError.toWireBody(error))
          expect(rebuilt._tag).toBe(error._tag)
          expect(RemoteError.statusOf(rebuilt)).toBe(RemoteError.statusOf(error))
        }
      }),
      { numRuns: 100 }
    )
  })

  it("a kept raw body is what a server sends again", () => {
    fc.assert(
      fc.property(fc.integer({ min: 400, max: 599 }), fc.string({ minLength: 1 }), (status, body) => {
        expect(RemoteError.toWireBody(RemoteError.fromResponse(status, body))).toBe(body)
      })
    )
  })

  it("writes the service's shapes for canonical errors", () => {
    const busy = new RemoteError.DeviceBusy({ message: "busy", body: "" })
    expect(JSON.parse(RemoteError.toWireBody(busy))).toEqual({
      error: { statusCode: 400, name: "BadRequestError", message: { error: 1001, message: "busy" } }
    })
    const cvv = new RemoteError.SecurityCodeRequired({ message: "cvv", status: 400, body: "" })
    expect(RemoteError.fromResponse(400, RemoteError.toWireBody(cvv))._tag).toBe("SecurityCodeRequired")
    const rejected = new RemoteError.GatewayRejected({
      message: "no",
      status: 400,
      code: "E1",
      errorGuid: "g",
      body: ""
    })
    expect(RemoteError.fromResponse(400, RemoteError.toWireBody(rejected))).toMatchObject({
      _tag: "GatewayRejected",
      code: "E1",
      errorGuid: "g"
    })
  })
})
