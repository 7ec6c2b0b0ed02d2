/**
 * The door of a merchant's new operations (issue 32): a request made for a merchant
 * (`Tillflow-Merchant`, `MerchantKeys.forMerchant`) starts nothing unless the merchant is
 * registered and enabled. What is already running goes on — a disabled merchant's sale in
 * flight still learns its outcome — and reads are never refused here. The deployment's own
 * merchant (no merchant named) always passes. A merchant's MOTO sale naming no terminal is
 * booked on its own virtual terminal ({@link withVirtualTerminal}). With a rate limit — the
 * merchant's own in the registry, else the deployment's (`TILLFLOW_MERCHANT_RATE_LIMIT`) —
 * a registered, enabled merchant past it is refused too (`RateLimited`, 429): the
 * deployment's own merchant is not limited. The merchant's own limit comes from the same
 * read of the registry that checks it is enabled, made for every new operation: a limit
 * changed applies to the next one.
 */
import { InDoubtResolution, MerchantKeys, MerchantRegistry, MotoWorkflow } from "@tillflow/core"
import { DurableEngine, EngineEvent, EventStore } from "@tillflow/engine"
import * as Tenant from "@tillflow/engine/Tenant"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Intake from "../Intake.js"
import * as MerchantRateLimit from "../MerchantRateLimit.js"
import { unavailable } from "./Failures.js"

/**
 * The gate: `admit` fails when the current merchant may not start an operation, and
 * answers the merchant when a registered one is named.
 */
export interface MerchantGate {
  readonly admit: Effect.Effect<Option.Option<MerchantRegistry.Merchant>, Intake.IntakeError>
  /**
   * For a request acting for a merchant: the execution must be that merchant's, else it is
   * not found (`no execution <id>`, as an id no one knows: another merchant's is not told).
   */
  readonly ownExecution: (executionId: string) => Effect.Effect<void, Intake.IntakeError>
  /** The same for a transaction, by its guid: the merchant's whose execution made it. */
  readonly ownTransaction: (guid: string) => Effect.Effect<void, Intake.IntakeError>
  /**
   * The same for a request on a batch, MOTO sale attempt or device stream: the merchant's
   * whose execution made it (its events name their tenant, `InDoubtResolution.attemptOwner`).
   */
  readonly ownAttempt: (
    on: InDoubtResolution.Attempt,
    requestId: string
  ) => Effect.Effect<void, Intake.IntakeError>
}

/**
 * A terminal-less MOTO sale of a merchant that names no terminal is booked on the
 * merchant's registered virtual terminal (else the deployment's, `TILLFLOW_MOTO_TERMINAL`).
 */
export const withVirtualTerminal = (
  workflow: string,
  input: Intake.StartLifecycle,
  merchant: Option.Option<MerchantRegistry.Merchant>
): Intake.StartLifecycle => {
  const virtualTerminal = Option.getOrUndefined(merchant)?.virtualTerminal
  return workflow === MotoWorkflow.Sale.name &&
    virtualTerminal !== undefined &&
    !("serialNumber" in input.payload)
    ? { ...input, payload: { ...input.payload, serialNumber: virtualTerminal } }
    : input
}

/**
 * The tenant an execution was started for (its `WorkflowStarted` metadata, which the
 * archive keeps readable); none when unknown: an execution of the deployment's own
 * merchant, one started before tenants, or no such execution.
 */
export const executionTenant = (
  store: EventStore.Service,
  executionId: string
): Effect.Effect<string | undefined, Intake.IntakeError> =>
  store.readStream(EngineEvent.streamId(executionId), { maxCount: 1 }).pipe(
    Effect.map(([started]) => Tenant.ofMetadata(started?.metadata)),
    Effect.mapError(unavailable("event store"))
  )

/**
 * The gate over the `MerchantRegistry` in context, if any, and the engine's store and queue;
 * each merchant's new operations within its own rate limit, else `rateLimit` (the
 * deployment's), if either (a bucket per merchant, in this worker's memory).
 */
export const make = (
  rateLimit: Option.Option<MerchantRateLimit.RateLimit> = Option.none()
): Effect.Effect<MerchantGate, never, EventStore.EventStore | DurableEngine.DurableEngine> =>
  Effect.gen(function* () {
    const registry = yield* Effect.serviceOption(MerchantRegistry.MerchantRegistry)
    const store = yield* EventStore.EventStore
    const engine = yield* DurableEngine.DurableEngine
    const limiter = yield* MerchantRateLimit.make

    const tenantOf = (executionId: string) => executionTenant(store, executionId)

    const ownExecution = (executionId: string) =>
      Effect.gen(function* () {
        const merchant = yield* MerchantKeys.currentMerchant
        if (merchant === undefined) return
        if ((yield* tenantOf(executionId)) !== merchant) {
          return yield* new Intake.NotFound({ message: `no execution ${executionId}` })
        }
      })

    const ownTransaction = (guid: string) =>
      Effect.gen(function* () {
        const merchant = yield* MerchantKeys.currentMerchant
        if (merchant === undefined) return
        const made = yield* engine
          .list({ attributes: { guid }, limit: 1 })
          .pipe(Effect.mapError(unavailable("execution queue")))
        const owner = made[0] === undefined ? undefined : yield* tenantOf(made[0].executionId)
        if (owner !== merchant) {
          return yield* new Intake.NotFound({ message: `no transaction ${guid} of merchant ${merchant}` })
        }
      })

    const ownAttempt = (on: InDoubtResolution.Attempt, requestId: string) =>
      Effect.gen(function* () {
        const merchant = yield* MerchantKeys.currentMerchant
        if (merchant === undefined) return
        const owner = yield* InDoubtResolution.attemptOwner(on, requestId).pipe(
          Effect.provideService(EventStore.EventStore, store),
          Effect.mapError(unavailable("event store"))
        )
        if (owner !== merchant) {
          return yield* new Intake.NotFound({
            message: `no request ${requestId} of merchant ${merchant} on ${InDoubtResolution.attemptStream(on)}`
          })
        }
      })

    const admit = Effect.gen(function* () {
      const merchant = yield* MerchantKeys.currentMerchant
      if (merchant === undefined) return Option.none()
      if (Option.isNone(registry)) {
        return yield* new Intake.InvalidRequest({
          message: `Tillflow-Merchant: this intake serves its deployment's own merchant only; leave the header out`
        })
      }
      const found = yield* registry.value.get(merchant).pipe(
        Effect.catchTags({
          MerchantNotFound: () =>
            Effect.fail(
              new Intake.InvalidRequest({
                message: `Tillflow-Merchant: no merchant ${merchant} is registered (tillflow merchants list)`
              })
            ),
          MerchantRefused: (error) => Effect.fail(new Intake.InvalidRequest({ message: error.message })),
          RegistryUnavailable: (error) =>
            Effect.fail(new Intake.Unavailable({ message: `the merchant registry: ${error.message}` }))
        })
      )
      if (!found.enabled) {
        return yield* new Intake.ActionRefused({
          rule: "merchant-enabled",
          message: `merchant ${merchant} is disabled: it takes no new operations (tillflow merchants enable ${merchant})`
        })
      }
      const limit = found.rateLimit ?? Option.getOrUndefined(rateLimit)
      if (limit !== undefined) {
        const decision = yield* limiter.take(merchant, limit)
        if (decision._tag === "Refused") {
          const seconds = Math.max(1, Math.ceil(decision.retryAfterMillis / 1_000))
          const whose =
            found.rateLimit === undefined
              ? "TILLFLOW_MERCHANT_RATE_LIMIT"
              : `its own: tillflow merchants rate-limit ${merchant}`
          return yield* new Intake.RateLimited({
            merchant,
            retryAfterSeconds: seconds,
            message: `merchant ${merchant} started operations faster than its rate limit of ${MerchantRateLimit.format(limit)}: nothing was started; try again in ${seconds} s (${whose})`
          })
        }
      }
      return Option.some(found)
    })
    return { admit, ownExecution, ownTransaction, ownAttempt }
  })
