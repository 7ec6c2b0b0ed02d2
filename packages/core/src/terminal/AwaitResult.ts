/**
 * Step 4 of the payment protocol: waiting for the result of an accepted attempt. In
 * callback mode the callback receiver resolves the attempt's `DurableDeferred`, raced
 * against a durable fallback timer (the workflow suspends meanwhile, and the delivery wakes
 * it); in polling mode `transaction-result` is asked until it answers. A final result
 * settles; UNDEFINED, no result, or a forgotten result id hand over to reconciliation — or,
 * with no reference to reconcile with, end unresolved.
 */
import * as DurableClock from "@effect/workflow/DurableClock"
import * as DurableDeferred from "@effect/workflow/DurableDeferred"
import type { WorkflowEngine, WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as DurableStep from "@tillflow/engine/DurableStep"
import * as SchemaCache from "@tillflow/engine/SchemaCache"
import * as Identifiers from "../model/Identifiers.js"
import { TransactionResult } from "../model/TransactionResult.js"
import * as CallbackRegistration from "./CallbackRegistration.js"
import * as OperationOutcome from "./OperationOutcome.js"
import type { Execution, Plan } from "./ProtocolWorkflows.js"
import { reconcilable } from "./ReconcileLoop.js"
import * as ResultRedaction from "./ResultRedaction.js"
import * as UndecodableAnswer from "./internal/UndecodableAnswer.js"
import type { Accepted, AttemptInfo } from "./SendAttempt.js"
import { durableSleep, now } from "./internal/step.js"

/** How waiting for a result ended before settlement. */
export type Waited =
  | { readonly _tag: "Settled"; readonly outcome: OperationOutcome.Outcome }
  | { readonly _tag: "Reconcile" }
  | {
      readonly _tag: "Unresolved"
      readonly message: string
      readonly reason: OperationOutcome.UnresolvedReason
    }

/** Step 4: waits for the result of an accepted attempt, the plan's way. */
export const wait = (
  execution: Execution,
  plan: Plan,
  attempt: AttemptInfo,
  context: OperationOutcome.AttemptContext,
  accepted: Accepted
) =>
  plan.delivery === "callback"
    ? awaitCallback(execution, plan, attempt, context)
    : awaitPoll(execution, plan, attempt, context, accepted)

// ---------------------------------------------------------------------------------------
// Callback mode

class Arrived extends Schema.TaggedClass<Arrived>()("Arrived", {
  delivered: CallbackRegistration.DeliveredResult
}) {}
/** `new Arrived(…)` compiles a validator per call (the result holds transformations): compiled once. */
const makeArrived = SchemaCache.construct(Arrived)
class Elapsed extends Schema.TaggedClass<Elapsed>()("Elapsed", {
  /** A delivery was recorded for the attempt, but it does not decode as a result. */
  undecodable: Schema.optional(Schema.Boolean)
}) {}
const CallbackWait = Schema.Union(Arrived, Elapsed)
type CallbackWait = typeof CallbackWait.Type

/** Callback mode: the receiver resolves the attempt's deferred; a durable timer races it. */
const awaitCallback = (
  { payload, store }: Execution,
  plan: Plan,
  attempt: AttemptInfo,
  context: OperationOutcome.AttemptContext
) =>
  Effect.gen(function* () {
    const prefix = `attempt-${attempt.attempt}`
    const canReconcile = reconcilable(payload, attempt)
    let waitedMillis = 0
    for (let k = 0; ; k++) {
      const slice = canReconcile
        ? plan.callbackFallbackMillis
        : Math.min(plan.callbackFallbackMillis, plan.resultTimeoutMillis - waitedMillis)
      const arrived: Effect.Effect<CallbackWait, never, WorkflowEngine | WorkflowInstance> = Effect.map(
        DurableDeferred.await(CallbackRegistration.resultDeferred(attempt.attemptId)),
        (delivered) => makeArrived({ delivered })
      )
      // The receiver acknowledges a delivery once its result is in the attempt's stream and
      // resolves the deferred after its reply: a crash in between leaves the result recorded
      // but never forwarded. So when the clock wins, the result is looked for where it was
      // recorded; what the race returns is stored with it, so a replay does not look again.
      const elapsed: Effect.Effect<CallbackWait, never, WorkflowEngine | WorkflowInstance> = Effect.zipRight(
        DurableClock.sleep({
          name: `${prefix}/callback-fallback-${k}`,
          duration: Duration.millis(Math.max(1, slice)),
          // Durable even when short: the workflow suspends, and the callback wakes it.
          inMemoryThreshold: Duration.zero
        }),
        Effect.map(CallbackRegistration.recordedResult(store, attempt.attemptId), (delivered) =>
          delivered === null
            ? new Elapsed({})
            : delivered === "undecodable"
              ? new Elapsed({ undecodable: true })
              : makeArrived({ delivered })
        )
      )
      const raced = yield* DurableDeferred.raceAll({
        name: `${prefix}/await-callback-${k}`,
        success: CallbackWait,
        error: Schema.Never,
        effects: [arrived, elapsed]
      })
      if (raced._tag === "Arrived") {
        const reading = OperationOutcome.read(raced.delivered.result, context, "callback")
        if (reading._tag === "Settled") return reading satisfies Waited
        return canReconcile
          ? ({ _tag: "Reconcile" } satisfies Waited)
          : ({
              _tag: "Unresolved",
              message: `the result says ${reading.finStatus} and there is no reference to reconcile with`,
              reason: "NoReference"
            } satisfies Waited)
      }
      if (canReconcile) return { _tag: "Reconcile" } satisfies Waited
      if (raced.undecodable === true) {
        return {
          _tag: "Unresolved",
          message:
            "the delivered result could not be decoded (it is stored raw in the attempt's stream) and there is no reference to reconcile with",
          reason: "Undecodable"
        } satisfies Waited
      }
      waitedMillis += slice
      if (waitedMillis >= plan.resultTimeoutMillis) {
        return {
          _tag: "Unresolved",
          message: `no result was delivered within ${Duration.format(Duration.millis(plan.resultTimeoutMillis))} and there is no reference to reconcile with`,
          reason: "NoResult"
        } satisfies Waited
      }
    }
  })

// ---------------------------------------------------------------------------------------
// Polling mode

const PollResult = Schema.Union(
  Schema.TaggedStruct("Ready", { delivered: CallbackRegistration.DeliveredResult, at: Schema.Number }),
  Schema.TaggedStruct("Pending", { at: Schema.Number }),
  Schema.TaggedStruct("Gone", { at: Schema.Number }),
  Schema.TaggedStruct("Trouble", { reason: Schema.String, at: Schema.Number }),
  /** 200 with a body that is not a result: stored raw in the attempt's stream. */
  Schema.TaggedStruct("Undecodable", { reason: Schema.String, at: Schema.Number })
)
const encodeResult = Schema.encodeSync(TransactionResult)
/** `…/poll-N`, its schemas built once. */
const pollStep = DurableStep.family({ success: PollResult })

/** Polling mode: `transaction-result` until 200, or reconcile on 404 or timeout. */
const awaitPoll = (
  { payload, cloud, store }: Execution,
  plan: Plan,
  attempt: AttemptInfo,
  context: OperationOutcome.AttemptContext,
  accepted: Accepted
) =>
  Effect.gen(function* () {
    const prefix = `attempt-${attempt.attempt}`
    const canReconcile = reconcilable(payload, attempt)
    const resultId = accepted.transactionResultId
    const unresolved = (why: string, reason: OperationOutcome.UnresolvedReason = "NoReference"): Waited => ({
      _tag: "Unresolved",
      message: `${why} and there is no reference to reconcile with`,
      reason
    })
    if (resultId === undefined)
      return canReconcile ? ({ _tag: "Reconcile" } as Waited) : unresolved("no result id", "NoResult")
    for (let i = 0; ; i++) {
      const polled = yield* pollStep(`${prefix}/poll-${i}`)(
        Effect.gen(function* () {
          const answer = yield* Effect.either(
            cloud.transactionResult(Identifiers.TransactionResultId.make(resultId))
          )
          const at = yield* now
          if (answer._tag === "Left") {
            const body = UndecodableAnswer.bodyOf(answer.left)
            if (body === undefined) return { _tag: "Trouble" as const, reason: answer.left._tag, at }
            yield* UndecodableAnswer.record(store, attempt.attemptId, body, answer.left.message, at)
            return { _tag: "Undecodable" as const, reason: answer.left.message, at }
          }
          const outcome = answer.right
          switch (outcome._tag) {
            case "Pending":
              return { _tag: "Pending" as const, at }
            case "Unknown":
              return { _tag: "Gone" as const, at }
            case "Ready": {
              const result = ResultRedaction.sanitiseResult(outcome.result)
              // Hashed plain, as the receiver hashes a delivery: the stored form has salts.
              const sanitised = ResultRedaction.sanitise(encodeResult(result))
              const resultHash = yield* CallbackRegistration.resultHash(sanitised.value)
              return { _tag: "Ready" as const, delivered: { result, resultHash, receivedAt: at }, at }
            }
          }
        })
      )
      if (polled._tag === "Ready") {
        const reading = OperationOutcome.read(polled.delivered.result, context, "polling")
        if (reading._tag === "Settled") return reading satisfies Waited
        return canReconcile
          ? ({ _tag: "Reconcile" } as Waited)
          : unresolved(`the result says ${reading.finStatus}`)
      }
      if (polled._tag === "Undecodable") {
        return canReconcile
          ? ({ _tag: "Reconcile" } as Waited)
          : unresolved(
              "the polled result could not be decoded (it is stored raw in the attempt's stream)",
              "Undecodable"
            )
      }
      if (polled._tag === "Gone") {
        return canReconcile
          ? ({ _tag: "Reconcile" } as Waited)
          : unresolved("the result id is no longer known")
      }
      if (polled.at - attempt.attemptedAt >= plan.resultTimeoutMillis) {
        return canReconcile ? ({ _tag: "Reconcile" } as Waited) : unresolved("no result in time", "NoResult")
      }
      yield* durableSleep(`${prefix}/poll-wait-${i}`, plan.pollIntervalMillis)
    }
  })
