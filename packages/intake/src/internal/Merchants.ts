/**
 * The handlers of the merchant registry's routes (`MerchantsApi`), over the optional
 * `MerchantRegistry` in context when the intake is built: the worker's (`Stack.merchantsLayer`)
 * fails every call saying why when no key-encryption key (`TILLFLOW_KEK`) is configured, and a
 * host that provides none gets the same 503 ({@link notConfigured}). Only an admin (the bearer token is one) is answered: the authentication lets a viewer
 * read and an operator act, and the list of a deployment's merchants and their keys is a
 * platform concern, not a payment one. A key is handed to the registry as the `Redacted` it
 * was decoded into; what is logged of a change is who made it and which merchant or key id.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Operators } from "@tillflow/console"
import { MerchantRegistry } from "@tillflow/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Intake from "../Intake.js"
import { CurrentOperator, IntakeApi } from "../IntakeApi.js"
import * as MerchantRateLimit from "../MerchantRateLimit.js"
import { MerchantConflict, type KeyView, type MerchantView } from "../MerchantsApi.js"

/** Why the routes answer 503 on a worker without a registry. */
export const notConfigured =
  "no merchant registry on this worker: TILLFLOW_KEK (the key-encryption key merchants' API keys are sealed with, <id>:<base64 of 32 bytes>) is not configured"

const keyView = (key: MerchantRegistry.KeyInfo): KeyView => ({
  keyId: key.keyId,
  kind: key.kind,
  state: key.state,
  createdAt: key.createdAt,
  ...(key.retiredAt === undefined ? {} : { retiredAt: key.retiredAt }),
  kek: key.kek
})

const merchantView = (m: MerchantRegistry.Merchant): MerchantView => ({
  id: m.id,
  name: m.name,
  mcc: m.mcc,
  ...(m.virtualTerminal === undefined ? {} : { virtualTerminal: m.virtualTerminal }),
  ...(m.partialReversal === undefined ? {} : { partialReversal: m.partialReversal }),
  ...(m.captureReversal === undefined ? {} : { captureReversal: m.captureReversal }),
  ...(m.rateLimit === undefined ? {} : { rateLimit: m.rateLimit }),
  enabled: m.enabled,
  createdAt: m.createdAt,
  keys: m.keys.map(keyView)
})

/** The registry's errors as the intake's: unknown is 404, a refusal 400, the store 503. */
const asIntake = (
  error: MerchantRegistry.RegistryError
): Intake.NotFound | Intake.InvalidRequest | Intake.Unavailable =>
  error._tag === "MerchantNotFound"
    ? new Intake.NotFound({ message: error.message })
    : error._tag === "MerchantRefused"
      ? new Intake.InvalidRequest({ message: error.message })
      : new Intake.Unavailable({ message: error.message })

/** The caller, when an admin; 403 naming the role otherwise. */
const admin = Effect.flatMap(CurrentOperator, (who) =>
  Operators.allows(who.role, "admin")
    ? Effect.succeed(who)
    : Effect.fail(
        new Intake.Forbidden({
          message: `operator ${who.name} is a ${who.role}: the merchants and their keys are an admin's`,
          role: who.role
        })
      )
)

/** The merchants' group of the intake API. */
export const MerchantsLive = HttpApiBuilder.group(IntakeApi, "merchants", (handlers) =>
  Effect.gen(function* () {
    const found = yield* Effect.serviceOption(MerchantRegistry.MerchantRegistry)
    /** Runs `use` on the registry for an admin, logging a change as `what` (never a key). */
    const withRegistry = <A>(
      use: (registry: MerchantRegistry.Service) => Effect.Effect<A, MerchantRegistry.RegistryError>,
      what?: (a: A) => string
    ) =>
      Effect.gen(function* () {
        const who = yield* admin
        if (Option.isNone(found)) return yield* new Intake.Unavailable({ message: notConfigured })
        const a = yield* use(found.value).pipe(Effect.mapError(asIntake))
        if (what !== undefined) {
          yield* Effect.logInfo(what(a)).pipe(Effect.annotateLogs({ operator: who.name, via: who.via }))
        }
        return a
      })
    const enabled = (id: string, on: boolean) =>
      withRegistry(
        (registry) => registry.setEnabled(id, on),
        () => `merchant ${id} ${on ? "enabled" : "disabled"}`
      ).pipe(Effect.map(merchantView))
    return handlers
      .handle("list", () =>
        withRegistry((registry) => registry.list).pipe(Effect.map((ms) => ms.map(merchantView)))
      )
      .handle("register", ({ payload }) =>
        withRegistry(
          // The payload was decoded with the registry's own rules: what it still refuses is the id taken.
          (registry) => registry.register(payload),
          (m) => `merchant ${m.id} registered`
        ).pipe(
          Effect.catchTag("InvalidRequest", (error) =>
            Effect.fail(new MerchantConflict({ message: error.message, field: "id" }))
          ),
          Effect.map(merchantView)
        )
      )
      .handle("disable", ({ path }) => enabled(path.merchantId, false))
      .handle("enable", ({ path }) => enabled(path.merchantId, true))
      .handle("setAcquirer", ({ path, payload }) =>
        withRegistry(
          (registry) =>
            Effect.flatMap(registry.get(path.merchantId), (m) =>
              registry.setAcquirer(path.merchantId, MerchantRegistry.changedAcquirer(m, payload))
            ),
          (m) =>
            `merchant ${m.id}: acquirer's partial reversals ${m.partialReversal ?? "the deployment's"}, capture reversals ${m.captureReversal ?? "the deployment's"}`
        ).pipe(Effect.map(merchantView))
      )
      .handle("setRateLimit", ({ path, payload }) =>
        withRegistry(
          (registry) => registry.setRateLimit(path.merchantId, payload.rateLimit ?? undefined),
          (m) =>
            `merchant ${m.id}: rate limit ${m.rateLimit === undefined ? "the deployment's" : MerchantRateLimit.format(m.rateLimit)}`
        ).pipe(Effect.map(merchantView))
      )
      .handle("addKey", ({ path, payload }) =>
        withRegistry(
          (registry) => registry.addKey(path.merchantId, payload.kind, payload.key),
          (key) => `merchant ${path.merchantId}: ${key.kind} key ${key.keyId} added`
        ).pipe(Effect.map(keyView))
      )
      .handle("retireKey", ({ path }) =>
        withRegistry(
          (registry) => registry.retireKey(path.merchantId, path.keyId),
          (key) => `merchant ${path.merchantId}: key ${key.keyId} retired`
        ).pipe(Effect.map(keyView))
      )
  })
)
