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

const isDigitCode = (code: number): boolean => code >= 48 && code <= 57

/**
 * The most digits in one run of digit groups separated by single spaces or dashes (what
 * `digitRuns` matches): below 13, no run can hold a card number. Hex digests and ids,
 * whose digits are broken up by letters, are cleared here without a regular expression.
 */
const mostDigitsInARun = (text: string): number => {
  let most = 0
  let i = 0
  while (i < text.length) {
    if (!isDigitCode(text.charCodeAt(i))) {
      i++
      continue
    }
    let digits = 0
    while (i < text.length) {
      const code = text.charCodeAt(i)
      if (isDigitCode(code)) {
        digits++
        i++
      } else if ((code === 32 || code === 45) && i + 1 < text.length && isDigitCode(text.charCodeAt(i + 1))) {
        i++
      } else {
        break
      }
    }
    if (digits > most) most = digits
  }
  return most
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** A UUID inside a longer text (`attempt-<uuid>`), not part of a longer alphanumeric token. */
const uuidToken =
  /(?<![0-9A-Za-z])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9A-Za-z])/gi
/**
 * A W3C `traceparent` (`00-<trace id>-<span id>-<flags>`, what the engine keeps in
 * `WorkflowStarted` metadata): its span id is 16 random hexadecimal digits, all of them
 * decimal once in ~1,800, and such a one passing a card's prefix and Luhn refused about
 * one start in 15,000.
 */
const traceparentToken = /(?<![0-9A-Za-z])[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(?![0-9A-Za-z])/gi
const digitRuns = /\d+(?:[ -]\d+)*/g

const letter = /[A-Za-z]/

/**
 * True when `text` holds a card number: a run of digit groups separated by single spaces or
 * dashes, any consecutive groups of which join to a card number. Not examined: a run right
 * after `+` (a phone number), a UUID (the whole string or a token in it, as in the stream
 * id `attempt-<uuid>`), a W3C `traceparent`, and a run touching a letter — a piece of a longer alphanumeric
 * token such as a hex digest or an id. In those, digit runs passing Luhn occur by chance
 * (about 1 in 600 SHA-256 digests; 1 in 55,000 `attempt-<uuid>` ids, whose UUID's first
 * groups can be all digits) and would refuse tillflow's own events.
 */
export const containsCardNumber = (text: string): boolean => {
  if (text.length < 13 || mostDigitsInARun(text) < 13 || uuidPattern.test(text)) return false
  const scanned = text.includes("-")
    ? text.replace(uuidToken, "uuid").replace(traceparentToken, "traceparent")
    : text
  for (const match of scanned.matchAll(digitRuns)) {
    const index = match.index ?? 0
    if (index > 0 && scanned[index - 1] === "+") continue
    const before = index > 0 ? scanned[index - 1] : undefined
    const after = scanned[index + match[0].length]
    if ((before !== undefined && letter.test(before)) || (after !== undefined && letter.test(after))) continue
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

// Field names repeat across events: remember the verdicts (bounded, cleared when full).
const nameCache = new Map<string, Option.Option<Rule>>()
const nameCacheLimit = 10_000

/** The rule a field name falls under, if any, regardless of its value. */
export const ruleForName = (name: string): Option.Option<Rule> => {
  const cached = nameCache.get(name)
  if (cached !== undefined) return cached
  const rule = computeRuleForName(name)
  if (nameCache.size >= nameCacheLimit) nameCache.clear()
  nameCache.set(name, rule)
  return rule
}

const computeRuleForName = (name: string): Option.Option<Rule> => {
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

type Segment = string | number

// The path is kept as segments and only rendered for a finding: most values are clean.
const renderPath = (root: string, segments: ReadonlyArray<Segment>): string =>
  segments.reduce<string>(
    (path, segment) =>
      typeof segment === "number"
        ? `${path}[${segment}]`
        : /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(segment)
          ? `${path}.${segment}`
          : `${path}[${JSON.stringify(segment)}]`,
    root
  )

/** True when the value holds something a secret could be: a non-empty string or a number. */
const holdsSomething = (value: unknown): boolean => {
  if (typeof value === "string") return value.length > 0
  if (typeof value === "number") return true
  if (Array.isArray(value)) return value.some(holdsSomething)
  if (typeof value === "object" && value !== null) return Object.values(value).some(holdsSomething)
  return false
}

interface RawFinding {
  readonly segments: ReadonlyArray<Segment>
  readonly rule: Rule
}

const scanValue = (value: unknown, segments: Array<Segment>): RawFinding | undefined => {
  if (typeof value === "string") {
    return containsCardNumber(value) ? { segments: [...segments], rule: "CardNumber" } : undefined
  }
  if (typeof value === "number") {
    return Number.isSafeInteger(value) && value > 0 && isCardNumber(String(value))
      ? { segments: [...segments], rule: "CardNumber" }
      : undefined
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      segments.push(i)
      const found = scanValue(value[i], segments)
      segments.pop()
      if (found !== undefined) return found
    }
    return undefined
  }
  if (typeof value === "object" && value !== null) {
    for (const key in value) {
      if (!Object.prototype.hasOwnProperty.call(value, key)) continue
      const member = (value as Record<string, unknown>)[key]
      segments.push(key)
      const byName = ruleForName(key)
      const found =
        Option.isSome(byName) && holdsSomething(member)
          ? { segments: [...segments], rule: byName.value }
          : scanValue(member, segments)
      segments.pop()
      if (found !== undefined) return found
    }
  }
  return undefined
}

/**
 * Scans a JSON value for secrets; `root` prefixes the reported path (`data`, `metadata`).
 * Returns the first finding, in document order.
 *
 * @example
 * scan({ card: { cvv: "123" } }, "data") // Option.some({ path: "data.card.cvv", rule: "CardSecurityCode" })
 */
export const scan = (value: unknown, root: string): Option.Option<Finding> => {
  const found = scanValue(value, [])
  return found === undefined
    ? Option.none()
    : Option.some({ path: renderPath(root, found.segments), rule: found.rule })
}

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
