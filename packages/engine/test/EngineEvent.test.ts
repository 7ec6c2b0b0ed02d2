import { describe, expect, it } from "@effect/vitest"
import { EngineEvent, Redaction } from "@tillflow/engine"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

describe("EngineEvent", () => {
  it("an execution stream id never holds 13 digits in a row, so the redaction check never mistakes it for a card number", () => {
    // 4111111111111111 is a Luhn-valid card number; a hex id can contain such a run.
    const executionId = "ab4111111111111111cd"
    const stream = EngineEvent.streamId(executionId)
    expect(stream).toBe("execution-ab411111111111_1111cd")
    // The redaction rule itself also skips digit runs that touch letters (part of a hex
    // token); the broken run keeps the id safe under any stricter rule as well.
    expect(
      Redaction.check({ streamId: `execution-${executionId}`, type: "T", data: {}, metadata: {} })
    ).toEqual(Option.none())
    expect(
      Redaction.check({ streamId: "execution-4111111111111111", type: "T", data: {}, metadata: {} })
    ).toMatchObject(Option.some({ path: "streamId", rule: "CardNumber" }))
    expect(EngineEvent.streamId("4111111111111111")).toBe("execution-411111111111_1111")
    expect(Redaction.check({ streamId: stream, type: "T", data: {}, metadata: {} })).toEqual(Option.none())
    expect(EngineEvent.streamId("3fa2c4e1b0d98a7f")).toBe("execution-3fa2c4e1b0d98a7f")
  })

  it("engine events round-trip through their stored form; other types are domain events", () => {
    const event: EngineEvent.EngineEvent = {
      _tag: "ActivityCompleted",
      seq: 2,
      name: "Charge",
      attempt: 1,
      exit: Exit.succeed({ amount: "1000" })
    }
    const stored = EngineEvent.toStored(event)
    expect(stored).toEqual({
      type: "ActivityCompleted",
      data: { seq: 2, name: "Charge", attempt: 1, exit: { _tag: "Success", value: { amount: "1000" } } }
    })
    const back = EngineEvent.fromStored(JSON.parse(JSON.stringify(stored)))
    expect(Option.map(back, Either.getOrThrow)).toEqual(Option.some(event))
    expect(EngineEvent.fromStored({ type: "PaymentAuthorised", data: { amount: "1000" } })).toEqual(
      Option.none()
    )
    const corrupt = EngineEvent.fromStored({ type: "ActivityCompleted", data: { seq: "two" } })
    expect(Option.map(corrupt, Either.isLeft)).toEqual(Option.some(true))
  })

  it("a successful step's stored form (built without the schema) is what the schema encodes", () => {
    const encode = Schema.encodeSync(EngineEvent.EngineEvent)
    const values = [3, "text", null, true, { amount: "1000", items: [1, { a: null }] }, [], undefined]
    for (const [index, value] of values.entries()) {
      const event: EngineEvent.EngineEvent = {
        _tag: "ActivityCompleted",
        seq: index,
        name: `step-${index}`,
        attempt: 2,
        exit: Exit.succeed(value)
      }
      const { _tag, ...data } = encode(event)
      const stored = EngineEvent.toStored(event)
      expect(stored).toStrictEqual({ type: _tag, data })
      expect(Object.keys(stored.data)).toEqual(Object.keys(data))
    }
    // A step number the schema refuses is still refused.
    expect(() =>
      EngineEvent.toStored({ _tag: "ActivityCompleted", seq: 1.5, name: "x", attempt: 1, exit: Exit.void })
    ).toThrow()
  })

  it("a defect is stored as its name and message, never its stack", () => {
    const stored = EngineEvent.toStored({ _tag: "WorkflowCompleted", exit: Exit.die(new Error("boom")) })
    expect(stored.data).toEqual({
      exit: { _tag: "Failure", cause: { _tag: "Die", defect: { name: "Error", message: "boom" } } }
    })
  })
})

describe("EngineEvent schema versions", () => {
  it("an engine event stored at a schema version newer than this code is refused, not read as the current one", () => {
    const newer = EngineEvent.fromStored({
      type: "ClockFired",
      schemaVersion: EngineEvent.schemaVersion + 1,
      data: { name: "reminder" }
    })
    expect(Option.map(newer, Either.isLeft)).toEqual(Option.some(true))
    const current = EngineEvent.fromStored({
      type: "ClockFired",
      schemaVersion: EngineEvent.schemaVersion,
      data: { name: "reminder" }
    })
    expect(Option.map(current, Either.getOrThrow)).toEqual(
      Option.some({ _tag: "ClockFired", name: "reminder" })
    )
  })
})
