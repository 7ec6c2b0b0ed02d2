/**
 * Where the console resolves a request in doubt: from the execution's workflow, its payload
 * and its report, the route the CLI and any caller use — a transaction's for a request on a
 * transaction, an attempt's for a batch close, a MOTO sale or a device command.
 */
import { describe, expect, it } from "vitest"
import { targetOf } from "../web/resolve.js"

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
})
