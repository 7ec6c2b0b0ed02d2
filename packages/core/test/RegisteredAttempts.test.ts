import { describe, expect, it } from "@effect/vitest"
import { CallbackRegistration } from "@tillflow/core"

const registration = (attemptId: string): CallbackRegistration.Registration => ({
  attemptId,
  attempt: 1,
  workflowName: "TerminalOperation",
  executionId: `execution-${attemptId}`,
  paymentStream: `payment-${attemptId}`,
  deferredName: CallbackRegistration.resultDeferred(attemptId).name,
  operation: "sale",
  serialNumber: "0821032398",
  delivery: "callback",
  tokenHash: "ab".repeat(32),
  registeredAt: 0
})

describe("RegisteredAttempts", () => {
  it("keeps at most its capacity, forgetting the least recently noted first", () => {
    const attempts = CallbackRegistration.makeRegisteredAttempts(2)
    attempts.note({ registration: registration("a"), version: 1, resultHashes: [] })
    attempts.note({ registration: registration("b"), version: 1, resultHashes: [] })
    // Noting "a" again makes "b" the oldest.
    attempts.note({ registration: registration("a"), version: 2, resultHashes: ["h"] })
    attempts.note({ registration: registration("c"), version: 1, resultHashes: [] })
    expect(attempts.get("b")).toBeUndefined()
    expect(attempts.get("a")).toMatchObject({ version: 2, resultHashes: ["h"] })
    expect(attempts.get("c")?.registration.executionId).toBe("execution-c")
  })

  it("never goes back to an older version of a stream", () => {
    const attempts = CallbackRegistration.makeRegisteredAttempts()
    attempts.note({ registration: registration("a"), version: 3, resultHashes: ["h1", "h2"] })
    attempts.note({ registration: registration("a"), version: 1, resultHashes: [] })
    expect(attempts.get("a")).toMatchObject({ version: 3, resultHashes: ["h1", "h2"] })
  })
})

describe("resultDeferred", () => {
  it("names each attempt's deferred apart and shares one exit schema among them", () => {
    const a = CallbackRegistration.resultDeferred("a")
    const b = CallbackRegistration.resultDeferred("b")
    expect(a.name).toBe("tillflow/result/a")
    expect(b.name).toBe("tillflow/result/b")
    expect(a.exitSchema).toBe(b.exitSchema)
  })
})
