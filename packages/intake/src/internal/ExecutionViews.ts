/**
 * Executions as the intake shows them: where one stands — its status and attributes, and
 * while it runs its progress, read from its payment stream — and, once it ended, its
 * report and its exit as stored; answered at once or, for a caller who asked to wait,
 * once it ended or the wait is over.
 */
import { LifecycleEvent, PaymentEvents, OperationReport, PaymentProtocol } from "@tillflow/core"
import { DurableEngine, EngineEvent, EventStore, ExecutionQueue, ExecutionRecord } from "@tillflow/engine"
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Intake from "../Intake.js"
import { unavailable } from "./Failures.js"
import { movedView } from "./Resolutions.js"

/** What the intake's commands and queries show executions with. */
export interface ExecutionViews {
  /** An execution's status and attributes; `NotFound` when there is none. */
  readonly info: (executionId: string) => Effect.Effect<ExecutionQueue.ExecutionInfo, Intake.IntakeError>
  /** An execution's payload and exit as its history holds them. */
  readonly record: (executionId: string) => Effect.Effect<ExecutionRecord.ExecutionRecord, Intake.IntakeError>
  /** The view of an execution. */
  readonly view: (
    info: ExecutionQueue.ExecutionInfo
  ) => Effect.Effect<Intake.ExecutionView, Intake.IntakeError>
  /** The view of an execution once it ended, or when `waitSeconds` are over (at once without). */
  readonly awaitView: (
    executionId: string,
    waitSeconds: number | undefined
  ) => Effect.Effect<Intake.ExecutionView, Intake.IntakeError>
}

/** Whether an execution will not move on by itself (a stuck one waits for an operator). */
export const isFinished = (status: ExecutionQueue.ExecutionStatus): boolean =>
  ExecutionQueue.finishedStatuses.includes(status) || status === "stuck"

const isTerminalWorkflow = (workflowName: string): boolean =>
  workflowName === PaymentProtocol.TerminalOperation.name ||
  workflowName === PaymentProtocol.StopCurrentTransaction.name

/** The report of a finished execution from its stored exit, told the way its workflow ends. */
export const reportOf = (
  workflowName: string,
  exit: EngineEvent.ExitJson
): Option.Option<OperationReport.Report> =>
  workflowName === PaymentProtocol.TerminalOperation.name
    ? OperationReport.ofTerminalExit(exit)
    : workflowName === PaymentProtocol.StopCurrentTransaction.name
      ? OperationReport.ofStopExit(exit)
      : Option.some(OperationReport.ofLifecycleExit(workflowName, exit))

/**
 * An exit in its stored JSON form (`{ _tag: "Success", value }` or `{ _tag: "Failure", cause }`,
 * the value encoded by the workflow's schemas): the same document whether the view is sent
 * over HTTP or read in this process, never the runtime's `Exit` object.
 */
const storedExit = Schema.encodeSync(EngineEvent.ExitJson)

/** The views over the engine and the store in context. */
export const make: Effect.Effect<ExecutionViews, never, DurableEngine.DurableEngine | EventStore.EventStore> =
  Effect.gen(function* () {
    const engine = yield* DurableEngine.DurableEngine
    const store = yield* EventStore.EventStore

    const info = (executionId: string) =>
      engine.get(executionId).pipe(
        Effect.mapError(unavailable("execution queue")),
        Effect.flatMap(
          Option.match({
            onNone: () => Effect.fail(new Intake.NotFound({ message: `no execution ${executionId}` })),
            onSome: Effect.succeed
          })
        )
      )

    const record = (executionId: string) =>
      ExecutionRecord.read(executionId).pipe(
        Effect.provideService(DurableEngine.DurableEngine, engine),
        Effect.mapError(unavailable("event store"))
      )

    /** An operator's resolution of a terminal operation left unresolved, if there is one. */
    const resolutionOf = (executionId: string) =>
      store.readStream(LifecycleEvent.executionActionsStream(executionId)).pipe(
        Effect.flatMap((recorded) =>
          LifecycleEvent.registry.decodeAll(recorded.filter((e) => e.type === "TerminalOutcomeResolved"))
        ),
        Effect.map((events) => {
          const found = events.find((e) => e.type === "TerminalOutcomeResolved")
          if (found === undefined || found.type !== "TerminalOutcomeResolved") return undefined
          const d = found.data
          return {
            resolution: d.resolution,
            operator: d.operator,
            reason: d.reason,
            at: DateTime.formatIso(d.at),
            ...(d.guid === undefined ? {} : { guid: d.guid }),
            ...movedView(d.amount)
          }
        }),
        Effect.mapError(unavailable("event store"))
      )

    const view = (
      execution: ExecutionQueue.ExecutionInfo
    ): Effect.Effect<Intake.ExecutionView, Intake.IntakeError> =>
      Effect.gen(function* () {
        const base = {
          executionId: execution.executionId,
          workflow: execution.workflowName,
          status: execution.status,
          attributes: execution.attributes,
          createdAt: execution.createdAt,
          updatedAt: execution.updatedAt
        }
        if (isFinished(execution.status)) {
          const { exit } = yield* record(execution.executionId)
          const report = Option.flatMap(exit, (stored) => reportOf(execution.workflowName, stored))
          const resolution =
            isTerminalWorkflow(execution.workflowName) &&
            Option.isSome(report) &&
            report.value.verdict === "unresolved"
              ? yield* resolutionOf(execution.executionId)
              : undefined
          return {
            ...base,
            ...(Option.isSome(report) ? { report: report.value } : {}),
            ...(Option.isSome(exit) ? { result: storedExit(exit.value) } : {}),
            ...(resolution === undefined ? {} : { resolution })
          }
        }
        if (!isTerminalWorkflow(execution.workflowName)) {
          return {
            ...base,
            progress: { phase: "sending" as const, attempt: 0, waitingFor: "the service's answer" }
          }
        }
        const business = yield* store
          .readStream(PaymentEvents.paymentStream(execution.executionId))
          .pipe(Effect.mapError(unavailable("event store")))
        return { ...base, progress: yield* OperationReport.progressOf(business) }
      })

    const awaitView = (executionId: string, waitSeconds: number | undefined) =>
      Effect.gen(function* () {
        const until = (yield* Clock.currentTimeMillis) + Math.max(0, waitSeconds ?? 0) * 1000
        while (true) {
          const answered = yield* Effect.scoped(
            Effect.gen(function* () {
              // Registered before the status is read: an end in between still wakes the wait.
              const changed = yield* engine.awaitChange(executionId)
              const current = yield* info(executionId)
              const time = yield* Clock.currentTimeMillis
              if (isFinished(current.status) || time >= until) return Option.some(current)
              // The end of a run in this process (or another's announcement) wakes the wait at
              // once; a read every second stays as the floor (it was every 150 ms, the only
              // way to see the end: measured, 7 status reads of the one PGlite session per sale).
              yield* Effect.raceFirst(changed, Effect.sleep(Duration.millis(Math.min(1_000, until - time))))
              return Option.none()
            })
          )
          if (Option.isSome(answered)) return yield* view(answered.value)
        }
      })

    return { info, record, view, awaitView }
  })
