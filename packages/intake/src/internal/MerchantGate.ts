/**
 * The door of a merchant's new operations (issue 32): a request made for a merchant
 * (`Tillflow-Merchant`, `MerchantKeys.forMerchant`) starts nothing unless the merchant is
 * registered and enabled. What is already running goes on — a disabled merchant's sale in
 * flight still learns its outcome — and reads are never refused here. The deployment's own
 * merchant (no merchant named) always passes. A merchant's MOTO sale naming no terminal is
 * booked on its own virtual terminal ({@link withVirtualTerminal}).
 */
import { MerchantKeys, MerchantRegistry, MotoWorkflow } from "@tillflow/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Intake from "../Intake.js"

/**
 * The gate: `admit` fails when the current merchant may not start an operation, and
 * answers the merchant when a registered one is named.
 */
export interface MerchantGate {
  readonly admit: Effect.Effect<Option.Option<MerchantRegistry.Merchant>, Intake.IntakeError>
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

/** The gate over the `MerchantRegistry` in context, if any. */
export const make: Effect.Effect<MerchantGate> = Effect.gen(function* () {
  const registry = yield* Effect.serviceOption(MerchantRegistry.MerchantRegistry)
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
    return Option.some(found)
  })
  return { admit }
})
