/**
 * How the local intake says that something below it failed: the store or the queue did
 * not answer (`Unavailable`), or the remote service refused (this worker's key: also
 * `Unavailable`; the request: `InvalidRequest`), did not know or did not
 * answer — each turned into the intake's own errors, with what was being done in front;
 * and a request that does not decode, said field by field.
 */
import type { RemoteError } from "@tillflow/core"
import * as ParseResult from "effect/ParseResult"
import * as Intake from "../Intake.js"

/** The store or the queue did not answer while doing `what`. */
export const unavailable =
  (what: string) =>
  (error: { readonly message: string }): Intake.Unavailable =>
    new Intake.Unavailable({ message: `${what}: ${error.message}` })

const keyRefusedText = "the service refused this worker's API key"

/**
 * What a 401 or 403 of the service means for the intake: the service refused this
 * worker's API key — the operator's configuration, not the caller's request.
 */
export const keyRefused = (error: { readonly status: number; readonly message: string }): string =>
  `${keyRefusedText} (${error.status}: ${error.message}); an operator must set a valid TERMINAL_CLOUD_API_KEY`

/** Whether an intake error says the service refused this worker's API key. */
export const isKeyRefused = (error: Intake.IntakeError): boolean =>
  error._tag === "Unavailable" && error.message.includes(keyRefusedText)

/**
 * The remote service's error while doing `what`, as the intake's: not found is 404, no
 * answer and a refused API key are the worker's side (503), the rest the caller's (400).
 */
export const remoteFailure =
  (what: string) =>
  (error: RemoteError.RemoteError): Intake.NotFound | Intake.Unavailable | Intake.InvalidRequest =>
    error._tag === "NotFound"
      ? new Intake.NotFound({ message: `${what}: not found at the service` })
      : error._tag === "OutcomeUnknown"
        ? new Intake.Unavailable({ message: `${what}: the service did not answer (${error.message})` })
        : error._tag === "Forbidden"
          ? new Intake.Unavailable({ message: `${what}: ${keyRefused(error)}` })
          : new Intake.InvalidRequest({ message: `${what}: ${error.message}` })

/**
 * One issue's message, readable: an excess property (`is unexpected, expected: "a" | "b"`)
 * becomes `unknown field; allowed: a, b`.
 */
export const issueMessage = (issue: { readonly _tag: string; readonly message: string }): string => {
  if (issue._tag !== "Unexpected") return issue.message
  const expected = /expected: (.*)$/s.exec(issue.message)?.[1]
  const allowed = expected === undefined ? [] : Array.from(expected.matchAll(/"([^"]*)"/g), (m) => m[1])
  return allowed.length === 0 ? "unknown field" : `unknown field; allowed: ${allowed.join(", ")}`
}

/** An issue's path under `root` (`request.amount`). */
export const issuePath = (root: string, path: ReadonlyArray<PropertyKey>): string =>
  [root, ...path.map(String)].filter((part) => part !== "").join(".")

/** A refused decoding, said field by field (`request.amount: …; request.currency: …`). */
export const describeIssues = (error: ParseResult.ParseError, root: string): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .map((issue) => `${issuePath(root, issue.path)}: ${issueMessage(issue)}`)
    .join("; ")
