/**
 * What a finished execution is found by: the outcome of its report in an operator's words
 * (a decline is `declined` though its workflow `succeeded`), and the ids its result named.
 */
import { describe, expect, it } from "@effect/vitest"
import { EngineEvent } from "@tillflow/engine"
import * as Schema from "effect/Schema"
import { exitAttributes, lastFourOf, outcomeOf } from "../src/internal/ExitAttributes.js"

/** An exit as `WorkflowCompleted` stores it, decoded as the engine decodes it. */
const stored = Schema.decodeUnknownSync(EngineEvent.ExitJson)

const facts = {
  operation: "sale",
  serialNumber: "0821032398",
  terminalType: "ANDROID",
  attempt: 1,
  attemptId: "a-1",
  finStatus: "DECLINED",
  source: "callback",
  maskedCardNumber: "476173******0119",
  efttransactionID: "01236fc0-8192-11eb-9aca-ad4b0e95f241",
  customerReference: "order-1042"
}

describe("ExitAttributes", () => {
  it("a declined sale is declined (its workflow succeeded), found by guid, customer reference and last four", () => {
    expect(
      exitAttributes("TerminalOperation", stored({ _tag: "Success", value: { _tag: "Declined", facts } }))
    ).toEqual({
      outcome: "declined",
      verdict: "declined",
      guid: "01236fc0-8192-11eb-9aca-ad4b0e95f241",
      customerReference: "order-1042",
      cardLast4: "0119"
    })
  })

  it("an approved or partial sale is approved; a refusal failed; an unresolved one unresolved", () => {
    const approved = { ...facts, finStatus: "AUTHORISED" }
    expect(
      exitAttributes(
        "TerminalOperation",
        stored({ _tag: "Success", value: { _tag: "Approved", facts: approved } })
      ).outcome
    ).toBe("approved")
    expect(outcomeOf("partially-approved")).toBe("approved")
    expect(outcomeOf("cancelled")).toBe("declined")
    expect(outcomeOf("rejected")).toBe("failed")
    expect(outcomeOf("not-charged")).toBe("failed")
    expect(outcomeOf("unresolved")).toBe("unresolved")
    // A terminal-less workflow's refusal, as its exit stores it.
    expect(
      exitAttributes(
        "Reversal.Reverse",
        stored({
          _tag: "Failure",
          cause: { _tag: "Fail", error: { _tag: "OutcomeUnknown", message: "no answer" } }
        })
      )
    ).toEqual({ outcome: "unresolved", verdict: "unresolved" })
  })

  it("the last four digits only when the mask ends in four", () => {
    expect(lastFourOf("************1234")).toBe("1234")
    expect(lastFourOf("4761********")).toBeUndefined()
    expect(lastFourOf(undefined)).toBeUndefined()
  })
})
