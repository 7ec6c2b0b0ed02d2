/**
 * The options several commands share: output and backend (`common`), how a terminal
 * operation runs (`run`), a terminal-less one (`lifecycleRun`), one that runs either way
 * (`dual`), and money and the transactions an operation refers to.
 */
import * as Options from "@effect/cli/Options"
import { Identifiers } from "@tillflow/core"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * `Options.withDefault`, the default also said in the help: @effect/cli shows a default only
 * when it is an `Option`, so `--currency` would fall back to EUR without saying so.
 */
export const withShownDefault =
  <const B extends string | number>(fallback: B) =>
  <A>(self: Options.Options<A>): Options.Options<A | B> =>
    self.pipe(Options.withDescription(`Defaults to ${fallback}.`), Options.withDefault(fallback))

/**
 * `--wait`: seconds, 0 or more, refused with a usage error (exit 2) as the command line is
 * parsed, so before any store or simulator starts.
 */
export const waitSeconds = Options.integer("wait").pipe(
  Options.filterMap(
    (seconds) => (seconds >= 0 ? Option.some(seconds) : Option.none()),
    "--wait must be 0 or more seconds"
  )
)

/**
 * An integer option within bounds, refused as the command line is parsed (exit 2, before any
 * store or worker is reached) with the flag and the allowed range.
 */
export const boundedInteger = (name: string, min: number, max: number) =>
  Options.integer(name).pipe(
    Options.filterMap(
      (value) => (value >= min && value <= max ? Option.some(value) : Option.none()),
      `--${name} must be ${max === Number.MAX_SAFE_INTEGER ? `${min} or more` : `from ${min} to ${max}`}`
    )
  )

const json = Options.boolean("json").pipe(Options.withDescription("print one JSON document instead of lines"))
const worker = Options.text("worker").pipe(
  Options.withDescription(
    "the intake URL of a running worker (else TILLFLOW_WORKER_URL, else the worker holding the embedded store, else this process)"
  ),
  Options.optional
)
const verbose = Options.boolean("verbose").pipe(
  Options.withAlias("v"),
  Options.withDescription("also say which worker the command talks to (or TILLFLOW_VERBOSE=1)")
)
export const common = { json, worker, verbose }

export const serial = Options.text("serial").pipe(
  Options.withAlias("s"),
  Options.withDescription("the terminal's serial number")
)
export const terminalType = Options.text("terminal-type").pipe(
  Options.withDescription("the terminal's type (looked up in the device list when absent)"),
  Options.optional
)
export const key = Options.text("key").pipe(
  Options.filterMap(
    (key) => (key.trim() === "" ? Option.none() : Option.some(key)),
    "--key must not be empty: give a text that names the operation, or leave --key out for a fresh one"
  ),
  Options.withDescription(
    "idempotency key: running a command again with the same key joins the same operation"
  ),
  Options.optional
)
const delivery = Options.choice("delivery", ["callback", "polling"]).pipe(
  Options.withDescription("how the result comes back (default: the configured one)"),
  Options.optional
)
const deadline = boundedInteger("deadline", 1, 86_400).pipe(
  Options.withDescription("seconds a busy, offline or queued terminal may be waited for, 1 to 86400"),
  Options.optional
)
const detach = Options.boolean("detach").pipe(
  Options.withDescription("start the operation and print its execution id without waiting")
)
const wait = waitSeconds.pipe(
  Options.withDescription(
    "longest wait for the outcome, in seconds, 0 or more (then exit 6; the operation goes on)"
  ),
  withShownDefault(900)
)
export const run = { ...common, serial, terminalType, key, delivery, deadline, detach, wait }

const { serial: _required, ...runWithoutSerial } = run
/** Options of a command that runs through a terminal with `--serial`, and without one when it can. */
export const dual = { ...runWithoutSerial, serial: Options.optional(serial) }

export const lifecycleRun = { ...common, key, detach, wait }

export const amount = Options.text("amount").pipe(
  Options.withAlias("a"),
  Options.withDescription("amount in major units with a dot, e.g. 10.50 (EUR), 100 (JPY), 1.250 (BHD)")
)
export const currency = Options.text("currency").pipe(
  Options.withAlias("c"),
  Options.withDescription("ISO 4217 currency code"),
  withShownDefault("EUR")
)
/** Whether a text is a transaction guid the service can be sent (`Identifiers.Guid`). */
const isGuid = Schema.is(Identifiers.Guid)

export const originalId = Options.text("original-transaction-id").pipe(
  // Refused here, before anything is started or sent: a malformed guid would reach the terminal.
  Options.filterMap(
    (guid) => (isGuid(guid) ? Option.some(guid) : Option.none()),
    "--original-transaction-id: a transaction guid is 1 to 128 letters, digits, '-', '_' or '.', starting with a letter or digit (the transactionID of the original's result)"
  ),
  Options.withDescription("the gateway guid of the original transaction (transactionID of its result)")
)
export const originalReference = Options.text("original-reference").pipe(
  Options.withDescription(
    "the original's transactionReference: makes the outcome reconcilable through the status endpoint"
  ),
  Options.optional
)
export const reference = Options.text("reference").pipe(
  Options.withDescription("the transactionReference (UUID v4) to use; a fresh one otherwise"),
  Options.optional
)

/** The parsed `run` options. */
export type RunOptions = {
  readonly json: boolean
  readonly worker: Option.Option<string>
  readonly verbose: boolean
  readonly serial: string
  readonly terminalType: Option.Option<string>
  readonly key: Option.Option<string>
  readonly delivery: Option.Option<"callback" | "polling">
  readonly deadline: Option.Option<number>
  readonly detach: boolean
  readonly wait: number
}

/** The parsed `lifecycleRun` options. */
export type LifecycleOptions = {
  readonly json: boolean
  readonly worker: Option.Option<string>
  readonly verbose: boolean
  readonly key: Option.Option<string>
  readonly detach: boolean
  readonly wait: number
}

/** `--customer-reference`: the integrator's own reference, echoed by the service. */
export const customerReference = Options.text("customer-reference").pipe(
  Options.withDescription("customerReference: your own reference, echoed unchanged in the result"),
  Options.optional
)

/** The `customerReference` field of a request, when `--customer-reference` gives one. */
export const customerReferenceField = (value: Option.Option<string>) =>
  Option.isSome(value) ? { customerReference: value.value } : {}

/** `--billing-zip-code` and `--billing-address`: the card holder's billing address (sales). */
export const billing = {
  billingZipCode: Options.text("billing-zip-code").pipe(
    Options.withDescription("billing.zipCode of the card holder (address verification)"),
    Options.optional
  ),
  billingAddress: Options.text("billing-address").pipe(
    Options.withDescription("billing.address of the card holder; needs --billing-zip-code"),
    Options.optional
  )
}

/** `--duplicate-check`: the service refuses a same-amount transaction on the terminal shortly after. */
export const duplicateCheck = Options.boolean("duplicate-check").pipe(
  Options.withDescription("duplicate_check: let the service refuse a repeat of the same amount")
)

/**
 * What an operator says of a request in doubt (`transactions resolve`, `attempts resolve`):
 * which request, applied or not (exactly one: {@link resolutionOf}), why, who, and what the
 * status endpoint said.
 */
export const resolution = {
  request: Options.text("request").pipe(
    Options.withDescription("the requestId of the request in doubt (see `tillflow audit timeline`)")
  ),
  applied: Options.boolean("applied").pipe(Options.withDescription("the request was applied")),
  notApplied: Options.boolean("not-applied").pipe(Options.withDescription("the request was not applied")),
  reason: Options.text("reason").pipe(Options.withDescription("why: what the operator knows")),
  operator: Options.text("operator").pipe(
    Options.withDescription(
      "who resolves it (through a worker: the operator logged in with tillflow login, when there is one)"
    ),
    Options.optional
  ),
  statusEndpoint: Options.text("status-endpoint").pipe(
    Options.withDescription("what the status endpoint said, if it was asked"),
    Options.optional
  )
}
