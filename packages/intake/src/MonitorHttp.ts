/**
 * The handlers of the monitor's routes (`MonitorApi`) over the `Monitor` in context; the
 * live feed is written as server-sent events, a comment every 15 s keeping idle
 * connections open through proxies.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { CurrentOperator, IntakeApi } from "./IntakeApi.js"
import * as Monitor from "./Monitor.js"

const encoder = new TextEncoder()

/** One server-sent event. */
export const sseEvent = (event: Monitor.LiveEvent): string =>
  `id: ${event.position}\nevent: log\ndata: ${JSON.stringify(event)}\n\n`

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
        Effect.succeed(
          HttpServerResponse.stream(
            Stream.merge(
              Stream.make(": connected\n\n"),
              Stream.merge(
                Stream.map(monitor.live, sseEvent),
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
