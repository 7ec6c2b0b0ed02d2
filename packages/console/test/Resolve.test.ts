/**
 * Where the console resolves a request in doubt: from the execution's workflow, its payload
 * and its report, the route the CLI and any caller use — a transaction's for a request on a
 * transaction, an attempt's for a batch close, a MOTO sale or a device command.
 */
import { describe, expect, it } from "vitest"
import { resolvedLine, targetOf, terminalTargetOf } from "../web/resolve.js"

describe("the console's resolve target", () => {
  it("a request on a transaction is resolved on the transaction; batch, device and MOTO sale on their attempt", () => {
    expect(targetOf("Reversal.Reverse", { requestId: "rev-1", originalGuid: "g 1" })).toEqual({
      path: "/v1/transactions/g%201/resolve",
      requestId: "rev-1",
      what: "the Reversal.Reverse request on transaction g 1",
      needsGuid: false
    })
    expect(
      targetOf("Batch.Close", { requestId: "close-1", serialNumber: "T-1", terminalType: "A920" })
    ).toMatchObject({
      path: "/v1/attempts/batch/T-1/resolve",
      requestId: "close-1"
    })
    expect(targetOf("DeviceCommand.Send", { requestId: "r-1", serialNumber: "T-1" })).toMatchObject({
      path: "/v1/attempts/device/T-1/resolve"
    })
    // A MOTO sale's reference: the payload's, else the one its report names (generated).
    expect(targetOf("Moto.Sale", { requestId: "s-1" }, { transactionReference: "ref-9" })).toEqual({
      path: "/v1/attempts/moto-sale/ref-9/resolve",
      requestId: "s-1",
      what: "the MOTO sale ref-9",
      needsGuid: true
    })
  })

  it("nothing to resolve without what the route needs", () => {
    expect(targetOf("Moto.Sale", { requestId: "s-1" })).toBeUndefined()
    expect(targetOf("Batch.Close", { requestId: "close-1" })).toBeUndefined()
    expect(targetOf("Reversal.Reverse", { originalGuid: "g-1" })).toBeUndefined()
    expect(targetOf("Batch.Summary", { requestId: "s", serialNumber: "T-1" })).toBeUndefined()
  })

  it("a terminal operation left unresolved is resolved under its execution id, its guid asked, its amount correctable", () => {
    expect(
      terminalTargetOf({ executionId: "e 1", attributes: { operation: "sale", serialNumber: "T-7" } })
    ).toEqual({
      path: "/v1/attempts/terminal/e%201/resolve",
      requestId: "e 1",
      what: "the sale on terminal T-7",
      needsGuid: true,
      terminal: true
    })
    expect(
      resolvedLine({
        resolution: "applied",
        operator: "ana",
        reason: "the journal shows it",
        at: "2026-03-01T10:00:00.000Z",
        guid: "g-1",
        amount: "27.00",
        currency: "EUR"
      })
    ).toBe(
      "Resolved by ana as applied: transaction g-1 (27.00 EUR) at 2026-03-01 10:00:00 UTC — the journal shows it"
    )
  })
})
