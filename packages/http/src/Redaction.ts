/**
 * What is secret on the wire and how it is kept out of spans, logs and errors: the
 * header names @effect/platform must redact in its own HTTP spans (`ApiKeyCloud`,
 * `AUTH-TOKEN`, on top of its defaults), and the JSON keys whose values are replaced
 * before a request or an undecodable body is kept in an error (API key, callback token,
 * `ssk`, full card numbers, security codes).
 */
import * as Headers from "@effect/platform/Headers"
import { RemoteApi } from "@tillflow/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** The header names redacted in HTTP spans, beyond the platform's defaults. */
export const headerNames: ReadonlyArray<string> = [
  RemoteApi.API_KEY_HEADER.toLowerCase(),
  RemoteApi.AUTH_TOKEN_HEADER.toLowerCase()
]

/**
 * Runs an effect with `ApiKeyCloud` and `AUTH-TOKEN` added to the header names that
 * @effect/platform redacts when it records headers on a span (`http.request.header.*`).
 * The HTTP `TerminalCloud` applies it to every call; a server receiving callbacks
 * should apply it too.
 */
export const withRedactedHeaders = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locallyWith(effect, Headers.currentRedactedNames, (names) => [
    ...names,
    ...headerNames.filter((n) => !names.includes(n))
  ])

/**
 * Adds `ApiKeyCloud` and `AUTH-TOKEN` to the redacted header names of everything the
 * layer is provided to — including the formatting of errors that carry a request (an
 * `HttpClientError` keeps its request's headers, shown redacted by name).
 */
export const layer: Layer.Layer<never> = Layer.scopedDiscard(
  Effect.locallyScopedWith(Headers.currentRedactedNames, (names) => [
    ...names,
    ...headerNames.filter((n) => !names.includes(n))
  ])
)

/** What replaces a secret value. */
export const REDACTED = "<redacted>"

/**
 * JSON keys (compared case-insensitively, ignoring `-` and `_`) whose values never leave
 * the process in an error, a span or a log: the API key, the callback token, the
 * terminal's shared secret, full card numbers and security codes. A `cardToken` is
 * kept: it is not card data, it is what a MOTO sale needs and what results return.
 */
export const secretKeys: ReadonlyArray<string> = [
  "apikey",
  "apikeycloud",
  "authtoken",
  "token",
  "ssk",
  "unmaskedpan",
  "pan",
  "cardnumber",
  "cvv",
  "cvv2",
  "cvc",
  "securitycode",
  "password"
]

const normalise = (key: string): string => key.toLowerCase().replace(/[-_]/g, "")

/** Whether a JSON key names a secret. */
export const isSecretKey = (key: string): boolean => secretKeys.includes(normalise(key))

/** A JSON value with every secret value replaced by `REDACTED`, at any depth. */
export const scrubJson = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(scrubJson)
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {}
    for (const [key, inner] of Object.entries(value)) {
      out[key] = isSecretKey(key) && inner !== null && inner !== "" ? REDACTED : scrubJson(inner)
    }
    return out
  }
  return value
}

const keyValue = /"([^"\\]{1,64})"\s*:\s*("(?:[^"\\]|\\.)*"?|[^,}\]\s]+)/g

/**
 * A body text with its secrets replaced: JSON is parsed, scrubbed and written back;
 * text that is not JSON (a truncated body, say) has every `"secretKey": value` pair
 * it contains replaced in place.
 */
export const scrubText = (text: string): string => {
  try {
    return JSON.stringify(scrubJson(JSON.parse(text)))
  } catch {
    return text.replace(keyValue, (pair: string, key: string) =>
      isSecretKey(key) ? `"${key}":"${REDACTED}"` : pair
    )
  }
}
