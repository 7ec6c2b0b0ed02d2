/**
 * One sample of every event the engine writes (and of the forms that store differently: a
 * step's failure, a step with an outbox of domain events, a defect), encoded exactly as the
 * engine appends them. The golden files of `packages/engine/test/goldens` are these samples'
 * stored forms (`EventGoldens`); a new engine event type without a sample fails that test.
 */
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as EngineEvent from "../EngineEvent.js"
import type * as EventStore from "../EventStore.js"
import * as DomainEvents from "../internal/DomainEvents.js"
import type * as EventGoldens from "./EventGoldens.js"

/** The registry name of the engine's events in golden files. */
export const registry = "engine"

const sample = (
  event: EngineEvent.EngineEvent,
  options: { readonly variant?: string; readonly metadata?: EventStore.JsonObject } = {}
): EventGoldens.Sample => {
  const stored = EngineEvent.toStored(event)
  return {
    registry,
    ...(options.variant === undefined ? {} : { variant: options.variant }),
    event: {
      type: stored.type,
      schemaVersion: EngineEvent.schemaVersion,
      data: stored.data as EventStore.JsonObject,
      ...(options.metadata === undefined ? {} : { metadata: options.metadata })
    }
  }
}

// A step that emitted a domain event to another stream: kept in its outbox (metadata).
const outbox = DomainEvents.sortEmitted(
  [
    {
      stream: "payment-3c1e0f4e2b7d4f0a9d6e5b4a3c2d1e0f",
      type: "AttemptRecorded",
      data: { attempt: 1, attemptId: "attempt-1", at: 1_732_442_400_000 }
    }
  ],
  "execution-3c1e0f4e2b7d4f0a9d6e5b4a3c2d1e0f",
  3
).outbox.map(DomainEvents.outboxJson)

/** The samples, one or more per engine event type. */
export const samples: ReadonlyArray<EventGoldens.Sample> = [
  sample({
    _tag: "WorkflowStarted",
    workflowName: "TerminalOperation",
    payload: {
      request: { operation: "sale", amount: "1050", currency: "EUR" },
      idempotencyKey: "order-1042"
    },
    parent: null
  }),
  sample(
    {
      _tag: "WorkflowStarted",
      workflowName: "Child",
      payload: { step: 2 },
      parent: { workflowName: "Parent", stream: "execution-5f0c2b7d4f0a9d6e" }
    },
    { variant: "child" }
  ),
  sample(
    {
      _tag: "ActivityCompleted",
      seq: 3,
      name: "RecordAttempt",
      attempt: 1,
      exit: Exit.succeed({
        attemptId: "attempt-1",
        transactionReference: "3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b"
      })
    },
    { metadata: { outbox } }
  ),
  sample(
    {
      _tag: "ActivityCompleted",
      seq: 4,
      name: "Send",
      attempt: 2,
      exit: Exit.fail({ _tag: "DeviceBusy", message: "the terminal is busy" })
    },
    { variant: "failure" }
  ),
  sample({
    _tag: "DeferredResolved",
    name: "result/attempt-1",
    exit: Exit.succeed({ finStatus: "AUTHORISED" })
  }),
  sample(
    {
      _tag: "DeferredResolved",
      name: "race/first",
      exit: Exit.succeed("callback"),
      seqStart: 5,
      seqEnd: 7
    },
    { variant: "computed" }
  ),
  sample({ _tag: "ClockScheduled", name: "reconcile/1", fireAt: 1_732_442_490_000, durationMillis: 90_000 }),
  sample({ _tag: "ClockFired", name: "reconcile/1" }),
  sample({ _tag: "WorkflowSuspended", wakeAt: 1_732_442_490_000 }),
  sample({ _tag: "WorkflowSuspended", wakeAt: null }, { variant: "untimed" }),
  sample({ _tag: "WorkflowInterrupted" }),
  sample({ _tag: "WorkflowCompleted", exit: Exit.succeed({ verdict: "approved", amount: "1050" }) }),
  sample(
    { _tag: "WorkflowCompleted", exit: Exit.failCause(Cause.die(new TypeError("no terminal"))) },
    { variant: "defect" }
  ),
  sample(
    { _tag: "WorkflowCompleted", exit: Exit.interrupt(FiberId.make(7, 1_732_442_400_000)) },
    { variant: "interrupted" }
  ),
  sample({ _tag: "DeterminismViolated", seq: 4, recorded: "Send", requested: "SendV2" }),
  sample(
    {
      _tag: "DeterminismViolated",
      seq: 1,
      recorded: 'activity "Pack" (attempt 1)',
      requested: 'activity "Label" (attempt 1)',
      change: "label-instead-of-pack"
    },
    { variant: "change" }
  ),
  sample({ _tag: "WorkflowResumed" }),
  sample({ _tag: "VersionMarked", change: "label-instead-of-pack", seq: 1 })
]
