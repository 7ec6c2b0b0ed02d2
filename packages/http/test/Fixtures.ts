/**
 * Shared pieces of the HTTP client tests: identifiers, typed requests, wire bodies as
 * the spec and the public samples show them, and a client built against given hosts.
 */
import {
  Batch,
  DeviceCommand,
  Identifiers,
  Money,
  Moto,
  PreAuthorization,
  Reversal,
  TerminalCloud,
  TipAdjustment,
  type TransactionRequest
} from "@tillflow/core"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { HttpTerminalCloud, TerminalCloudConfig } from "@tillflow/http"

export const API_KEY = "ak-live-5b7e0f8c2d4a4e19b3c6"
export const CALLBACK_TOKEN = "cb-token-91d2e7a4c0f34b58"
export const SSK = "ssk-0c9f3e71b2a54d86"
export const UNMASKED_PAN = "4111111111111111"

export const serial = Identifiers.SerialNumber.make("0821032398")
export const terminalType = Identifiers.TerminalType.make("PAXA920")
export const reference = Schema.decodeSync(Identifiers.TransactionReference)(
  "6f1d1c2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f"
)
export const guid = Identifiers.Guid.make("01236fc0-8192-11eb-9aca-ad4b0e95f241")
export const resultId = Identifiers.TransactionResultId.make("0821032398-1628774190395")

/** A sale delivered by callback. */
export const sale: TransactionRequest.Sale = {
  operation: "sale",
  serialNumber: serial,
  terminalType,
  amount: Money.make(1050n, "EUR"),
  transactionReference: reference,
  delivery: { callbackUrl: "https://merchant.example/results", token: Redacted.make(CALLBACK_TOKEN) }
}

/** A sale whose result is polled. */
export const polledSale: TransactionRequest.Sale = {
  operation: "sale",
  serialNumber: serial,
  terminalType,
  amount: Money.make(1050n, "EUR"),
  transactionReference: reference
}

export const stop: TransactionRequest.StopCurrentTransaction = {
  operation: "stopCurrentTransaction",
  serialNumber: serial,
  terminalType
}

export const devicesBody = [
  { merchant_id_alpha: "MERCHANT01", serial_number: "0821032398", ssk: SSK, terminal_type: "PAXA920" }
]

/** Spec 4.2: the 202 body. */
export const acceptedBody = {
  transactionResultId: "0821032398-1628774190395",
  statusMessage: "Transaction sent successfully",
  transactionReference: "6f1d1c2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f"
}

/** Spec 4.2: `{error: {statusCode, name, message: {error, message}}}`. */
export const numberedError = (n: 1001 | 1002 | 1003, message: string) =>
  JSON.stringify({ error: { statusCode: 400, name: "BadRequestError", message: { error: n, message } } })

/** Spec 7: a business error of the gateway. */
export const businessError = (code: string, description: string, status = 400) =>
  JSON.stringify({
    error: {
      statusCode: status,
      name: "BadRequestError",
      message: description,
      code,
      details: {
        errorGuid: "9a8b7c6d-0000-4000-8000-000000000001",
        errorCode: code,
        description,
        httpStatus: String(status)
      }
    }
  })

/** A polled result as the public samples show it (number efttimestamp, "" for absent). */
export const resultBody = {
  aid: "A0000000041010",
  authorisationCode: "123456",
  balance: null,
  cardSchemeName: "SOME_NEW_SCHEME",
  currency: "EUR",
  customerReceipt: "https://receipts.example/r/1.html",
  efttimestamp: 1615374961000,
  efttransactionID: "01236fc0-8192-11eb-9aca-ad4b0e95f241",
  finStatus: "AUTHORISED",
  maskedCardNumber: "************1111",
  metadata: null,
  mid: "",
  rrn: "",
  requestedAmount: 1050,
  totalAmount: 1050,
  transactionReference: "6f1d1c2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f",
  type: "SALE",
  aNewField: { kept: true }
}

export const tipAdjustment = new TipAdjustment.TipAdjustment({ amount: Money.DecimalString.make("5.25") })
export const reversal: Reversal.ReversalRequest = { originalGuid: guid }
export const increase = new PreAuthorization.PreAuthorizationIncreaseRequest({
  originalGuid: guid,
  increaseAmount: Money.DecimalString.make("12.50"),
  subtract: true
})
export const capture = new PreAuthorization.PreAuthorizationCaptureRequest({
  originalGuid: guid,
  capturedAmount: Money.DecimalString.make("100.00")
})
export const motoSale: Moto.MotoSaleRequest = {
  cardToken: Identifiers.CardToken.make("tok_4f9a"),
  amount: Money.make(1050n, "EUR"),
  transactionReference: reference
}
export const motoRefund: Moto.MotoRefundRequest = { originalGuid: guid, amount: Money.make(500n, "EUR") }
export const motoReversal = new Moto.MotoReversalRequest({ originalGuid: guid })
export const batch = new Batch.BatchRequest({
  serialNumber: serial,
  deviceType: terminalType,
  batchNumber: Identifiers.BatchNumber.make("42")
})
export const batchDetail = new Batch.BatchDetailRequest({
  serialNumber: serial,
  deviceType: terminalType,
  batchNumber: Identifiers.BatchNumber.make("42"),
  rrn: "000123"
})
export const brightness = new DeviceCommand.SetScreenBrightness({
  minimumBrightnessLevel: 10,
  maximumBrightnessLevel: 90
})

/** The HTTP client against given hosts, short retry delays, released with the scope. */
export const client = (
  hosts: { readonly baseUrl: URL; readonly transactionsUrl: URL },
  options: Partial<Omit<TerminalCloudConfig.TerminalCloudConfig, "baseUrl" | "transactionsUrl">> = {}
): Effect.Effect<TerminalCloud.Service, never, Scope.Scope> =>
  Layer.build(
    HttpTerminalCloud.layer(
      TerminalCloudConfig.make({
        apiKey: Redacted.make(API_KEY),
        readRetryDelay: Duration.millis(5),
        ...options,
        ...hosts
      })
    )
  ).pipe(Effect.map((context) => Context.get(context, TerminalCloud.TerminalCloud)))
