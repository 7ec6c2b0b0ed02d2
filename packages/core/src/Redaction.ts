/**
 * The last line of defence against secrets in the event log: a pure scan that the event
 * store runs on every event before it is appended, refusing (with a typed error that names
 * the event type, the JSON path and the rule, never the value) anything that looks like a
 * full card number, a card security code, an API key, a terminal's shared secret key (`ssk`)
 * or a callback/auth token. Other code must not put them there in the first place; this
 * module makes sure a mistake elsewhere fails loudly instead of leaking silently.
 *
 * Rules (field names are split into lowercase words at camelCase, `_`, `-` and spaces;
 * `un masked`, `api key`, `security code`, `card verification value` are read as one word):
 *
 * | rule               | refused when                                                              |
 * |--------------------|---------------------------------------------------------------------------|
 * | `CardNumber`       | a string holds a run of 13–19 digits (optionally grouped by single spaces |
 * |                    | or dashes) with a payment-card prefix (2221–2720, 30, 34–39, 4, 5, 6)      |
 * |                    | that passes the Luhn check; or an integer number does the same            |
 * | `UnmaskedPan`      | a field name contains `unmasked` and ends in `pan`, `number`, `cardnumber` |
 * | `CardSecurityCode` | a field name contains `cvv`, `cvv2`, `cvc`, `cvc2`, `cvn`, `csc` or       |
 * |                    | `securitycode`, unless its last word only describes the code (`required`, |
 * |                    | `result`, `check`, `status`, …): `cvvRequired` is fine, `cvvHash` is not   |
 * | `ApiKey`           | a field name's last word is `apikey` (`apiKey`, `ApiKeyCloud`, `api_key`)  |
 * | `SharedSecretKey`  | a field name's last word is `ssk`                                          |
 * | `Token`            | a field name's last word is `token`/`tokens` (`token`, `callbackToken`,    |
 * |                    | `authToken`, `AUTH-TOKEN`), except `cardToken`, the gateway's token for a  |
 * |                    | card, which is meant to be kept                                            |
 *
 * "Last word" ignores trailing qualifiers that name the same secret (`cloud`, `value`,
 * `secret`, `raw`, `plain`, `plaintext`), so `ApiKeyCloud` and `tokenValue` are refused while
 * `tokenHash`, `apiKeyId` and `tokenType` are allowed: a hash of a high-entropy secret is safe
 * to keep, a hash of a 3-digit CVV is not. A name rule fires only when the value holds
 * something (a non-empty string, a number, or an object/array with such a value inside);
 * `null`, `""` and booleans never carry a secret.
 *
 * Deliberate non-matches (false positives the rules avoid): UUIDs; epoch-millisecond
 * timestamps (13 digits starting with 1); `YYYYMMDDHHmmssSSS` timestamps (the prefix `20xx` is
 * below the Mastercard 2-series); digit runs after a `+` (E.164 phone numbers); masked card
 * numbers (`411111******1111`); amounts. A 13–19 digit identifier with a card prefix that
 * happens to pass Luhn is refused: that is the price of never storing a PAN.
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/** The kind of secret a rule protects. */
export const Rule = Schema.Literal(
  "CardNumber",
  "UnmaskedPan",
  "CardSecurityCode",
  "ApiKey",
  "SharedSecretKey",
  "Token"
)
export type Rule = typeof Rule.Type

const ruleDescriptions: Record<Rule, string> = {
  CardNumber: "a full card number",
  UnmaskedPan: "an unmasked card number field",
  CardSecurityCode: "a card security code (CVV/CVC)",
  ApiKey: "an API key",
  SharedSecretKey: "a terminal shared secret key (ssk)",
  Token: "a callback or authentication token"
}

/** Where a sensitive value was found (a JSON path such as `data.card.number`) and by which rule. */
export interface Finding {
  readonly path: string
  readonly rule: Rule
}

/**
 * The store refused an event because it carries something that looks like a secret. The
 * error names the event type, the JSON path and the rule; it never holds the value.
 */
export class SensitiveDataRefused extends Schema.TaggedError<SensitiveDataRefused>()("SensitiveDataRefused", {
  eventType: Schema.String,
  path: Schema.String,
  rule: Rule
}) {
  override get message(): string {
    return `Event "${this.eventType}" refused: ${this.path} looks like ${ruleDescriptions[this.rule]}, which must never be stored`
  }
}

// ---------------------------------------------------------------------------------------
// Card numbers

/** The Luhn (mod 10) check of a string of digits. */
export const luhn = (digits: string): boolean => {
  let sum = 0
  let double = false
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48
    if (d < 0 || d > 9) return false
    if (double) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
    double = !double
  }
  return digits.length > 0 && sum % 10 === 0
}

const hasCardPrefix = (digits: string): boolean => {
  switch (digits[0]) {
    case "4":
    case "5":
    case "6":
      return true
    case "3": {
      // Diners 30, 36, 38, 39; Amex 34, 37; JCB 35.
      const two = digits[1]
      return two === "0" || (two !== undefined && two >= "4")
    }
    case "2": {
      // Mastercard 2-series.
      const four = Number(digits.slice(0, 4))
      return four >= 2221 && four <= 2720
    }
    default:
      return false
  }
}

/** True for 13–19 digits with a payment-card prefix that pass Luhn. */
export const isCardNumber = (digits: string): boolean =>
  digits.length >= 13 && digits.length <= 19 && /^\d+$/.test(digits) && hasCardPrefix(digits) && luhn(digits)

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const digitRuns = /\d+(?:[ -]\d+)*/g

/**
 * True when `text` holds a card number: a run of digit groups separated by single spaces or
 * dashes, any consecutive groups of which join to a card number. A run right after `+` (a
 * phone number) and a whole-string UUID are not examined.
 */
export const containsCardNumber = (text: string): boolean => {
  if (text.length < 13 || uuidPattern.test(text)) return false
  for (const match of text.matchAll(digitRuns)) {
    const index = match.index ?? 0
    if (index > 0 && text[index - 1] === "+") continue
    const groups = match[0].split(/[ -]/)
    for (let start = 0; start < groups.length; start++) {
      let joined = ""
      for (let end = start; end < groups.length; end++) {
        joined += groups[end]
        if (joined.length > 19) break
        if (joined.length >= 13 && isCardNumber(joined)) return true
      }
    }
  }
  return false
}

// ---------------------------------------------------------------------------------------
// Field names

/** Splits a field name into lowercase words and joins the multi-word secrets into one. */
export const words = (name: string): ReadonlyArray<string> => {
  const raw = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word.length > 0)
    .map((word) => word.toLowerCase())
  const joined: Array<string> = []
  for (let i = 0; i < raw.length; i++) {
    const word = raw[i]
    const next = raw[i + 1]
    if (word === "un" && next === "masked") {
      joined.push("unmasked")
      i++
    } else if (word === "api" && next === "key") {
      joined.push("apikey")
      i++
    } else if (word === "security" && next === "code") {
      joined.push("securitycode")
      i++
    } else if (word === "card" && next === "verification" && raw[i + 2] === "value") {
      joined.push("cvv")
      i += 2
    } else {
      joined.push(word)
    }
  }
  return joined
}

const sameSecretQualifiers = new Set(["cloud", "value", "secret", "raw", "plain", "plaintext"])
const securityCodeWords = new Set(["cvv", "cvv2", "cvc", "cvc2", "cvn", "cvn2", "csc", "securitycode"])
const securityCodeDescriptors = new Set([
  "required",
  "result",
  "results",
  "check",
  "checked",
  "status",
  "present",
  "provided",
  "indicator",
  "mode",
  "policy",
  "match",
  "response",
  "enabled",
  "supported",
  "length"
])

/** The rule a field name falls under, if any, regardless of its value. */
export const ruleForName = (name: string): Option.Option<Rule> => {
  const all = words(name)
  if (all.length === 0) return Option.none()
  const core = [...all]
  while (core.length > 1 && sameSecretQualifiers.has(core[core.length - 1])) core.pop()
  const last = core[core.length - 1]
  const beforeLast = core[core.length - 2]

  if (all.includes("unmasked") && (last === "pan" || last === "number" || last === "cardnumber")) {
    return Option.some("UnmaskedPan")
  }
  if (all.some((word) => securityCodeWords.has(word)) && !securityCodeDescriptors.has(last)) {
    return Option.some("CardSecurityCode")
  }
  // The flattened name catches odd casings such as `ApiKeyCLoud` that split into other words.
  const flat = name.toLowerCase().replace(/[^a-z0-9]/g, "")
  if (last === "apikey" || /apikey(cloud)?$/.test(flat)) return Option.some("ApiKey")
  if (last === "ssk") return Option.some("SharedSecretKey")
  if ((last === "token" || last === "tokens") && !(beforeLast === "card" && last === "token")) {
    return Option.some("Token")
  }
  return Option.none()
}

// ---------------------------------------------------------------------------------------
// Scanning

const pathOfKey = (path: string, key: string): string =>
  /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`

/** True when the value holds something a secret could be: a non-empty string or a number. */
const holdsSomething = (value: unknown): boolean => {
  if (typeof value === "string") return value.length > 0
  if (typeof value === "number") return true
  if (Array.isArray(value)) return value.some(holdsSomething)
  if (typeof value === "object" && value !== null) return Object.values(value).some(holdsSomething)
  return false
}

const scanValue = (value: unknown, path: string): Option.Option<Finding> => {
  if (typeof value === "string") {
    return containsCardNumber(value) ? Option.some({ path, rule: "CardNumber" }) : Option.none()
  }
  if (typeof value === "number") {
    return Number.isSafeInteger(value) && value > 0 && isCardNumber(String(value))
      ? Option.some({ path, rule: "CardNumber" })
      : Option.none()
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = scanValue(value[i], `${path}[${i}]`)
      if (Option.isSome(found)) return found
    }
    return Option.none()
  }
  if (typeof value === "object" && value !== null) {
    for (const [key, member] of Object.entries(value)) {
      const memberPath = pathOfKey(path, key)
      const byName = ruleForName(key)
      if (Option.isSome(byName) && holdsSomething(member)) {
        return Option.some({ path: memberPath, rule: byName.value })
      }
      const found = scanValue(member, memberPath)
      if (Option.isSome(found)) return found
    }
  }
  return Option.none()
}

/**
 * Scans a JSON value for secrets; `root` prefixes the reported path (`data`, `metadata`).
 * Returns the first finding, in document order.
 *
 * @example
 * scan({ card: { cvv: "123" } }, "data") // Option.some({ path: "data.card.cvv", rule: "CardSecurityCode" })
 */
export const scan = (value: unknown, root: string): Option.Option<Finding> => scanValue(value, root)

/** What {@link check} looks at: the stream id, the event type, its data and metadata. */
export interface Scannable {
  readonly streamId: string
  readonly type: string
  readonly data: unknown
  readonly metadata: unknown
}

/**
 * Checks one event before it is appended; the error names the event type, the path and the
 * rule. The stream id is checked too (a card number in an id would leak into every row).
 */
export const check = (event: Scannable): Option.Option<SensitiveDataRefused> => {
  const found = Option.orElse(
    Option.orElse(
      containsCardNumber(event.streamId)
        ? Option.some<Finding>({ path: "streamId", rule: "CardNumber" })
        : Option.none(),
      () => scan(event.data, "data")
    ),
    () => scan(event.metadata, "metadata")
  )
  return Option.map(
    found,
    (finding) => new SensitiveDataRefused({ eventType: event.type, path: finding.path, rule: finding.rule })
  )
}
