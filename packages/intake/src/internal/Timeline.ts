/**
 * One operation's story for an operator: found by execution id, transaction reference,
 * idempotency key or gateway guid, told from its own events, then from the terminal-less
 * history it acted on (a transaction, a MOTO sale, a terminal's batches or commands), the
 * terminal operations linked to it (refunds, reversals, captures naming it as original),
 * and what happened to its transaction afterwards without the terminal.
 *
 * A request acting for a merchant (`MerchantKeys.currentMerchant`: a merchant's credential,
 * or the platform's naming one) finds that merchant's operations only: an execution whose
 * tenant is another's, or none, is not found by its id, reference or key, a guid only when
 * its history's opening names the merchant, and the linked operations told are its own.
 */
import { LifecycleEvent, MerchantKeys, OperationTimeline, PaymentProtocol, Timeline } from "@tillflow/core"
import { DurableEngine, type EngineEvent, EventStore } from "@tillflow/engine"
import * as Tenant from "@tillflow/engine/Tenant"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Intake from "../Intake.js"
import type * as ExecutionViews from "./ExecutionViews.js"
import { unavailable } from "./Failures.js"

/** The lifecycle stream an execution acted on (its payload's guid, MOTO reference, terminal). */
const lifecycleStreamOf = (workflowName: string, payload: unknown): string | undefined => {
  const p = (payload ?? {}) as Readonly<Record<string, unknown>>
  const text = (key: string) => (typeof p[key] === "string" ? (p[key] as string) : undefined)
  if (workflowName === PaymentProtocol.TerminalOperation.name) return undefined
  if (workflowName.startsWith("Batch.")) {
    const serial = text("serialNumber")
    return serial === undefined ? undefined : LifecycleEvent.batchStream(serial)
  }
  if (workflowName.startsWith("DeviceCommand.")) {
    const serial = text("serialNumber")
    return serial === undefined ? undefined : LifecycleEvent.deviceStream(serial)
  }
  const guid = text("originalGuid")
  if (guid !== undefined) return LifecycleEvent.transactionStream(guid)
  const reference = text("transactionReference")
  return reference === undefined ? undefined : LifecycleEvent.motoSaleStream(reference)
}

/** The gateway guid of a finished terminal operation (its outcome's efttransactionID). */
const guidOf = (exit: Option.Option<EngineEvent.ExitJson>): Option.Option<string> =>
  Option.flatMap(exit, (stored) => {
    if (stored._tag !== "Success") return Option.none()
    const value = stored.value as { readonly facts?: { readonly efttransactionID?: unknown } } | null
    const guid = value?.facts?.efttransactionID
    return typeof guid === "string" ? Option.some(guid) : Option.none()
  })

/** The timeline over the engine and store in context. */
export const make = (
  views: ExecutionViews.ExecutionViews
): Effect.Effect<Intake.Service["timeline"], never, DurableEngine.DurableEngine | EventStore.EventStore> =>
  Effect.gen(function* () {
    const engine = yield* DurableEngine.DurableEngine
    const store = yield* EventStore.EventStore

    const provideStore = <A, E>(effect: Effect.Effect<A, E, EventStore.EventStore>) =>
      Effect.provideService(effect, EventStore.EventStore, store)

    /** The listing's scope: the merchant's executions only, when a merchant is named. */
    const scoped = (merchant: string | undefined) => (merchant === undefined ? {} : { tenants: [merchant] })

    /** An execution id from an id, a transaction reference or an idempotency key (the merchant's, with one). */
    const resolve = (reference: string, merchant: string | undefined) =>
      Effect.gen(function* () {
        const direct = yield* engine.get(reference).pipe(Effect.mapError(unavailable("execution queue")))
        if (Option.isSome(direct) && (merchant === undefined || direct.value.tenant === merchant))
          return reference
        for (const key of ["transactionReference", "idempotencyKey"]) {
          const found = yield* engine
            .list({
              attributes: { [key]: key === "transactionReference" ? reference.toLowerCase() : reference },
              ...scoped(merchant)
            })
            .pipe(Effect.mapError(unavailable("execution queue")))
          const last = found[found.length - 1]
          if (last !== undefined) return last.executionId
        }
        return yield* new Intake.NotFound({
          message: `no execution, transaction reference or idempotency key "${reference}" is known`
        })
      })

    /** The rendered story of a lifecycle stream, if it has events. */
    const lifecycleLines = (streamId: string, title: string) =>
      Effect.gen(function* () {
        const version = yield* store.streamVersion(streamId).pipe(Effect.mapError(unavailable("event store")))
        if (version === 0) return []
        const lines = yield* provideStore(Timeline.read(streamId)).pipe(
          Effect.mapError((error) => new Intake.Unavailable({ message: `${streamId}: ${error.message}` }))
        )
        return [title, ...lines.map((line) => `  ${line}`)]
      })

    /**
     * The terminal operations linked to this one (a refund, a reversal, a capture naming it
     * as their original, by its guid or its transaction reference), each told in turn.
     */
    const linkedLines = (
      executionId: string,
      guid: Option.Option<string>,
      reference: string | undefined,
      merchant: string | undefined
    ) =>
      Effect.gen(function* () {
        const queries: Array<Readonly<Record<string, string>>> = []
        if (Option.isSome(guid)) queries.push({ originalTransactionId: guid.value })
        if (reference !== undefined) queries.push({ originalTransactionReference: reference })
        const seen = new Set([executionId])
        const lines: Array<string> = []
        for (const attributes of queries) {
          const linked = yield* engine
            .list({ attributes, ...scoped(merchant) })
            .pipe(Effect.mapError(unavailable("execution queue")))
          for (const execution of linked) {
            if (seen.has(execution.executionId)) continue
            seen.add(execution.executionId)
            const story = yield* provideStore(OperationTimeline.read(execution.executionId)).pipe(
              Effect.mapError(unavailable("event store"))
            )
            lines.push(
              `linked: ${execution.attributes["operation"] ?? execution.workflowName} ${execution.executionId} (${execution.status}):`,
              ...story.map((line) => `  ${line}`)
            )
          }
        }
        return lines
      })

    /** Whether a transaction's history is `merchant`'s: its opening names it as tenant. */
    const historyOf = (guid: string, merchant: string) =>
      store.readStream(LifecycleEvent.transactionStream(guid), { maxCount: 1 }).pipe(
        Effect.map(([opening]) => opening !== undefined && Tenant.ofMetadata(opening.metadata) === merchant),
        Effect.mapError(unavailable("event store"))
      )

    return (reference: string) =>
      Effect.gen(function* () {
        const merchant = yield* MerchantKeys.currentMerchant
        const resolved = yield* Effect.either(resolve(reference, merchant))
        if (Either.isLeft(resolved)) {
          // A gateway guid: the transaction's terminal-less history (the merchant's, with one).
          if (merchant !== undefined && !(yield* historyOf(reference, merchant))) return yield* resolved.left
          const lines = yield* lifecycleLines(
            LifecycleEvent.transactionStream(reference),
            `transaction ${reference}:`
          )
          if (lines.length === 0) return yield* resolved.left
          return { executionId: LifecycleEvent.transactionStream(reference), lines }
        }
        const executionId = resolved.right
        const info = yield* views.info(executionId)
        const lines = [
          ...(yield* provideStore(OperationTimeline.read(executionId)).pipe(
            Effect.mapError(unavailable("event store"))
          ))
        ]
        const record = yield* views.record(executionId)
        const stream = lifecycleStreamOf(info.workflowName, Option.getOrUndefined(record.payload))
        if (stream !== undefined) lines.push(...(yield* lifecycleLines(stream, `${stream}:`)))
        // What operators asked of it (a retry), with who, why and when.
        lines.push(
          ...(yield* lifecycleLines(
            LifecycleEvent.executionActionsStream(executionId),
            "operators' actions:"
          ))
        )
        const guid = guidOf(record.exit)
        lines.push(
          ...(yield* linkedLines(executionId, guid, info.attributes["transactionReference"], merchant))
        )
        if (Option.isSome(guid)) {
          lines.push(
            ...(yield* lifecycleLines(
              LifecycleEvent.transactionStream(guid.value),
              `afterwards, without the terminal (transaction ${guid.value}):`
            ))
          )
        }
        return { executionId, lines }
      })
  })
