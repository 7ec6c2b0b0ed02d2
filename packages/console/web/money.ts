/**
 * Money as people read it: major units with the currency, computed from integer minor
 * units as strings and bigints, never through a floating-point number. The exponent of a
 * currency (2 for EUR, 0 for JPY, 3 for BHD) is the one the browser's Intl knows for it.
 */

/** The ISO 4217 exponent of `currency`. */
export const exponentOf = (currency: string): number => {
  try {
    return (
      new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ??
      2
    )
  } catch {
    return 2
  }
}

/** `"1050"`, `"EUR"` → `"10.50 EUR"`; a negative amount keeps its sign. */
export const fromMinor = (minor: string | bigint, currency: string): string => {
  const value = typeof minor === "bigint" ? minor : BigInt(minor)
  const exponent = exponentOf(currency)
  const negative = value < 0n
  const digits = (negative ? -value : value).toString().padStart(exponent + 1, "0")
  const whole = digits.slice(0, digits.length - exponent)
  const fraction = exponent === 0 ? "" : `.${digits.slice(digits.length - exponent)}`
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",")
  return `${negative ? "-" : ""}${grouped}${fraction} ${currency}`
}

/** `"10.5"`, `"EUR"` → `"1050"`; undefined when it is not an amount of that currency. */
export const toMinor = (major: string, currency: string): string | undefined => {
  const exponent = exponentOf(currency)
  const match = /^(\d{1,12})(?:\.(\d*))?$/.exec(major.trim())
  if (match === null) return undefined
  const fraction = match[2] ?? ""
  if (fraction.length > exponent) return undefined
  return (
    BigInt(match[1] ?? "0") * 10n ** BigInt(exponent) +
    BigInt(fraction.padEnd(exponent, "0") || "0")
  ).toString()
}

/** Money in JSON form (`{amount: "1050", currency: "EUR"}`) as text, or undefined. */
export const ofJson = (value: unknown): string | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  const { amount, currency } = value as { amount?: unknown; currency?: unknown }
  if (typeof amount !== "string" || typeof currency !== "string" || !/^-?\d+$/.test(amount)) return undefined
  return fromMinor(amount, currency)
}
