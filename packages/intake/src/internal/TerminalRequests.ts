/**
 * A terminal operation's request as the intake takes it: the service's own JSON turned
 * into the typed request — the operation one of the model's, the terminal's type looked up
 * when not given, a fresh transaction reference when an original operation has none — and
 * the test of a reused idempotency key: the same request again, or a different one.
 */
import { Enumerations, Identifiers, TransactionRequest } from "@tillflow/core"
import { HashChain } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Intake from "../Intake.js"
import { describeIssues } from "./Failures.js"

const decodeRequest = Schema.decodeUnknownEither(TransactionRequest.TransactionRequest)
const encodeRequest = Schema.encodeSync(TransactionRequest.TransactionRequest)
const decodeReference = Schema.decodeUnknownEither(Identifiers.TransactionReference)

/** A typed request, and whether its transaction reference was generated here. */
export interface Prepared {
  readonly request: TransactionRequest.TransactionRequest
  readonly generated: boolean
}

const operations: ReadonlyArray<string> = Enumerations.OperationType.literals

/**
 * The typed request of a JSON one: its terminal checked with `terminalTypeOf` (a listed
 * serial, of the type given if one is) and its type looked up when not given.
 */
export const prepare = (
  raw: Readonly<Record<string, unknown>>,
  terminalTypeOf: (
    serialNumber: string,
    given: string | undefined,
    fields: { readonly serial: string; readonly type: string }
  ) => Effect.Effect<string, Intake.IntakeError>
): Effect.Effect<Prepared, Intake.IntakeError> =>
  Effect.gen(function* () {
    if ("callbackUrl" in raw || "token" in raw) {
      return yield* new Intake.InvalidRequest({
        message: "request.callbackUrl and request.token are set by tillflow for each attempt: leave them out"
      })
    }
    const operation = raw["operation"]
    if (typeof operation !== "string" || !operations.includes(operation)) {
      return yield* new Intake.InvalidRequest({
        message: `request.operation must be one of ${operations.filter((o) => o !== "stopCurrentTransaction").join(", ")}`
      })
    }
    if (operation === "stopCurrentTransaction") {
      return yield* new Intake.InvalidRequest({
        message: "stopCurrentTransaction has its own endpoint: POST /v1/terminals/{serialNumber}/stop"
      })
    }
    let json: Record<string, unknown> = { ...raw }
    const serial = raw["serial_number"]
    const given = raw["terminal_type"]
    // Only a well-formed pair is checked: anything else is refused by the schema below.
    if (
      typeof serial === "string" &&
      serial.length > 0 &&
      (given === undefined || typeof given === "string")
    ) {
      json = {
        ...json,
        terminal_type: yield* terminalTypeOf(serial, given, {
          serial: "request.serial_number",
          type: "request.terminal_type"
        })
      }
    }
    const first = decodeRequest(json)
    if (Either.isRight(first)) return { request: first.right, generated: false }
    if (json["transactionReference"] === undefined) {
      const reference = yield* Identifiers.makeTransactionReference
      const second = decodeRequest({ ...json, transactionReference: reference })
      if (Either.isRight(second)) return { request: second.right, generated: true }
      const message = describeIssues(second.left, "request")
      if (!message.includes("transactionReference")) return yield* new Intake.InvalidRequest({ message })
    }
    return yield* new Intake.InvalidRequest({ message: describeIssues(first.left, "request") })
  })

/** The original's reference of a linked operation, if given; `InvalidRequest` when not a UUID v4. */
export const originalReference = (
  text: string | undefined
): Effect.Effect<Identifiers.TransactionReference | undefined, Intake.InvalidRequest> => {
  if (text === undefined) return Effect.succeed(undefined)
  const parsed = decodeReference(text)
  return Either.isLeft(parsed)
    ? Effect.fail(new Intake.InvalidRequest({ message: "originalTransactionReference must be a UUID v4" }))
    : Effect.succeed(parsed.right)
}

/** A transaction reference from a request, or the request refused. */
export const transactionReference = (
  text: string
): Effect.Effect<Identifiers.TransactionReference, Intake.InvalidRequest> =>
  Either.match(decodeReference(text), {
    onLeft: () =>
      Effect.fail(
        new Intake.InvalidRequest({ message: `"${text}" is not a transactionReference (a UUID v4)` })
      ),
    onRight: Effect.succeed
  })

/** An encoded request or payload in a form to compare, without its reference when it was generated. */
export const comparable = (encoded: unknown, dropReference: boolean): string => {
  const { transactionReference: _reference, ...rest } = encoded as Record<string, unknown>
  // Personal data is stored with a fresh salt each time it is encoded: compared by its value.
  const canonical = HashChain.canonicalJson(HashChain.personalValues(dropReference ? rest : encoded))
  return Either.isRight(canonical) ? canonical.right : JSON.stringify(encoded)
}

/** Whether a request stored under a key is the one asked again (a generated reference set aside). */
export const isSameRequest = (stored: unknown, prepared: Prepared): boolean =>
  comparable(stored, prepared.generated) === comparable(encodeRequest(prepared.request), prepared.generated)
