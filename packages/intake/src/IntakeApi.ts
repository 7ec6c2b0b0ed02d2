/**
 * The intake API as one @effect/platform `HttpApi`: the worker serves it (`IntakeHttp`),
 * the command line calls it (`IntakeClient`), and its OpenAPI document is generated from
 * it (`GET /openapi.json`, shown as a reference page at `GET /docs`), so the three cannot
 * drift. Every route needs `Authorization: Bearer <TILLFLOW_INTAKE_TOKEN>` except
 * `/health`, `/ready` and the reference (`/openapi.json`, `/docs`), which hold no secret.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as OpenApi from "@effect/platform/OpenApi"
import { ConsoleSessions, type Operators } from "@tillflow/console"
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"
import * as Intake from "./Intake.js"
import * as ApiReference from "./internal/ApiReference.js"
import { MerchantsGroup } from "./MerchantsApi.js"
import { MonitorGroup } from "./MonitorApi.js"

/**
 * The console's session cookie (`@tillflow/console`): a browser logged in to the console
 * sends it instead of the bearer token, which its script never holds.
 */
export const consoleSession = HttpApiSecurity.apiKey({ key: ConsoleSessions.cookieName, in: "cookie" })

/** A missing or wrong bearer token: 401, with a body saying which token is expected. */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()(
  "Unauthorized",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 401, description: "A missing or wrong bearer token." })
) {}

/**
 * A credential whose role does not allow the request (a viewer's session asking to act): 403.
 * The intake's own error (`Intake.Forbidden`), so a client of this API gets it as one.
 */
export const Forbidden = Intake.Forbidden
/** @see Forbidden */
export type Forbidden = Intake.Forbidden

/** A client locked out after repeated wrong bearer tokens: 429, with `Retry-After`. */
export class TooManyRequests extends Schema.TaggedError<TooManyRequests>()(
  "TooManyRequests",
  { message: Schema.String, retryAfterSeconds: Schema.Int },
  HttpApiSchema.annotations({
    status: 429,
    description: "Too many wrong bearer tokens from this client: locked out for a while (see Retry-After)."
  })
) {}

/**
 * Who is making the request: the operator of the console session, or the intake token's
 * identity (`Operators.tokenOperator`) for a bearer token. Handlers that act attribute what
 * they do to it.
 */
export class CurrentOperator extends Context.Tag("tillflow/intake/CurrentOperator")<
  CurrentOperator,
  Operators.Operator
>() {}

/**
 * An error schema with an example body for the reference (a class's own annotations cannot
 * hold an instance of itself); the same type, status and identifier.
 */
const withExample = <A, I, R>(schema: Schema.Schema<A, I, R>, example: A): Schema.Schema<A, I, R> =>
  schema.annotations({ examples: [example] })

/**
 * A request refused for what it says (400), as the API and its authentication middleware
 * both declare it: one schema, so the document lists it once per route.
 */
const invalidRequest = withExample(
  Intake.InvalidRequest,
  new Intake.InvalidRequest({ message: "request.amount: is missing (sale needs amount and currency)" })
)

/**
 * Bearer-token authentication of every route but health (or the console's session cookie,
 * whose operator's role must allow the request: a viewer only reads), providing who asks.
 */
export class IntakeAuth extends HttpApiMiddleware.Tag<IntakeAuth>()("tillflow/IntakeAuth", {
  failure: Schema.Union(
    withExample(
      Unauthorized,
      new Unauthorized({
        message: "missing or wrong bearer token: send Authorization: Bearer <TILLFLOW_INTAKE_TOKEN>"
      })
    ),
    withExample(
      Forbidden,
      new Forbidden({ message: "operator vic is a viewer: a viewer reads, it does not act", role: "viewer" })
    ),
    withExample(
      TooManyRequests,
      new TooManyRequests({
        message: "too many wrong bearer tokens from this client: try again in 60 s",
        retryAfterSeconds: 60
      })
    ),
    invalidRequest
  ),
  provides: CurrentOperator,
  security: {
    bearer: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "The worker's TILLFLOW_INTAKE_TOKEN.")
    ),
    consoleSession
  }
}) {}

/**
 * `/ready` when the store or the engine is not, or the service refuses this worker's API
 * key: 503 with what failed (`message` says it in one line).
 */
export class NotReady extends Schema.TaggedError<NotReady>()(
  "NotReady",
  { store: Schema.String, engine: Schema.String, service: Schema.String, message: Schema.String },
  HttpApiSchema.annotations({
    status: 503,
    description: "The store or the engine is not ready, or the service refuses this worker's API key."
  })
) {}

const executionId = HttpApiSchema.param("executionId", Intake.Text)
const serialNumber = HttpApiSchema.param("serialNumber", Intake.Text)
const reference = HttpApiSchema.param("reference", Intake.Text)
const guid = HttpApiSchema.param("guid", Intake.Text)
const attemptKind = HttpApiSchema.param("kind", Intake.AttemptKind)
const attemptKey = HttpApiSchema.param("key", Intake.Text.pipe(Schema.minLength(1), Schema.maxLength(128)))
// The workflow names in the document; an unknown one is answered by the intake (404 listing them).
const workflow = HttpApiSchema.param(
  "workflow",
  ApiReference.documentedAs(Intake.Text, ApiReference.WorkflowName)
)
/**
 * A `limit` query parameter: a whole number from 1 to `max`, written in digits (`1e9` and
 * `10.0` are refused, not read as numbers), so a caller asking for more than a page can
 * hold is told the bound instead of making the worker read without one.
 */
const limitParam = (max: number) =>
  Schema.optional(
    Schema.String.pipe(
      Schema.filter((s) => /^[0-9]{1,9}$/.test(s) || `must be a whole number from 1 to ${max}, in digits`),
      Schema.compose(Schema.NumberFromString),
      Schema.filter((n) => (n >= 1 && n <= max) || `must be a whole number from 1 to ${max}`)
    ).annotations({ description: `a whole number from 1 to ${max}` })
  )

/** Liveness and readiness, without authentication. */
export class HealthGroup extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("health", "/health")
      .addSuccess(
        Schema.Struct({ status: Schema.Literal("ok") }).annotations({ examples: [{ status: "ok" }] })
      )
      .annotate(OpenApi.Summary, "Liveness")
      .annotate(OpenApi.Description, "Answers while the process serves requests.")
  )
  .add(
    HttpApiEndpoint.get("ready", "/ready")
      .addSuccess(Intake.ReadyView)
      .addError(
        withExample(
          NotReady,
          new NotReady({
            store: "ok",
            engine: "ok (TerminalOperation)",
            service:
              "refused: the service refused this worker's API key (403: authentication failed); an operator must set a valid TERMINAL_CLOUD_API_KEY",
            message:
              "not ready: service refused: the service refused this worker's API key (403: authentication failed)"
          })
        )
      )
      .annotate(OpenApi.Summary, "Readiness")
      .annotate(
        OpenApi.Description,
        "Answers 200 once the event store and the engine are ready and the service takes this worker's API key, else 503 saying what is not."
      )
  )
  .annotate(OpenApi.Description, "Liveness and readiness probes: no authentication.") {}

/** Terminal operations. */
export class OperationsGroup extends HttpApiGroup.make("operations")
  .add(
    HttpApiEndpoint.post("start", "/v1/operations")
      .setPayload(Intake.StartOperation)
      .addSuccess(Intake.ExecutionView)
      .annotate(OpenApi.Summary, "Start a terminal operation")
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
          identifier: "StopRequest",
          description: "How to stop: the terminal is the path's; every field is optional.",
          examples: [{ waitSeconds: 30 }],
          parseOptions: { onExcessProperty: "error", errors: "all" }
        })
      )
      .addSuccess(Intake.ExecutionView)
      .annotate(OpenApi.Summary, "Stop a terminal's operation")
      .annotate(OpenApi.Description, "Stops the operation in flight on a terminal (stopCurrentTransaction).")
  )
  .add(
    HttpApiEndpoint.post("lifecycle")`/v1/lifecycle/${workflow}`
      .setPayload(Intake.StartLifecycle)
      .addSuccess(Intake.ExecutionView)
      .annotate(OpenApi.Summary, "Start a terminal-less operation")
      .annotate(
        OpenApi.Description,
        `Starts a terminal-less operation by workflow name: ${ApiReference.workflowNames.join(", ")}. The payload is that workflow's (LifecyclePayload); its requestId is the idempotency key. An unknown name is 404.`
      )
  )
  .add(
    HttpApiEndpoint.get("devices", "/v1/devices")
      .addSuccess(
        Schema.Array(Intake.DeviceView).annotations({
          examples: [[{ serialNumber: "0821032398", terminalType: "ANDROID", merchant: "merchant-1" }]]
        })
      )
      .annotate(OpenApi.Summary, "List the terminals")
      .annotate(OpenApi.Description, "The merchant's terminals, from the service's device list.")
  )
  .add(
    HttpApiEndpoint.get("transactionStatus")`/v1/transactions/${reference}/status`
      .setUrlParams(Schema.Struct({ selector: Schema.optional(Intake.Text) }))
      .addSuccess(
        Schema.Array(Schema.Unknown).annotations({
          description: "the service's status rows, as it answered them",
          examples: [
            [
              {
                transactionReference: "3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b",
                transactionType: "SALE",
                finStatus: "APPROVED",
                efttimestamp: "20251124100012006"
              }
            ]
          ]
        })
      )
      .annotate(OpenApi.Summary, "A transaction's status at the service")
      .annotate(
        OpenApi.Description,
        "The service's status endpoint for a transactionReference (selector first, last, all or a position)."
      )
  )
  .add(
    HttpApiEndpoint.post("resolve")`/v1/transactions/${guid}/resolve`
      .setPayload(Intake.ResolveInDoubt)
      .addSuccess(Intake.ResolutionView)
      .annotate(OpenApi.Summary, "Resolve a request in doubt")
      .annotate(
        OpenApi.Description,
        "An operator says what became of a request on a transaction whose outcome stayed unknown (applied or notApplied), with their name (a console session's operator: their own) and a reason; a viewer is refused (403): recorded as an audited InDoubtResolved on the transaction's history, which releases it. 400 naming the rule when that request is not in doubt; 404 for an unknown transaction."
      )
  )
  .add(
    HttpApiEndpoint.post("resolveAttempt")`/v1/attempts/${attemptKind}/${attemptKey}/resolve`
      .setPayload(Intake.ResolveAttempt)
      .addSuccess(Intake.AttemptResolutionView)
      .annotate(
        OpenApi.Summary,
        "Resolve a request in doubt on a batch, MOTO sale, device or terminal operation"
      )
      .annotate(
        OpenApi.Description,
        "An operator says what became of a request in doubt outside a transaction's history: a batch close (kind batch, key the terminal's serial: it holds every later close of the terminal), a MOTO sale attempt (kind moto-sale, key its transactionReference) or a device command (kind device, key the serial). Applied or notApplied, with their name (a console session's operator: their own) and a reason; a viewer is refused (403). Recorded as an audited InDoubtResolved on the attempt's stream. An applied batch close counts as closed; not applied frees the terminal. An applied MOTO sale needs the guid the gateway gave it (from its report or the status endpoint): its history opens under that guid, booked on the terminal its request named. 400 naming the rule when that request is not in doubt, when the guid is missing, or when that guid already has a history. A terminal operation whose outcome stayed unresolved (kind terminal, key its execution id; requestId its unresolved attempt's id or the execution id): recorded as an audited TerminalOutcomeResolved in the execution's execution-actions stream (its payment stream is not changed) and shown in its timeline; applied, it needs the guid the gateway gave the transaction when the operation moves money, and is booked by the ledger at the amount asked (or amount and currency, when the operator says it moved another) and its transaction's history opens, so a refund or reversal can follow; not applied moves nothing. A merchant's credential may resolve its own terminal operations (another merchant's is 404). 400 naming the rule when it did not end unresolved or was resolved already, when the guid or amount is missing or wrong, or when the guid is booked already; amount is refused for the other kinds."
      )
  )
  .add(
    HttpApiEndpoint.post("act")`/v1/transactions/${guid}/actions`
      .setPayload(Intake.ActOnTransaction)
      .addSuccess(Intake.ExecutionView)
      .annotate(OpenApi.Summary, "An operator's action on a transaction")
      .annotate(
        OpenApi.Description,
        "Refund (full or partial), reverse, capture, increase or release a pre-authorization, adjust the tip: started as the same operation POST /v1/operations or /v1/lifecycle/{workflow} would start, under an idempotency key derived from the action (action-<kind>-<digest of kind, transaction, amount, currency and repeat>), so a repeated request answers the first's execution. The amount (major units) and currency confirm what is sent: a currency other than the transaction's is 400 naming the field. A money rule that refuses it is 422 with the rule and its message (nothing started or recorded). Recorded on the transaction's history as OperatorActionRequested with the operator (a bearer token: recorded as the token), the time and the reason. A viewer is refused (403)."
      )
  )
  .middleware(IntakeAuth)
  .annotate(OpenApi.Description, "Start and stop terminal operations and terminal-less workflows.") {}

/** Executions: state, history, lists. */
export class ExecutionsGroup extends HttpApiGroup.make("executions")
  .add(
    HttpApiEndpoint.get("list", "/v1/executions")
      .setUrlParams(Schema.Struct({ ...Intake.ListQuery.fields, limit: limitParam(10_000) }))
      .addSuccess(Schema.Array(Intake.ExecutionView).annotations({ examples: [[]] }))
      .annotate(OpenApi.Summary, "List executions")
      .annotate(OpenApi.Description, "Executions matching every filter given, newest first.")
  )
  .add(
    HttpApiEndpoint.get("get")`/v1/executions/${executionId}`
      .setUrlParams(
        Schema.Struct({ wait: Schema.optional(Schema.NumberFromString.pipe(Schema.between(0, 600))) })
      )
      .addSuccess(Intake.ExecutionView)
      .annotate(OpenApi.Summary, "Read an execution")
      .annotate(
        OpenApi.Description,
        "An execution; with wait (seconds), once it ended or when the wait is over."
      )
  )
  .add(
    HttpApiEndpoint.post("retry")`/v1/executions/${executionId}/retry`
      .setPayload(Intake.RetryExecution)
      .addSuccess(Intake.ExecutionView)
      .annotate(OpenApi.Summary, "Try again an operation that charged nothing")
      .annotate(
        OpenApi.Description,
        "An operator tries again a terminal operation that ended unavailable (busy, offline, its deadline passed before anything was sent) or proved not charged: the same request is started again under the key retry-{executionId} (asked again, the same retry) with a fresh transactionReference, recorded as ExecutionActionRequested in the ended execution's execution-actions stream with the operator (a bearer token: recorded as the token), the time and the reason, shown in its timeline. Any other execution (approved, declined, unresolved, refused, still running, terminal-less) is 422 with the rule retry-only-when-nothing-charged. A viewer is refused (403)."
      )
  )
  .add(
    HttpApiEndpoint.get("history")`/v1/executions/${executionId}/history`
      .addSuccess(Intake.HistoryView)
      .annotate(OpenApi.Summary, "An execution's events")
      .annotate(OpenApi.Description, "The execution's engine stream and its business (payment) stream.")
  )
  .middleware(IntakeAuth)
  .annotate(OpenApi.Description, "Follow executions: their state, their history, lists.") {}

/** The event log and the audit. */
export class AuditGroup extends HttpApiGroup.make("audit")
  .add(
    HttpApiEndpoint.get("events", "/v1/events")
      .setUrlParams(Schema.Struct({ after: Schema.optional(Intake.Text), limit: limitParam(10_000) }))
      .addSuccess(Intake.EventsPage)
      .annotate(OpenApi.Summary, "Read the event log")
      .annotate(
        OpenApi.Description,
        "A page of the global event log after a position (from the start without one). A request acting for a merchant (a merchant's credential, or Tillflow-Merchant) gets only the events whose metadata names that merchant as their tenant: a page may then hold fewer than asked, even none, before caughtUp; read on from next."
      )
  )
  .add(
    HttpApiEndpoint.get("verify", "/v1/audit/verify")
      .setUrlParams(Schema.Struct({ stream: Schema.optional(Intake.Text) }))
      .addSuccess(Intake.VerifyView)
      .annotate(OpenApi.Summary, "Verify the hash chains")
      .annotate(OpenApi.Description, "Checks every stream's hash chain, or one stream's.")
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
      .annotate(OpenApi.Summary, "The ledger summary")
      .annotate(
        OpenApi.Description,
        "Folded from the log now (replay) or the live projection's latest snapshot (live). A request acting for a merchant gets that merchant's facts only (those whose event metadata names it as their tenant, never by the result's mid), replayed: source=live is 400 for it, the snapshot's rows not saying whose they are."
      )
  )
  .add(
    HttpApiEndpoint.get("entries", "/v1/audit/entries")
      .setUrlParams(Schema.Struct({ from: Schema.optional(Intake.Text), limit: limitParam(10_000) }))
      .addSuccess(Intake.EntriesView)
      .annotate(OpenApi.Summary, "Ledger entries")
      .annotate(
        OpenApi.Description,
        "One entry per business fact, from a position. A request acting for a merchant gets that merchant's facts only (those whose event metadata names it as their tenant)."
      )
  )
  .add(
    HttpApiEndpoint.get("rebuild", "/v1/audit/rebuild")
      .addSuccess(Intake.RebuildView)
      .annotate(OpenApi.Summary, "Rebuild and compare the ledger")
      .annotate(
        OpenApi.Description,
        "Rebuilds the ledger from the log and compares it with the live projection."
      )
  )
  .add(
    HttpApiEndpoint.get("timeline")`/v1/audit/timeline/${reference}`
      .addSuccess(Intake.TimelineView)
      .annotate(OpenApi.Summary, "One operation's story")
      .annotate(OpenApi.Description, "By execution id, transaction reference or idempotency key.")
  )
  .middleware(IntakeAuth)
  .annotate(OpenApi.Description, "The event log and the audit: chains, ledger, timelines.") {}

/** Metrics, in the Prometheus text format. */
export class SystemGroup extends HttpApiGroup.make("system")
  .add(
    HttpApiEndpoint.get("metrics", "/metrics")
      .addSuccess(
        HttpApiSchema.Text().annotations({
          examples: [
            '# HELP tillflow_executions workflow executions by workflow and status\n# TYPE tillflow_executions gauge\ntillflow_executions{workflow="TerminalOperation",status="succeeded"} 3\n'
          ]
        })
      )
      .annotate(OpenApi.Summary, "Metrics")
      .annotate(OpenApi.Description, "Every series in the Prometheus text exposition format (0.0.4).")
  )
  .middleware(IntakeAuth)
  .annotate(OpenApi.Description, "Metrics for Prometheus.") {}

/** The API's own description: no authentication (it holds no secret). */
export class ReferenceGroup extends HttpApiGroup.make("reference")
  .add(
    HttpApiEndpoint.get("openapi", "/openapi.json")
      .addSuccess(
        Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
          description: "an OpenAPI 3.1 document",
          examples: [{ openapi: "3.1.0", info: { title: "tillflow intake", version: "0.0.1" }, paths: {} }]
        })
      )
      .annotate(OpenApi.Summary, "This document")
      .annotate(
        OpenApi.Description,
        "The OpenAPI document of this API; the reference page at /docs shows it."
      )
  )
  .annotate(OpenApi.Description, "The API's description, without authentication: it holds no secret.") {}

/**
 * The platform's own 400 (a request that does not match the schemas) with an example body,
 * like every other body of the document: it is added by @effect/platform, not declared here.
 */
const withDecodeErrorExample = (spec: Record<string, unknown>): Record<string, unknown> => {
  const components = spec["components"] as { schemas?: Record<string, Record<string, unknown>> } | undefined
  const decodeError = components?.schemas?.["HttpApiDecodeError"]
  if (decodeError !== undefined) {
    decodeError["examples"] = [
      {
        _tag: "HttpApiDecodeError",
        message: "waitSeconds: Expected a number between 0 and 600, actual 900",
        issues: [
          {
            _tag: "Type",
            path: ["waitSeconds"],
            message: "Expected a number between 0 and 600, actual 900"
          }
        ]
      }
    ]
  }
  return spec
}

/** The intake API. */
export class IntakeApi extends HttpApi.make("tillflow-intake")
  .add(HealthGroup)
  .add(OperationsGroup)
  .add(ExecutionsGroup)
  .add(AuditGroup)
  .add(SystemGroup)
  .add(MonitorGroup.middleware(IntakeAuth))
  .add(MerchantsGroup.middleware(IntakeAuth))
  .add(ReferenceGroup)
  .addError(invalidRequest)
  .addError(withExample(Intake.NotFound, new Intake.NotFound({ message: "no execution 3c1e0f4e2b7d4f0a" })))
  .addError(
    withExample(
      Intake.IdempotencyConflict,
      new Intake.IdempotencyConflict({
        executionId: "3c1e0f4e2b7d4f0a9d6e5b4a3c2d1e0f",
        message: 'idempotencyKey "order-1042" was used for a different request'
      })
    )
  )
  .addError(
    withExample(
      Intake.ActionRefused,
      new Intake.ActionRefused({
        rule: "refund-not-above-sale",
        message:
          "a refund of 60.00 EUR would bring the refunds of sale 4f8e2a10-9c1b-4d7e-8a5f-2b3c4d5e6f70 to 60.00 EUR, above the sale's 50.00 EUR"
      })
    )
  )
  .addError(
    withExample(Intake.Unavailable, new Intake.Unavailable({ message: "the event store did not answer" }))
  )
  .addError(
    withExample(
      Intake.RateLimited,
      new Intake.RateLimited({
        merchant: "cafe-sol",
        retryAfterSeconds: 1,
        message:
          "merchant cafe-sol started operations faster than its rate limit of 20/s (burst 20): nothing was started; try again in 1 s"
      })
    )
  )
  .annotate(OpenApi.Title, "tillflow intake")
  .annotate(OpenApi.License, { name: "MIT", url: "https://opensource.org/licenses/MIT" })
  .annotate(OpenApi.Servers, [{ url: "/", description: "the worker serving this document" }])
  .annotate(OpenApi.Transform, withDecodeErrorExample)
  .annotate(
    OpenApi.Description,
    "Start and follow payment terminal operations, each a durable workflow; read the event log and the audit ledger."
  ) {}
