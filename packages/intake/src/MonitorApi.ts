/**
 * The monitor's routes of the intake API (`Monitor`): the remote service's kind, the
 * terminals with their running operations, executions searched and filtered, the alerts,
 * and the log's events live as server-sent events. They need the same credential as
 * every intake route, the bearer token or the console's session cookie (`IntakeApi` adds
 * the authentication to this group: this module does not import it).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import * as Monitor from "./Monitor.js"

/** The alert the acknowledge and resolve routes' examples show. */
const acknowledgedExample: Monitor.AlertView = {
  id: "mismatch.3c1e0f4e2b7d4f0a9d6e5b4a3c2d1e0f.7",
  kind: "mismatch",
  executionId: "3c1e0f4e2b7d4f0a9d6e5b4a3c2d1e0f",
  at: 1767225600000,
  message: "a result says AUTHORISED but DECLINED was recorded (callback, attempt a1)",
  state: "acknowledged",
  acknowledged: { operator: "ana", reason: "calling the acquirer", at: 1767225660000 }
}

/** A step refused by the alert's state (409), with its example. */
const AlertStateConflictExample = Monitor.AlertStateConflict.annotations({
  examples: [
    new Monitor.AlertStateConflict({
      alertId: "mismatch.3c1e0f4e2b7d4f0a9d6e5b4a3c2d1e0f.7",
      state: "resolved",
      message:
        "alert mismatch.3c1e0f4e2b7d4f0a9d6e5b4a3c2d1e0f.7 is resolved (by ana): a resolved alert is not acknowledged"
    })
  ]
})

/** What an operator watches. */
export class MonitorGroup extends HttpApiGroup.make("monitor")
  .add(
    HttpApiEndpoint.get("service", "/v1/monitor/service")
      .addSuccess(
        Monitor.ServiceView.annotations({
          examples: [
            { kind: "simulator", terminals: [{ serialNumber: "0821032398", terminalType: "ANDROID" }] }
          ]
        })
      )
      .annotate(OpenApi.Summary, "The remote service")
      .annotate(
        OpenApi.Description,
        "The remote service: the built-in simulator (with its terminals) or the real one. A credential limited to merchants sees only its own: the kind, and the terminals of its merchant's device list."
      )
  )
  .add(
    HttpApiEndpoint.get("terminals", "/v1/monitor/terminals")
      .addSuccess(
        Schema.Array(Monitor.TerminalView).annotations({
          examples: [
            [
              {
                serialNumber: "0821032398",
                terminalType: "ANDROID",
                merchant: "merchant-1",
                state: "idle",
                queued: 0
              }
            ]
          ]
        })
      )
      .annotate(OpenApi.Summary, "Terminals and what they run")
      .annotate(
        OpenApi.Description,
        "Every terminal of the merchant's device list (the merchant `Tillflow-Merchant` names, or a limited credential's own: read with its keys), idle or busy with the oldest of its unfinished operations; for a request acting for a merchant, that merchant's operations only."
      )
  )
  .add(
    HttpApiEndpoint.get("executions", "/v1/monitor/executions")
      .setUrlParams(Monitor.SearchQuery)
      .addSuccess(
        Monitor.SearchView.annotations({
          examples: [
            { executions: [], total: 0 },
            { executions: [], total: 1200, next: "1764000012000.3c1e0f4e2b7d4f0a9d6e5b4a3c2d1e0f" }
          ]
        })
      )
      .annotate(OpenApi.Summary, "Search executions, a page at a time")
      .annotate(
        OpenApi.Description,
        "Executions, newest first, `limit` at a time (50 by default): pass a page's `next` as `after` for the next one (keyset paging: executions started meanwhile do not shift the pages). Filtered by outcome (approved, declined, failed, unresolved, in-progress: how the payment ended, not the engine's status), status, terminal, operation, workflow and creation time (from, to: ISO 8601, UTC unless the zone is written), and searched (q) by the start of an execution id (the 8 characters a table shows), idempotency key, transaction reference, guid, customer reference or the card's last four digits. `total` is how many matched in all."
      )
  )
  .add(
    HttpApiEndpoint.get("alerts", "/v1/monitor/alerts")
      .setUrlParams(Monitor.AlertsQuery)
      .addSuccess(
        Monitor.AlertsView.annotations({
          examples: [
            {
              alerts: [
                {
                  id: "mismatch.3c1e0f4e2b7d4f0a9d6e5b4a3c2d1e0f.7",
                  kind: "mismatch",
                  executionId: "3c1e0f4e2b7d4f0a9d6e5b4a3c2d1e0f",
                  at: 1767225600000,
                  message: "a callback result says DECLINED but the recorded outcome is AUTHORISED",
                  state: "acknowledged",
                  acknowledged: { operator: "ana", reason: "calling the acquirer", at: 1767225660000 }
                }
              ],
              caughtUp: true
            }
          ]
        })
      )
      .annotate(OpenApi.Summary, "Alerts")
      .annotate(
        OpenApi.Description,
        "Result mismatches, unresolved outcomes, stuck executions, executions waiting without progress, late results: most severe first, each with its id (derived from what raised it: `<kind>.<executionId>[.<version of the raising event>]`), its state (open, acknowledged, resolved) and who moved it on, why and when. The unresolved ones unless `state` asks for one state or `all`. A request acting for a merchant (`Tillflow-Merchant`, or a credential limited to merchants) gets the alerts of that merchant's executions only; the deployment's own executions' alerts and `key-refused` alerts (the registry's keys, the platform's) are no merchant's."
      )
  )
  .add(
    HttpApiEndpoint.post("acknowledgeAlert", "/v1/monitor/alerts/:alertId/acknowledge")
      .setPath(Schema.Struct({ alertId: Monitor.AlertId }))
      .setPayload(Monitor.AlertStepRequest.annotations({ examples: [{ reason: "calling the acquirer" }] }))
      .addSuccess(
        Monitor.AlertView.annotations({
          examples: [acknowledgedExample]
        })
      )
      .addError(AlertStateConflictExample)
      .annotate(OpenApi.Summary, "Acknowledge an alert")
      .annotate(
        OpenApi.Description,
        "Marks an open alert acknowledged (someone is on it) by the operator asking, with the reason given; stored as an event, so every worker and every restart agree. Acknowledging it again answers it as it is; a resolved alert is not acknowledged (409). Needs the operator role (a viewer gets 403). A request acting for a merchant acknowledges that merchant's alerts only: another's is 404, nothing stored."
      )
  )
  .add(
    HttpApiEndpoint.post("resolveAlert", "/v1/monitor/alerts/:alertId/resolve")
      .setPath(Schema.Struct({ alertId: Monitor.AlertId }))
      .setPayload(
        Monitor.AlertStepRequest.annotations({ examples: [{ reason: "the acquirer confirms the decline" }] })
      )
      .addSuccess(
        Monitor.AlertView.annotations({
          examples: [
            {
              ...acknowledgedExample,
              state: "resolved",
              resolved: { operator: "ana", reason: "the acquirer confirms the decline", at: 1767226000000 }
            }
          ]
        })
      )
      .addError(AlertStateConflictExample)
      .annotate(OpenApi.Summary, "Resolve an alert")
      .annotate(
        OpenApi.Description,
        "Marks an open or acknowledged alert resolved by the operator asking, with the reason given (stored as an event); a resolved alert is listed only when asked for (`state=resolved` or `all`). Resolving it again answers it as it is. Needs the operator role (a viewer gets 403). A request acting for a merchant resolves that merchant's alerts only: another's is 404, nothing stored."
      )
  )
  .add(
    HttpApiEndpoint.get("live", "/v1/monitor/live")
      .setUrlParams(
        Schema.Struct({
          merchant: Schema.optional(Schema.String).annotations({
            description:
              "The merchant whose events to send, as Tillflow-Merchant names it (which takes precedence): for a browser's EventSource, which sends no headers of its own."
          })
        })
      )
      .addSuccess(
        HttpApiSchema.Text({ contentType: "text/event-stream" }).annotations({
          examples: [
            'event: log\ndata: {"position":"1042","streamId":"payment-3c1e","type":"PaymentAuthorised","recordedAt":1767225600000}\n\n'
          ]
        })
      )
      .annotate(OpenApi.Summary, "Live event feed (server-sent events)")
      .annotate(
        OpenApi.Description,
        "Server-sent events: one `log` event per event stored from now on ({position, streamId, type, recordedAt}, not its data), and a comment every 15 s."
      )
  )
  .annotate(
    OpenApi.Description,
    "What an operator watches (the web console reads these): the service, the terminals, a search of executions, the alerts and a live feed of the log."
  ) {}
