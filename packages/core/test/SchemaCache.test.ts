import { describe, expect, it } from "@effect/vitest"
import * as Workflow from "@effect/workflow/Workflow"
import * as WorkflowEngine from "@effect/workflow/WorkflowEngine"
import { Identifiers, Money, OperationOutcome, PaymentProtocol } from "@tillflow/core"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { construct, withCompiledCalls, workflowExecutionId } from "@tillflow/engine/SchemaCache"

class Priced extends Schema.TaggedClass<Priced>()("Priced", {
  price: Money.Money,
  count: Schema.Int,
  label: Schema.optionalWith(Schema.String, { default: () => "none" })
}) {}
const makePriced = construct(Priced)

const Sale = Workflow.make({
  name: "SchemaCacheSale",
  payload: { key: Schema.NonEmptyString, amount: Money.Money, at: Schema.NumberFromString },
  success: Schema.String,
  idempotencyKey: (payload) => payload.key
})
const FastSale = withCompiledCalls(Sale, (payload) => payload.key)

const eur = (minor: bigint) => Money.make(minor, "EUR")

describe("SchemaCache.construct", () => {
  it("builds what the class constructor builds: tag, defaults, fields, class", () => {
    const fast = makePriced({ price: eur(100n), count: 2 })
    const slow = new Priced({ price: eur(100n), count: 2 })
    expect(fast).toBeInstanceOf(Priced)
    expect(fast).toEqual(slow)
    expect(fast._tag).toBe("Priced")
    expect(fast.label).toBe("none")
    expect(makePriced({ price: eur(5n), count: 1, label: "x" }).label).toBe("x")
  })

  it("refuses what the class constructor refuses, with a ParseError, call after call", () => {
    for (let i = 0; i < 3; i++) {
      expect(() => makePriced({ price: eur(100n), count: 1.5 })).toThrow(ParseResult.ParseError)
      expect(() => makePriced({ price: { minorUnits: 1n, currency: "EUR" } as never, count: 1 })).toThrow(
        ParseResult.ParseError
      )
      expect(() => new Priced({ price: eur(100n), count: 1.5 })).toThrow(ParseResult.ParseError)
    }
  })

  it("Money.make still validates its currency and its bigint", () => {
    expect(Money.make(1050n, "EUR")).toEqual(new Money.Money({ minorUnits: 1050n, currency: "EUR" }))
    expect(() => Money.make(1n, "XXX" as never)).toThrow(ParseResult.ParseError)
    expect(() => Money.make(1 as never, "EUR")).toThrow(ParseResult.ParseError)
  })

  it("outcomes read from a result are the classes they were", () => {
    const reading = OperationOutcome.read(
      { finStatus: "AUTHORISED", totalAmount: 100n, currency: "EUR" } as never,
      {
        operation: "sale",
        serialNumber: Identifiers.SerialNumber.make("0821032398"),
        terminalType: Identifiers.TerminalType.make("A920"),
        attempt: 1,
        attemptId: "a1",
        requestedAmount: eur(100n),
        financial: true
      } as never,
      "callback"
    )
    expect(reading._tag).toBe("Settled")
    if (reading._tag === "Settled") {
      expect(reading.outcome).toBeInstanceOf(OperationOutcome.Approved)
      expect(reading.outcome.facts.totalAmount).toEqual(eur(100n))
    }
  })
})

describe("SchemaCache.withCompiledCalls", () => {
  it.effect("gives the execution ids @effect/workflow gives", () =>
    Effect.gen(function* () {
      for (const key of ["k1", "order-42", "é ü 漢字", "x".repeat(200)]) {
        const payload = { key, amount: eur(1n), at: 5 }
        expect(yield* FastSale.executionId(payload)).toBe(yield* Sale.executionId(payload))
        expect(workflowExecutionId("SchemaCacheSale", key)).toBe(yield* Sale.executionId(payload))
      }
      const request = {
        idempotencyKey: "k",
        request: {
          operation: "pingDevice" as const,
          serialNumber: Identifiers.SerialNumber.make("0821032398"),
          terminalType: Identifiers.TerminalType.make("A920")
        },
        requestedAt: 0
      }
      expect(yield* PaymentProtocol.TerminalOperation.executionId(request)).toBe(
        workflowExecutionId("TerminalOperation", "k")
      )
    })
  )

  it.effect("runs the workflow on the engine, validating the payload at every call", () =>
    Effect.gen(function* () {
      const run = (key: string) => FastSale.execute({ key, amount: eur(7n), at: 3 })
      expect(yield* run("a")).toBe("a:7:3")
      expect(yield* run("b")).toBe("b:7:3")
      const id = yield* FastSale.execute({ key: "c", amount: eur(1n), at: 1 }, { discard: true })
      expect(id).toBe(workflowExecutionId("SchemaCacheSale", "c"))
      for (let i = 0; i < 2; i++) {
        const refused = yield* Effect.exit(FastSale.execute({ key: "", amount: eur(1n), at: 1 }))
        expect(refused._tag).toBe("Failure")
        const notMoney = yield* Effect.exit(
          FastSale.execute({ key: "d", amount: { minorUnits: 1n, currency: "EUR" } as never, at: 1 })
        )
        expect(notMoney._tag).toBe("Failure")
      }
    }).pipe(
      Effect.provide(
        Sale.toLayer((payload) => Effect.succeed(`${payload.key}:${payload.amount.minorUnits}:${payload.at}`))
      ),
      Effect.provide(WorkflowEngine.layerMemory)
    )
  )
})
