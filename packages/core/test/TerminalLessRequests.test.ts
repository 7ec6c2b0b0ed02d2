/**
 * The strict request bodies of the terminal-less endpoints and device commands: they
 * round-trip, they refuse what the spec does not allow (naming the field), and amounts
 * take the wire form each endpoint wants.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  Batch,
  DeviceCommand,
  Identifiers,
  Money,
  Moto,
  PreAuthorization,
  Reversal,
  TipAdjustment
} from "@tillflow/core"
import { Arbitrary, Either, FastCheck as fc, ParseResult, Schema } from "effect"

const pathsOf = (schema: Schema.Schema<unknown, unknown>, input: unknown): ReadonlyArray<string> => {
  const result = Schema.decodeUnknownEither(schema, { errors: "all" })(input)
  if (Either.isRight(result)) return []
  return ParseResult.ArrayFormatter.formatErrorSync(result.left).map((i) => i.path.map(String).join("."))
}

const erase = <A, I>(schema: Schema.Schema<A, I>) => schema as unknown as Schema.Schema<unknown, unknown>

const expectRefusedNaming = <A, I>(schema: Schema.Schema<A, I>, input: unknown, field: string) => {
  const paths = pathsOf(erase(schema), input)
  expect(paths.length, `expected ${JSON.stringify(input)} to be refused`).toBeGreaterThan(0)
  expect(
    paths.some((p) => p.split(".").includes(field)),
    `no issue names ${field}: ${JSON.stringify(paths)}`
  ).toBe(true)
}

/**
 * encode → decode gives back an equivalent value, and its wire form again the same JSON.
 * `opaque` schemas hold free JSON (compared by reference by Schema.equivalence), so only
 * the wire comparison applies to them.
 */
const roundTrips = <A, I>(name: string, schema: Schema.Schema<A, I>, opaque = false) =>
  it(`${name}: every generated value round-trips through its wire form`, () => {
    const equivalent = Schema.equivalence(schema)
    const toJson = (value: A) => JSON.parse(JSON.stringify(Schema.encodeSync(schema)(value))) as unknown
    fc.assert(
      fc.property(Arbitrary.make(schema), (value) => {
        const wire = toJson(value)
        const back = Schema.decodeUnknownSync(schema)(wire)
        expect(toJson(back)).toEqual(wire)
        if (!opaque) expect(equivalent(value, back)).toBe(true)
      }),
      { numRuns: 100 }
    )
  })

describe("terminal-less requests", () => {
  describe("round trips", () => {
    roundTrips("MotoSaleRequest", Moto.MotoSaleRequest)
    roundTrips("MotoRefundRequest", Moto.MotoRefundRequest)
    roundTrips("MotoReversalRequest", Moto.MotoReversalRequest)
    roundTrips("ReversalRequest", Reversal.ReversalRequest)
    roundTrips("PreAuthorizationIncreaseRequest", PreAuthorization.PreAuthorizationIncreaseRequest)
    roundTrips("PreAuthorizationCaptureRequest", PreAuthorization.PreAuthorizationCaptureRequest)
    roundTrips("TipAdjustment", TipAdjustment.TipAdjustment)
    roundTrips("BatchRequest", Batch.BatchRequest)
    roundTrips("BatchDetailRequest", Batch.BatchDetailRequest, true)
    roundTrips("SetUnattendedMode", DeviceCommand.SetUnattendedMode)
    roundTrips("SetLocale", DeviceCommand.SetLocale)
    roundTrips("SetPasswordProtected", DeviceCommand.SetPasswordProtected)
    roundTrips("Reboot", DeviceCommand.Reboot)
    roundTrips("SetScreenBrightness", DeviceCommand.SetScreenBrightness)
    roundTrips("SetRebootTime", DeviceCommand.SetRebootTime)
  })

  describe("MOTO sale", () => {
    const token = Identifiers.CardToken.make("tok_123")
    it.each([
      [1050n, "EUR", "10.50"],
      [100n, "JPY", "100"],
      [1234n, "BHD", "1.234"]
    ] as const)("sends %s minor units of %s as the major-unit string %j", (minor, currency, wire) => {
      const body = Schema.encodeSync(Moto.MotoSaleRequest)({
        cardToken: token,
        amount: Money.make(minor, currency)
      })
      expect(body).toEqual({ cardToken: "tok_123", amount: wire, currency })
    })
    it("refuses an amount with more decimals than the currency has, naming amount", () => {
      expectRefusedNaming(
        Moto.MotoSaleRequest,
        { cardToken: "t", amount: "10.505", currency: "EUR" },
        "amount"
      )
    })
    it("refuses a zero amount", () => {
      expectRefusedNaming(Moto.MotoSaleRequest, { cardToken: "t", amount: "0.00", currency: "EUR" }, "amount")
    })
    it("refuses a currency that is not a listed 3-letter code", () => {
      expectRefusedNaming(
        Moto.MotoSaleRequest,
        { cardToken: "t", amount: "10.50", currency: "EURO" },
        "currency"
      )
    })
    it("refuses terminal fields: no serial_number on terminal-less endpoints", () => {
      expectRefusedNaming(
        Moto.MotoSaleRequest,
        { cardToken: "t", amount: "10.50", currency: "EUR", serial_number: "1" },
        "serial_number"
      )
    })
    it("needs a card token", () => {
      expectRefusedNaming(Moto.MotoSaleRequest, { amount: "10.50", currency: "EUR" }, "cardToken")
    })
    it("takes billing with its zipCode", () => {
      expectRefusedNaming(
        Moto.MotoSaleRequest,
        { cardToken: "t", amount: "10.50", currency: "EUR", billing: {} },
        "zipCode"
      )
    })
  })

  describe("MOTO refund and reversal", () => {
    it("a refund needs the original guid", () => {
      expectRefusedNaming(Moto.MotoRefundRequest, { amount: "1.00", currency: "EUR" }, "originalGuid")
    })
    it("a reversal carries only the original guid", () => {
      expectRefusedNaming(Moto.MotoReversalRequest, { originalGuid: "g", amount: "1.00" }, "amount")
    })
  })

  describe("reversal", () => {
    it("a full reversal has no amount; a partial one has amount and currency together", () => {
      expect(pathsOf(erase(Reversal.ReversalRequest), { originalGuid: "g" })).toEqual([])
      expect(
        pathsOf(erase(Reversal.ReversalRequest), { originalGuid: "g", amount: "5.00", currency: "USD" })
      ).toEqual([])
      expectRefusedNaming(Reversal.ReversalRequest, { originalGuid: "g", amount: "5.00" }, "currency")
    })
    it("writes a partial amount in major units", () => {
      expect(
        Schema.encodeSync(Reversal.ReversalRequest)({
          originalGuid: Identifiers.Guid.make("g"),
          amount: Money.make(500n, "USD"),
          messageReasonCode: "CUSTOMER_CANCELLATION"
        })
      ).toEqual({
        originalGuid: "g",
        amount: "5.00",
        currency: "USD",
        messageReasonCode: "CUSTOMER_CANCELLATION"
      })
    })
  })

  describe("pre-authorization", () => {
    it('subtract is written as "1" and only when true', () => {
      const encode = Schema.encodeSync(PreAuthorization.PreAuthorizationIncreaseRequest)
      const base = {
        originalGuid: Identifiers.Guid.make("g"),
        increaseAmount: Money.DecimalString.make("25.00")
      }
      expect(
        encode(new PreAuthorization.PreAuthorizationIncreaseRequest({ ...base, subtract: true }))
      ).toEqual({
        originalGuid: "g",
        increaseAmount: "25.00",
        subtract: "1"
      })
      expect(encode(new PreAuthorization.PreAuthorizationIncreaseRequest(base))).toEqual({
        originalGuid: "g",
        increaseAmount: "25.00"
      })
    })
    it.each([
      [{ increaseAmount: "25.00" }, "originalGuid"],
      [{ originalGuid: "g" }, "increaseAmount"],
      [{ originalGuid: "g", increaseAmount: "25,00" }, "increaseAmount"],
      [{ originalGuid: "g", increaseAmount: "25.00", tipAmount: "1e2" }, "tipAmount"],
      [{ originalGuid: "g", increaseAmount: "25.00", subtract: "0" }, "subtract"]
    ])("increase %j is refused naming %s", (input, field) => {
      expectRefusedNaming(PreAuthorization.PreAuthorizationIncreaseRequest, input, field)
    })
    it("capture needs originalGuid and capturedAmount", () => {
      expectRefusedNaming(
        PreAuthorization.PreAuthorizationCaptureRequest,
        { originalGuid: "g" },
        "capturedAmount"
      )
      expectRefusedNaming(
        PreAuthorization.PreAuthorizationCaptureRequest,
        { capturedAmount: "1.00" },
        "originalGuid"
      )
    })
    it("reads a gateway answer leniently, keeping unknown fields", () => {
      const r = Schema.decodeUnknownSync(PreAuthorization.PreAuthorizationResponse)({
        httpStatus: 200,
        capturedAmount: "120.00",
        preAuthorizationCaptureGuid: "cg-1",
        customFields: { entry: [] },
        acquirerTid: "",
        somethingNew: 1
      })
      expect(r).toMatchObject({ httpStatus: 200, capturedAmount: "120.00", somethingNew: 1 })
      expect(r.acquirerTid).toBeUndefined()
    })
  })

  describe("tip adjustment", () => {
    const decode = Schema.decodeUnknownSync(TipAdjustment.TipAdjustment)
    it.each([
      [{ amount: "5.25" }, "5.25"],
      [{ amount: 5.25 }, "5.25"],
      [{ amount: 20 }, "20"],
      [{ amount: "20" }, "20"]
    ])("reads %j as %j and writes the string form", (input, text) => {
      const tip = decode(input)
      expect(tip.amount).toBe(text)
      expect(Schema.encodeSync(TipAdjustment.TipAdjustment)(tip)).toEqual({ amount: text })
    })
    it.each([
      { amount: 1e21 },
      { amount: -1 },
      { amount: "5,25" },
      { amount: "" },
      { amount: Number.NaN },
      {}
    ])("refuses %j naming amount", (input) => {
      expectRefusedNaming(TipAdjustment.TipAdjustment, input, "amount")
    })
  })

  describe("batch", () => {
    it("close/summary take serialNumber, deviceType and batchNumber", () => {
      expectRefusedNaming(Batch.BatchRequest, { serialNumber: "1", deviceType: "PAXA920" }, "batchNumber")
    })
    it("detail accepts a customerReference string or object", () => {
      const base = { serialNumber: "1", deviceType: "PAXA920", batchNumber: "7" }
      expect(pathsOf(erase(Batch.BatchDetailRequest), { ...base, customerReference: "x" })).toEqual([])
      expect(pathsOf(erase(Batch.BatchDetailRequest), { ...base, customerReference: { a: 1 } })).toEqual([])
    })
    it("reads a summary with custom field entries and an empty customerReference object", () => {
      const s = Schema.decodeUnknownSync(Batch.BatchSummaryResponse)({
        batchNumber: "7",
        batchStatus: "CLOSED",
        transactionCount: "3",
        netAmount: "25.50",
        customFields: {
          entry: [
            { key: "salesCount", value: "2" },
            { key: "refundsCount", value: 1 }
          ]
        },
        customerReference: {},
        httpStatus: "200"
      })
      expect(s.customFields?.entry).toEqual([
        { key: "salesCount", value: "2" },
        { key: "refundsCount", value: "1" }
      ])
      expect(s.netAmount).toBe("25.50")
    })
    it("reads a detail response with its lines", () => {
      const d = Schema.decodeUnknownSync(Batch.BatchDetailResponse)({
        batchNumber: "7",
        batchStatus: "CLOSED",
        closedAt: "20230511110113006",
        details: [{ transactionType: "SALE", amount: "10.00", batchDetailElementGuid: "e-1" }]
      })
      expect(d.details?.[0]).toMatchObject({ transactionType: "SALE", amount: "10.00" })
    })
  })

  describe("device commands", () => {
    it.each([
      [
        DeviceCommand.SetScreenBrightness,
        { minimumBrightnessLevel: -1, maximumBrightnessLevel: 50 },
        "minimumBrightnessLevel"
      ],
      [
        DeviceCommand.SetScreenBrightness,
        { minimumBrightnessLevel: 0, maximumBrightnessLevel: 101 },
        "maximumBrightnessLevel"
      ],
      [
        DeviceCommand.SetScreenBrightness,
        { minimumBrightnessLevel: 10.5, maximumBrightnessLevel: 50 },
        "minimumBrightnessLevel"
      ],
      [
        DeviceCommand.SetScreenBrightness,
        { minimumBrightnessLevel: 80, maximumBrightnessLevel: 20 },
        "minimumBrightnessLevel"
      ],
      [DeviceCommand.SetRebootTime, { hour: 24 }, "hour"],
      [DeviceCommand.SetRebootTime, { hour: -1 }, "hour"],
      [DeviceCommand.SetRebootTime, { hour: 1.5 }, "hour"],
      [DeviceCommand.SetLocale, { locale: "en-US" }, "locale"],
      [DeviceCommand.SetLocale, { locale: "EN_us" }, "locale"],
      [DeviceCommand.SetLocale, { locale: "eng_USA" }, "locale"],
      [DeviceCommand.SetUnattendedMode, { status: "true" }, "status"],
      [DeviceCommand.Reboot, {}, "force"]
    ] as const)("%s %j is refused naming %s", (schema, input, field) => {
      expectRefusedNaming(schema as unknown as Schema.Schema<unknown, unknown>, input, field)
    })
    it.each([
      [DeviceCommand.SetScreenBrightness, { minimumBrightnessLevel: 0, maximumBrightnessLevel: 100 }],
      [DeviceCommand.SetRebootTime, { hour: 0 }],
      [DeviceCommand.SetRebootTime, { hour: 23 }],
      [DeviceCommand.SetLocale, { locale: "en_US" }]
    ] as const)("%s %j is accepted", (schema, input) => {
      expect(pathsOf(schema as unknown as Schema.Schema<unknown, unknown>, input)).toEqual([])
    })
  })
})
