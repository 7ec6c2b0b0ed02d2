/**
 * The intake API as one @effect/platform `HttpApi`: the worker serves it (`IntakeHttp`),
 * the command line calls it (`IntakeClient`), and its OpenAPI document is generated from
 * it (`GET /openapi.json`), so the three cannot drift. Every route needs
 * `Authorization: Bearer <TILLFLOW_INTAKE_TOKEN>` except `/health` and `/ready`.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import * as Intake from "./Intake.js"

/** A missing or wrong bearer token: 401, with a body saying which token is expected. */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()(
  "Unauthorized",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 401 })
) {}

/** Bearer-token authentication of every route but health. */
export class IntakeAuth extends HttpApiMiddleware.Tag<IntakeAuth>()("tillflow/IntakeAuth", {
  failure: Unauthorized,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

/** `/ready` when the store or the engine is not: 503 with what failed. */
export class NotReady extends Schema.TaggedError<NotReady>()(
  "NotReady",
  { store: Schema.String, engine: Schema.String },
  HttpApiSchema.annotations({ status: 503 })
) {}

const executionId = HttpApiSchema.param("executionId", Intake.Text)
const serialNumber = HttpApiSchema.param("serialNumber", Intake.Text)
const reference = HttpApiSchema.param("reference", Intake.Text)
const optionalInt = Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.positive()))

/** Liveness and readiness, without authentication. */
export class HealthGroup extends HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("health", "/health").addSuccess(Schema.Struct({ status: Schema.Literal("ok") })))
  .add(HttpApiEndpoint.get("ready", "/ready").addSuccess(Intake.ReadyView).addError(NotReady))
  .annotate(OpenApi.Description, "Liveness and readiness probes: no authentication.") {}

/** Terminal operations. */
export class OperationsGroup extends HttpApiGroup.make("operations")
  .add(
    HttpApiEndpoint.post("start", "/v1/operations")
      .setPayload(Intake.StartOperation)
      .addSuccess(Intake.ExecutionView)
      .annotate(
        OpenApi.Description,
        "Starts a terminal operation under an idempotency key (the same key answers the same execution; a different request under a used key is 409). With waitSeconds, answers when it ended or the wait is over."
      )
  )
  .add(
    HttpApiEndpoint.post("stop")`/v1/terminals/${serialNumber}/stop`
      .setPayload(
        Schema.Struct({
          ...Intake.StopOperation.fields,
          serialNumber: Schema.optional(Intake.Text)
        }).annotations({
          parseOptions: { onExcessProperty: "error", errors: "all" }
        })
      )
      .addSuccess(Intake.ExecutionView)
      .annotate(OpenApi.Description, "Stops the operation in flight on a terminal (stopCurrentTransaction).")
  )
  .add(
    HttpApiEndpoint.post("lifecycle")`/v1/lifecycle/${HttpApiSchema.param("workflow", Intake.Text)}`
      .setPayload(Intake.StartLifecycle)
      .addSuccess(Intake.ExecutionView)
      .annotate(
        OpenApi.Description,
        "Starts a terminal-less operation by workflow name: PreAuthorization.Increase, PreAuthorization.Decrease, PreAuthorization.Capture, Reversal.Reverse, Moto.Sale, Moto.Refund, Moto.Reverse, TipAdjustment.Adjust, DeferredTokenization.Tokenize, Batch.Close, Batch.Summary, Batch.Detail, DeviceCommand.Send. The payload's requestId is the idempotency key."
      )
  )
  .add(HttpApiEndpoint.get("devices", "/v1/devices").addSuccess(Schema.Array(Intake.DeviceView)))
  .add(
    HttpApiEndpoint.get("transactionStatus")`/v1/transactions/${reference}/status`
      .setUrlParams(Schema.Struct({ selector: Schema.optional(Intake.Text) }))
      .addSuccess(Schema.Array(Schema.Unknown))
      .annotate(
        OpenApi.Description,
        "The service's status endpoint for a transactionReference (selector first, last, all or a position)."
      )
  )
  .middleware(IntakeAuth) {}

/** Executions: state, history, lists. */
export class ExecutionsGroup extends HttpApiGroup.make("executions")
  .add(
    HttpApiEndpoint.get("list", "/v1/executions")
      .setUrlParams(Schema.Struct({ ...Intake.ListQuery.fields, limit: optionalInt }))
      .addSuccess(Schema.Array(Intake.ExecutionView))
  )
  .add(
    HttpApiEndpoint.get("get")`/v1/executions/${executionId}`
      .setUrlParams(
        Schema.Struct({ wait: Schema.optional(Schema.NumberFromString.pipe(Schema.between(0, 600))) })
      )
      .addSuccess(Intake.ExecutionView)
  )
  .add(HttpApiEndpoint.get("history")`/v1/executions/${executionId}/history`.addSuccess(Intake.HistoryView))
  .middleware(IntakeAuth) {}

/** The event log and the audit. */
export class AuditGroup extends HttpApiGroup.make("audit")
  .add(
    HttpApiEndpoint.get("events", "/v1/events")
      .setUrlParams(Schema.Struct({ after: Schema.optional(Intake.Text), limit: optionalInt }))
      .addSuccess(Intake.EventsPage)
  )
  .add(
    HttpApiEndpoint.get("verify", "/v1/audit/verify")
      .setUrlParams(Schema.Struct({ stream: Schema.optional(Intake.Text) }))
      .addSuccess(Intake.VerifyView)
  )
  .add(
    HttpApiEndpoint.get("ledger", "/v1/audit/ledger")
      .setUrlParams(
        Schema.Struct({
          source: Schema.optional(Schema.Literal("replay", "live")),
          from: Schema.optional(Intake.Text)
        })
      )
      .addSuccess(Intake.LedgerView)
  )
  .add(
    HttpApiEndpoint.get("entries", "/v1/audit/entries")
      .setUrlParams(Schema.Struct({ from: Schema.optional(Intake.Text), limit: optionalInt }))
      .addSuccess(Intake.EntriesView)
  )
  .add(HttpApiEndpoint.get("rebuild", "/v1/audit/rebuild").addSuccess(Intake.RebuildView))
  .add(HttpApiEndpoint.get("timeline")`/v1/audit/timeline/${reference}`.addSuccess(Intake.TimelineView))
  .middleware(IntakeAuth) {}

/** Metrics and the API's own description. */
export class SystemGroup extends HttpApiGroup.make("system")
  .add(HttpApiEndpoint.get("metrics", "/metrics").addSuccess(HttpApiSchema.Text()))
  .add(HttpApiEndpoint.get("openapi", "/openapi.json").addSuccess(Schema.Unknown))
  .middleware(IntakeAuth) {}

/** The intake API. */
export class IntakeApi extends HttpApi.make("tillflow-intake")
  .add(HealthGroup)
  .add(OperationsGroup)
  .add(ExecutionsGroup)
  .add(AuditGroup)
  .add(SystemGroup)
  .addError(Intake.InvalidRequest)
  .addError(Intake.NotFound)
  .addError(Intake.IdempotencyConflict)
  .addError(Intake.Unavailable)
  .annotate(OpenApi.Title, "tillflow intake")
  .annotate(
    OpenApi.Description,
    "Start and follow payment terminal operations, each a durable workflow; read the event log and the audit ledger."
  ) {}
