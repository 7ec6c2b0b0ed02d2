/**
 * An operator tries again a terminal operation that ended without charging anything: the
 * terminal was unavailable (busy, offline, its deadline passed before anything was sent) or
 * the attempt was proved not charged. The same request is started again, as any caller would
 * start it (`TerminalOperations.startListed`), under the key `retry-<executionId>` — asked
 * again, it is the same retry — with a fresh transaction reference (the first one may have
 * reached the service). The request is recorded first, with who, why and when, as
 * `ExecutionActionRequested` in the ended execution's `execution-actions-<id>` stream, which
 * its timeline shows. Anything else (an approval, a decline, an unresolved outcome, a
 * refusal, an execution still running) is refused 422 naming the rule: a retry could charge
 * twice, or would be refused again.
 */
import {
  Identifiers,
  OperationReport,
  PaymentProtocol,
  TerminalOperations,
  TransactionRequest
} from "@tillflow/core"
import { EventStore, type ExecutionRecord } from "@tillflow/engine"
import { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Intake from "../Intake.js"
import * as ExecutionActions from "./ExecutionActions.js"
import type * as ExecutionViews from "./ExecutionViews.js"

/** What the retries are. */
export type Retries = Pick<Intake.Service, "retry">

/** The rule a retry is refused by: only an operation that charged nothing, and is over. */
export const RETRY_ONLY_WHEN_NOTHING_CHARGED = "retry-only-when-nothing-charged"

/** The verdicts after which nothing was charged and the same request may be sent again. */
const retryable: ReadonlySet<OperationReport.Verdict> = new Set(["unavailable", "not-charged"])

const decodePayload = Schema.decodeUnknownEither(PaymentProtocol.Payload)
// The request as it is sent (its personal members plain, not in their stored form).
const encodeRequest = Schema.encodeSync(TransactionRequest.TransactionRequest)
const decodeRequest = Schema.decodeUnknownEither(TransactionRequest.TransactionRequest)

/** The key a retry of `executionId` is started under. */
export const retryKey = (executionId: string): string => `retry-${executionId}`

/** The retries over the engine and store in context, answering with `views`. */
export const make = (
  views: ExecutionViews.ExecutionViews
): Effect.Effect<Retries, never, WorkflowEngine | EventStore.EventStore> =>
  Effect.gen(function* () {
    const workflowEngine = yield* WorkflowEngine
    const store = yield* EventStore.EventStore

    const refuse = (message: string) =>
      Effect.fail(new Intake.ActionRefused({ message, rule: RETRY_ONLY_WHEN_NOTHING_CHARGED }))

    /** The request to send again: the stored one with a fresh transaction reference. */
    const againOf = (record: ExecutionRecord.ExecutionRecord) =>
      Effect.gen(function* () {
        const payload = Option.map(record.payload, decodePayload)
        if (Option.isNone(payload) || Either.isLeft(payload.value)) {
          return yield* new Intake.Unavailable({
            message: "the execution's stored request could not be read"
          })
        }
        const stored = payload.value.right
        const encoded = encodeRequest(stored.request) as Record<string, unknown>
        const fresh =
          encoded["transactionReference"] === undefined
            ? encoded
            : { ...encoded, transactionReference: yield* Identifiers.makeTransactionReference }
        const request = decodeRequest(fresh)
        if (Either.isLeft(request)) {
          return yield* new Intake.Unavailable({
            message: "the execution's stored request could not be read"
          })
        }
        return { stored, request: request.right }
      })

    const retry = (executionId: string, input: Intake.RetryExecution, actor: Intake.Actor) =>
      Effect.gen(function* () {
        const view = yield* views.awaitView(executionId, undefined)
        if (view.workflow !== PaymentProtocol.TerminalOperation.name) {
          return yield* refuse(
            `execution ${executionId} is a ${view.workflow}: only an operation sent to a terminal is tried again here (a terminal-less one is started again with its own requestId)`
          )
        }
        const verdict = view.report?.verdict
        if (verdict === undefined || !retryable.has(verdict)) {
          return yield* refuse(
            verdict === undefined
              ? `execution ${executionId} has not ended: it cannot be tried again while it runs`
              : `execution ${executionId} ended ${verdict}: only an operation that charged nothing (unavailable, not charged) is tried again`
          )
        }
        const key = retryKey(executionId)
        const { request, stored } = yield* againOf(yield* views.record(executionId))
        const start = TerminalOperations.startListed(request, {
          idempotencyKey: key,
          delivery: stored.delivery,
          retryNotCharged: stored.retryNotCharged,
          originalTransactionReference: stored.originalTransactionReference
        }).pipe(
          Effect.provideService(WorkflowEngine, workflowEngine),
          Effect.mapError((invalid) => new Intake.InvalidRequest({ message: invalid.message }))
        )
        const startedId = yield* start
        // Asked before: the same retry, recorded once.
        yield* ExecutionActions.record(
          store,
          {
            action: "retry",
            of: executionId,
            requestId: key,
            started: startedId,
            reason: input.reason,
            workflow: view.workflow
          },
          actor
        )
        return yield* views.awaitView(startedId, input.waitSeconds)
      }).pipe(Effect.withSpan("Intake.retry"))

    return { retry }
  })
