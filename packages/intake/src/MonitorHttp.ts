/**
 * The handlers of the monitor's routes (`MonitorApi`) over the `Monitor` in context; the
 * live feed is written as server-sent events, a comment every 15 s keeping idle
 * connections open through proxies.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { MerchantKeys } from "@tillflow/core"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { CurrentOperator, IntakeApi } from "./IntakeApi.js"
import * as Monitor from "./Monitor.js"

const encoder = new TextEncoder()

/** One server-sent event (its position, stream, type and time; not whose it is). */
export const sseEvent = (event: Monitor.LiveEvent): string =>
  `id: ${event.position}\nevent: log\ndata: ${JSON.stringify({
    position: event.position,
    streamId: event.streamId,
    type: event.type,
    recordedAt: event.recordedAt
  })}\n\n`

/**
 * The live feed a credential may see: every event for the platform's; for one limited to
 * merchants, only the events its merchant's executions wrote (their `tenant`) — deny by
 * default: an event that names no merchant is not sent to it.
 */
export const liveFor = (
  live: Stream.Stream<Monitor.LiveEvent>,
  limitedTo: string | undefined
): Stream.Stream<Monitor.LiveEvent> =>
  limitedTo === undefined ? live : Stream.filter(live, (event) => event.tenant === limitedTo)

/** The monitor's group of the intake API. */
export const MonitorLive = HttpApiBuilder.group(IntakeApi, "monitor", (handlers) =>
  Effect.gen(function* () {
    const monitor = yield* Monitor.Monitor
    // The service's view: a credential limited to merchants gets its own, never the platform's (`Scope`).
    return handlers
      .handle("service", () =>
        Effect.flatMap(CurrentOperator, (operator) =>
          operator.merchants === undefined ? monitor.service : monitor.ownService
        )
      )
      .handle("terminals", () => monitor.terminals)
      .handle("executions", ({ urlParams }) => monitor.search(urlParams))
      .handle("alerts", ({ urlParams }) => monitor.alerts(urlParams))
      .handle("acknowledgeAlert", ({ path, payload }) =>
        Effect.flatMap(CurrentOperator, (operator) =>
          monitor.acknowledge(path.alertId, operator.name, payload)
        )
      )
      .handle("resolveAlert", ({ path, payload }) =>
        Effect.flatMap(CurrentOperator, (operator) => monitor.resolve(path.alertId, operator.name, payload))
      )
      .handle("live", () =>
        Effect.map(Effect.all([CurrentOperator, MerchantKeys.currentMerchant]), ([operator, merchant]) =>
          HttpServerResponse.stream(
            Stream.merge(
              Stream.make(": connected\n\n"),
              Stream.merge(
                Stream.map(
                  liveFor(monitor.live, merchant ?? (operator.merchants === undefined ? undefined : "")),
                  sseEvent
                ),
                Stream.fromSchedule(Schedule.spaced("15 seconds")).pipe(Stream.as(": keep-alive\n\n"))
              )
            ).pipe(Stream.map((text) => encoder.encode(text))),
            {
              contentType: "text/event-stream",
              headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
            }
          )
        )
      )
  })
)
