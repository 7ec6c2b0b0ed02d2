/**
 * Validation of the bodies the simulated service receives, with the service's own
 * answer for a bad body: 422 VALIDATION_FAILED naming the field. Kept independent of the
 * client's (stricter) schemas so that the simulator checks what the service checks.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { invalid, type ValidationFailed } from "../SimulatorError.js"
import { isUuidV4 } from "./ids.js"
import { exponentOf, parseMajor, parseMinor } from "./money.js"

export type Checked<A> = Either.Either<A, ValidationFailed>

/** The effect of a check (or of a gateway rule): its value, or its error as the failure. */
export const right = <A, E>(e: Either.Either<A, E>): Effect.Effect<A, E> =>
  Either.isRight(e) ? Effect.succeed(e.right) : Effect.fail(e.left)

export const operations = [
  "sale",
  "refund",
  "refundReversal",
  "saleReversal",
  "saleAndTokenizeCard",
  "tokenizeCard",
  "printReceipt",
  "cardPan",
  "pingDevice",
  "stopCurrentTransaction",
  "moToSale",
  "moToRefund",
  "moToReversal",
  "moToPreAuthorization",
  "preAuthorization",
  "preAuthorizationIncrease",
  "preAuthorizationCapture",
  "preAuthorizationReversal"
] as const
export type Operation = (typeof operations)[number]

const needsAmount: ReadonlySet<Operation> = new Set<Operation>([
  "sale",
  "refund",
  "refundReversal",
  "saleReversal",
  "saleAndTokenizeCard",
  "preAuthorization",
  "moToSale",
  "moToRefund",
  "moToPreAuthorization",
  "preAuthorizationIncrease"
])
/** Operations where amount and currency are optional (together). */
const optionalAmount: ReadonlySet<Operation> = new Set<Operation>(["preAuthorizationCapture", "moToReversal"])
const needsOriginal: ReadonlySet<Operation> = new Set<Operation>([
  "refundReversal",
  "saleReversal",
  "preAuthorizationIncrease",
  "preAuthorizationCapture",
  "preAuthorizationReversal",
  "moToReversal"
])
const tipOps: ReadonlySet<Operation> = new Set<Operation>(["sale", "saleAndTokenizeCard"])
const bypassOps: ReadonlySet<Operation> = new Set<Operation>(["sale", "saleAndTokenizeCard", "refund"])

const metadataCharset = /^[A-Za-z0-9\-()@:%_\\+.~#?&/={}"',]*$/

export const isObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** A checked TransactionRequest. */
export interface TransactionRequest {
  readonly operation: Operation
  readonly serial: string
  readonly terminalType: string
  readonly amount: bigint | undefined
  readonly currency: string | undefined
  readonly exponent: number | undefined
  readonly originalTransactionId: string | undefined
  readonly callbackUrl: string | undefined
  readonly token: string | undefined
  readonly transactionReference: string | undefined
  readonly duplicateCheck: boolean
  readonly tipConfiguration: boolean
  readonly returnDeviceInfo: boolean
  readonly tokenize: boolean
  readonly raw: Record<string, unknown>
}

const optionalString = (body: Record<string, unknown>, field: string): Checked<string | undefined> => {
  const value = body[field]
  if (value === undefined || value === null) return Either.right(undefined)
  return typeof value === "string"
    ? Either.right(value)
    : Either.left(invalid(field, `${field} must be a string`))
}

const optionalBoolean = (body: Record<string, unknown>, field: string): Checked<boolean | undefined> => {
  const value = body[field]
  if (value === undefined || value === null) return Either.right(undefined)
  return typeof value === "boolean"
    ? Either.right(value)
    : Either.left(invalid(field, `${field} must be a boolean`))
}

const checkMetadata = (value: unknown): ValidationFailed | undefined => {
  if (value === undefined || value === null) return undefined
  if (!isObject(value)) return invalid("metadata", "metadata must be an object")
  for (const [key, v] of Object.entries(value)) {
    if (!/^metadata[1-5]$/.test(key)) return invalid(`metadata.${key}`, `Unknown metadata field ${key}`)
    if (typeof v !== "string") return invalid(`metadata.${key}`, `${key} must be a string`)
    if (v.length > 250) return invalid(`metadata.${key}`, `${key} is longer than 250 characters`)
    if (!metadataCharset.test(v))
      return invalid(`metadata.${key}`, `${key} contains characters outside the allowed set`)
  }
  return undefined
}

const isHttpUrl = (s: string): boolean => {
  try {
    const url = new URL(s)
    return url.protocol === "http:" || url.protocol === "https:"
  } catch {
    return false
  }
}

/** Checks the body of POST /transactions. */
export const transactionRequest = (body: unknown): Checked<TransactionRequest> =>
  Either.gen(function* () {
    if (!isObject(body)) return yield* Either.left(invalid("body", "The request body must be a JSON object"))
    const operation = body.operation
    if (typeof operation !== "string" || !(operations as ReadonlyArray<string>).includes(operation))
      return yield* Either.left(invalid("operation", "operation is missing or not a known OperationType"))
    const op = operation as Operation
    const serial = body.serial_number
    const terminalType = body.terminal_type
    if (typeof serial !== "string" || serial.length === 0)
      return yield* Either.left(invalid("serial_number", "serial_number is required"))
    if (typeof terminalType !== "string" || terminalType.length === 0)
      return yield* Either.left(invalid("terminal_type", "terminal_type is required"))
    let amount: bigint | undefined
    let currency: string | undefined
    let exponent: number | undefined
    const amountGiven = body.amount !== undefined && body.amount !== null
    if (needsAmount.has(op) || (optionalAmount.has(op) && amountGiven)) {
      const negativeAllowed = op === "preAuthorizationIncrease"
      const raw = body.amount
      const text = typeof raw === "string" && negativeAllowed && raw.startsWith("-") ? raw.slice(1) : raw
      const parsed = parseMinor(text)
      if (parsed === undefined || parsed === 0n)
        return yield* Either.left(
          invalid("amount", "amount must be a positive integer string in minor units")
        )
      amount = text === raw ? parsed : -parsed
      if (typeof body.currency !== "string")
        return yield* Either.left(invalid("currency", "currency is required with amount"))
      exponent = exponentOf(body.currency)
      if (exponent === undefined)
        return yield* Either.left(invalid("currency", "currency is not a known currency"))
      currency = body.currency
    }
    const originalTransactionId = yield* optionalString(body, "originalTransactionId")
    if (needsOriginal.has(op) && (originalTransactionId === undefined || originalTransactionId === ""))
      return yield* Either.left(
        invalid("originalTransactionId", `originalTransactionId is required for ${op}`)
      )
    if (op === "printReceipt") {
      const receipt = yield* optionalString(body, "receipt")
      if (receipt === undefined || receipt === "")
        return yield* Either.left(invalid("receipt", "receipt is required for printReceipt"))
    }
    const callbackUrl = yield* optionalString(body, "callbackUrl")
    const token = yield* optionalString(body, "token")
    if (callbackUrl !== undefined) {
      if (!isHttpUrl(callbackUrl))
        return yield* Either.left(invalid("callbackUrl", "callbackUrl must be an http(s) URL"))
      if (token === undefined || token === "")
        return yield* Either.left(invalid("token", "token is required when callbackUrl is present"))
    }
    const transactionReference = yield* optionalString(body, "transactionReference")
    if (transactionReference !== undefined && !isUuidV4(transactionReference))
      return yield* Either.left(invalid("transactionReference", "transactionReference must be a UUID v4"))
    yield* optionalString(body, "customerReference")
    const duplicateCheck = yield* optionalBoolean(body, "duplicate_check")
    const returnDeviceInfo = yield* optionalBoolean(body, "returnDeviceInfo")
    const tokenize = yield* optionalBoolean(body, "tokenize")
    yield* optionalBoolean(body, "cardPresent")
    const metadataError = checkMetadata(body.metadata)
    if (metadataError !== undefined) return yield* Either.left(metadataError)
    const tip = body.tipConfiguration
    if (tip !== undefined && tip !== null) {
      if (!tipOps.has(op))
        return yield* Either.left(
          invalid("tipConfiguration", "tipConfiguration is allowed with sale and saleAndTokenizeCard only")
        )
      if (!isObject(tip) || !Array.isArray(tip.tipPercentages))
        return yield* Either.left(invalid("tipConfiguration.tipPercentages", "tipPercentages is required"))
    }
    for (const field of ["bypassOptions", "merchantAuth"]) {
      if (body[field] !== undefined && body[field] !== null && !bypassOps.has(op))
        return yield* Either.left(
          invalid(field, `${field} is allowed with sale, saleAndTokenizeCard and refund only`)
        )
    }
    if (body.billing !== undefined && body.billing !== null) {
      if (!isObject(body.billing) || typeof body.billing.zipCode !== "string")
        return yield* Either.left(invalid("billing.zipCode", "billing.zipCode is required inside billing"))
    }
    const remittance = body.moneyRemittanceOptions
    if (remittance !== undefined && remittance !== null) {
      if (
        !isObject(remittance) ||
        typeof remittance.fullName !== "string" ||
        !/^[\p{L} ]+$/u.test(remittance.fullName) ||
        typeof remittance.countryCode !== "string" ||
        !/^[A-Z]{3}$/.test(remittance.countryCode)
      )
        return yield* Either.left(
          invalid(
            "moneyRemittanceOptions",
            "moneyRemittanceOptions needs fullName (letters) and countryCode (alpha-3)"
          )
        )
    }
    return {
      operation: op,
      serial,
      terminalType,
      amount,
      currency,
      exponent,
      originalTransactionId,
      callbackUrl,
      token,
      transactionReference,
      duplicateCheck: duplicateCheck ?? true,
      tipConfiguration: tip !== undefined && tip !== null,
      returnDeviceInfo: returnDeviceInfo ?? false,
      tokenize: tokenize ?? false,
      raw: body
    } satisfies TransactionRequest
  })

/** A required decimal amount in major units of the terminal-less endpoints. */
export const majorAmount = (
  body: Record<string, unknown>,
  field: string,
  exponent: number,
  options: { readonly required: boolean; readonly allowNumber?: boolean }
): Checked<bigint | undefined> => {
  const value = body[field]
  if (value === undefined || value === null || value === "")
    return options.required ? Either.left(invalid(field, `${field} is required`)) : Either.right(undefined)
  if (typeof value !== "string" && !(options.allowNumber === true && typeof value === "number"))
    return Either.left(invalid(field, `${field} must be a decimal string`))
  const parsed = parseMajor(value, exponent)
  if (parsed === undefined || parsed < 0n)
    return Either.left(
      invalid(field, `${field} must be a non-negative decimal amount with at most ${exponent} decimals`)
    )
  return Either.right(parsed)
}

/** A required non-empty string field. */
export const requiredString = (body: Record<string, unknown>, field: string): Checked<string> => {
  const value = body[field]
  return typeof value === "string" && value.length > 0
    ? Either.right(value)
    : Either.left(invalid(field, `${field} is required`))
}

/** A currency field: three letters, known to the service. */
export const currencyField = (
  body: Record<string, unknown>,
  field: string
): Checked<{ code: string; exponent: number }> => {
  const value = body[field]
  if (typeof value !== "string" || value.length !== 3)
    return Either.left(invalid(field, `${field} is required and must have 3 characters`))
  const exponent = exponentOf(value)
  return exponent === undefined
    ? Either.left(invalid(field, `${field} is not a known currency`))
    : Either.right({ code: value, exponent })
}

/** The body of a terminal-less endpoint: a JSON object. */
export const bodyObject = (body: unknown): Checked<Record<string, unknown>> =>
  isObject(body) ? Either.right(body) : Either.left(invalid("body", "The request body must be a JSON object"))
