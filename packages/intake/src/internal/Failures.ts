/**
 * How the local intake says that something below it failed: the store or the queue did
 * not answer (`Unavailable`), or the remote service refused, did not know or did not
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

/** The remote service's error while doing `what`, as the intake's. */
export const remoteFailure =
  (what: string) =>
  (error: RemoteError.RemoteError): Intake.NotFound | Intake.Unavailable | Intake.InvalidRequest =>
    error._tag === "NotFound"
      ? new Intake.NotFound({ message: `${what}: not found at the service` })
      : error._tag === "OutcomeUnknown"
        ? new Intake.Unavailable({ message: `${what}: the service did not answer (${error.message})` })
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
