/**
 * `tillflow merchants`: the merchants of a deployment and their API keys (issue 32), on the
 * store of this process (PostgreSQL from DATABASE_URL, or the embedded one). A key is sealed
 * with the deployment's key-encryption key (`TILLFLOW_KEK`, `TILLFLOW_KEK_PREVIOUS` during
 * a rotation) before it is stored, never printed, and read where no one else sees it
 * (`TILLFLOW_MERCHANT_KEY`, typed without echo, or standard input — never an argument).
 *
 * - `add <id> --name N --mcc 5812 [--virtual-terminal S] [--partial-reversal yes|no]
 *   [--capture-reversal yes|no] [--rate-limit 20/s [--rate-burst N]]`, `list`, `disable <id>`,
 *   `enable <id>`;
 * - `acquirer <id> [--partial-reversal yes|no|default] [--capture-reversal yes|no|default]`:
 *   what the merchant's acquirer supports (`default`: the deployment's; left out: unchanged);
 * - `rate-limit <id> <rate|default> [--rate-burst N]`: the merchant's own rate limit of
 *   operations started (`default`: the deployment's, `TILLFLOW_MERCHANT_RATE_LIMIT`);
 * - `add-key <id> [--kind merchant|partner]`, `retire-key <id> <keyId>`;
 * - `rewrap-keys`: every key sealed under an older key-encryption key, rewrapped under the current.
 *
 * `list` goes through a running worker when one is named (`--worker`, `TILLFLOW_WORKER_URL`)
 * or holds the embedded store (its `GET /v1/merchants`, as an admin); the changes are made
 * on the store, where the key is sealed in this process and never crosses the network.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { KeyWrapper, MerchantRegistry } from "@tillflow/core"
import * as IntakeClient from "@tillflow/intake/IntakeClient"
import * as MerchantRateLimit from "@tillflow/intake/MerchantRateLimit"
import type * as MerchantsApi from "@tillflow/intake/MerchantsApi"
import * as Stack from "@tillflow/intake/Stack"
import * as WorkerConfig from "@tillflow/intake/WorkerConfig"
import { SqlMerchantRegistry } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { BackendError, runningWorker } from "../Backend.js"
import * as Handler from "../Handler.js"
import * as Output from "../Output.js"
import { common } from "../internal/options.js"
import * as Secret from "../internal/secret.js"

/** Runs `effect` against the registry of this process's store, sealed with the configured KEK. */
const withRegistry = <A>(
  effect: Effect.Effect<A, MerchantRegistry.RegistryError, MerchantRegistry.MerchantRegistry>
): Effect.Effect<A, Output.UsageError | BackendError> =>
  Effect.gen(function* () {
    const config = yield* WorkerConfig.load.pipe(
      Effect.mapError((error) => new BackendError({ message: `configuration: ${error.message}` }))
    )
    const wrapper = KeyWrapper.layerConfig.pipe(
      Layer.mapError(
        (error) =>
          new BackendError({
            message: `TILLFLOW_KEK: merchants' keys are sealed with the deployment's key-encryption key (<id>:<base64 of 32 bytes>): ${String(error)}`
          })
      )
    )
    return yield* effect.pipe(
      Effect.catchTags({
        MerchantNotFound: (error) => Effect.fail(new Output.UsageError({ message: error.message })),
        MerchantRefused: (error) => Effect.fail(new Output.UsageError({ message: error.message })),
        RegistryUnavailable: (error) => Effect.fail(new BackendError({ message: error.message }))
      }),
      Effect.provide(
        SqlMerchantRegistry.layer.pipe(
          Layer.provide(wrapper),
          Layer.provide(
            Stack.storeLayer(config.store, "cli merchants").pipe(
              Layer.mapError((error) => new BackendError({ message: error.message }))
            )
          )
        )
      ),
      Effect.scoped
    )
  })

const capability = (name: string, value: boolean | undefined) =>
  value === undefined ? "" : `  ${name} ${value ? "yes" : "no"}`

const describeMerchant = (m: MerchantRegistry.Merchant): ReadonlyArray<string> => [
  `${m.id}  ${m.name}  MCC ${m.mcc}${m.virtualTerminal === undefined ? "" : `  virtual terminal ${m.virtualTerminal}`}${capability("partial reversals", m.partialReversal)}${capability("capture reversals", m.captureReversal)}${m.rateLimit === undefined ? "" : `  rate limit ${MerchantRateLimit.format(m.rateLimit)}`}  ${m.enabled ? "enabled" : "DISABLED"}`,
  ...m.keys.map(
    (k) =>
      `  ${k.keyId}  ${k.kind}  ${k.state}  added ${new Date(k.createdAt).toISOString()}${k.retiredAt === undefined ? "" : `  retired ${new Date(k.retiredAt).toISOString()}`}  sealed under ${k.kek}`
  )
]

const id = Args.text({ name: "merchantId" })

/** `--partial-reversal` / `--capture-reversal`: yes or no (and `default`, the deployment's, where a change allows it). */
const capabilityOption = <C extends string>(name: string, what: string, choices: ReadonlyArray<C>) =>
  Options.choice(name, choices).pipe(
    Options.withDescription(
      `whether the merchant's acquirer ${what} (${choices.join(", ")}; left out: ${choices.includes("default" as C) ? "unchanged" : "the deployment's"})`
    ),
    Options.optional
  )
const yesNo = ["yes", "no"] as const
const yesNoDefault = ["yes", "no", "default"] as const
const partialWhat = "accepts partial reversals (TILLFLOW_ACQUIRER_PARTIAL_REVERSAL)"
const captureWhat = "reverses a capture before settlement (TILLFLOW_ACQUIRER_CAPTURE_REVERSAL)"

/** A capability option's value: set, unset (`default`: null), or left out. */
const capabilityOf = (o: Option.Option<string>): boolean | null | undefined =>
  Option.isNone(o) ? undefined : o.value === "default" ? null : o.value === "yes"

/** `--rate-burst`: the burst of the merchant's own rate limit. */
const rateBurst = Options.text("rate-burst").pipe(
  Options.withDescription("how many operations the merchant may start at once (default: one second's)"),
  Options.optional
)

/** A rate as typed (`20/s`, `600/min`, `20`) with its burst, or why not, naming the options. */
const rateLimitOf = (rate: string, burst: Option.Option<string>) =>
  MerchantRateLimit.parse(rate, Option.getOrUndefined(burst), {
    limit: "the rate limit",
    burst: "--rate-burst"
  }).pipe(Either.mapLeft((message) => new Output.UsageError({ message })))

const add = Command.make(
  "add",
  {
    json: common.json,
    id,
    name: Options.text("name").pipe(Options.withDescription("the merchant's name")),
    mcc: Options.text("mcc").pipe(Options.withDescription("the merchant category code (4 digits)")),
    virtualTerminal: Options.text("virtual-terminal").pipe(
      Options.withDescription("the virtual terminal that books the merchant's MOTO sales"),
      Options.optional
    ),
    partialReversal: capabilityOption("partial-reversal", partialWhat, yesNo),
    captureReversal: capabilityOption("capture-reversal", captureWhat, yesNo),
    rateLimit: Options.text("rate-limit").pipe(
      Options.withDescription(
        "the merchant's own rate limit of operations started: 20/s, 600/min or 20 (per second); left out: the deployment's (TILLFLOW_MERCHANT_RATE_LIMIT)"
      ),
      Options.optional
    ),
    rateBurst
  },
  Handler.make((o) =>
    Effect.gen(function* () {
      if (Option.isNone(o.rateLimit) && Option.isSome(o.rateBurst)) {
        return yield* new Output.UsageError({
          message: "--rate-burst needs --rate-limit (the rate the burst is of)"
        })
      }
      const rateLimit = Option.isSome(o.rateLimit)
        ? yield* rateLimitOf(o.rateLimit.value, o.rateBurst)
        : undefined
      return yield* withRegistry(
        Effect.gen(function* () {
          const merchant = yield* (yield* MerchantRegistry.MerchantRegistry).register({
            id: o.id,
            name: o.name,
            mcc: o.mcc,
            ...(Option.isSome(o.virtualTerminal) ? { virtualTerminal: o.virtualTerminal.value } : {}),
            ...(Option.isSome(o.partialReversal)
              ? { partialReversal: o.partialReversal.value === "yes" }
              : {}),
            ...(Option.isSome(o.captureReversal)
              ? { captureReversal: o.captureReversal.value === "yes" }
              : {}),
            ...(rateLimit === undefined ? {} : { rateLimit })
          })
          yield* Output.print(o.json, merchant, () => describeMerchant(merchant))
          return Output.ExitCode.ok
        })
      )
    })
  )
).pipe(Command.withDescription("registers a merchant (enabled, without keys yet)"))

/** A merchant as the worker lists it, as the registry does. */
const fromView = (m: MerchantsApi.MerchantView): MerchantRegistry.Merchant => ({
  ...m,
  keys: m.keys.map((k) => ({ ...k, retiredAt: k.retiredAt }))
})

const list = Command.make(
  "list",
  { json: common.json, worker: common.worker },
  Handler.make((o) =>
    Effect.gen(function* () {
      const running = yield* runningWorker({ worker: o.worker })
      const merchants = Option.isSome(running)
        ? (yield* (yield* IntakeClient.merchants({
            baseUrl: running.value.baseUrl,
            credential: running.value.credential
          })).list).map(fromView)
        : yield* withRegistry(Effect.flatMap(MerchantRegistry.MerchantRegistry, (registry) => registry.list))
      yield* Output.print(o.json, { merchants }, () =>
        merchants.length === 0 ? ["no merchant"] : merchants.flatMap(describeMerchant)
      )
      return Output.ExitCode.ok
    })
  )
).pipe(
  Command.withDescription(
    "the merchants and their keys (ids, kinds, states: never a key), from the running worker when there is one"
  )
)

const enabled = (name: "enable" | "disable") =>
  Command.make(name, { json: common.json, id }, (o) =>
    Handler.make(() =>
      withRegistry(
        Effect.gen(function* () {
          const merchant = yield* (yield* MerchantRegistry.MerchantRegistry).setEnabled(
            o.id,
            name === "enable"
          )
          yield* Output.print(o.json, merchant, () => describeMerchant(merchant))
          return Output.ExitCode.ok
        })
      )
    )(o)
  ).pipe(
    Command.withDescription(
      name === "enable" ? "enables a merchant" : "disables a merchant: its operations are refused"
    )
  )

const acquirer = Command.make(
  "acquirer",
  {
    json: common.json,
    id,
    partialReversal: capabilityOption("partial-reversal", partialWhat, yesNoDefault),
    captureReversal: capabilityOption("capture-reversal", captureWhat, yesNoDefault)
  },
  Handler.make((o) =>
    withRegistry(
      Effect.gen(function* () {
        const registry = yield* MerchantRegistry.MerchantRegistry
        const before = yield* registry.get(o.id)
        const merchant = yield* registry.setAcquirer(
          o.id,
          MerchantRegistry.changedAcquirer(before, {
            partialReversal: capabilityOf(o.partialReversal),
            captureReversal: capabilityOf(o.captureReversal)
          })
        )
        yield* Output.print(o.json, merchant, () => describeMerchant(merchant))
        return Output.ExitCode.ok
      })
    )
  )
).pipe(
  Command.withDescription(
    "sets what a merchant's acquirer supports (partial reversals, capture reversals): yes, no, or default (the deployment's)"
  )
)

const rateLimit = Command.make(
  "rate-limit",
  {
    json: common.json,
    id,
    rate: Args.text({ name: "rate" }).pipe(
      Args.withDescription(
        "20/s, 600/min or 20 (per second); default: the deployment's (TILLFLOW_MERCHANT_RATE_LIMIT)"
      )
    ),
    rateBurst
  },
  Handler.make((o) =>
    Effect.gen(function* () {
      const deployment = o.rate.trim() === "default"
      if (deployment && Option.isSome(o.rateBurst)) {
        return yield* new Output.UsageError({
          message: "--rate-burst is the burst of a rate: not with default"
        })
      }
      const limit = deployment ? undefined : yield* rateLimitOf(o.rate, o.rateBurst)
      return yield* withRegistry(
        Effect.gen(function* () {
          const merchant = yield* (yield* MerchantRegistry.MerchantRegistry).setRateLimit(o.id, limit)
          yield* Output.print(o.json, merchant, () =>
            [
              ...describeMerchant(merchant),
              merchant.rateLimit === undefined
                ? `  rate limit: the deployment's (TILLFLOW_MERCHANT_RATE_LIMIT)`
                : ""
            ].filter((line) => line !== "")
          )
          return Output.ExitCode.ok
        })
      )
    })
  )
).pipe(
  Command.withDescription(
    "sets a merchant's own rate limit of operations started (20/s, 600/min), or default: the deployment's (TILLFLOW_MERCHANT_RATE_LIMIT)"
  )
)

const keysAdd = Command.make(
  "add-key",
  {
    json: common.json,
    id,
    kind: Options.choice("kind", ["merchant", "partner"]).pipe(
      Options.withDescription("the key's kind (default merchant)"),
      Options.withDefault("merchant" as const)
    )
  },
  Handler.make((o) =>
    Effect.gen(function* () {
      const key = yield* Secret.read(`API key of merchant ${o.id}`, "TILLFLOW_MERCHANT_KEY")
      return yield* withRegistry(
        Effect.gen(function* () {
          const info = yield* (yield* MerchantRegistry.MerchantRegistry).addKey(o.id, o.kind, key)
          yield* Output.print(o.json, info, () => [`${info.keyId}  ${info.kind}  sealed under ${info.kek}`])
          return Output.ExitCode.ok
        })
      )
    })
  )
).pipe(
  Command.withDescription(
    "adds an API key to a merchant, sealed (from TILLFLOW_MERCHANT_KEY, typed without echo, or standard input)"
  )
)

const keysRetire = Command.make(
  "retire-key",
  { json: common.json, id, keyId: Args.text({ name: "keyId" }) },
  Handler.make((o) =>
    withRegistry(
      Effect.gen(function* () {
        const info = yield* (yield* MerchantRegistry.MerchantRegistry).retireKey(o.id, o.keyId)
        yield* Output.print(o.json, info, () => [`${info.keyId}  ${info.kind}  ${info.state}`])
        return Output.ExitCode.ok
      })
    )
  )
).pipe(Command.withDescription("retires a merchant's key: never used again (kept sealed, for the record)"))

const keysRewrap = Command.make(
  "rewrap-keys",
  { json: common.json },
  Handler.make((o) =>
    withRegistry(
      Effect.gen(function* () {
        const count = yield* (yield* MerchantRegistry.MerchantRegistry).rewrapKeys
        yield* Output.print(o.json, { rewrapped: count }, () => [
          `${count} keys rewrapped under the current key-encryption key`
        ])
        return Output.ExitCode.ok
      })
    )
  )
).pipe(
  Command.withDescription(
    "rewraps every key sealed under an older key-encryption key (TILLFLOW_KEK_PREVIOUS) under the current one (TILLFLOW_KEK)"
  )
)

/** `tillflow merchants`. */
export const merchants = Command.make("merchants").pipe(
  Command.withDescription("the merchants of the deployment and their API keys (sealed)"),
  Command.withSubcommands([
    add,
    list,
    enabled("disable"),
    enabled("enable"),
    acquirer,
    rateLimit,
    keysAdd,
    keysRetire,
    keysRewrap
  ])
)
