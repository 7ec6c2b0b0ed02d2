import { describe, expect, it } from "@effect/vitest"
import { Reconciliation, RemoteError, TransactionResult } from "@tillflow/core"
import * as Schema from "effect/Schema"

const entry = (fields: Record<string, unknown>) =>
  Schema.decodeUnknownSync(TransactionResult.TransactionStatusResult)(fields)
const at = (seconds: number) => ({ attemptedAt: 1_000_000, checkedAt: 1_000_000 + seconds * 1000 })
const notFound = { _tag: "Failed", error: new RemoteError.NotFound({ message: "no", body: "" }) } as const

describe("Reconciliation", () => {
  it("NOT FOUND within 90 s of the attempt: wait, for the rest of the window", () => {
    const reading = Reconciliation.read(notFound, at(30))
    expect(reading._tag).toBe("NotFoundYet")
    if (reading._tag === "NotFoundYet") expect(reading.remaining).toBeDefined()
  })

  it("NOT FOUND after 90 s: not charged", () => {
    expect(Reconciliation.read(notFound, at(91))._tag).toBe("NotCharged")
    expect(Reconciliation.read({ _tag: "Entries", entries: [] }, at(91))._tag).toBe("NotCharged")
  })

  it("an older service's 200 with UNDEFINED reads as NOT FOUND", () => {
    const answer = { _tag: "Entries", entries: [entry({ finStatus: "UNDEFINED" })] } as const
    expect(Reconciliation.read(answer, at(10))._tag).toBe("NotFoundYet")
    expect(Reconciliation.read(answer, at(100))._tag).toBe("NotCharged")
  })

  it("IN_PROGRESS: ask again, whatever the time", () => {
    const answer = { _tag: "Entries", entries: [entry({ finStatus: "IN_PROGRESS" })] } as const
    expect(Reconciliation.read(answer, at(500))._tag).toBe("InProgress")
  })

  it("a final status settles", () => {
    for (const finStatus of [
      "AUTHORISED",
      "DECLINED",
      "CANCELLED",
      "FAILED",
      "PARTIAL_APPROVAL",
      "REFUNDED"
    ]) {
      const reading = Reconciliation.read({ _tag: "Entries", entries: [entry({ finStatus })] }, at(5))
      expect(reading._tag).toBe("Settled")
    }
  })

  it("a 5xx or 403 of the status host leaves the question open", () => {
    const reading = Reconciliation.read(
      { _tag: "Failed", error: new RemoteError.OutcomeUnknown({ message: "502", reason: "ServerError" }) },
      at(500)
    )
    expect(reading._tag).toBe("Unavailable")
  })

  it("a linked operation is the entry that was not there before its attempt", () => {
    const sale = entry({ finStatus: "REFUNDED", efttransactionID: "sale" })
    const refund = entry({ finStatus: "AUTHORISED", efttransactionID: "refund", type: "REFUND" })
    const baseline = Reconciliation.baselineOf([sale])
    const before = Reconciliation.read({ _tag: "Entries", entries: [sale] }, { ...at(100), baseline })
    expect(before._tag).toBe("NotCharged")
    const after = Reconciliation.read({ _tag: "Entries", entries: [sale, refund] }, { ...at(20), baseline })
    expect(after._tag === "Settled" && after.entry.efttransactionID).toBe("refund")
  })
})
