/**
 * How a failed call of the runtime becomes the Promise API's error: an Effect error as its
 * class, an error of the Promise API thrown while a request was built as itself, an
 * interruption (the instance closed) as \`Closed\`, anything else as a \`Defect\`.
 */
import * as Cause from "effect/Cause"
import * as Option from "effect/Option"
import * as Errors from "../Errors.js"
import * as Plain from "./Plain.js"

/** An Effect error (a `Schema.TaggedError`) as the Promise API's error class. */
export const fromEffectError = (error: unknown): Errors.TillflowError => {
  if (error instanceof Errors.TillflowError) return error
  if (typeof error === "object" && error !== null && "_tag" in error) {
    const tagged = error as { readonly _tag: unknown; readonly message?: unknown }
    return Plain.errorOf({ ...error, _tag: tagged._tag, message: tagged.message })
  }
  return new Errors.Defect("Defect", String(error))
}

/** The error of a failed call. */
export const fromCause = (cause: Cause.Cause<unknown>): Errors.TillflowError => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) return fromEffectError(failure.value)
  // Input refused while the request was being built (an amount, a currency) is thrown as is.
  const defect = Cause.dieOption(cause)
  if (Option.isSome(defect) && defect.value instanceof Errors.TillflowError) return defect.value
  if (Cause.isInterruptedOnly(cause)) return new Errors.Closed("Closed", "the instance was closed")
  return new Errors.Defect("Defect", Cause.pretty(cause))
}
