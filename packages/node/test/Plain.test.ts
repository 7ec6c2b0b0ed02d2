/**
 * The Promise API's shapes: amounts in major units both ways, whatever the currency's
 * exponent; an Effect error's JSON as its class with the same fields; a stored exit as a
 * value or an error.
 */
import { describe, expect, it } from "vitest"
import {
  Defect,
  DeviceBusy,
  DeviceOffline,
  InvalidAmount,
  OperationRejected,
  TerminalUnavailable,
  TillflowError
} from "../src/index.js"
import * as Plain from "../src/internal/Plain.js"

describe("amounts", () => {
  it("are minor units for the library and major units for the caller, by each currency's exponent", () => {
    expect(Plain.toMinor({ amount: "10.50", currency: "EUR" }, "amount")).toEqual({
      amount: "1050",
      currency: "EUR"
    })
    expect(Plain.toMinor({ amount: "100", currency: "jpy" }, "amount")).toEqual({
      amount: "100",
      currency: "JPY"
    })
    expect(Plain.toMinor({ amount: "1.234", currency: "BHD" }, "tip")).toEqual({
      amount: "1234",
      currency: "BHD"
    })
    expect(
      Plain.plain({ total: { amount: "1050", currency: "EUR" }, list: [{ amount: "100", currency: "JPY" }] })
    ).toEqual({ total: { amount: "10.50", currency: "EUR" }, list: [{ amount: "100", currency: "JPY" }] })
    // Only a stored amount's exact shape is converted.
    expect(Plain.plain({ amount: "10.50 EUR", currency: "EUR" })).toEqual({
      amount: "10.50 EUR",
      currency: "EUR"
    })
    expect(Plain.plain({ amount: "5", currency: "EUR", note: "x" })).toEqual({
      amount: "5",
      currency: "EUR",
      note: "x"
    })
  })

  it("refuses a float, a number or a missing currency, saying the form expected", () => {
    expect(() => Plain.toMinor({ amount: 10.5, currency: "EUR" }, "amount")).toThrow(
      'amount must be { amount: "10.50", currency: "EUR" }'
    )
    expect(() => Plain.toMinor({ amount: "1.5", currency: "JPY" }, "amount")).toThrow(InvalidAmount)
    expect(() => Plain.toMinor({ amount: "1e3", currency: "EUR" }, "amount")).toThrow("malformed")
  })
})

describe("errors", () => {
  it("a terminal unavailable because busy or offline is DeviceBusy or DeviceOffline, with every field", () => {
    const busy = Plain.errorOf({
      _tag: "TerminalUnavailable",
      message: "terminal 1 was not available before the deadline (DeviceBusy)",
      serialNumber: "1",
      attempts: 3,
      lastReason: "DeviceBusy"
    })
    expect(busy).toBeInstanceOf(DeviceBusy)
    expect(busy).toBeInstanceOf(TerminalUnavailable)
    expect(busy.code).toBe("TerminalUnavailable")
    expect(busy.toJSON()).toEqual({
      code: "TerminalUnavailable",
      message: "terminal 1 was not available before the deadline (DeviceBusy)",
      serialNumber: "1",
      attempts: 3,
      lastReason: "DeviceBusy"
    })
    const offline = Plain.errorOf({ _tag: "TerminalUnavailable", message: "m", lastReason: "DeviceOffline" })
    expect(offline).toBeInstanceOf(DeviceOffline)
    const queued = Plain.errorOf({
      _tag: "TerminalUnavailable",
      message: "m",
      lastReason: "QueuedPastDeadline"
    })
    expect(queued.constructor).toBe(TerminalUnavailable)
  })

  it("a rejection keeps the service's error, its tag as code; an unknown tag is still a TillflowError", () => {
    const rejected = Plain.errorOf({
      _tag: "OperationRejected",
      message: "refused",
      error: { _tag: "Forbidden", message: "bad key", status: 403, body: "{}" }
    }) as OperationRejected
    expect(rejected).toBeInstanceOf(OperationRejected)
    expect(rejected.error).toEqual({ code: "Forbidden", message: "bad key", status: 403, body: "{}" })
    const unknown = Plain.errorOf({ _tag: "SomethingNew", message: "new", detail: 1 })
    expect(unknown.constructor).toBe(TillflowError)
    expect(unknown.fields).toEqual({ message: "new", detail: 1 })
  })

  it("a stored exit is its value, its first failure, or a Defect for a death", () => {
    expect(Plain.exitOf({ _tag: "Success", value: { hold: { amount: "500", currency: "EUR" } } })).toEqual({
      _tag: "Success",
      value: { hold: { amount: "5.00", currency: "EUR" } }
    })
    const failed = Plain.exitOf({
      _tag: "Failure",
      cause: {
        _tag: "Sequential",
        left: { _tag: "Empty" },
        right: { _tag: "Fail", error: { _tag: "CaptureAlreadyDone", message: "once", originalGuid: "g" } }
      }
    })
    expect(failed._tag === "Failure" && failed.error.code).toBe("CaptureAlreadyDone")
    const died = Plain.exitOf({ _tag: "Failure", cause: { _tag: "Die", defect: { message: "boom" } } })
    expect(died._tag === "Failure" && died.error).toBeInstanceOf(Defect)
  })
})
