import { describe, expect, it } from "@effect/vitest"
import { CallbackRegistration, TransactionResult } from "@tillflow/core"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"

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

describe("resultDeferredJson", () => {
  // A body as a terminal may send it: an amount as a string, a null and an empty field, a
  // field this version does not know. Its decoded result encodes back to other JSON.
  const body = {
    finStatus: "AUTHORISED",
    totalAmount: "1000",
    currency: "EUR",
    authorisationCode: null,
    cardHolderName: "",
    efttimestamp: 1615374961000,
    recoveredTransaction: "false",
    newField: { nested: [1, "two"] }
  }

  it("resolves the deferred the workflow awaits, which decodes what it stores as the result decoded from the JSON", () => {
    const json = CallbackRegistration.resultDeferredJson("a")
    const awaited = CallbackRegistration.resultDeferred("a")
    expect(json.name).toBe(awaited.name)
    // The engine encodes the exit with the resolving deferred's schema, stores its value as
    // JSON, and decodes it with the awaiting deferred's schema.
    const encoded = Schema.encodeSync(json.exitSchema)(
      Exit.succeed({ result: body, resultHash: "h", receivedAt: 7 })
    )
    if (!Exit.isSuccess(encoded)) throw new Error("expected a success")
    const stored = JSON.parse(JSON.stringify(encoded.value)) as unknown
    const decoded = Schema.decodeUnknownSync(awaited.exitSchema)(Exit.succeed(stored))
    expect(decoded).toStrictEqual(
      Exit.succeed({
        result: Schema.decodeUnknownSync(TransactionResult.TransactionResult)(body),
        resultHash: "h",
        receivedAt: 7
      })
    )
  })
})

describe("resultReceivedEvent", () => {
  it("is what the registry's encode makes of a ResultReceived, with or without finStatus", () =>
    Effect.gen(function* () {
      const data = {
        attemptId: "a",
        resultHash: "h",
        recovered: false,
        result: { finStatus: "AUTHORISED", totalAmount: 1000 },
        redactedFields: ["$.unMaskedPan"],
        receivedAt: 7
      }
      for (const received of [data, { ...data, finStatus: "AUTHORISED" }]) {
        const encoded = yield* CallbackRegistration.events.encode(
          CallbackRegistration.ResultReceived.make(received)
        )
        expect(CallbackRegistration.resultReceivedEvent(received)).toStrictEqual(
          JSON.parse(JSON.stringify(encoded))
        )
      }
    }).pipe(Effect.runSync))
})
