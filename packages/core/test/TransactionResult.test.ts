import { describe, expect, it } from "@effect/vitest"
import { Accepted, Device, DeviceStatus, EftTimestamp, Enumerations, TransactionResult } from "@tillflow/core"
import { DateTime, Either, Option, Redacted, Schema } from "effect"

/** A polled result shaped like the service's public samples. */
const polled = {
  aid: "A0000000041010",
  arc: "0000",
  authorisationCode: "123456",
  balance: null,
  budgetNumber: "",
  cardEntryType: "UNDEFINED",
  cardLanguagePreference: "",
  cardSchemeName: "MasterCard",
  cardToken: "",
  cardTypeId: "",
  chipTransactionReport: "",
  currency: "USD",
  customerReceipt: "https://receipts.example.com/customerReceipt/0821032398-1628774190395.html",
  customerReference: "",
  deviceStatus: {
    applicationName: "CloudPaymentApp",
    applicationVersion: "20.1.0",
    batteryCharging: "Not Charging",
    batteryStatus: "100",
    batterymV: "4126",
    bluetoothName: "PAXA920",
    externalPower: "USB",
    serialNumber: "0821032398",
    statusMessage: "Approved or completed successfully"
  },
  dueAmount: 0,
  errorMessage: "",
  expiryDateMMYY: "0422",
  finStatus: "AUTHORISED",
  iad: "0110A040002200000000000000000000FF",
  issuerResponseCode: "00",
  maskedCardNumber: "************1111",
  merchantAddress: "Plaza Soledad Torres Acosta 1 28013 Madrid",
  merchantName: "Hago la cama",
  merchantReceipt: "<html><body><p>MERCHANT COPY</p><p>AUTHORISED 1.00 USD</p></body></html>",
  mid: "",
  multiLanguageStatusMessages: { en_US: "Approved or completed successfully", es_ES: "Aprobada" },
  originalEFTTransactionID: "",
  paymentScenario: "CHIPCONTACTLESS",
  rrn: "",
  signatureUrl: "",
  statusMessage: "Approved or completed successfully",
  tenderType: "CREDIT",
  tid: "",
  tipAmount: 0,
  tipPercentage: 0,
  totalAmount: 100,
  requestedAmount: 100,
  transactionID: "01236fc0-8192-11eb-9aca-ad4b0e95f241",
  efttransactionID: "01236fc0-8192-11eb-9aca-ad4b0e95f241",
  tsi: "0000",
  tvr: "0400008001",
  type: "SALE",
  unMaskedPan: "",
  verificationMethod: "UNDEFINED",
  efttimestamp: 1615374961000,
  metadata: null,
  moneyRemittanceOptions: null,
  recoveredTransaction: false,
  transactionReference: "6f1d1c2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f"
}

const decodeResult = Schema.decodeUnknownSync(TransactionResult.TransactionResult)
const decodeStatus = Schema.decodeUnknownSync(TransactionResult.TransactionStatusResult)

describe("TransactionResult (lenient decoding)", () => {
  it("decodes a realistic polled result with amounts as bigint minor units", () => {
    const r = decodeResult(polled)
    expect(r.finStatus).toBe("AUTHORISED")
    expect(r.totalAmount).toBe(100n)
    expect(r.requestedAmount).toBe(100n)
    expect(r.currency).toBe("USD")
    expect(r.cardSchemeName).toBe("MasterCard")
    expect(r.efttransactionID).toBe("01236fc0-8192-11eb-9aca-ad4b0e95f241")
    expect(r.deviceStatus?.serialNumber).toBe("0821032398")
  })

  it("reads empty strings and nulls as absent", () => {
    const r = decodeResult(polled)
    expect(r.mid).toBeUndefined()
    expect(r.rrn).toBeUndefined()
    expect(r.balance).toBeUndefined()
    expect(r.metadata).toBeUndefined()
    expect(r.moneyRemittanceOptions).toBeUndefined()
    expect(r.signatureUrl).toBeUndefined()
    expect(r.unMaskedPan).toBeUndefined()
  })

  it("reads efttimestamp as epoch ms and as a numeric string: an instant, written back as it came", () => {
    const fromNumber = decodeResult({ efttimestamp: 1615374961000 })
    const fromNumericString = decodeResult({ efttimestamp: "1615374961000" })
    for (const r of [fromNumber, fromNumericString]) {
      const at = r.efttimestamp && Option.getOrUndefined(EftTimestamp.instant(r.efttimestamp))
      expect(at && DateTime.toEpochMillis(at)).toBe(1615374961000)
    }
    expect(Schema.encodeSync(TransactionResult.TransactionResult)(fromNumber).efttimestamp).toBe(
      1615374961000
    )
    expect(Schema.encodeSync(TransactionResult.TransactionResult)(fromNumericString).efttimestamp).toBe(
      "1615374961000"
    )
  })

  it("keeps the wall-clock efttimestamp as the terminal's local time: never read as UTC, written back as it came", () => {
    // A status sample from a terminal in Madrid (UTC+2 in May) reads 11:01 local, 09:01 UTC.
    const r = decodeStatus({ efttimestamp: "20230511110113006", finStatus: "AUTHORISED" })
    const at = r.efttimestamp
    expect(at?._tag).toBe("TerminalLocal")
    expect(at && Option.isNone(EftTimestamp.instant(at))).toBe(true)
    expect(at && EftTimestamp.describe(at)).toBe(
      "2023-05-11 11:01:13.006 (terminal local time, zone unknown)"
    )
    expect(at && EftTimestamp.describe(at)).not.toContain("Z")
    // Where a rule needs an instant, the earliest it can be: the local time at UTC+14.
    expect(at && DateTime.formatIso(EftTimestamp.earliestInstant(at))).toBe("2023-05-10T21:01:13.006Z")
    expect(Schema.encodeSync(TransactionResult.TransactionStatusResult)(r).efttimestamp).toBe(
      "20230511110113006"
    )
  })

  it("refuses an impossible wall-clock date rather than rolling it over", () => {
    expect(EftTimestamp.parse("20231332110113006")).toBeUndefined()
    expect(
      Either.isLeft(
        Schema.decodeUnknownEither(TransactionResult.TransactionResult)({ efttimestamp: "2023" + "x" })
      )
    ).toBe(true)
  })

  it("keeps enum values it does not know as strings", () => {
    const r = decodeResult({
      finStatus: "PENDING_REVIEW",
      type: "INSTALMENT_SALE",
      cardSchemeName: "Elo",
      paymentScenario: "QR",
      verificationMethod: "FACE_ID",
      tenderType: "PREPAID",
      cardEntryType: "NFC",
      currency: "XTS"
    })
    expect(r.finStatus).toBe("PENDING_REVIEW")
    expect(r.type).toBe("INSTALMENT_SALE")
    expect(r.cardSchemeName).toBe("Elo")
    expect(r.currency).toBe("XTS")
    expect(r.finStatus && Enumerations.isKnown(Enumerations.FinancialStatus, r.finStatus)).toBe(false)
    expect(Enumerations.isKnown(Enumerations.FinancialStatus, "AUTHORISED")).toBe(true)
  })

  it("keeps unknown fields through decode and encode", () => {
    const raw = { ...polled, avsResult: { zip: "MATCH" }, accountType: "CHECKING", issuerCountry: null }
    const r = decodeResult(raw)
    expect(r["avsResult"]).toEqual({ zip: "MATCH" })
    expect(r.accountType).toBe("CHECKING")
    const back = Schema.encodeSync(TransactionResult.TransactionResult)(r)
    expect(back["avsResult"]).toEqual({ zip: "MATCH" })
    expect("issuerCountry" in back).toBe(true)
  })

  it("tells a receipt URL from inline receipt HTML", () => {
    const r = decodeResult(polled)
    expect(r.customerReceipt).toMatchObject({
      _tag: "Url",
      url: "https://receipts.example.com/customerReceipt/0821032398-1628774190395.html"
    })
    expect(r.merchantReceipt).toMatchObject({ _tag: "Inline" })
    expect(r.merchantReceipt?._tag === "Inline" && r.merchantReceipt.content).toContain("MERCHANT COPY")
  })

  it("tells a signature URL from an inline base64 image", () => {
    const base64 =
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
    expect(decodeResult({ signatureUrl: base64 }).signatureUrl).toMatchObject({
      _tag: "Inline",
      content: base64
    })
    expect(decodeResult({ signatureUrl: "https://sig.example.com/s.png" }).signatureUrl).toMatchObject({
      _tag: "Url",
      url: "https://sig.example.com/s.png"
    })
  })

  it("redacts unMaskedPan: it never shows in logs or JSON", () => {
    const r = decodeResult({ ...polled, unMaskedPan: "6012345678901234" })
    expect(r.unMaskedPan && Redacted.value(r.unMaskedPan)).toBe("6012345678901234")
    expect(String(r.unMaskedPan)).toBe("<redacted>")
    expect(JSON.stringify(r, (_, v) => (typeof v === "bigint" ? v.toString() : v))).not.toContain(
      "6012345678901234"
    )
  })

  it("reads a balance, metadata and remittance options when present", () => {
    const r = decodeResult({
      balance: { amount: 2500, currency: "EUR", positive: true, negative: false },
      metadata: { metadata1: "order-1", metadata2: null },
      moneyRemittanceOptions: { fullName: "Ada Lovelace", countryCode: "GBR" }
    })
    expect(r.balance).toEqual({ amount: 2500n, currency: "EUR", positive: true, negative: false })
    expect(r.metadata).toEqual({ metadata1: "order-1" })
    expect(r.moneyRemittanceOptions).toEqual({ fullName: "Ada Lovelace", countryCode: "GBR" })
  })

  it("reads a recovered delivery flag given as a string", () => {
    expect(decodeResult({ recoveredTransaction: "true" }).recoveredTransaction).toBe(true)
  })

  it("refuses a fractional amount rather than rounding money", () => {
    expect(
      Either.isLeft(Schema.decodeUnknownEither(TransactionResult.TransactionResult)({ totalAmount: 10.5 }))
    ).toBe(true)
  })

  it("keeps an unknown acquirer (ACQ_DUMMY) in echoed credentials and in the received enum", () => {
    const r = decodeResult({ merchantAuth: [{ acquirer: "ACQ_DUMMY", mid: "1" }] })
    expect(r["merchantAuth"]).toEqual([{ acquirer: "ACQ_DUMMY", mid: "1" }])
    expect(Schema.decodeUnknownSync(Enumerations.AcquirerReceived)("ACQ_DUMMY")).toBe("ACQ_DUMMY")
    expect(Schema.is(Enumerations.Acquirer)("ACQ_DUMMY")).toBe(true)
  })

  it("reads the status-endpoint amounts", () => {
    const r = decodeStatus({
      finStatus: "CAPTURED",
      holdAmount: 10000,
      increaseAmount: "2500",
      capturedAmount: 12000
    })
    expect([r.holdAmount, r.increaseAmount, r.capturedAmount]).toEqual([10000n, 2500n, 12000n])
  })

  it("reads the status answer as one result or a list", () => {
    const decode = Schema.decodeUnknownSync(TransactionResult.TransactionStatusAnswer)
    expect(TransactionResult.statusResults(decode({ finStatus: "IN_PROGRESS" }))).toHaveLength(1)
    expect(
      TransactionResult.statusResults(decode([{ finStatus: "AUTHORISED" }, { finStatus: "REFUNDED" }]))
    ).toHaveLength(2)
  })
})

describe("DeviceStatus", () => {
  it("reads PascalCase keys as camelCase", () => {
    const s = Schema.decodeUnknownSync(DeviceStatus.DeviceStatus)({
      SerialNumber: "0821032398",
      BatteryStatus: "87",
      BatterymV: "4100",
      BatteryCharging: true,
      ExternalPower: false,
      ApplicationName: "CloudPaymentApp",
      ApplicationVersion: "20.1.0",
      BluetoothName: "PAXA920",
      StatusMessage: "WaitingForCard"
    })
    expect(s).toMatchObject({
      serialNumber: "0821032398",
      batteryStatus: "87",
      batterymV: "4100",
      batteryCharging: "true",
      externalPower: "false",
      statusMessage: "WaitingForCard"
    })
  })

  it("reads a StatusInfo with an unknown status value", () => {
    const info = Schema.decodeUnknownSync(DeviceStatus.StatusInfo)({
      cancelAllowed: true,
      status: "WaitingForFaceScan",
      message: "…",
      deviceStatus: { serialNumber: "1" }
    })
    expect(info.status).toBe("WaitingForFaceScan")
    expect(info.cancelAllowed).toBe(true)
  })
})

describe("Accepted (202 body)", () => {
  it("treats the nil UUID echo as no reference", () => {
    const a = Schema.decodeUnknownSync(Accepted.Accepted)({
      transactionResultId: "0821032398-1628774190395",
      statusMessage: "Operation Accepted",
      transactionReference: "00000000-0000-0000-0000-000000000000"
    })
    expect(a.transactionResultId).toBe("0821032398-1628774190395")
    expect(Option.isNone(Accepted.transactionReference(a))).toBe(true)
  })

  it("reads the echoed reference and no result id when a callback was given", () => {
    const a = Schema.decodeUnknownSync(Accepted.Accepted)({
      statusMessage: "Operation Accepted",
      transactionReference: "6F1D1C2E-3A4B-4C5D-8E6F-7A8B9C0D1E2F"
    })
    expect(a.transactionResultId).toBeUndefined()
    expect(Option.getOrUndefined(Accepted.transactionReference(a))).toBe(
      "6f1d1c2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f"
    )
  })
})

describe("Device", () => {
  const listing = [
    {
      merchant_id_alpha: "m-1",
      serial_number: "0821032398",
      ssk: "SHARED-SECRET-1",
      terminal_type: "PAXA920"
    },
    {
      merchant_id_alpha: "m-1",
      serial_number: "0821032399",
      ssk: "SHARED-SECRET-2",
      terminal_type: "PAXA920",
      customerReference: "till 2"
    }
  ]

  it("redacts ssk after decoding, tolerates the older customerReference, writes the wire form back", () => {
    const devices = Schema.decodeUnknownSync(Device.DeviceList)(listing)
    expect(devices[0]?.serialNumber).toBe("0821032398")
    expect(devices[1]?.customerReference).toBe("till 2")
    expect(String(devices[0])).not.toContain("SHARED-SECRET-1")
    expect(JSON.stringify(devices)).not.toContain("SHARED-SECRET")
    const ssk = devices[0]?.ssk
    expect(ssk && Redacted.value(ssk)).toBe("SHARED-SECRET-1")
    expect(Schema.encodeSync(Device.DeviceList)(devices)).toEqual(listing)
  })

  it("a device without ssk (the service's own /initialize example has none) does not refuse the list", () => {
    const withoutSsk = [
      listing[0],
      { merchant_id_alpha: "m-1", serial_number: "0821032400", terminal_type: "PAXA920" }
    ]
    const devices = Schema.decodeUnknownSync(Device.DeviceList)(withoutSsk)
    expect(devices.map((d) => d.serialNumber)).toEqual(["0821032398", "0821032400"])
    expect(devices[1]?.ssk).toBeUndefined()
    expect(JSON.stringify(devices)).not.toContain("SHARED-SECRET")
    expect(Schema.encodeSync(Device.DeviceList)(devices)).toEqual(withoutSsk)
  })
})
