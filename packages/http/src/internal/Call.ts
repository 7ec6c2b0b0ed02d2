/**
 * How one endpoint is called: each attempt with its own exchange cell and deadline and
 * every failure typed (`Failure`); a request that may have reached a terminal or the
 * gateway sent `once`, a pure `read` retried a few times while its outcome is unknown; an
 * unknown outcome logged as a warning either way.
 */
import type { RemoteError } from "@tillflow/core"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as TerminalCloudConfig from "../TerminalCloudConfig.js"
import * as Exchange from "./Exchange.js"
import { AttemptTimedOut, type Failure, isTransient, toRemoteError } from "./Failure.js"

/** Calls an endpoint: `endpoint` names it in the exchange and the logs. */
export type Call = <A>(
  endpoint: string,
  call: Effect.Effect<A, Failure>
) => Effect.Effect<A, RemoteError.RemoteError>

/** The two ways of calling, with the deadline and read retries of `config`. */
export const make = (
  config: TerminalCloudConfig.TerminalCloudConfig
): { readonly once: Call; readonly read: Call } => {
  const retryReads = Schedule.exponential(config.readRetryDelay).pipe(
    Schedule.jittered,
    Schedule.intersect(Schedule.recurs(config.readRetries))
  )

  /** One attempt: its own exchange cell and deadline, every failure typed. */
  const attempt: Call = (endpoint, call) =>
    Effect.suspend(() => {
      const exchange = Exchange.empty(endpoint)
      return call.pipe(
        Effect.timeoutFail({
          duration: config.requestTimeout,
          onTimeout: () => new AttemptTimedOut({ after: config.requestTimeout })
        }),
        Effect.provideService(Exchange.CurrentExchange, exchange),
        Effect.mapError((failure) => toRemoteError(failure, exchange)),
        Effect.onExit(() =>
          exchange.response === undefined
            ? Effect.void
            : Effect.annotateCurrentSpan("http.response.status_code", exchange.response.status)
        )
      )
    })

  const warnIfUnknown = (endpoint: string) => (error: RemoteError.RemoteError) =>
    error._tag === "OutcomeUnknown"
      ? Effect.logWarning("TerminalCloud: outcome unknown").pipe(
          Effect.annotateLogs({
            endpoint,
            reason: error.reason,
            status: error.status === undefined ? "none" : String(error.status)
          })
        )
      : Effect.void

  /** A request that may have reached a terminal or the gateway: one attempt, never retried. */
  const once: Call = (endpoint, call) =>
    attempt(endpoint, call).pipe(Effect.tapError(warnIfUnknown(endpoint)))

  /** A read: retried a few times on 5xx, network error or timeout. */
  const read: Call = (endpoint, call) =>
    attempt(endpoint, call).pipe(
      Effect.tapError((error) =>
        isTransient(error)
          ? Effect.logDebug("TerminalCloud: read failed").pipe(
              Effect.annotateLogs({
                endpoint,
                reason: error._tag === "OutcomeUnknown" ? error.reason : error._tag
              })
            )
          : Effect.void
      ),
      Effect.retry({ schedule: retryReads, while: isTransient }),
      Effect.tapError(warnIfUnknown(endpoint))
    )

  return { once, read }
}
