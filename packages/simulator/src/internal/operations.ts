/**
 * What each terminal operation is: the steps it goes through on the terminal, the
 * transaction type it carries on the wire, whether it opens a status log under its own
 * reference and whether it charges a card.
 */
import type { Step } from "./model.js"
import type * as Validate from "./validate.js"

const cardSteps: ReadonlyArray<Step> = [
  "WaitingForCard",
  "PinInput",
  "WaitingHostConnect",
  "WaitingHostSend",
  "WaitingHostReceive",
  "PrintingMerchantReceipt"
]
const hostSteps: ReadonlyArray<Step> = [
  "WaitingHostConnect",
  "WaitingHostSend",
  "WaitingHostReceive",
  "PrintingMerchantReceipt"
]

/** The steps an operation goes through on the terminal. */
export const stepsOf = (operation: Validate.Operation): ReadonlyArray<Step> => {
  switch (operation) {
    case "sale":
    case "saleAndTokenizeCard":
    case "refund":
    case "preAuthorization":
      return cardSteps
    case "moToSale":
    case "moToPreAuthorization":
      return ["WaitingForCard", ...hostSteps]
    case "tokenizeCard":
      return ["WaitingForCard", "WaitingHostConnect", "WaitingHostSend", "WaitingHostReceive"]
    case "cardPan":
      return ["WaitingForCard"]
    case "printReceipt":
      return ["PrintingMerchantReceipt"]
    case "pingDevice":
    case "stopCurrentTransaction":
      return []
    case "moToRefund":
    case "moToReversal":
    case "saleReversal":
    case "refundReversal":
    case "preAuthorizationIncrease":
    case "preAuthorizationCapture":
    case "preAuthorizationReversal":
      return hostSteps
  }
}

/** The gateway's transaction kind of an operation (`Results.wireType` gives the spec's value). */
export const typeOf: Record<Validate.Operation, string> = {
  sale: "SALE",
  saleAndTokenizeCard: "SALE",
  refund: "REFUND",
  refundReversal: "VOID_REFUND",
  saleReversal: "VOID_SALE",
  tokenizeCard: "TOKENIZE_CARD",
  printReceipt: "UNDEFINED",
  cardPan: "CARD_PAN",
  pingDevice: "UNDEFINED",
  stopCurrentTransaction: "CANCEL_TRX",
  moToSale: "MOTO_SALE",
  moToRefund: "MOTO_REFUND",
  moToReversal: "MOTO_REVERSAL",
  moToPreAuthorization: "MOTO_PRE_AUTHORIZATION",
  preAuthorization: "PRE_AUTHORIZATION",
  preAuthorizationIncrease: "PRE_AUTHORIZATION_INCREASE",
  preAuthorizationCapture: "PRE_AUTHORIZATION_CAPTURE",
  preAuthorizationReversal: "PRE_AUTHORIZATION_REVERSAL"
}

/** Operations that open a status log under their own transactionReference. */
export const originalOps: ReadonlySet<string> = new Set([
  "sale",
  "saleAndTokenizeCard",
  "preAuthorization",
  "moToSale",
  "moToPreAuthorization",
  "refund",
  "moToRefund"
])

/** Operations that charge a card: trigger amounts and the duplicate check apply. */
export const chargeOps: ReadonlySet<string> = new Set([
  "sale",
  "saleAndTokenizeCard",
  "preAuthorization",
  "moToSale",
  "moToPreAuthorization"
])
