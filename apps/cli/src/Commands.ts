/**
 * The `tillflow` commands (@effect/cli): one per terminal operation of the spec, the
 * status endpoint, executions and the event log, the audit, and the simulator and worker
 * as processes. Each command parses its input into a request, hands it to the `Intake`
 * (`Backend` chooses a running worker or this process), follows it with a progress line,
 * prints the answer (human or `--json`) and returns its exit code (`Output`).
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { Currency, Ledger, Money } from "@tillflow/core"
import { SimulatorServer } from "@tillflow/simulator"
import { Intake } from "@tillflow/intake"
import { Program } from "@tillflow/intake"
import type { Stack } from "@tillflow/intake"
import { WorkerConfig } from "@tillflow/intake"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Fs from "node:fs"
import * as Backend from "./Backend.js"
import * as Output from "./Output.js"

/** The exit code a command ends with (read by `main`). */
export class ExitStatus {
  static code = 0
}

const setExit = (code: number) =>
  Effect.sync(() => {
    ExitStatus.code = code
  })

// ---------------------------------------------------------------------------------------
// Options shared by commands

const json = Options.boolean("json").pipe(Options.withDescription("print one JSON document instead of lines"))
const worker = Options.text("worker").pipe(
  Options.withDescription(
    "the intake URL of a running worker (else TILLFLOW_WORKER_URL, else the worker holding the embedded store, else this process)"
  ),
  Options.optional
)
const common = { json, worker }

const serial = Options.text("serial").pipe(
  Options.withAlias("s"),
  Options.withDescription("the terminal's serial number")
)
const terminalType = Options.text("terminal-type").pipe(
  Options.withDescription("the terminal's type (looked up in the device list when absent)"),
  Options.optional
)
const key = Options.text("key").pipe(
  Options.withDescription(
    "idempotency key: running a command again with the same key joins the same operation"
  ),
  Options.optional
)
const delivery = Options.choice("delivery", ["callback", "polling"]).pipe(
  Options.withDescription("how the result comes back (default: the configured one)"),
  Options.optional
)
const deadline = Options.integer("deadline").pipe(
  Options.withDescription("seconds a busy, offline or queued terminal may be waited for"),
  Options.optional
)
const detach = Options.boolean("detach").pipe(
  Options.withDescription("start the operation and print its execution id without waiting")
)
const wait = Options.integer("wait").pipe(
  Options.withDescription("longest wait for the outcome, in seconds (then exit 6; the operation goes on)"),
  Options.withDefault(900)
)
const run = { ...common, serial, terminalType, key, delivery, deadline, detach, wait }

const amount = Options.text("amount").pipe(
  Options.withAlias("a"),
  Options.withDescription("amount in major units with a dot, e.g. 10.50 (EUR), 100 (JPY), 1.250 (BHD)")
)
const currency = Options.text("currency").pipe(
  Options.withAlias("c"),
  Options.withDescription("ISO 4217 currency code"),
  Options.withDefault("EUR")
)
const originalId = Options.text("original-transaction-id").pipe(
  Options.withDescription("the gateway guid of the original transaction (transactionID of its result)")
)
const originalReference = Options.text("original-reference").pipe(
  Options.withDescription(
    "the original's transactionReference: makes the outcome reconcilable through the status endpoint"
  ),
  Options.optional
)
const reference = Options.text("reference").pipe(
  Options.withDescription("the transactionReference (UUID v4) to use; a fresh one otherwise"),
  Options.optional
)

// ---------------------------------------------------------------------------------------
// Helpers

type RunOptions = {
  readonly json: boolean
  readonly worker: Option.Option<string>
  readonly serial: string
  readonly terminalType: Option.Option<string>
  readonly key: Option.Option<string>
  readonly delivery: Option.Option<"callback" | "polling">
  readonly deadline: Option.Option<number>
  readonly detach: boolean
  readonly wait: number
}

/** An amount in major units of a currency into the service's minor-unit string. */
export const parseAmount = (
  input: string,
  currencyCode: string,
  options: { readonly signed?: boolean } = {}
): Effect.Effect<{ readonly amount: string; readonly currency: string }, Output.UsageError> => {
  const code = currencyCode.toUpperCase()
  if (!Currency.isCurrency(code)) {
    return Effect.fail(
      new Output.UsageError({
        message: `--currency ${currencyCode} is not an ISO 4217 currency code (e.g. EUR, USD, GBP, JPY)`
      })
    )
  }
  const parsed = Money.fromMajorUnitsString(input, code)
  if (Either.isLeft(parsed))
    return Effect.fail(new Output.UsageError({ message: `--amount: ${parsed.left.message}` }))
  const money = parsed.right
  if (options.signed === true ? money.minorUnits === 0n : money.minorUnits <= 0n) {
    return Effect.fail(
      new Output.UsageError({
        message: `--amount must be ${options.signed === true ? "non-zero (negative to decrease)" : "positive"}, got ${input}`
      })
    )
  }
  return Effect.succeed({ amount: Money.toMinorUnitsString(money), currency: code })
}

const withBackend = <A, E>(
  options: { readonly worker: Option.Option<string>; readonly json: boolean },
  needs: Backend.Needs,
  body: Effect.Effect<A, E, Intake.Intake | Backend.BackendInfo>
) =>
  Effect.gen(function* () {
    const info = yield* Backend.BackendInfo
    yield* Output.note(`tillflow: running against ${info.description}`)
    return yield* body
  }).pipe(Effect.provide(Backend.layer({ worker: options.worker }, needs)))

const report = <A>(
  effect: Effect.Effect<A, Intake.IntakeError | Output.UsageError | Stack.StartupError, never>
) =>
  effect.pipe(
    Effect.catchAll((error) =>
      Effect.gen(function* () {
        yield* Output.clearProgress
        yield* Output.note(`tillflow: ${error.message}`)
        yield* setExit(
          error._tag === "StartupError" ? Output.ExitCode.internal : Output.exitCodeOfError(error)
        )
      })
    )
  )

/** Follows an execution until it ends or the wait is over, drawing the progress line. */
const follow = (started: Intake.ExecutionView, waitSeconds: number) =>
  Effect.gen(function* () {
    const intake = yield* Intake.Intake
    const begin = yield* Clock.currentTimeMillis
    let view = started
    let tick = 0
    while (
      view.report === undefined &&
      !["succeeded", "failed", "interrupted", "stuck"].includes(view.status)
    ) {
      const now = yield* Clock.currentTimeMillis
      if (now - begin > waitSeconds * 1000) break
      yield* Output.progress(Output.progressLine(view, now - begin, tick++))
      yield* Effect.sleep("250 millis")
      view = yield* intake.execution(view.executionId, 0)
    }
    yield* Output.clearProgress
    return view
  })

/** Runs a terminal operation from its JSON request: start, follow, print, exit code. */
const runOperation = (
  options: RunOptions,
  request: Record<string, unknown>,
  extra: { readonly originalTransactionReference?: string | undefined } = {}
) =>
  report(
    withBackend(
      options,
      { cloud: true, worker: true },
      Effect.gen(function* () {
        const intake = yield* Intake.Intake
        const info = yield* Backend.BackendInfo
        const idempotencyKey = Option.getOrElse(options.key, () => `cli-${globalThis.crypto.randomUUID()}`)
        const started = yield* intake.start({
          idempotencyKey,
          request: {
            ...request,
            serial_number: options.serial,
            ...(Option.isSome(options.terminalType) ? { terminal_type: options.terminalType.value } : {})
          },
          ...(Option.isSome(options.delivery) ? { delivery: options.delivery.value } : {}),
          ...(Option.isSome(options.deadline) ? { deadlineSeconds: options.deadline.value } : {}),
          ...(extra.originalTransactionReference === undefined
            ? {}
            : { originalTransactionReference: extra.originalTransactionReference }),
          waitSeconds: 0
        })
        if (options.detach) {
          yield* Output.print(options.json, started, () => Output.describeExecution(started))
          return yield* setExit(Output.ExitCode.ok)
        }
        const final = yield* follow(started, options.wait).pipe(
          Effect.onInterrupt(() =>
            Output.note(
              info.remote
                ? `tillflow: stopped following; the worker carries on with execution ${started.executionId}`
                : `tillflow: interrupted; execution ${started.executionId} stays in the store and resumes with the next worker or command (tillflow executions show ${started.executionId})`
            )
          )
        )
        yield* Output.print(options.json, final, () => Output.describeExecution(final))
        yield* setExit(Output.exitCodeOf(final))
      })
    )
  )

const optionalRef = (value: Option.Option<string>) =>
  Option.isSome(value) ? { transactionReference: value.value } : {}

// ---------------------------------------------------------------------------------------
// Terminal operations

const sale = Command.make(
  "sale",
  {
    ...run,
    amount,
    currency,
    reference,
    tokenize: Options.boolean("tokenize").pipe(
      Options.withDescription("also return a card token (saleAndTokenizeCard)")
    )
  },
  (o) =>
    Effect.flatMap(report(parseAmount(o.amount, o.currency)), (money) =>
      money === undefined
        ? Effect.void
        : runOperation(o, {
            operation: o.tokenize ? "saleAndTokenizeCard" : "sale",
            ...money,
            ...optionalRef(o.reference)
          })
    )
).pipe(Command.withDescription("a card payment on a terminal"))

const refund = Command.make(
  "refund",
  {
    ...run,
    amount,
    currency,
    reference,
    originalTransactionId: Options.optional(originalId),
    originalReference
  },
  (o) =>
    Effect.gen(function* () {
      if (Option.isNone(o.originalTransactionId) && Option.isSome(o.originalReference)) {
        return yield* new Output.UsageError({
          message: "--original-reference is only allowed with --original-transaction-id (a linked refund)"
        })
      }
      if (Option.isSome(o.originalTransactionId) && Option.isSome(o.reference)) {
        return yield* new Output.UsageError({
          message:
            "--reference is not allowed on a linked refund: it is reconciled through --original-reference"
        })
      }
      return yield* parseAmount(o.amount, o.currency)
    }).pipe(
      report,
      Effect.flatMap((money) =>
        money === undefined
          ? Effect.void
          : runOperation(
              o,
              {
                operation: "refund",
                ...money,
                ...(Option.isSome(o.originalTransactionId)
                  ? { originalTransactionId: o.originalTransactionId.value }
                  : optionalRef(o.reference))
              },
              { originalTransactionReference: Option.getOrUndefined(o.originalReference) }
            )
      )
    )
).pipe(Command.withDescription("a refund: unlinked, or linked to its sale with --original-transaction-id"))

/** Runs a terminal-less operation (a `Lifecycles` workflow) by name: start, follow, print, exit code. */
const runLifecycle = (
  options: {
    readonly json: boolean
    readonly worker: Option.Option<string>
    readonly key: Option.Option<string>
    readonly detach: boolean
    readonly wait: number
  },
  workflow: string,
  payloadOf:
    | Record<string, unknown>
    | Effect.Effect<Record<string, unknown>, Output.UsageError | Intake.IntakeError, Intake.Intake>
) =>
  report(
    withBackend(
      options,
      { cloud: true, worker: true },
      Effect.gen(function* () {
        const intake = yield* Intake.Intake
        const payload = Effect.isEffect(payloadOf) ? yield* payloadOf : payloadOf
        const started = yield* intake.lifecycle(workflow, {
          payload: { ...payload, ...(Option.isSome(options.key) ? { requestId: options.key.value } : {}) },
          waitSeconds: 0
        })
        if (options.detach) {
          yield* Output.print(options.json, started, () => Output.describeExecution(started))
          return yield* setExit(Output.ExitCode.ok)
        }
        const final = yield* follow(started, options.wait)
        yield* Output.print(options.json, final, () => Output.describeExecution(final))
        yield* setExit(Output.exitCodeOf(final))
      })
    )
  )

const { serial: _required, ...runWithoutSerial } = run
/** Options of a command that runs through a terminal with `--serial`, and without one when it can. */
const dual = { ...runWithoutSerial, serial: Options.optional(serial) }

const terminalOptions = (
  o: { readonly serial: Option.Option<string> } & Omit<RunOptions, "serial">,
  serialNumber: string
): RunOptions => ({
  ...o,
  serial: serialNumber
})

/**
 * A linked operation: through the terminal with `--serial` (the spec's `POST /transactions`
 * operation), else terminal-less when `terminalLess` gives a workflow for it.
 */
const linked = (
  name: string,
  description: string,
  operation: (o: { readonly refund: boolean }) => string,
  money: "required" | "optional" | "none" | "signed",
  flags: {
    readonly refundFlag?: boolean
    readonly terminalLess?: (input: {
      readonly originalGuid: string
      readonly money: { readonly amount: string; readonly currency: string } | undefined
      readonly reason: Option.Option<string>
    }) => Effect.Effect<
      { readonly workflow: string; readonly payload: Record<string, unknown> },
      Output.UsageError
    >
  } = {}
) =>
  Command.make(
    name,
    {
      ...dual,
      originalTransactionId: originalId,
      originalReference,
      amount:
        money === "none"
          ? Options.none.pipe(Options.map(() => Option.none<string>()))
          : money === "optional"
            ? Options.optional(amount)
            : amount.pipe(Options.map(Option.some)),
      currency,
      refund:
        flags.refundFlag === true
          ? Options.boolean("refund").pipe(
              Options.withDescription(
                "reverse a refund (refundReversal) instead of a sale; with --serial only"
              )
            )
          : Options.none.pipe(Options.map(() => false)),
      reason:
        flags.terminalLess === undefined
          ? Options.none.pipe(Options.map(() => Option.none<string>()))
          : Options.text("reason").pipe(
              Options.withDescription(
                "messageReasonCode of a terminal-less reversal (default CUSTOMER_CANCELLATION)"
              ),
              Options.optional
            )
    },
    (o) =>
      Effect.gen(function* () {
        const value = o.amount
        const parsed = Option.isSome(value)
          ? yield* parseAmount(value.value, o.currency, { signed: money === "signed" })
          : undefined
        if (Option.isSome(o.serial)) {
          return {
            _tag: "terminal" as const,
            serial: o.serial.value,
            request: {
              operation: operation(o),
              originalTransactionId: o.originalTransactionId,
              ...(parsed ?? {})
            }
          }
        }
        if (flags.terminalLess === undefined) {
          return yield* new Output.UsageError({
            message: `${name} runs through a terminal: --serial is required`
          })
        }
        if (o.refund || Option.isSome(o.originalReference)) {
          return yield* new Output.UsageError({
            message: "--refund and --original-reference are only allowed with --serial (through a terminal)"
          })
        }
        const call = yield* flags.terminalLess({
          originalGuid: o.originalTransactionId,
          money: parsed,
          reason: o.reason
        })
        return { _tag: "terminalLess" as const, ...call }
      }).pipe(
        report,
        Effect.flatMap((plan) =>
          plan === undefined
            ? Effect.void
            : plan._tag === "terminal"
              ? runOperation(terminalOptions(o, plan.serial), plan.request, {
                  originalTransactionReference: Option.getOrUndefined(o.originalReference)
                })
              : runLifecycle(o, plan.workflow, plan.payload)
        )
      )
  ).pipe(Command.withDescription(description))

const reverse = linked(
  "reverse",
  "reverses a sale: through the terminal with --serial (saleReversal, or refundReversal with --refund), else terminal-less (POST /reversal; in full, or --amount where partial reversals are allowed)",
  (o) => (o.refund ? "refundReversal" : "saleReversal"),
  "optional",
  {
    refundFlag: true,
    terminalLess: ({ money, originalGuid, reason }) =>
      Effect.succeed({
        workflow: "Reversal.Reverse",
        payload: {
          originalGuid,
          ...(money === undefined ? {} : { amount: money }),
          ...(Option.isSome(reason) ? { messageReasonCode: reason.value } : {})
        }
      })
  }
)

const utility = (
  name: string,
  operation: string,
  description: string,
  fields: (o: Record<string, unknown>) => Record<string, unknown> = () => ({})
) =>
  Command.make(name, { ...run }, (o) => runOperation(o, { operation, ...fields(o) })).pipe(
    Command.withDescription(description)
  )

const tokenize = utility("tokenize", "tokenizeCard", "reads a card and returns its token, without charging")

const ping = Command.make(
  "ping",
  {
    ...run,
    deviceInfo: Options.boolean("device-info").pipe(Options.withDescription("ask for versions and battery"))
  },
  (o) => runOperation(o, { operation: "pingDevice", ...(o.deviceInfo ? { returnDeviceInfo: true } : {}) })
).pipe(Command.withDescription("checks that a terminal answers"))

const print = Command.make(
  "print",
  { ...run, receipt: Args.text({ name: "receipt" }).pipe(Args.withDescription("receipt HTML, or its URL")) },
  (o) => runOperation(o, { operation: "printReceipt", receipt: o.receipt })
).pipe(Command.withDescription("prints a receipt on a terminal"))

const cardPan = utility(
  "card-pan",
  "cardPan",
  "reads the number of a whitelisted (non-payment) card; it is never stored"
)

const stop = Command.make(
  "stop",
  { ...common, serial, terminalType, key, wait: Options.integer("wait").pipe(Options.withDefault(60)) },
  (o) =>
    report(
      withBackend(
        o,
        { cloud: true, worker: true },
        Effect.gen(function* () {
          const intake = yield* Intake.Intake
          const view = yield* intake.stop({
            serialNumber: o.serial,
            ...(Option.isSome(o.terminalType) ? { terminalType: o.terminalType.value } : {}),
            ...(Option.isSome(o.key) ? { idempotencyKey: o.key.value } : {}),
            waitSeconds: o.wait
          })
          yield* Output.print(o.json, view, () => Output.describeExecution(view))
          yield* setExit(Output.exitCodeOf(view))
        })
      )
    )
).pipe(Command.withDescription("stops the operation in flight on a terminal (at a stoppable step)"))

const preauth = Command.make("preauth").pipe(
  Command.withDescription("pre-authorizations: through a terminal with --serial, else terminal-less"),
  Command.withSubcommands([
    Command.make("open", { ...run, amount, currency, reference }, (o) =>
      Effect.flatMap(report(parseAmount(o.amount, o.currency)), (money) =>
        money === undefined
          ? Effect.void
          : runOperation(o, { operation: "preAuthorization", ...money, ...optionalRef(o.reference) })
      )
    ).pipe(Command.withDescription("opens a pre-authorization (a hold) on a terminal")),
    linked(
      "increase",
      "increases a hold (a negative --amount decreases it); terminal-less without --serial",
      () => "preAuthorizationIncrease",
      "signed",
      {
        terminalLess: ({ money, originalGuid }) =>
          money === undefined
            ? Effect.fail(new Output.UsageError({ message: "--amount is required" }))
            : Effect.succeed(
                money.amount.startsWith("-")
                  ? {
                      workflow: "PreAuthorization.Decrease",
                      payload: { originalGuid, amount: { ...money, amount: money.amount.slice(1) } }
                    }
                  : { workflow: "PreAuthorization.Increase", payload: { originalGuid, amount: money } }
              )
      }
    ),
    linked(
      "capture",
      "captures a pre-authorization once (checked against its scheme's window and tolerance); terminal-less without --serial, where --amount is required",
      () => "preAuthorizationCapture",
      "optional",
      {
        terminalLess: ({ money, originalGuid }) =>
          money === undefined
            ? Effect.fail(
                new Output.UsageError({ message: "--amount is required for a terminal-less capture" })
              )
            : Effect.succeed({
                workflow: "PreAuthorization.Capture",
                payload: { originalGuid, amount: money }
              })
      }
    ),
    linked(
      "reverse",
      "releases a hold, or reverses its capture before settlement; terminal-less without --serial",
      () => "preAuthorizationReversal",
      "none",
      {
        terminalLess: ({ originalGuid, reason }) =>
          Effect.succeed({
            workflow: "Reversal.Reverse",
            payload: { originalGuid, ...(Option.isSome(reason) ? { messageReasonCode: reason.value } : {}) }
          })
      }
    )
  ])
)

const lifecycleRun = { ...common, key, detach, wait }

const moto = Command.make("moto").pipe(
  Command.withDescription("MOTO: keyed on a terminal with --serial, or terminal-less with a card token"),
  Command.withSubcommands([
    Command.make(
      "sale",
      {
        ...dual,
        amount,
        currency,
        reference,
        cardToken: Options.text("card-token").pipe(
          Options.withDescription("terminal-less: the card token (from tokenize or a tokenizing sale)"),
          Options.optional
        )
      },
      (o) =>
        Effect.gen(function* () {
          const money = yield* parseAmount(o.amount, o.currency)
          if (Option.isSome(o.serial) === Option.isSome(o.cardToken)) {
            return yield* new Output.UsageError({
              message:
                "moto sale takes either --serial (keyed on a terminal) or --card-token (terminal-less), not both"
            })
          }
          return money
        }).pipe(
          report,
          Effect.flatMap((money) =>
            money === undefined
              ? Effect.void
              : Option.isSome(o.serial)
                ? runOperation(terminalOptions(o, o.serial.value), {
                    operation: "moToSale",
                    ...money,
                    ...optionalRef(o.reference)
                  })
                : runLifecycle(o, "Moto.Sale", {
                    cardToken: Option.getOrElse(o.cardToken, () => ""),
                    amount: money,
                    ...optionalRef(o.reference)
                  })
          )
        )
    ).pipe(Command.withDescription("a MOTO sale")),
    Command.make(
      "refund",
      { ...dual, amount, currency, reference, originalTransactionId: Options.optional(originalId) },
      (o) =>
        Effect.gen(function* () {
          const money = yield* parseAmount(o.amount, o.currency)
          if (Option.isNone(o.serial) && Option.isNone(o.originalTransactionId)) {
            return yield* new Output.UsageError({
              message: "a terminal-less MOTO refund needs --original-transaction-id (the MOTO sale's guid)"
            })
          }
          return money
        }).pipe(
          report,
          Effect.flatMap((money) =>
            money === undefined
              ? Effect.void
              : Option.isSome(o.serial)
                ? runOperation(terminalOptions(o, o.serial.value), {
                    operation: "moToRefund",
                    ...money,
                    ...(Option.isSome(o.originalTransactionId)
                      ? { originalTransactionId: o.originalTransactionId.value }
                      : optionalRef(o.reference))
                  })
                : runLifecycle(o, "Moto.Refund", {
                    originalGuid: Option.getOrElse(o.originalTransactionId, () => ""),
                    amount: money
                  })
          )
        )
    ).pipe(Command.withDescription("a MOTO refund (all refunds together not above the sale)")),
    linked("reverse", "reverses a MOTO sale within 24 h", () => "moToReversal", "optional", {
      terminalLess: ({ originalGuid }) =>
        Effect.succeed({ workflow: "Moto.Reverse", payload: { originalGuid } })
    })
  ])
)

const tipAdjust = Command.make(
  "tip-adjust",
  {
    ...lifecycleRun,
    originalTransactionId: originalId,
    tip: Options.text("tip").pipe(
      Options.withDescription("the tip in major units, e.g. 2.50 (replaces any earlier one)")
    ),
    currency
  },
  (o) =>
    Effect.flatMap(report(parseAmount(o.tip, o.currency)), (tip) =>
      tip === undefined
        ? Effect.void
        : runLifecycle(o, "TipAdjustment.Adjust", { originalGuid: o.originalTransactionId, tip })
    )
).pipe(
  Command.withDescription("sets the tip of an approved sale before its batch closes (the last one wins)")
)

const token = Command.make("token", { ...lifecycleRun, originalTransactionId: originalId }, (o) =>
  runLifecycle(o, "DeferredTokenization.Tokenize", { originalGuid: o.originalTransactionId })
).pipe(Command.withDescription("the card token of a completed card-present transaction (within 12 months)"))

/** The terminal type of a serial: given, or looked up in the device list. */
const terminalTypeFor = (serialNumber: string, given: Option.Option<string>) =>
  Option.isSome(given)
    ? Effect.succeed(given.value)
    : Effect.flatMap(Intake.Intake, (intake) =>
        Effect.flatMap(intake.devices, (list) => {
          const device = list.find((d) => d.serialNumber === serialNumber)
          return device === undefined
            ? Effect.fail(
                new Output.UsageError({
                  message: `unknown terminal serial ${serialNumber}: the service lists ${list.map((d) => d.serialNumber).join(", ") || "none"}`
                })
              )
            : Effect.succeed(device.terminalType)
        })
      )

/** A terminal-less command about one terminal (batches, device commands). */
const onTerminal = (
  o: {
    readonly json: boolean
    readonly worker: Option.Option<string>
    readonly key: Option.Option<string>
    readonly detach: boolean
    readonly wait: number
    readonly serial: string
    readonly terminalType: Option.Option<string>
  },
  workflow: string,
  payload: Record<string, unknown>
) =>
  runLifecycle(
    o,
    workflow,
    Effect.map(terminalTypeFor(o.serial, o.terminalType), (terminalType) => ({
      serialNumber: o.serial,
      terminalType,
      ...payload
    }))
  )

const batchOptions = {
  ...lifecycleRun,
  serial,
  terminalType,
  batch: Options.text("batch").pipe(Options.withDescription("the batch number"))
}

const batch = Command.make("batch").pipe(
  Command.withDescription("a terminal's batches"),
  Command.withSubcommands([
    Command.make("close", batchOptions, (o) => onTerminal(o, "Batch.Close", { batchNumber: o.batch })).pipe(
      Command.withDescription("closes the open batch")
    ),
    Command.make("summary", { ...batchOptions, currency }, (o) =>
      onTerminal(o, "Batch.Summary", { batchNumber: o.batch, currency: o.currency.toUpperCase() })
    ).pipe(Command.withDescription("a batch's totals")),
    Command.make(
      "detail",
      { ...batchOptions, currency, rrn: Options.text("rrn").pipe(Options.optional) },
      (o) =>
        onTerminal(o, "Batch.Detail", {
          batchNumber: o.batch,
          currency: o.currency.toUpperCase(),
          ...(Option.isSome(o.rrn) ? { rrn: o.rrn.value } : {})
        })
    ).pipe(Command.withDescription("a batch's transactions"))
  ])
)

const device = Command.make(
  "device",
  {
    ...lifecycleRun,
    serial,
    terminalType,
    command: Args.choice(
      [
        ["set-unattended-mode", "set-unattended-mode"],
        ["set-password-protected", "set-password-protected"],
        ["set-locale", "set-locale"],
        ["set-screen-brightness", "set-screen-brightness"],
        ["set-reboot-time", "set-reboot-time"],
        ["reboot", "reboot"]
      ] as const,
      { name: "command" }
    ),
    on: Options.boolean("on").pipe(
      Options.withDescription("set-unattended-mode, set-password-protected: turn on (else off)")
    ),
    locale: Options.text("locale").pipe(Options.withDescription("set-locale: e.g. en_US"), Options.optional),
    min: Options.integer("min").pipe(
      Options.withDescription("set-screen-brightness: 0–100"),
      Options.optional
    ),
    max: Options.integer("max").pipe(
      Options.withDescription("set-screen-brightness: 0–100"),
      Options.optional
    ),
    hour: Options.integer("hour").pipe(Options.withDescription("set-reboot-time: 0–23"), Options.optional),
    force: Options.boolean("force").pipe(Options.withDescription("reboot: even while an operation runs"))
  },
  (o) =>
    Effect.gen(function* () {
      const need = <A>(value: Option.Option<A>, flag: string): Effect.Effect<A, Output.UsageError> =>
        Option.match(value, {
          onNone: () => Effect.fail(new Output.UsageError({ message: `${o.command} needs ${flag}` })),
          onSome: Effect.succeed
        })
      switch (o.command) {
        case "set-unattended-mode":
        case "set-password-protected":
          return { status: o.on }
        case "set-locale":
          return { locale: yield* need(o.locale, "--locale (e.g. en_US)") }
        case "set-screen-brightness":
          return {
            minimumBrightnessLevel: yield* need(o.min, "--min (0–100)"),
            maximumBrightnessLevel: yield* need(o.max, "--max (0–100)")
          }
        case "set-reboot-time":
          return { hour: yield* need(o.hour, "--hour (0–23)") }
        case "reboot":
          return { force: o.force }
      }
    }).pipe(
      report,
      Effect.flatMap((body) =>
        body === undefined ? Effect.void : onTerminal(o, "DeviceCommand.Send", { command: o.command, body })
      )
    )
).pipe(Command.withDescription("sends a device command (values checked against the spec's ranges first)"))

// ---------------------------------------------------------------------------------------
// Reading

const devices = Command.make("devices", { ...common }, (o) =>
  report(
    withBackend(
      o,
      { cloud: true, worker: false },
      Effect.gen(function* () {
        const list = yield* (yield* Intake.Intake).devices
        yield* Output.print(o.json, list, () =>
          list.length === 0
            ? ["no terminal"]
            : list.map(
                (d) => `${d.serialNumber.padEnd(14)} ${d.terminalType.padEnd(10)} merchant ${d.merchant}`
              )
        )
      })
    )
  )
).pipe(Command.withDescription("lists the merchant's terminals"))

const status = Command.make(
  "status",
  {
    ...common,
    reference: Args.text({ name: "transactionReference" }),
    selector: Options.text("selector").pipe(
      Options.withDescription("first, last, all or a position from 1"),
      Options.withDefault("first")
    )
  },
  (o) =>
    report(
      withBackend(
        o,
        { cloud: true, worker: false },
        Effect.gen(function* () {
          const entries = yield* (yield* Intake.Intake).transactionStatus(o.reference, o.selector)
          yield* Output.print(o.json, entries, () =>
            entries.map((e) => {
              const r = e as Record<string, unknown>
              return [
                r["type"],
                r["finStatus"],
                r["totalAmount"] ?? r["requestedAmount"],
                r["currency"],
                r["transactionID"] ?? r["transactionId"],
                r["efttimestamp"]
              ]
                .filter((v) => v !== undefined && v !== null && v !== "")
                .map(String)
                .join("  ")
            })
          )
        })
      )
    )
).pipe(Command.withDescription("the service's status of a transaction by its reference"))

const listExecutions = Command.make(
  "list",
  {
    ...common,
    status: Options.choice("status", [
      "pending",
      "running",
      "suspended",
      "succeeded",
      "failed",
      "interrupted",
      "stuck"
    ]).pipe(Options.optional),
    serialNumber: Options.text("serial").pipe(Options.optional),
    operation: Options.text("operation").pipe(Options.optional),
    workflow: Options.text("workflow").pipe(Options.optional),
    limit: Options.integer("limit").pipe(Options.withDefault(20))
  },
  (o) =>
    report(
      withBackend(
        o,
        { cloud: false, worker: false },
        Effect.gen(function* () {
          const list = yield* (yield* Intake.Intake).list({
            ...(Option.isSome(o.status) ? { status: o.status.value } : {}),
            ...(Option.isSome(o.serialNumber) ? { serialNumber: o.serialNumber.value } : {}),
            ...(Option.isSome(o.operation) ? { operation: o.operation.value } : {}),
            ...(Option.isSome(o.workflow) ? { workflow: o.workflow.value } : {}),
            limit: o.limit
          })
          yield* Output.print(o.json, list, () =>
            list.length === 0
              ? ["no execution"]
              : list.map((v) =>
                  [
                    v.executionId,
                    v.status.padEnd(10),
                    new Date(v.createdAt).toISOString(),
                    (v.attributes["operation"] ?? v.workflow).padEnd(16),
                    v.attributes["serialNumber"] ?? "",
                    v.attributes["amount"] === undefined
                      ? ""
                      : `${v.attributes["amount"]} ${v.attributes["currency"] ?? ""}`,
                    v.report?.verdict ?? v.progress?.phase ?? ""
                  ].join("  ")
                )
          )
        })
      )
    )
).pipe(Command.withDescription("the latest executions, newest first"))

const showExecution = Command.make(
  "show",
  {
    ...common,
    executionId: Args.text({ name: "executionId" }),
    history: Options.boolean("history").pipe(Options.withDescription("also print every stored event"))
  },
  (o) =>
    report(
      withBackend(
        o,
        { cloud: false, worker: false },
        Effect.gen(function* () {
          const intake = yield* Intake.Intake
          const view = yield* intake.execution(o.executionId, 0)
          const history = o.history ? Option.some(yield* intake.history(o.executionId)) : Option.none()
          yield* Output.print(
            o.json,
            Option.isSome(history) ? { ...view, history: history.value } : view,
            () => [
              ...Output.describeExecution(view),
              ...(Option.isSome(history)
                ? [...history.value.engine, ...history.value.business]
                    .sort((a, b) => a.recordedAt.localeCompare(b.recordedAt))
                    .map((e) => `  ${e.recordedAt}  ${e.streamId}@${e.version}  ${e.type}`)
                : [])
            ]
          )
          yield* setExit(Output.exitCodeOf(view))
        })
      )
    )
).pipe(Command.withDescription("one execution: status, progress or report"))

const executions = Command.make("executions").pipe(
  Command.withDescription("workflow executions"),
  Command.withSubcommands([listExecutions, showExecution])
)

const eventLine = (e: Intake.EventView): string =>
  `${e.position.padEnd(14)} ${e.recordedAt}  ${e.streamId}@${e.version}  ${e.type}`

const tail = Command.make(
  "tail",
  {
    ...common,
    from: Options.text("from").pipe(
      Options.withDescription("a checkpoint (transactionId:position) or start"),
      Options.optional
    ),
    last: Options.integer("last").pipe(
      Options.withDescription("start with the last N events"),
      Options.withDefault(20)
    ),
    follow: Options.boolean("follow").pipe(
      Options.withAlias("f"),
      Options.withDescription("keep printing new events until interrupted")
    )
  },
  (o) =>
    report(
      withBackend(
        o,
        { cloud: false, worker: false },
        Effect.gen(function* () {
          const intake = yield* Intake.Intake
          const emit = (e: Intake.EventView) =>
            o.json ? Console.log(JSON.stringify(e)) : Console.log(eventLine(e))
          let after = Option.getOrUndefined(o.from)
          if (after === undefined) {
            // The last N: read to the end, keep a window.
            const window: Array<Intake.EventView> = []
            let cursor: string | undefined = undefined
            while (true) {
              const page: Intake.EventsPage = yield* intake.events(cursor, 1000)
              window.push(...page.events)
              if (window.length > o.last) window.splice(0, window.length - o.last)
              cursor = page.next
              if (page.caughtUp) break
            }
            yield* Effect.forEach(window, emit, { discard: true })
            after = cursor
          }
          const position = yield* Ref.make(after)
          while (true) {
            const page = yield* intake.events(yield* Ref.get(position), 500)
            yield* Effect.forEach(page.events, emit, { discard: true })
            yield* Ref.set(position, page.next)
            if (page.caughtUp) {
              if (!o.follow) return
              yield* Effect.sleep("500 millis")
            }
          }
        })
      )
    )
).pipe(
  Command.withDescription(
    "prints the event log (the last events, or from a checkpoint), and follows it with -f"
  )
)

const events = Command.make("events").pipe(
  Command.withDescription("the event log"),
  Command.withSubcommands([tail])
)

// ---------------------------------------------------------------------------------------
// Audit

const dimensionsOf = (text: string): Effect.Effect<ReadonlyArray<Ledger.Dimension>, Output.UsageError> => {
  const parts = text
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p.length > 0 && p !== "none")
  const bad = parts.filter((p) => p !== "day" && p !== "terminal" && p !== "merchant")
  return bad.length > 0
    ? Effect.fail(
        new Output.UsageError({
          message: `--by ${bad.join(",")} is not allowed: use day, terminal, merchant (comma-separated) or none`
        })
      )
    : Effect.succeed(parts as ReadonlyArray<Ledger.Dimension>)
}

const tableOf = (rows: ReadonlyArray<Ledger.SummaryRow>): ReadonlyArray<string> => {
  const shown = Ledger.kinds.filter((k) => rows.some((r) => r.tallies[k].count > 0))
  const header = ["day", "terminal", "merchant", "currency", ...shown, "net"]
  const body = rows.map((r) => [
    r.day,
    r.terminal,
    r.merchant,
    r.currency,
    ...shown.map((k) => `${r.tallies[k].count} / ${Ledger.formatAmount(r.tallies[k].amount, r.currency)}`),
    Ledger.formatAmount(r.net, r.currency)
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd()
  return rows.length === 0 ? ["no entry in the ledger"] : [line(header), ...body.map(line)]
}

const writeOut = (out: Option.Option<string>, text: string) =>
  Option.isSome(out)
    ? Effect.zipRight(
        Effect.sync(() => Fs.writeFileSync(out.value, text)),
        Output.note(`tillflow: wrote ${out.value}`)
      )
    : Effect.sync(() => void process.stdout.write(text))

const ledger = Command.make(
  "ledger",
  {
    ...common,
    by: Options.text("by").pipe(
      Options.withDescription("day, terminal, merchant (comma-separated) or none"),
      Options.withDefault("day")
    ),
    format: Options.choice("format", ["table", "csv", "json"]).pipe(Options.withDefault("table")),
    from: Options.text("from").pipe(
      Options.withDescription("replay from this checkpoint instead of the first event"),
      Options.optional
    ),
    source: Options.choice("source", ["replay", "live"]).pipe(
      Options.withDescription("replay the log now (default), or read the live projection's latest snapshot"),
      Options.withDefault("replay")
    ),
    entries: Options.boolean("entries").pipe(
      Options.withDescription("export one line per business fact instead of totals")
    ),
    out: Options.text("out").pipe(
      Options.withDescription("write to this file instead of stdout"),
      Options.optional
    )
  },
  (o) =>
    report(
      withBackend(
        o,
        { cloud: false, worker: false },
        Effect.gen(function* () {
          const intake = yield* Intake.Intake
          const format = o.json ? "json" : o.format
          if (o.entries) {
            const found = yield* intake.entries(Option.getOrUndefined(o.from), 1_000_000)
            if (format === "json") return yield* writeOut(o.out, JSON.stringify(found, null, 2) + "\n")
            const header =
              "position,at,day,kind,operation,finStatus,amount,currency,terminal,merchant,transactionReference,reconciled,stream"
            const csv = found.entries.map((e) =>
              [
                e.position,
                new Date(e.at).toISOString(),
                e.day,
                e.kind,
                e.operation,
                e.finStatus,
                e.amount ?? "",
                e.currency ?? "",
                e.terminal,
                e.merchant,
                e.transactionReference ?? "",
                String(e.reconciled),
                e.streamId
              ].join(",")
            )
            return yield* writeOut(o.out, [header, ...csv].join("\n") + "\n")
          }
          const by = yield* dimensionsOf(o.by)
          const view = yield* intake.ledger({
            source: o.source === "live" ? "live" : "replay",
            from: Option.getOrUndefined(o.from)
          })
          const rows = Ledger.summarize(Ledger.fromRows(view.rows), by)
          if (format === "csv") return yield* writeOut(o.out, Ledger.toCsv(rows))
          if (format === "json") {
            return yield* writeOut(
              o.out,
              JSON.stringify(
                {
                  source: view.source,
                  from: view.from,
                  checkpoint: view.checkpoint,
                  eventsRead: view.eventsRead,
                  entries: view.entries,
                  undecodable: view.undecodable,
                  rows: Ledger.toJson(rows)
                },
                null,
                2
              ) + "\n"
            )
          }
          const lines = [
            `ledger (${view.source}) from ${view.from} to ${view.checkpoint}: ${view.eventsRead} events read, ${view.entries} entries`,
            ...view.undecodable.map((u) => `  UNREADABLE: ${u}`),
            ...tableOf(rows)
          ]
          yield* writeOut(o.out, lines.join("\n") + "\n")
        })
      )
    )
).pipe(
  Command.withDescription(
    "replays the event log into a ledger per day / terminal / merchant, with CSV and JSON export"
  )
)

const verify = Command.make(
  "verify",
  {
    ...common,
    stream: Options.text("stream").pipe(Options.withDescription("verify one stream only"), Options.optional)
  },
  (o) =>
    report(
      withBackend(
        o,
        { cloud: false, worker: false },
        Effect.gen(function* () {
          const result = yield* (yield* Intake.Intake).verify(Option.getOrUndefined(o.stream))
          yield* Output.print(o.json, result, () => [
            result.ok
              ? `OK: ${result.eventsChecked} events in ${result.streamsChecked} streams, every hash chain intact`
              : `BROKEN: ${result.broken.length} of ${result.streamsChecked} streams (${result.eventsChecked} events checked)`,
            ...result.broken.map(
              (b) =>
                `  first broken link: ${b.streamId} at version ${b.version} (${b.kind}): expected ${b.expected}, found ${b.found}`
            )
          ])
          yield* setExit(result.ok ? Output.ExitCode.ok : Output.ExitCode.failed)
        })
      )
    )
).pipe(Command.withDescription("verifies the hash chains of the event log and reports the first broken link"))

const rebuild = Command.make("rebuild", { ...common }, (o) =>
  report(
    withBackend(
      o,
      { cloud: false, worker: false },
      Effect.gen(function* () {
        const result = yield* (yield* Intake.Intake).rebuild
        yield* Output.print(o.json, result, () =>
          !result.compared
            ? [
                `no live projection snapshot yet (a worker writes one within seconds of new events); rebuilt ${result.eventsRead} events, digest ${result.rebuiltDigest}`
              ]
            : [
                result.equal
                  ? `EQUAL: the ledger rebuilt from scratch up to ${result.checkpoint} (${result.eventsRead} events) equals the live projection`
                  : `DIFFERENT: ${result.differences.length} rows differ between the rebuilt ledger and the live projection at ${result.checkpoint}`,
                `  live digest     ${result.liveDigest}`,
                `  rebuilt digest  ${result.rebuiltDigest}`,
                ...result.differences.map((d) => `  ${d.row}: live ${d.live}; rebuilt ${d.rebuilt}`)
              ]
        )
        yield* setExit(result.compared && !result.equal ? Output.ExitCode.failed : Output.ExitCode.ok)
      })
    )
  )
).pipe(
  Command.withDescription("rebuilds the ledger from the first event and compares it with the live projection")
)

const timeline = Command.make(
  "timeline",
  { ...common, reference: Args.text({ name: "execution id, transaction reference or idempotency key" }) },
  (o) =>
    report(
      withBackend(
        o,
        { cloud: false, worker: false },
        Effect.gen(function* () {
          const result = yield* (yield* Intake.Intake).timeline(o.reference)
          yield* Output.print(o.json, result, () => [
            `timeline of execution ${result.executionId}`,
            ...result.lines.map((l) => `  ${l}`)
          ])
        })
      )
    )
).pipe(Command.withDescription("one payment's full timeline, human-readable"))

const audit = Command.make("audit").pipe(
  Command.withDescription("replay, export and verify the event log"),
  Command.withSubcommands([ledger, verify, rebuild, timeline])
)

// ---------------------------------------------------------------------------------------
// Processes

const simulator = Command.make(
  "simulator",
  {
    port: Options.integer("port").pipe(Options.withDefault(7070)),
    seed: Options.integer("seed").pipe(Options.optional),
    terminals: Options.integer("terminals").pipe(Options.withDefault(3)),
    host: Options.text("host").pipe(Options.withDefault("127.0.0.1"))
  },
  (o) =>
    Layer.launch(
      Layer.scopedDiscard(
        Effect.gen(function* () {
          const info = yield* SimulatorServer.SimulatorInfo
          yield* Console.log(SimulatorServer.startupLine(info))
          yield* Console.log(
            `tillflow simulator listening on ${info.baseUrl} (status host ${info.transactionsUrl}; admin ${info.adminUrl}; docs/simulator.md)`
          )
        })
      ).pipe(
        Layer.provide(
          SimulatorServer.layer({
            port: o.port,
            host: o.host,
            terminals: o.terminals,
            ...(Option.isSome(o.seed) ? { seed: o.seed.value } : {})
          })
        )
      )
    ).pipe(
      Effect.catchAll((error) =>
        Effect.zipRight(Output.note(`tillflow simulator: ${String(error.cause)}`), setExit(1))
      )
    )
).pipe(Command.withDescription("runs the simulator of the remote service as a process (docs/simulator.md)"))

const workerCommand = Command.make("worker", {}, () => Program.run("worker")).pipe(
  Command.withDescription("runs the standalone worker (same as npm start; configuration: docs/operations.md)")
)

/** The root command. */
export const tillflow = Command.make("tillflow").pipe(
  Command.withDescription("drive payment terminals through durable workflows, and audit the event log"),
  Command.withSubcommands([
    devices,
    sale,
    refund,
    reverse,
    tokenize,
    print,
    ping,
    cardPan,
    stop,
    preauth,
    moto,
    tipAdjust,
    token,
    batch,
    device,
    status,
    executions,
    events,
    audit,
    simulator,
    workerCommand
  ])
)

/** Installs the configuration provider (environment, then `tillflow.config.json`). */
export const configLayer = WorkerConfig.layerProvider()
