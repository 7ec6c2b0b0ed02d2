/**
 * Amount arithmetic of the simulator, in bigint minor units only: parsing the integer
 * minor-unit strings of terminal operations, the decimal major-unit strings of the
 * terminal-less endpoints, and formatting back. No floating point anywhere.
 */
import { Currency } from "@tillflow/core"

/** ISO 4217 exponent of a currency code, or undefined when the service does not know it. */
export const exponentOf = (currency: string): number | undefined =>
  Currency.isCurrency(currency) ? Currency.exponents[currency] : undefined

/** A positive integer string of minor units ("1000" is 10.00 in a two-decimal currency). */
export const parseMinor = (input: unknown): bigint | undefined => {
  if (typeof input !== "string" || !/^[0-9]{1,18}$/.test(input)) return undefined
  return BigInt(input)
}

/**
 * A decimal string in major units ("5.25") to minor units; a JSON number is read through
 * its shortest decimal representation (older clients sent tips as numbers), never through
 * floating-point arithmetic. More decimals than the currency has are refused unless zeros.
 */
export const parseMajor = (input: unknown, exponent: number): bigint | undefined => {
  let text: string
  if (typeof input === "string") text = input.trim()
  else if (typeof input === "number" && Number.isFinite(input)) text = String(input)
  else return undefined
  const match = /^(-?)([0-9]{1,15})(?:\.([0-9]{1,12}))?$/.exec(text)
  if (match === null) return undefined
  const [, sign = "", whole = "0", fraction = ""] = match
  const significant = fraction.replace(/0+$/, "")
  if (significant.length > exponent) return undefined
  const minor = BigInt(whole + significant.padEnd(exponent, "0"))
  return sign === "-" ? -minor : minor
}

/** Minor units to a decimal string in major units, dot separated ("-37.57"). */
export const formatMajor = (minor: bigint, exponent: number): string => {
  const negative = minor < 0n
  const digits = (negative ? -minor : minor).toString().padStart(exponent + 1, "0")
  const whole = digits.slice(0, digits.length - exponent)
  const fraction = digits.slice(digits.length - exponent)
  return `${negative ? "-" : ""}${whole}${exponent > 0 ? `.${fraction}` : ""}`
}

/** `10^n` as a bigint. */
export const pow10 = (n: number): bigint => 10n ** BigInt(n)
