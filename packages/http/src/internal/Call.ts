/**
 * How one endpoint is called: each attempt with its own exchange cell and deadline and
 * every failure typed (`Failure`); a request that may have reached a terminal or the
 * gateway sent `once`, a pure `read` retried a few times while its outcome is unknown; an
 * unknown outcome logged as a warning either way.
 */
import { MerchantKeys, RemoteError } from "@tillflow/core"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schedule from "effect/Schedule"
import type * as TerminalCloudConfig from "../TerminalCloudConfig.js"
import * as Exchange from "./Exchange.js"
import { AttemptTimedOut, type Failure, isTransient, toRemoteError } from "./Failure.js"
import { currentKey } from "./Transport.js"

/** Calls an endpoint: `endpoint` names it in the exchange and the logs. */
export type Call = <A>(
  endpoint: string,
  call: Effect.Effect<A, Failure>
) => Effect.Effect<A, RemoteError.RemoteError>

/**
 * Makes a call with the keys of the merchant it is made for (`Tenant.current`), in
 * `keys`' order: a key the service refuses (403: not processed) is reported and the call
 * made again with the next one. No key that may be used: refused without sending; the
 * keys unreadable: an unknown outcome without sending (the workflow reconciles).
 */
const withMerchantKeys = <A>(
  keys: MerchantKeys.Service,
  endpoint: string,
  call: Effect.Effect<A, RemoteError.RemoteError>
): Effect.Effect<A, RemoteError.RemoteError> =>
  Effect.gen(function* () {
    const merchant = yield* MerchantKeys.currentMerchant
    const candidates = yield* keys.keysFor(merchant).pipe(
      Effect.mapError(
        (error) =>
          new RemoteError.OutcomeUnknown({
            message: `the keys of merchant ${merchant ?? "(own)"} could not be read (${error.message}): nothing was sent`,
            reason: "Network"
          })
      )
    )
    if (candidates.length === 0) {
      return yield* new RemoteError.Forbidden({
        message: `merchant ${merchant ?? "(own)"} has no API key that may be used (unknown, or every key retired): nothing was sent`,
        status: 403,
        body: ""
      })
    }
    let last: Exit.Exit<A, RemoteError.RemoteError> = Exit.fail(
      new RemoteError.Forbidden({ message: "no key was tried", status: 403, body: "" })
    )
    for (const candidate of candidates) {
      last = yield* Effect.exit(Effect.locally(call, currentKey, candidate.key))
      if (Exit.isSuccess(last) || !isForbidden(last)) return yield* last
      yield* keys.refused({ merchant, keyId: candidate.keyId, endpoint })
    }
    return yield* last
  })

const isForbidden = <A>(exit: Exit.Exit<A, RemoteError.RemoteError>): boolean =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error._tag === "Forbidden"

/** The two ways of calling, with the deadline and read retries of `config` and the merchant's `keys`. */
export const make = (
  config: TerminalCloudConfig.TerminalCloudConfig,
  keys: MerchantKeys.Service
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
    withMerchantKeys(keys, endpoint, attempt(endpoint, call)).pipe(Effect.tapError(warnIfUnknown(endpoint)))

  /** A read: retried a few times on 5xx, network error or timeout. */
  const read: Call = (endpoint, call) =>
    withMerchantKeys(
      keys,
      endpoint,
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
        Effect.retry({ schedule: retryReads, while: isTransient })
      )
    ).pipe(Effect.tapError(warnIfUnknown(endpoint)))

  return { once, read }
}
