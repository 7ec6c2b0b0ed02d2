/**
 * The intake's commands: start a terminal operation under an idempotency key (the same
 * key and request answer the same execution; a different request under it is refused),
 * stop a terminal's operation, start a terminal-less workflow by name. Terminal
 * operations go through the library's front door, `TerminalOperations`; each command
 * answers the execution's view, at once or once it ended within the caller's wait.
 */
import { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import {
  Identifiers,
  MerchantRegistry,
  Personal,
  TerminalOperations,
  TerminalOutcomeRecorder
} from "@tillflow/core"
import { DurableEngine, EventStore } from "@tillflow/engine"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Intake from "../Intake.js"
import type * as Devices from "./Devices.js"
import * as ExecutionActions from "./ExecutionActions.js"
import type * as ExecutionViews from "./ExecutionViews.js"
import { describeIssues, unavailable } from "./Failures.js"
import * as LifecycleWorkflows from "./LifecycleWorkflows.js"
import * as TerminalRequests from "./TerminalRequests.js"

/** What the commands are. */
export type Commands = Pick<Intake.Service, "start" | "stop" | "lifecycle">

/** The commands over the engine and store in context, answering with `views`. */
export const make = (
  merchantMcc: Option.Option<string>,
  views: ExecutionViews.ExecutionViews,
  devices: Devices.Devices
): Effect.Effect<Commands, never, DurableEngine.DurableEngine | WorkflowEngine | EventStore.EventStore> =>
  Effect.gen(function* () {
    // Each merchant's pre-authorizations open with its MCC (the registry's, when in context).
    const mccOf = yield* MerchantRegistry.mccOfInContext
    const workflowEngine = yield* WorkflowEngine
    const store = yield* EventStore.EventStore

    const withEngine = <A, E>(effect: Effect.Effect<A, E, WorkflowEngine>) =>
      Effect.provideService(effect, WorkflowEngine, workflowEngine)

    /** The payload an execution was started with, encoded (`undefined` when its history has none). */
    const storedPayload = (executionId: string) =>
      Effect.map(views.record(executionId), (record) => Option.getOrUndefined(record.payload))

    const start = (input: Intake.StartOperation) =>
      Effect.gen(function* () {
        const prepared = yield* TerminalRequests.prepare(input.request, devices.terminalTypeOf)
        const originalTransactionReference = yield* TerminalRequests.originalReference(
          input.originalTransactionReference
        )
        // Start first, then compare: the start is one atomic step in the store (the
        // execution's `WorkflowStarted` is appended at version 0, once), so of two requests
        // under one key, however close together, exactly one owns it and the other finds
        // the owner's request stored. A read before the start would let both through.
        const executionId = yield* withEngine(
          TerminalOperations.startListed(prepared.request, {
            idempotencyKey: input.idempotencyKey,
            delivery: input.delivery,
            deadline:
              input.deadlineSeconds === undefined ? undefined : Duration.seconds(input.deadlineSeconds),
            retryNotCharged: input.retryNotCharged,
            originalTransactionReference
          })
        ).pipe(
          // Decoded at the edge already: a refusal here is a rule the wire schema cannot see.
          Effect.mapError((refused) => new Intake.InvalidRequest({ message: refused.message }))
        )
        const stored = yield* storedPayload(executionId)
        const request = (stored as { readonly request?: unknown } | undefined)?.request
        if (request !== undefined && !TerminalRequests.isSameRequest(request, prepared)) {
          return yield* new Intake.IdempotencyConflict({
            executionId,
            message: `idempotency key "${input.idempotencyKey}" was used for a different request (execution ${executionId}); use a new key for a new operation`
          })
        }
        return yield* views.awaitView(executionId, input.waitSeconds)
      }).pipe(Effect.withSpan("Intake.start"))

    const stop = (input: Intake.StopOperation, actor: Intake.Actor = { name: "library", via: "token" }) =>
      Effect.gen(function* () {
        if (input.of !== undefined) {
          if (input.reason === undefined || input.reason.trim() === "") {
            return yield* new Intake.InvalidRequest({
              message: "reason: a stop of an execution (of) is recorded with the reason it was asked for"
            })
          }
          const stopped = yield* views.info(input.of)
          if (stopped.attributes["serialNumber"] !== input.serialNumber) {
            return yield* new Intake.InvalidRequest({
              message: `of: execution ${input.of} is not an operation on terminal ${input.serialNumber}`
            })
          }
        }
        // A listed terminal, of the type given if one is: a stop sent elsewhere stops nothing.
        const terminalType = yield* devices.terminalTypeOf(input.serialNumber, input.terminalType, {
          serial: "serialNumber",
          type: "terminalType"
        })
        const idempotencyKey = input.idempotencyKey ?? `stop-${globalThis.crypto.randomUUID()}`
        const executionId = yield* withEngine(
          TerminalOperations.startStop(
            {
              serialNumber: Identifiers.SerialNumber.make(input.serialNumber),
              terminalType: Identifiers.TerminalType.make(terminalType)
            },
            { idempotencyKey }
          )
        )
        if (input.of !== undefined)
          yield* ExecutionActions.record(
            store,
            {
              action: "stop",
              of: input.of,
              requestId: idempotencyKey,
              started: executionId,
              reason: input.reason ?? "",
              workflow: "StopCurrentTransaction"
            },
            actor
          )
        return yield* views.awaitView(executionId, input.waitSeconds)
      }).pipe(Effect.withSpan("Intake.stop"))

    /**
     * The histories caught up with the log, waiting a moment for the original's if the payload
     * names one the log does not show yet (`TerminalOutcomeRecorder.catchUpFor`).
     */
    const recordedHistory = (payload: Intake.StartLifecycle["payload"]) =>
      TerminalOutcomeRecorder.catchUpFor(
        { mcc: merchantMcc, mccOf },
        typeof payload.originalGuid === "string" ? payload.originalGuid : undefined
      ).pipe(Effect.provideService(EventStore.EventStore, store), Effect.mapError(unavailable("event store")))

    const lifecycle = (name: string, input: Intake.StartLifecycle) =>
      Effect.gen(function* () {
        const workflow = LifecycleWorkflows.byName.get(name)
        if (workflow === undefined) {
          return yield* new Intake.NotFound({
            message: `no terminal-less workflow "${name}": use one of ${Array.from(LifecycleWorkflows.byName.keys()).join(", ")}`
          })
        }
        const requestId = input.payload["requestId"]
        const keyProblem = typeof requestId === "string" ? Intake.idempotencyKeyProblem(requestId) : undefined
        if (keyProblem !== undefined) {
          return yield* new Intake.InvalidRequest({ message: `payload.requestId: ${keyProblem}` })
        }
        if (Personal.holdsStoredForm(input.payload)) {
          return yield* new Intake.InvalidRequest({
            message: `payload: "$personal" and "$personalDigest" are how tillflow stores personal data, not an input: send the value itself`
          })
        }
        const json = { requestId: `req-${globalThis.crypto.randomUUID()}`, ...input.payload }
        // Strict at the edge: a field the workflow does not take is refused, not dropped.
        const decoded = Schema.decodeUnknownEither(
          workflow.payloadSchema as unknown as Schema.Schema<object, unknown>,
          { onExcessProperty: "error", errors: "all" }
        )(json)
        if (Either.isLeft(decoded)) {
          return yield* new Intake.InvalidRequest({ message: describeIssues(decoded.left, "payload") })
        }
        const payload = decoded.right
        // A key the service refuses would refuse the operation too: said now, as the worker's fault.
        yield* devices.ensureKey
        // Terminal operations approved so far become histories the lifecycles can act on
        // (after the payload is known good: a refused one waits for nothing).
        yield* recordedHistory(input.payload)
        // Started first, compared after, as `start` does: one owner per requestId.
        const executionId = yield* workflow.executionId(payload)
        yield* withEngine(
          workflow.execute(payload, { discard: true }) as Effect.Effect<string, never, WorkflowEngine>
        )
        const stored = yield* storedPayload(executionId)
        const mine = Schema.encodeUnknownSync(
          workflow.payloadSchema as unknown as Schema.Schema<object, unknown>
        )(payload)
        if (
          stored !== undefined &&
          TerminalRequests.comparable(stored, false) !== TerminalRequests.comparable(mine, false)
        ) {
          return yield* new Intake.IdempotencyConflict({
            executionId,
            message: `requestId "${String(json.requestId)}" was used for a different ${name} (execution ${executionId})`
          })
        }
        return yield* views.awaitView(executionId, input.waitSeconds)
      }).pipe(Effect.withSpan("Intake.lifecycle"))

    return { start, stop, lifecycle }
  })
