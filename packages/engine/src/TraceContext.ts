/**
 * An execution's trace, carried across the queue: the W3C `traceparent` of the span that
 * started it is kept in its `WorkflowStarted` metadata, and every run of the execution (on
 * whichever worker, after any suspension) is a child of that span, so one payment is one
 * trace from the caller's request to its outcome. The sampling decision travels with it
 * (the flags), so a trace is kept or dropped whole. A workflow's own records may carry it
 * too (a payment's attempt does, so that the receipt of its callback joins the trace).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"

const pattern = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

/** The `traceparent` of the current span, if there is one (and its ids are W3C ids). */
export const current: Effect.Effect<string | undefined> = Effect.map(Effect.currentSpan, (span) => {
  const traceId = span.traceId.toLowerCase()
  const spanId = span.spanId.toLowerCase()
  return /^[0-9a-f]{32}$/.test(traceId) && /^[0-9a-f]{16}$/.test(spanId) && !/^0+$/.test(traceId)
    ? `00-${traceId}-${spanId}-${span.sampled ? "01" : "00"}`
    : undefined
}).pipe(Effect.orElseSucceed(() => undefined))

/** The span a `traceparent` names, as a parent for the spans of a run. */
export const parentOf = (traceparent: string | undefined): Option.Option<Tracer.ExternalSpan> => {
  const match = traceparent === undefined ? null : pattern.exec(traceparent)
  if (match === null) return Option.none()
  const [, traceId = "", spanId = "", flags = "00"] = match
  return Option.some(Tracer.externalSpan({ traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 }))
}
