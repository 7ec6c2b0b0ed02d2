/**
 * The wire shapes the simulator produces: terminal TransactionResults (polled or posted
 * to a callback), status-endpoint rows, and the gateway objects of the terminal-less
 * endpoints. Amounts on terminal results are integers in minor units; amounts of the
 * terminal-less endpoints are decimal strings in major units.
 */
import { Enumerations } from "@tillflow/core"
import { formatMajor } from "./money.js"
import type { Card, Merchant, Store, Terminal, Txn } from "./model.js"

/** `YYYYMMDDHHmmssSSS` in UTC, the status endpoint's `efttimestamp` form. */
export const compactTimestamp = (epochMillis: number): string =>
  new Date(epochMillis).toISOString().replace(/[-:TZ.]/g, "")

/** A JSON integer for an amount in minor units (bounded to 15 digits at parse time). */
export const int = (minor: bigint): number => Number(minor)

export const maskPan = (pan: string): string =>
  `${pan.slice(0, 6)}${"*".repeat(pan.length - 10)}${pan.slice(-4)}`

export const deviceStatus = (terminal: Terminal, withInfo: boolean): Record<string, unknown> => ({
  serialNumber: terminal.serial,
  batteryStatus: "87",
  batterymV: "4105",
  batteryCharging: "false",
  externalPower: "true",
  applicationName: "Simulated Payments",
  applicationVersion: "3.12.0",
  bluetoothName: "",
  statusMessage: terminal.current === undefined ? "Ready" : "Busy",
  ...(withInfo ? { sdkVersion: "7.1006.0", firmwareVersion: "SIM-10.2.1" } : {})
})

const receipt = (
  store: Store,
  terminal: Terminal,
  guid: string,
  copy: "merchant" | "customer",
  body: string
) =>
  terminal.receiptsInline || store.baseUrl === undefined
    ? `<html><body><h1>${copy === "merchant" ? "MERCHANT COPY" : "CUSTOMER COPY"}</h1><pre>${body}</pre></body></html>`
    : `${store.baseUrl}/receipts/${guid}/${copy}`

/** Text printed on a receipt. */
export const receiptText = (merchant: Merchant, txn: Txn): string =>
  [
    merchant.name,
    merchant.address,
    `${txn.type} ${formatMajor(txn.approved + txn.tipAmount, txn.exponent)} ${txn.currency}`,
    `${txn.finStatus} ${txn.approvalCode}`,
    txn.card === undefined ? "" : maskPan(txn.card.pan)
  ].join("\n")

const cardFields = (card: Card | undefined, entry: "ICC" | "CNP"): Record<string, unknown> =>
  card === undefined
    ? {
        maskedCardNumber: "",
        cardSchemeName: "",
        expiryDateMMYY: "",
        cardHolderName: "",
        tenderType: "NOT_SET"
      }
    : {
        maskedCardNumber: maskPan(card.pan),
        cardSchemeName: card.scheme,
        expiryDateMMYY: card.expiryMMYY,
        cardHolderName: card.holder,
        tenderType: card.tender,
        cardEntryType: entry,
        paymentScenario: entry === "ICC" ? "CHIP" : "MOTO",
        aid: entry === "ICC" ? "A0000000031010" : "",
        verificationMethod: entry === "ICC" ? "PIN" : "NOT_REQUIRED"
      }

/** What a terminal result needs beyond the transaction record. */
export interface ResultInput {
  readonly store: Store
  readonly terminal: Terminal
  readonly request: Record<string, unknown>
  readonly operation: string
  readonly type: string
  readonly finStatus: string
  readonly statusMessage: string
  readonly errorMessage: string
  readonly completedAt: number
  readonly reference: string | undefined
  readonly txn: Txn | undefined
  readonly card: Card | undefined
  readonly extra?: Record<string, unknown> | undefined
}

/** A TransactionResult as the terminal posts it (polling store or callback). */
export const terminalResult = (input: ResultInput): Record<string, unknown> => {
  const { request, store, terminal, txn } = input
  const merchant = store.merchants.get(terminal.merchantId)
  const guid = txn?.guid ?? store.ids.uuidV1()
  const requested = txn?.amount
  const base: Record<string, unknown> = {
    aid: "",
    arc: txn !== undefined && txn.approved > 0n ? "00" : "",
    authorisationCode: txn?.approvalCode ?? "",
    balance: null,
    batchNumber: String(txn?.batch ?? terminal.batch),
    budgetNumber: "",
    cardEntryType: "UNDEFINED",
    cardLanguagePreference: "en",
    cardToken: txn?.cardToken ?? "",
    cardTypeId: "",
    chipTransactionReport: "",
    currency: txn?.currency ?? (typeof request.currency === "string" ? request.currency : ""),
    customData: "",
    customerReceipt: "",
    merchantReceipt: "",
    customerReference: typeof request.customerReference === "string" ? request.customerReference : "",
    deviceStatus: deviceStatus(terminal, false),
    efttimestamp: input.completedAt,
    efttransactionID: guid,
    transactionID: guid,
    errorMessage: input.errorMessage,
    statusMessage: input.statusMessage,
    _statusMessage: input.statusMessage,
    finStatus: input.finStatus,
    iad: "",
    issuerResponseCode: txn?.issuerResponseCode ?? "",
    merchantAddress: merchant?.address ?? "",
    merchantName: merchant?.name ?? "",
    metadata: request.metadata ?? null,
    mid: merchant?.mid ?? "",
    tid: terminal.tid,
    moneyRemittanceOptions: request.moneyRemittanceOptions ?? null,
    originalEFTTransactionID: txn?.originalGuid ?? "",
    paymentScenario: "UNKNOWN",
    recoveredTransaction: false,
    rrn: txn?.rrn ?? "",
    tenderType: "NOT_SET",
    transactionOrigin: "CLOUD",
    transactionReference: input.reference ?? "",
    tsi: "",
    tvr: "",
    type: wireType(input.type),
    verificationMethod: "UNDEFINED",
    ...cardFields(input.card, input.operation.startsWith("moTo") ? "CNP" : "ICC")
  }
  if (requested !== undefined) {
    base.requestedAmount = int(requested)
    base.totalAmount = int(txn === undefined ? 0n : txn.approved + txn.tipAmount)
    base.tipAmount = int(txn?.tipAmount ?? 0n)
  }
  if (txn !== undefined && txn.dueAmount > 0n) base.dueAmount = int(txn.dueAmount)
  if (txn !== undefined && merchant !== undefined && txn.approved > 0n) {
    const text = receiptText(merchant, txn)
    base.merchantReceipt = receipt(store, terminal, guid, "merchant", text)
    base.customerReceipt = receipt(store, terminal, guid, "customer", text)
  }
  return { ...base, ...input.extra }
}

/**
 * The spec's TransactionType for a transaction kind. The gateway keeps its own kinds for
 * pre-authorizations (it tells a capture from an increase by them); the spec's enumeration
 * has none, so a result says SALE for a pre-authorization, its increase and its capture,
 * VOID_SALE for its reversal and MOTO_SALE for a MOTO pre-authorization (the simulator's
 * choice: the spec does not say which value the service uses).
 */
const specTypes: ReadonlySet<string> = new Set(Enumerations.TransactionType.literals)

export const wireType = (kind: string): Enumerations.TransactionType => {
  switch (kind) {
    case "PRE_AUTHORIZATION":
    case "PRE_AUTHORIZATION_INCREASE":
    case "PRE_AUTHORIZATION_CAPTURE":
      return "SALE"
    case "PRE_AUTHORIZATION_REVERSAL":
      return "VOID_SALE"
    case "MOTO_PRE_AUTHORIZATION":
      return "MOTO_SALE"
    default:
      return specTypes.has(kind) ? (kind as Enumerations.TransactionType) : "UNDEFINED"
  }
}

/** A row of the status endpoint for a transaction, as of now. */
export const statusRow = (txn: Txn): Record<string, unknown> => ({
  finStatus: txn.finStatus,
  type: wireType(txn.type),
  transactionReference: txn.reference ?? "",
  efttransactionID: txn.guid,
  transactionID: txn.guid,
  originalEFTTransactionID: txn.originalGuid ?? "",
  efttimestamp: compactTimestamp(txn.createdAt),
  currency: txn.currency,
  requestedAmount: int(txn.amount),
  totalAmount: int(txn.approved + txn.tipAmount),
  tipAmount: int(txn.tipAmount),
  ...(txn.dueAmount > 0n ? { dueAmount: int(txn.dueAmount) } : {}),
  holdAmount: int(txn.hold),
  increaseAmount: int(txn.increased),
  capturedAmount: int(txn.captured ?? 0n),
  authorisationCode: txn.approvalCode,
  issuerResponseCode: txn.issuerResponseCode,
  maskedCardNumber: txn.card === undefined ? "" : maskPan(txn.card.pan),
  cardSchemeName: txn.card?.scheme ?? "",
  batchNumber: String(txn.batch),
  rrn: txn.rrn,
  customerReference: typeof txn.customerReference === "string" ? txn.customerReference : ""
})

/** The status row of an operation the gateway has received but not yet decided. */
export const inProgressRow = (input: {
  readonly reference: string
  readonly guid: string
  readonly type: string
  readonly startedAt: number
  readonly amount: bigint | undefined
  readonly currency: string | undefined
}): Record<string, unknown> => ({
  finStatus: "IN_PROGRESS",
  type: wireType(input.type),
  transactionReference: input.reference,
  efttransactionID: input.guid,
  transactionID: input.guid,
  efttimestamp: compactTimestamp(input.startedAt),
  currency: input.currency ?? "",
  requestedAmount: input.amount === undefined ? 0 : int(input.amount),
  totalAmount: 0,
  holdAmount: 0,
  increaseAmount: 0,
  capturedAmount: 0
})

/** The tokenization-shaped object of deferred tokenization and reversal responses. */
export const tokenizationResponse = (
  txn: Txn,
  token: string,
  now: number,
  guid: string
): Record<string, unknown> => ({
  agreementNumber: txn.terminalSerial,
  cardToken: token,
  cardTokenizationGuid: guid,
  expiryDateMMYY: txn.card?.expiryMMYY ?? "",
  httpStatus: "200",
  maskedCardNumber: txn.card === undefined ? "" : maskPan(txn.card.pan),
  serverDateTime: compactTimestamp(now),
  transactionReference: txn.guid
})
