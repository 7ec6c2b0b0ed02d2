/**
 * Between the intake's JSON and the plain objects of the Promise API: amounts are major
 * units here (`{ amount: "10.50", currency: "EUR" }`, as a person writes them) and minor
 * units in the intake's JSON (`{ amount: "1050", currency: "EUR" }`, as the library stores
 * them); a stored exit is a result or an error.
 */
import { Currency, Money } from "@tillflow/core"
import * as Either from "effect/Either"
import * as Errors from "../Errors.js"

/** An amount of money: a decimal string of major units and an ISO 4217 code. */
export interface Amount {
  /** Major units with a dot, as many decimals as the currency has at most: `"10.50"`, `"100"` (JPY). */
  readonly amount: string
  readonly currency: string
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The amount in minor units of the intake (`{ amount: "1050", currency: "EUR" }`), or an `InvalidRequest`. */
export const toMinor = (
  value: unknown,
  field: string
): { readonly amount: string; readonly currency: string } => {
  if (!isRecord(value) || typeof value["amount"] !== "string" || typeof value["currency"] !== "string") {
    throw new Errors.InvalidRequest(
      "InvalidRequest",
      `${field} must be { amount: "10.50", currency: "EUR" }: a decimal string of major units and an ISO 4217 code`
    )
  }
  const code = value["currency"].toUpperCase()
  if (!Currency.isCurrency(code)) {
    throw new Errors.InvalidRequest(
      "InvalidRequest",
      `${field}.currency "${value["currency"]}" is not an ISO 4217 currency code (e.g. EUR, USD, GBP, JPY)`
    )
  }
  const parsed = Money.fromMajorUnitsString(value["amount"], code)
  if (Either.isLeft(parsed)) {
    throw new Errors.InvalidAmount("InvalidAmount", `${field}.amount: ${parsed.left.message}`, {
      input: value["amount"],
      currency: code
    })
  }
  return { amount: Money.toMinorUnitsString(parsed.right), currency: code }
}

const minorPattern = /^-?(0|[1-9][0-9]*)$/

/** A stored `{ amount, currency }` in minor units, in major units; anything else unchanged. */
const moneyToMajor = (value: Record<string, unknown>): Amount | undefined => {
  const keys = Object.keys(value)
  const amount = value["amount"]
  const currency = value["currency"]
  if (keys.length !== 2 || typeof amount !== "string" || typeof currency !== "string") return undefined
  if (!minorPattern.test(amount) || !Currency.isCurrency(currency)) return undefined
  return { amount: Money.toMajorUnitsString(Money.make(BigInt(amount), currency)), currency }
}

/**
 * A JSON value of the intake made plain: every stored amount (`{amount, currency}` in minor
 * units) in major units, an error's or a result's `_tag` kept as is.
 */
export const plain = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(plain)
  if (!isRecord(value)) return value
  const money = moneyToMajor(value)
  if (money !== undefined) return money
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) out[key] = plain(item)
  return out
}

/** A nested error (`OperationRejected.error`) with `code` for its tag, as the error classes show it. */
const nestedErrors = (fields: Record<string, unknown>): Record<string, unknown> => {
  const error = fields["error"]
  if (!isRecord(error) || typeof error["_tag"] !== "string") return fields
  const { _tag, ...rest } = error
  return { ...fields, error: { code: _tag, ...rest } }
}

/** The first `Fail` of an encoded cause, or its first `Die`. */
const failureOf = (
  cause: unknown
):
  | { readonly _tag: "Fail"; readonly error: unknown }
  | { readonly _tag: "Die"; readonly defect: unknown }
  | undefined => {
  if (!isRecord(cause)) return undefined
  switch (cause["_tag"]) {
    case "Fail":
      return { _tag: "Fail", error: cause["error"] }
    case "Die":
      return { _tag: "Die", defect: cause["defect"] }
    case "Sequential":
    case "Parallel": {
      const left = failureOf(cause["left"])
      const right = failureOf(cause["right"])
      return left?._tag === "Fail" ? left : right?._tag === "Fail" ? right : (left ?? right)
    }
    default:
      return undefined
  }
}

/** The error of an encoded Effect error (`{ _tag, message, … }`). */
export const errorOf = (json: unknown): Errors.TillflowError => {
  if (!isRecord(json))
    return new Errors.Defect("Defect", `an error that is not an object: ${JSON.stringify(json)}`)
  return Errors.fromJson(nestedErrors(plain(json) as Record<string, unknown>))
}

/** A stored exit (`{ _tag: "Success", value }` or `{ _tag: "Failure", cause }`): its value, or its error. */
export const exitOf = (
  exit: unknown
):
  | { readonly _tag: "Success"; readonly value: unknown }
  | { readonly _tag: "Failure"; readonly error: Errors.TillflowError } => {
  if (isRecord(exit) && exit["_tag"] === "Success") return { _tag: "Success", value: plain(exit["value"]) }
  const failure = isRecord(exit) ? failureOf(exit["cause"]) : undefined
  if (failure?._tag === "Fail") return { _tag: "Failure", error: errorOf(failure.error) }
  const defect = failure?._tag === "Die" ? failure.defect : exit
  const text =
    isRecord(defect) && typeof defect["message"] === "string" ? defect["message"] : JSON.stringify(defect)
  return { _tag: "Failure", error: new Errors.Defect("Defect", `the operation died: ${text}`) }
}
