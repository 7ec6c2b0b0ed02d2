import { describe, expect, it } from "@effect/vitest"
import { Identifiers, Money, TransactionRequest } from "@tillflow/core"
import { Arbitrary, Either, FastCheck as fc, Option, ParseResult, Redacted, Schema } from "effect"

type Wire = Record<string, unknown>

const decode = Schema.decodeUnknownEither(TransactionRequest.TransactionRequest, { errors: "all" })

/** Issues of a refused body, as path + message pairs. */
const issues = (input: unknown): ReadonlyArray<{ readonly path: string; readonly message: string }> => {
  const result = decode(input)
  if (Either.isRight(result)) return []
  return ParseResult.ArrayFormatter.formatErrorSync(result.left).map((i) => ({
    path: i.path.map(String).join("."),
    message: i.message
  }))
}

const expectRefusedNaming = (input: unknown, field: string) => {
  const found = issues(input)
  expect(found.length, `expected ${JSON.stringify(input)} to be refused`).toBeGreaterThan(0)
  expect(
    found.some((i) => i.path.split(".").includes(field)),
    `no issue names ${field}: ${JSON.stringify(found)}`
  ).toBe(true)
}

const REF = "6f1d1c2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f"
const base = { serial_number: "0821032398", terminal_type: "PAXA920" }

/** The smallest valid body of each operation: every key here is required. */
const minimal: Record<string, Wire> = {
  sale: { operation: "sale", ...base, amount: "1000", currency: "EUR", transactionReference: REF },
  saleAndTokenizeCard: {
    operation: "saleAndTokenizeCard",
    ...base,
    amount: "1000",
    currency: "EUR",
    transactionReference: REF
  },
  refund: { operation: "refund", ...base, amount: "1000", currency: "EUR", transactionReference: REF },
  linkedRefund: {
    operation: "refund",
    ...base,
    amount: "1000",
    currency: "EUR",
    originalTransactionId: "g-1"
  },
  refundReversal: {
    operation: "refundReversal",
    ...base,
    amount: "1000",
    currency: "EUR",
    originalTransactionId: "g-1"
  },
  saleReversal: {
    operation: "saleReversal",
    ...base,
    amount: "1000",
    currency: "EUR",
    originalTransactionId: "g-1"
  },
  tokenizeCard: { operation: "tokenizeCard", ...base },
  printReceipt: { operation: "printReceipt", ...base, receipt: "<html><body>receipt</body></html>" },
  cardPan: { operation: "cardPan", ...base },
  pingDevice: { operation: "pingDevice", ...base },
  stopCurrentTransaction: { operation: "stopCurrentTransaction", ...base },
  moToSale: { operation: "moToSale", ...base, amount: "1000", currency: "EUR", transactionReference: REF },
  moToRefund: {
    operation: "moToRefund",
    ...base,
    amount: "1000",
    currency: "EUR",
    transactionReference: REF
  },
  linkedMoToRefund: {
    operation: "moToRefund",
    ...base,
    amount: "1000",
    currency: "EUR",
    originalTransactionId: "g-1"
  },
  moToReversal: { operation: "moToReversal", ...base, originalTransactionId: "g-1" },
  moToPreAuthorization: {
    operation: "moToPreAuthorization",
    ...base,
    amount: "1000",
    currency: "EUR",
    transactionReference: REF
  },
  preAuthorization: {
    operation: "preAuthorization",
    ...base,
    amount: "1000",
    currency: "EUR",
    transactionReference: REF
  },
  preAuthorizationIncrease: {
    operation: "preAuthorizationIncrease",
    ...base,
    amount: "-250",
    currency: "EUR",
    originalTransactionId: "g-1"
  },
  preAuthorizationCapture: { operation: "preAuthorizationCapture", ...base, originalTransactionId: "g-1" },
  preAuthorizationReversal: { operation: "preAuthorizationReversal", ...base, originalTransactionId: "g-1" }
}

const common = [
  "operation",
  "serial_number",
  "terminal_type",
  "customerReference",
  "metadata",
  "callbackUrl",
  "token"
]
const funding = ["bypassOptions", "merchantAuth"]

/** The optional and required fields each operation may carry (spec 2.2), beyond `common`. */
const allowed: Record<string, ReadonlyArray<string>> = {
  sale: [
    "amount",
    "currency",
    "transactionReference",
    "tipConfiguration",
    ...funding,
    "duplicate_check",
    "moneyRemittanceOptions",
    "tokenize",
    "billing"
  ],
  saleAndTokenizeCard: [
    "amount",
    "currency",
    "transactionReference",
    "tipConfiguration",
    ...funding,
    "duplicate_check",
    "moneyRemittanceOptions",
    "tokenize",
    "billing"
  ],
  refund: [
    "amount",
    "currency",
    "transactionReference",
    ...funding,
    "duplicate_check",
    "moneyRemittanceOptions",
    "tokenize"
  ],
  linkedRefund: [
    "amount",
    "currency",
    "originalTransactionId",
    ...funding,
    "duplicate_check",
    "moneyRemittanceOptions",
    "tokenize"
  ],
  refundReversal: [
    "amount",
    "currency",
    "originalTransactionId",
    "duplicate_check",
    "moneyRemittanceOptions",
    "tokenize",
    "cardPresent"
  ],
  saleReversal: [
    "amount",
    "currency",
    "originalTransactionId",
    "duplicate_check",
    "moneyRemittanceOptions",
    "tokenize",
    "cardPresent"
  ],
  tokenizeCard: [],
  printReceipt: ["receipt"],
  cardPan: [],
  pingDevice: ["returnDeviceInfo"],
  stopCurrentTransaction: [],
  moToSale: [
    "amount",
    "currency",
    "transactionReference",
    "duplicate_check",
    "moneyRemittanceOptions",
    "tokenize",
    "billing"
  ],
  moToRefund: [
    "amount",
    "currency",
    "transactionReference",
    "duplicate_check",
    "moneyRemittanceOptions",
    "tokenize"
  ],
  linkedMoToRefund: [
    "amount",
    "currency",
    "originalTransactionId",
    "duplicate_check",
    "moneyRemittanceOptions",
    "tokenize"
  ],
  // The spec supports moneyRemittanceOptions on "reversals", moToReversal included.
  moToReversal: [
    "amount",
    "currency",
    "originalTransactionId",
    "duplicate_check",
    "moneyRemittanceOptions",
    "tokenize"
  ],
  // tokenize has no "only with" rule in the spec: every operation that moves money may carry it.
  moToPreAuthorization: ["amount", "currency", "transactionReference", "tokenize"],
  preAuthorization: ["amount", "currency", "transactionReference", "tokenize"],
  preAuthorizationIncrease: ["amount", "currency", "originalTransactionId", "tokenize"],
  preAuthorizationCapture: ["amount", "currency", "originalTransactionId", "tokenize"],
  preAuthorizationReversal: ["originalTransactionId", "tokenize"]
}

/** A valid value of every optional field, to add it where it is not allowed. */
const sampleValue: Record<string, unknown> = {
  amount: "1000",
  currency: "EUR",
  transactionReference: REF,
  originalTransactionId: "g-1",
  receipt: "https://example.com/receipt.html",
  tipConfiguration: { tipPercentages: [10, 15] },
  bypassOptions: { pinBypass: true },
  merchantAuth: [{ externalId: "ext-1" }],
  duplicate_check: false,
  moneyRemittanceOptions: { fullName: "Lovelace", countryCode: "GBR" },
  tokenize: true,
  cardPresent: true,
  billing: { zipCode: "10115" },
  returnDeviceInfo: true
}
const optionalFields = Object.keys(sampleValue)

describe("TransactionRequest", () => {
  describe("each operation's smallest valid body decodes and every one of its fields is required", () => {
    for (const [name, body] of Object.entries(minimal)) {
      it(`${name}: accepted`, () => {
        expect(issues(body)).toEqual([])
      })
      for (const field of Object.keys(body).filter((k) => k !== "operation")) {
        it(`${name}: without ${field} → refused naming ${field}`, () => {
          const { [field]: _dropped, ...rest } = body
          expectRefusedNaming(rest, field)
        })
      }
    }
  })

  describe("a field the operation does not allow is refused, naming it", () => {
    for (const [name, body] of Object.entries(minimal)) {
      const permitted = new Set([...common, ...(allowed[name] ?? [])])
      for (const field of optionalFields.filter((f) => !permitted.has(f))) {
        it(`${name} + ${field} → refused`, () => {
          const extra: Wire = { [field]: sampleValue[field] }
          if (field === "amount") extra.currency = "EUR"
          if (field === "currency") extra.amount = "1000"
          expectRefusedNaming({ ...body, ...extra }, field)
        })
      }
      for (const field of optionalFields.filter((f) => permitted.has(f) && !(f in body))) {
        it(`${name} + ${field} → accepted`, () => {
          const extra: Wire = { [field]: sampleValue[field] }
          if (field === "amount") extra.currency = "EUR"
          if (field === "currency") extra.amount = "1000"
          expect(issues({ ...body, ...extra })).toEqual([])
        })
      }
    }
  })

  describe("delivery: token whenever callbackUrl is present", () => {
    it("callbackUrl without token is refused naming token", () => {
      expectRefusedNaming({ ...minimal.sale, callbackUrl: "https://pos.example.com/cb" }, "token")
    })
    it("token without callbackUrl is refused naming callbackUrl", () => {
      expectRefusedNaming({ ...minimal.sale, token: "s3cret" }, "callbackUrl")
    })
    it("callbackUrl must be an absolute http(s) URL", () => {
      expectRefusedNaming({ ...minimal.sale, callbackUrl: "pos.example.com/cb", token: "s" }, "callbackUrl")
    })
    it("both become a typed delivery whose token is redacted, and go back to flat fields on the wire", () => {
      const wire = { ...minimal.pingDevice, callbackUrl: "https://pos.example.com/cb", token: "s3cret" }
      const request = Schema.decodeUnknownSync(TransactionRequest.TransactionRequest)(wire)
      expect(request.delivery?.callbackUrl).toBe("https://pos.example.com/cb")
      expect(String(request.delivery?.token)).toBe("<redacted>")
      expect(JSON.stringify(request)).not.toContain("s3cret")
      expect(request.delivery && Redacted.value(request.delivery.token)).toBe("s3cret")
      expect(Schema.encodeSync(TransactionRequest.TransactionRequest)(request)).toEqual(wire)
    })
  })

  describe("amounts", () => {
    it.each(["10.00", "1e3", "-0", " 1", "", "0", "-5", "01"])(
      "sale amount %j is refused naming amount",
      (amount) => {
        expectRefusedNaming({ ...minimal.sale, amount }, "amount")
      }
    )
    it("a currency outside the list is refused naming currency", () => {
      expectRefusedNaming({ ...minimal.sale, currency: "CLF" }, "currency")
    })
    it("a preAuthorizationIncrease may be negative but not zero", () => {
      expect(issues({ ...minimal.preAuthorizationIncrease, amount: "-250" })).toEqual([])
      expectRefusedNaming({ ...minimal.preAuthorizationIncrease, amount: "0" }, "amount")
    })
    it("an optional amount comes with its currency", () => {
      expectRefusedNaming({ ...minimal.preAuthorizationCapture, amount: "500" }, "currency")
      expect(issues({ ...minimal.preAuthorizationCapture, amount: "500", currency: "EUR" })).toEqual([])
    })
    it("reads the wire amount as Money in minor units", () => {
      const request = Schema.decodeUnknownSync(TransactionRequest.TransactionRequest)({
        ...minimal.sale,
        amount: "1000",
        currency: "JPY"
      })
      expect(request.operation === "sale" && request.amount).toEqual(Money.make(1000n, "JPY"))
    })
  })

  describe("transactionReference", () => {
    it.each([
      ["6f1d1c2e-3a4b-1c5d-8e6f-7a8b9c0d1e2f", "a UUID v1"],
      ["00000000-0000-0000-0000-000000000000", "the nil UUID"],
      ["6f1d1c2e3a4b4c5d8e6f7a8b9c0d1e2f", "no dashes"],
      ["not-a-uuid", "garbage"]
    ])("%s (%s) is refused", (reference) => {
      expectRefusedNaming({ ...minimal.sale, transactionReference: reference }, "transactionReference")
    })
    it("upper case is accepted and normalised to lower case", () => {
      const request = Schema.decodeUnknownSync(TransactionRequest.TransactionRequest)({
        ...minimal.sale,
        transactionReference: REF.toUpperCase()
      })
      expect(Option.getOrUndefined(TransactionRequest.transactionReference(request))).toBe(REF)
    })
  })

  describe("metadata", () => {
    const withMeta = (value: string) => ({ ...minimal.sale, metadata: { metadata3: value } })
    it.each([..."aZ09-()@:%_\\+.~#?&/={}\"',"])("allows %j", (char) => {
      expect(issues(withMeta(`x${char}y`))).toEqual([])
    })
    it.each([" ", "!", "$", "^", "*", "[", "]", "<", ">", "|", ";", "`", "é", "\t", "\n", "€"])(
      "refuses %j naming the metadata field",
      (char) => {
        expectRefusedNaming(withMeta(`x${char}y`), "metadata3")
      }
    )
    it("250 characters are allowed, 251 refused", () => {
      expect(issues(withMeta("a".repeat(250)))).toEqual([])
      const found = issues(withMeta("a".repeat(251)))
      expect(found.some((i) => i.path.endsWith("metadata3") && i.message.includes("250"))).toBe(true)
    })
    it("an unknown metadata key is refused", () => {
      expectRefusedNaming({ ...minimal.sale, metadata: { metadata6: "x" } }, "metadata6")
    })
  })

  describe("nested objects", () => {
    it.each([
      ["digits", { fullName: "Ada 2", countryCode: "GBR" }, "fullName"],
      ["punctuation", { fullName: "O'Brien", countryCode: "IRL" }, "fullName"],
      ["a leading space", { fullName: " Ada", countryCode: "GBR" }, "fullName"],
      ["two spaces in a row", { fullName: "Ada  Lovelace", countryCode: "GBR" }, "fullName"],
      ["only a space", { fullName: " ", countryCode: "GBR" }, "fullName"],
      ["two-letter country", { fullName: "Ada", countryCode: "GB" }, "countryCode"],
      ["lower-case country", { fullName: "Ada", countryCode: "gbr" }, "countryCode"],
      ["missing fullName", { countryCode: "GBR" }, "fullName"]
    ])("moneyRemittanceOptions with %s is refused naming %s", (_, options, field) => {
      expectRefusedNaming({ ...minimal.sale, moneyRemittanceOptions: options }, field)
    })
    it("moneyRemittanceOptions.fullName accepts names of letters separated by single spaces, as the service's own examples send them", () => {
      // The spec says "letters only"; its examples send "John Doe": letters rule out digits and punctuation, not the space between names.
      expect(
        issues({ ...minimal.sale, moneyRemittanceOptions: { fullName: "John Doe", countryCode: "USA" } })
      ).toEqual([])
      expect(
        issues({
          ...minimal.sale,
          moneyRemittanceOptions: { fullName: "Ana María López", countryCode: "ESP" }
        })
      ).toEqual([])
    })
    it("moneyRemittanceOptions.fullName accepts letters of any alphabet (letters only)", () => {
      expect(
        issues({ ...minimal.sale, moneyRemittanceOptions: { fullName: "JoséÑúñez", countryCode: "ESP" } })
      ).toEqual([])
    })
    it("billing needs zipCode", () => {
      expectRefusedNaming({ ...minimal.sale, billing: { address: "1 Main St" } }, "zipCode")
      expect(issues({ ...minimal.sale, billing: { zipCode: "10115", address: "1 Main St" } })).toEqual([])
    })
    it("tipConfiguration accepts percentages over 100 (the spec sets no upper bound) but not 0 or less", () => {
      expect(issues({ ...minimal.sale, tipConfiguration: { tipPercentages: [10, 150, 250.5] } })).toEqual([])
      expectRefusedNaming({ ...minimal.sale, tipConfiguration: { tipPercentages: [0] } }, "tipPercentages")
      expectRefusedNaming({ ...minimal.sale, tipConfiguration: { tipPercentages: [-5] } }, "tipPercentages")
    })
    it("tipConfiguration needs at least one percentage", () => {
      expectRefusedNaming({ ...minimal.sale, tipConfiguration: { tipPercentages: [] } }, "tipPercentages")
      expectRefusedNaming({ ...minimal.sale, tipConfiguration: { headerName: "Tip" } }, "tipPercentages")
    })
    it("tipConfiguration.baseAmount is minor units", () => {
      expectRefusedNaming(
        { ...minimal.sale, tipConfiguration: { tipPercentages: [10], baseAmount: "10.00" } },
        "baseAmount"
      )
    })
    it("with several credentials each names its acquirer", () => {
      expectRefusedNaming(
        { ...minimal.sale, merchantAuth: [{ acquirer: "SANDBOX", mid: "1" }, { mid: "2" }] },
        "acquirer"
      )
      expect(
        issues({
          ...minimal.sale,
          merchantAuth: [
            { acquirer: "SANDBOX", mid: "1" },
            { acquirer: "OTHER_ACQ", mid: "2" }
          ]
        })
      ).toEqual([])
    })
    it("a credential with externalId beside mid, tid and mcc is accepted as the service's examples send it (externalId is the lookup)", () => {
      expect(
        issues({
          ...minimal.sale,
          merchantAuth: [{ externalId: "ext-1", mid: "MID1", tid: "TID1", mcc: "5999" }]
        })
      ).toEqual([])
    })
    it("a credential names something: externalId or at least one of mid, tid, mcc", () => {
      expectRefusedNaming({ ...minimal.sale, merchantAuth: [{ acquirer: "SANDBOX" }] }, "externalId")
    })
  })

  describe("properties", () => {
    const erasedVariants = TransactionRequest.variants as unknown as ReadonlyArray<
      Schema.Schema<unknown, Wire>
    >
    for (const variant of erasedVariants) {
      const name = String(variant.ast.annotations[Symbol.for("effect/annotation/Identifier")] ?? "variant")
      it(`${name}: every generated request round-trips through its wire form`, () => {
        const equivalent = Schema.equivalence(variant)
        const encode = Schema.encodeSync(variant)
        const decodeBack = Schema.decodeUnknownSync(TransactionRequest.TransactionRequest)
        fc.assert(
          fc.property(Arbitrary.make(variant), (request) => {
            const wire = encode(request)
            expect(JSON.parse(JSON.stringify(wire))).toEqual(wire)
            const back = decodeBack(JSON.parse(JSON.stringify(wire)))
            expect(equivalent(request, back)).toBe(true)
          }),
          { numRuns: 50 }
        )
      })
    }

    it("generated invalid requests are refused with an issue naming the broken field", () => {
      const erased = TransactionRequest.variants as unknown as ReadonlyArray<Schema.Schema<unknown, Wire>>
      const anyRequest = fc.oneof(...erased.map((v) => Arbitrary.make(v).map((r) => Schema.encodeSync(v)(r))))
      const breakage = fc.constantFrom(
        "dropOperationField",
        "badAmount",
        "badReference",
        "badMetadata",
        "forbiddenField",
        "badSerial"
      )
      fc.assert(
        fc.property(anyRequest, breakage, fc.nat(), (wire, how, pick) => {
          const body: Wire = { ...wire }
          let field = ""
          switch (how) {
            case "dropOperationField": {
              const keys = [
                "serial_number",
                "terminal_type",
                ...Object.keys(minimal[labelOf(body)] ?? {})
              ].filter((k) => k !== "operation")
              field = keys[pick % keys.length] ?? "serial_number"
              delete body[field]
              break
            }
            case "badAmount":
              if (!("amount" in body)) return
              field = "amount"
              body.amount = "12.345"
              break
            case "badReference":
              if (!("transactionReference" in body)) return
              field = "transactionReference"
              body.transactionReference = "1234"
              break
            case "badMetadata":
              field = "metadata1"
              body.metadata = { metadata1: "semi;colon" }
              break
            case "forbiddenField": {
              const permitted = new Set([...common, ...(allowed[labelOf(body)] ?? [])])
              const candidates = optionalFields.filter(
                (f) => !permitted.has(f) && f !== "amount" && f !== "currency"
              )
              if (candidates.length === 0) return
              field = candidates[pick % candidates.length] ?? "tokenize"
              body[field] = sampleValue[field]
              break
            }
            case "badSerial":
              field = "serial_number"
              body.serial_number = ""
              break
          }
          expectRefusedNaming(body, field)
        }),
        { numRuns: 300 }
      )
    })
  })

  it("withoutSecrets keeps the wire body but hides the callback token", () => {
    const request = Schema.decodeUnknownSync(TransactionRequest.TransactionRequest)({
      ...minimal.sale,
      callbackUrl: "https://pos.example.com/cb",
      token: "s3cret"
    })
    const loggable = TransactionRequest.withoutSecrets(request)
    expect(JSON.stringify(loggable)).not.toContain("s3cret")
    expect(loggable).toMatchObject({ operation: "sale", amount: "1000", token: "<redacted>" })
  })

  it("transactionReference is present only on original operations", () => {
    const linked = Schema.decodeUnknownSync(TransactionRequest.TransactionRequest)(minimal.linkedRefund)
    expect(TransactionRequest.transactionReference(linked)._tag).toBe("None")
    expect(Option.getOrUndefined(TransactionRequest.originalTransactionId(linked))).toBe(
      Identifiers.Guid.make("g-1")
    )
  })
})

/** Which row of the tables a wire body belongs to. */
function labelOf(body: Wire): string {
  const op = String(body.operation)
  if (op === "refund") return "originalTransactionId" in body ? "linkedRefund" : "refund"
  if (op === "moToRefund") return "originalTransactionId" in body ? "linkedMoToRefund" : "moToRefund"
  return op
}
