/**
 * The model-based money test's commands and reference model (issue 28, "Proof"): random
 * sequences of money operations on both paths — sales, MOTO sales and pre-authorizations on
 * terminals, linked terminal refunds and reversals, terminal-less MOTO refunds, reversals
 * (full and partial), captures and increases on either path, tips, batch closes, 5xx and
 * dropped answers, two callers at once on one original — run against an instance of the
 * Promise API's stack and its built-in simulator. After every command the real system is
 * checked against a small reference model: no original credited above what it charged (at
 * tillflow and at the simulator), every operation admitted or refused by a named rule, the
 * ledger's net of each original equal to the simulator's balance, the audit clean.
 */
import {
  Identifiers,
  InDoubtResolution,
  Ledger,
  LedgerFold,
  LifecycleEvent,
  Money,
  MoneyRules,
  MotoWorkflow,
  PreAuthorizationWorkflow,
  ReversalWorkflow,
  TerminalOperations,
  TerminalOutcomeRecorder,
  TipAdjustmentWorkflow,
  BatchWorkflow,
  TransactionHistory
} from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import type { Device, Tillflow } from "../../src/index.js"
import type * as Services from "../../src/internal/Services.js"
import { admin, eventually, runEffect } from "../support.js"

// ---------------------------------------------------------------------------------------
// The reference model

/** One original transaction, as the reference model knows it. */
export interface Original {
  readonly guid: string
  readonly kind: "sale" | "motoSale" | "preAuthorization"
  readonly terminal: Device
  /** What it charged (a sale's approved amount; a pre-authorization's hold when opened). */
  readonly charged: bigint
  /** The tip that stands on it (the last adjustment): part of what it charged. */
  tip: bigint
  /** Credited back so far, by approved operations the model saw (refunds, reversals). */
  credited: bigint
  /**
   * An operation on it ended without a known outcome that the model cannot name both
   * endings of (a capture or an increase): its balances are compared again only by range.
   */
  inDoubt: boolean
  /**
   * Operations on it whose outcome is unknown, each with both its possible endings tracked:
   * applied (a credit of `credit`, or `tip` standing) or not. Until they are resolved the
   * simulator's balance must be one of the possibilities; once resolved, exactly the one chosen.
   */
  doubts: Array<Doubt>
  /** The version of its stream the audit last verified (-1: never). */
  verified: number
}

/** An operation in doubt: what it moves if it was applied. */
export type Doubt =
  { readonly what: "credit"; readonly amount: bigint } | { readonly what: "tip"; readonly tip: bigint }

/** The reference model of one sequence. */
export interface Model {
  readonly originals: Array<Original>
  /** Every operation the sequence ran, with how it ended (printed with a failure). */
  readonly log: Array<string>
}

/** The system under test: one instance, its terminals, and what it has read of the ledger. */
export interface Real {
  readonly tf: Tillflow
  readonly terminals: ReadonlyArray<Device>
  readonly ledger: {
    checkpoint: EventStore.Checkpoint
    entries: Array<Ledger.Entry>
    /** The transactions' histories folded so far, kept between reads. */
    readonly folds: LedgerFold.Cache
  }
  /** A card token of the simulator's card, for terminal-less MOTO sales. */
  readonly cardToken: string
  /** A fault to arm on the simulator before the next command (a 5xx or a dropped answer). */
  nextFault: FaultKind | undefined
  sequence: number
}

const eur = (minor: bigint) => Money.make(minor, "EUR")
const guid = (value: string) => Identifiers.Guid.make(value)
const polling = (idempotencyKey: string) => ({
  idempotencyKey,
  delivery: "polling" as const,
  deadline: "10 seconds" as const
})
const terminalOf = (device: Device) => ({
  serialNumber: Identifiers.SerialNumber.make(device.serialNumber),
  terminalType: Identifiers.TerminalType.make(device.terminalType)
})

// ---------------------------------------------------------------------------------------
// How an operation ended

/** How an operation ended, as the model reads it. */
export type Ending =
  | { readonly _tag: "approved"; readonly guid: string | undefined; readonly amount: bigint | undefined }
  | { readonly _tag: "declined" }
  | { readonly _tag: "refused"; readonly rule: string; readonly error: string }
  | { readonly _tag: "unknown"; readonly error: string }

/** Local refusals that name their rule by their tag (`PolicyError`), not in a `rule` field. */
const rulesByTag: ReadonlySet<string> = new Set([
  "CaptureAlreadyDone",
  "CaptureOverTolerance",
  "CaptureWindowClosed",
  "ReversalWindowClosed",
  "TipAdjustmentNotAllowed",
  "RequestAlreadyFailed"
])

/**
 * The service's own rules that no local rule stands for, by their error code: a MOTO sale
 * of the same card and amount within 5 minutes is refused as a duplicate (the spec's duplicate
 * payment check, `duplicate_check`). Any
 * other rejection of the service is a money rule tillflow should have applied first.
 */
const serviceRules: ReadonlySet<string> = new Set(["DUPLICATE_TRANSACTION"])

/** Endings whose outcome is not known yet (a 5xx or lost answer still being reconciled). */
const unknownTags: ReadonlySet<string> = new Set([
  "OutcomeUnresolved",
  "OperationInDoubt",
  "OutcomeUnknown",
  "NotCharged",
  "TimeoutException"
])

/** Why a failure is no named refusal (the test fails with it). */
export class Unnamed extends Error {}

const endingOf = (exit: Exit.Exit<unknown, unknown>): Ending => {
  if (Exit.isSuccess(exit)) {
    const value = exit.value as {
      readonly _tag?: string
      readonly facts?: { readonly efttransactionID?: string; readonly totalAmount?: Money.Money }
    }
    if (value._tag === "Declined" || value._tag === "Cancelled" || value._tag === "Failed")
      return { _tag: "declined" }
    return {
      _tag: "approved",
      guid: value.facts?.efttransactionID,
      amount: value.facts?.totalAmount?.minorUnits
    }
  }
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) return { _tag: "unknown", error: Cause.pretty(exit.cause).slice(0, 300) }
  const error = failure.value as { readonly _tag?: string; readonly rule?: string; readonly message?: string }
  const tag = error._tag ?? "?"
  if (typeof error.rule === "string" && error.rule.length > 0)
    return { _tag: "refused", rule: error.rule, error: tag }
  if (rulesByTag.has(tag)) return { _tag: "refused", rule: tag, error: tag }
  const code = (error as { readonly code?: string }).code
  if (tag === "GatewayRejected" && code !== undefined && serviceRules.has(code))
    return { _tag: "refused", rule: `service:${code}`, error: tag }
  if (unknownTags.has(tag)) return { _tag: "unknown", error: tag }
  throw new Unnamed(`refused by no named rule: ${tag}: ${error.message ?? ""}`)
}

/**
 * The faults a command can meet on its first request: a 5xx after processing or a dropped
 * answer (reconciled: applied), and two that leave a terminal-less request in doubt once its
 * reconciliation budget is spent (`TILLFLOW_TERMINAL_LESS_BUDGET`, short in this test): a 5xx
 * before processing (not applied, NOT FOUND still within its 90 s), and a 5xx after
 * processing with the status endpoint down (applied).
 */
export type FaultKind = "error-after" | "drop-response" | "error-before" | "error-after-status-down"
const doubtFaults: ReadonlySet<FaultKind> = new Set(["error-before", "error-after-status-down"])

/** Arms `kind` on the simulator for the next request. */
const arm = async (real: Real, kind: FaultKind) => {
  const main = kind === "error-after-status-down" ? "error-after" : kind
  await admin(real.tf, "POST", "/faults", { kind: main, method: "POST", host: "main", times: 1 })
  if (kind === "error-after-status-down")
    await admin(real.tf, "POST", "/faults", { kind: "error-before", host: "status", times: 1000 })
}

/**
 * Runs one operation on the instance, the armed fault (if any) on its first request. A
 * fault that leaves a request in doubt waits for a terminal-less operation (a terminal's
 * own recovery waits out the 90 s NOT FOUND window: too slow for this test).
 */
const run = async (
  real: Real,
  model: Model,
  label: string,
  effect: Effect.Effect<unknown, unknown, Services.Services>,
  where: "terminal" | "terminalLess" = "terminal"
): Promise<Ending> => {
  const fault = real.nextFault
  if (fault !== undefined && (where === "terminalLess" || !doubtFaults.has(fault))) {
    real.nextFault = undefined
    await arm(real, fault)
    label = `${label} [${fault}]`
  }
  const started = Date.now()
  const exit = await runEffect(real.tf, Effect.timeout(effect, "40 seconds"))
  label = `${label} (${Date.now() - started} ms)`
  await admin(real.tf, "DELETE", "/faults").catch(() => undefined)
  const ending = endingOf(exit)
  model.log.push(
    `${label} → ${JSON.stringify(ending, (_k, v) => (typeof v === "bigint" ? v.toString() : v))}`
  )
  return ending
}

/**
 * A terminal-less workflow as the front doors start it (the intake's `lifecycle`): the
 * histories caught up with the log first, waiting a moment for the original's.
 */
const terminalLess = <A, E, R>(original: string, workflow: Effect.Effect<A, E, R>) =>
  Effect.zipRight(
    TerminalOutcomeRecorder.catchUpFor({ mcc: Option.some("7011") }, original, "30 seconds"),
    workflow
  )

let counter = 0
const key = (real: Real, what: string) => `mm-${real.sequence}-${++counter}-${what}`

// ---------------------------------------------------------------------------------------
// Commands

type Cmd = FastCheck.AsyncCommand<Model, Real>

/** Picks an original of the model by a random index (none while the model has none). */
const pick = (model: Model, index: number): Original | undefined =>
  model.originals.length === 0 ? undefined : model.originals[index % model.originals.length]

/**
 * Picks an original of a kind by a random index, mostly: one index in eight picks among all
 * (an operation sent to the wrong kind must be refused by a named rule too).
 */
const pickOf = (
  model: Model,
  index: number,
  kinds: ReadonlyArray<Original["kind"]>
): Original | undefined => {
  const fitting = model.originals.filter((o) => kinds.includes(o.kind))
  return fitting.length === 0 || index % 8 === 7 ? pick(model, index) : fitting[index % fitting.length]
}

/** Amounts in minor units, away from the simulator's trigger amounts (37.xx). */
const amount = FastCheck.integer({ min: 100, max: 6000 }).map((n) =>
  BigInt(n >= 3700 && n < 3800 ? n + 200 : n)
)

/** What to credit of an original: all of what it charged, part of it, or more. */
const share = FastCheck.constantFrom("all" as const, "half" as const, "third" as const, "over" as const)
type Share = "all" | "half" | "third" | "over"
/** What an original charged: its amount and its standing tip. */
const chargedOf = (o: Original): bigint => o.charged + o.tip
const shareOf = (o: Original, s: Share): bigint => {
  const all = chargedOf(o)
  return s === "all" ? all : s === "half" ? all / 2n : s === "third" ? all / 3n : all + 1n
}

/** Records an approved credit in the model (a refund or a reversal of `credited`). */
const credit = (o: Original, credited: bigint) => {
  o.credited += credited
}

/** Records an unknown ending: both its possibilities when the model can name them, else a range. */
const markDoubt = (o: Original | undefined, ending: Ending, ifApplied?: Doubt) => {
  if (o === undefined || ending._tag !== "unknown") return
  if (ifApplied === undefined || o.kind === "preAuthorization") o.inDoubt = true
  else o.doubts.push(ifApplied)
}

/** An original on a terminal: a sale, a MOTO sale or a pre-authorization. */
class OpenOriginal implements Cmd {
  constructor(
    readonly kind: Original["kind"],
    readonly terminal: number,
    readonly minor: bigint
  ) {}
  check = () => true
  async run(model: Model, real: Real) {
    const device = real.terminals[this.terminal % real.terminals.length] as Device
    const input = { ...terminalOf(device), amount: eur(this.minor) }
    const k = key(real, this.kind)
    const effect =
      this.kind === "sale"
        ? TerminalOperations.sale(input, polling(k))
        : this.kind === "motoSale"
          ? TerminalOperations.motoSale(input, polling(k))
          : TerminalOperations.preAuthorization(input, polling(k))
    const ending = await run(real, model, `${this.kind} ${this.minor} on ${device.serialNumber}`, effect)
    if (ending._tag === "approved" && ending.guid !== undefined)
      model.originals.push({
        guid: ending.guid,
        kind: this.kind,
        terminal: device,
        charged: ending.amount ?? this.minor,
        tip: 0n,
        credited: 0n,
        inDoubt: false,
        doubts: [],
        verified: -1
      })
  }
  toString = () => `${this.kind}(t${this.terminal}, ${this.minor})`
}

/**
 * A terminal-less MOTO sale on the card token read at the start (`POST /moto/sale`): booked
 * on the merchant's virtual terminal; linked operations on it are sent to the first terminal.
 */
class OpenMotoTerminalLess implements Cmd {
  constructor(readonly minor: bigint) {}
  check = () => true
  async run(model: Model, real: Real) {
    const ending = await run(
      real,
      model,
      `terminal-less motoSale ${this.minor}`,
      Effect.map(
        MotoWorkflow.Sale.execute({
          requestId: key(real, "moto-sale"),
          cardToken: Identifiers.CardToken.make(real.cardToken),
          amount: eur(this.minor)
        }),
        (outcome) => ({
          _tag: outcome.status === "DECLINED" ? "Declined" : "Approved",
          facts: { efttransactionID: outcome.guid, totalAmount: outcome.amount }
        })
      )
    )
    if (ending._tag === "approved" && ending.guid !== undefined)
      model.originals.push({
        guid: ending.guid,
        kind: "motoSale",
        terminal: real.terminals[0] as Device,
        charged: ending.amount ?? this.minor,
        tip: 0n,
        credited: 0n,
        inDoubt: false,
        doubts: [],
        verified: -1
      })
  }
  toString = () => `terminalLessMotoSale(${this.minor})`
}

/** A refund of an original: linked on its terminal, or a terminal-less MOTO refund. */
class Refund implements Cmd {
  constructor(
    readonly path: "terminal" | "terminalLess",
    readonly index: number,
    readonly share: Share
  ) {}
  check = (model: Readonly<Model>) => model.originals.length > 0
  async run(model: Model, real: Real) {
    const o = pickOf(model, this.index, ["sale", "motoSale"]) as Original
    const requested = shareOf(o, this.share)
    const before = o.credited
    const ending = await run(
      real,
      model,
      `refund ${requested} of ${o.guid} (${this.path})`,
      this.path === "terminal"
        ? TerminalOperations.linkedRefund(
            { ...terminalOf(o.terminal), originalTransactionId: guid(o.guid), amount: eur(requested) },
            polling(key(real, "refund"))
          )
        : terminalLess(
            o.guid,
            MotoWorkflow.Refund.execute({
              requestId: key(real, "moto-refund"),
              originalGuid: guid(o.guid),
              amount: eur(requested)
            })
          ),
      this.path
    )
    markDoubt(o, ending, { what: "credit", amount: requested })
    if (ending._tag === "approved") {
      // The reference model: a refund past what is left must have been refused.
      if (before + requested > chargedOf(o))
        throw new Error(
          `a refund of ${requested} on ${o.guid} (charged ${chargedOf(o)}, credited ${before}) was approved`
        )
      credit(o, requested)
    }
  }
  toString = () => `refund(${this.path}, #${this.index}, ${this.share})`
}

/** A reversal of an original, full or partial: terminal-less, on the terminal, or a MOTO reversal. */
class Reverse implements Cmd {
  constructor(
    readonly path: "terminal" | "terminalLess" | "moto",
    readonly index: number,
    readonly share: Share | "none"
  ) {}
  check = (model: Readonly<Model>) => model.originals.length > 0
  async run(model: Model, real: Real) {
    const o = pick(model, this.index) as Original
    // A MOTO reversal and a pre-authorization's reversal are whole: they carry no amount.
    const requested =
      this.share === "none" ||
      this.path === "moto" ||
      (this.path === "terminal" && o.kind === "preAuthorization")
        ? undefined
        : shareOf(o, this.share)
    const left = chargedOf(o) - o.credited
    const label = `reversal ${requested ?? "full"} of ${o.kind} ${o.guid} (${this.path})`
    const effect =
      this.path === "terminal"
        ? o.kind === "preAuthorization"
          ? TerminalOperations.preAuthorizationReversal(
              { ...terminalOf(o.terminal), originalTransactionId: guid(o.guid) },
              polling(key(real, "pa-reversal"))
            )
          : TerminalOperations.saleReversal(
              {
                ...terminalOf(o.terminal),
                originalTransactionId: guid(o.guid),
                amount: eur(requested ?? chargedOf(o))
              },
              polling(key(real, "sale-reversal"))
            )
        : this.path === "moto"
          ? terminalLess(
              o.guid,
              MotoWorkflow.Reverse.execute({
                requestId: key(real, "moto-reversal"),
                originalGuid: guid(o.guid)
              })
            )
          : terminalLess(
              o.guid,
              ReversalWorkflow.Reverse.execute(
                requested === undefined
                  ? { requestId: key(real, "reversal"), originalGuid: guid(o.guid) }
                  : { requestId: key(real, "reversal"), originalGuid: guid(o.guid), amount: eur(requested) }
              )
            )
    const ending = await run(
      real,
      model,
      label,
      effect,
      this.path === "terminal" ? "terminal" : "terminalLess"
    )
    markDoubt(o, ending, { what: "credit", amount: requested ?? left })
    if (ending._tag === "approved" && o.kind !== "preAuthorization") {
      const undone = requested ?? left
      if (o.credited + undone > chargedOf(o))
        throw new Error(`${label} was approved with ${o.credited} of ${chargedOf(o)} already credited back`)
      credit(o, undone)
    }
  }
  toString = () => `reverse(${this.path}, #${this.index}, ${this.share})`
}

/** A capture or an increase of a pre-authorization, on its terminal or terminal-less. */
class HoldOperation implements Cmd {
  constructor(
    readonly what: "capture" | "increase",
    readonly path: "terminal" | "terminalLess",
    readonly index: number,
    readonly minor: bigint
  ) {}
  check = (model: Readonly<Model>) => model.originals.length > 0
  async run(model: Model, real: Real) {
    const o = pickOf(model, this.index, ["preAuthorization"]) as Original
    const label = `${this.what} ${this.minor} of ${o.kind} ${o.guid} (${this.path})`
    const linked = { ...terminalOf(o.terminal), originalTransactionId: guid(o.guid), amount: eur(this.minor) }
    const payload = { requestId: key(real, this.what), originalGuid: guid(o.guid), amount: eur(this.minor) }
    const effect =
      this.what === "capture"
        ? this.path === "terminal"
          ? TerminalOperations.preAuthorizationCapture(linked, polling(key(real, "capture")))
          : terminalLess(o.guid, PreAuthorizationWorkflow.Capture.execute(payload))
        : this.path === "terminal"
          ? TerminalOperations.preAuthorizationIncrease(linked, polling(key(real, "increase")))
          : terminalLess(o.guid, PreAuthorizationWorkflow.Increase.execute(payload))
    markDoubt(o, await run(real, model, label, effect, this.path))
  }
  toString = () => `${this.what}(${this.path}, #${this.index}, ${this.minor})`
}

/** A tip adjustment (terminal-less). */
class Tip implements Cmd {
  constructor(
    readonly index: number,
    readonly minor: bigint
  ) {}
  check = (model: Readonly<Model>) => model.originals.length > 0
  async run(model: Model, real: Real) {
    const o = pickOf(model, this.index, ["sale"]) as Original
    const ending = await run(
      real,
      model,
      `tip ${this.minor} on ${o.kind} ${o.guid}`,
      terminalLess(
        o.guid,
        TipAdjustmentWorkflow.Adjust.execute({
          requestId: key(real, "tip"),
          originalGuid: guid(o.guid),
          tip: eur(this.minor)
        })
      ),
      "terminalLess"
    )
    markDoubt(o, ending, { what: "tip", tip: this.minor })
    if (ending._tag === "approved") {
      if (o.credited > 0n)
        throw new Error(`a tip on ${o.guid}, ${o.credited} of which was credited back, was approved`)
      o.tip = this.minor
    }
  }
  toString = () => `tip(#${this.index}, ${this.minor})`
}

/** Closes a terminal's open batch (terminal-less). */
class CloseBatch implements Cmd {
  constructor(readonly terminal: number) {}
  check = () => true
  async run(model: Model, real: Real) {
    const device = real.terminals[this.terminal % real.terminals.length] as Device
    const view = (await admin(real.tf, "GET", `/terminals/${device.serialNumber}`)) as {
      readonly batchNumber: number
    }
    const requestId = key(real, "batch")
    const ending = await run(
      real,
      model,
      `batch close of ${device.serialNumber} (${view.batchNumber})`,
      BatchWorkflow.Close.execute({
        requestId,
        ...terminalOf(device),
        batchNumber: Identifiers.BatchNumber.make(String(view.batchNumber))
      }),
      "terminalLess"
    )
    if (ending._tag !== "unknown") return
    // A close in doubt holds the terminal's closes: an operator resolves it as the
    // simulator shows it (its batch number moved on when the close was applied).
    const after = (await admin(real.tf, "GET", `/terminals/${device.serialNumber}`)) as {
      readonly batchNumber: number
    }
    const applied = after.batchNumber !== view.batchNumber
    const resolved = await runEffect(
      real.tf,
      InDoubtResolution.resolveAttempt({
        on: { _tag: "batch", serialNumber: device.serialNumber },
        requestId,
        resolution: applied ? "applied" : "notApplied",
        operator: "money-model",
        reason: `the simulator's batch reads ${after.batchNumber}`
      })
    )
    if (Exit.isFailure(resolved))
      throw new Error(`resolving the batch close ${requestId}: ${Cause.pretty(resolved.cause)}`)
    model.log.push(`resolved batch close ${requestId}: ${applied ? "applied" : "not applied"}`)
  }
  toString = () => `closeBatch(t${this.terminal})`
}

/** Arms a fault for the next command's first request (`FaultKind`). */
class Fault implements Cmd {
  constructor(readonly kind: FaultKind) {}
  check = () => true
  async run(_model: Model, real: Real) {
    real.nextFault = this.kind
  }
  toString = () => `fault(${this.kind})`
}

/**
 * A terminal-less credit (a MOTO refund or a reversal, full or partial) whose first request
 * meets a fault that leaves it in doubt: both its endings are tracked until it is settled.
 */
class DoubtfulCredit implements Cmd {
  constructor(
    readonly fault: "error-before" | "error-after-status-down",
    readonly what: "refund" | "reversal",
    readonly index: number,
    readonly share: Share
  ) {}
  check = (model: Readonly<Model>) => model.originals.length > 0
  async run(model: Model, real: Real) {
    real.nextFault = this.fault
    await (
      this.what === "refund"
        ? new Refund("terminalLess", this.index, this.share)
        : new Reverse("terminalLess", this.index, this.share)
    ).run(model, real)
    real.nextFault = undefined
  }
  toString = () => `doubtful(${this.fault}, ${this.what}, #${this.index}, ${this.share})`
}

/** Two callers at once on one original: a linked terminal refund and a MOTO refund, each of all it charged. */
class Concurrent implements Cmd {
  constructor(readonly index: number) {}
  check = (model: Readonly<Model>) => model.originals.length > 0
  async run(model: Model, real: Real) {
    const o = pickOf(model, this.index, ["sale", "motoSale"]) as Original
    const before = o.credited
    const all = chargedOf(o)
    const [a, b] = await Promise.all([
      run(
        real,
        model,
        `concurrent terminal refund ${all} of ${o.guid}`,
        TerminalOperations.linkedRefund(
          { ...terminalOf(o.terminal), originalTransactionId: guid(o.guid), amount: eur(all) },
          polling(key(real, "race-a"))
        )
      ),
      run(
        real,
        model,
        `concurrent MOTO refund ${all} of ${o.guid}`,
        terminalLess(
          o.guid,
          MotoWorkflow.Refund.execute({
            requestId: key(real, "race-b"),
            originalGuid: guid(o.guid),
            amount: eur(all)
          })
        )
      )
    ])
    markDoubt(o, a, { what: "credit", amount: all })
    markDoubt(o, b, { what: "credit", amount: all })
    const approved = [a, b].filter((e) => e._tag === "approved").length
    if (before + BigInt(approved) * all > all)
      throw new Error(
        `two refunds of all of ${o.guid} raced and ${approved} were approved (credited before: ${before})`
      )
    o.credited += BigInt(approved) * all
  }
  toString = () => `concurrent(#${this.index})`
}

/** The subset sums of the credits in doubt: every credit the simulator may show beyond the model's. */
const possibleCredits = (o: Original): ReadonlyArray<bigint> =>
  o.doubts.reduce<ReadonlyArray<bigint>>(
    (sums, d) => (d.what === "credit" ? [...sums, ...sums.map((sum) => sum + d.amount)] : sums),
    [0n]
  )
/** The tips that may stand: the model's, or one in doubt. */
const possibleTips = (o: Original): ReadonlyArray<bigint> => [
  o.tip,
  ...o.doubts.flatMap((d) => (d.what === "tip" ? [d.tip] : []))
]

/** The simulator's view of an original's money: credited back and the standing tip. */
const simulatorOf = async (real: Real, o: Original): Promise<{ credited: bigint; tip: bigint }> => {
  const sims = (await admin(real.tf, "GET", "/transactions")) as ReadonlyArray<SimTransaction>
  const sim = sims.find((t) => t.efttransactionID === o.guid)
  if (sim === undefined) throw new Error(`the simulator does not know ${o.guid}`)
  return { credited: BigInt(sim.refundedMinor) + BigInt(sim.reversedMinor), tip: BigInt(sim.tipAmount ?? 0) }
}

/** Throws unless the simulator's balance of `o` is one of the possibilities the model tracks. */
const checkPossible = (o: Original, sim: { credited: bigint; tip: bigint }, shown: unknown = undefined) => {
  const credits = possibleCredits(o)
  if (!credits.includes(sim.credited - o.credited))
    throw new Error(
      `simulator: ${o.guid} credited ${sim.credited}, none of the possibilities ${credits.map((c) => o.credited + c).join(" | ")} (${JSON.stringify(shown)})`
    )
  if (!possibleTips(o).includes(sim.tip))
    throw new Error(
      `simulator: ${o.guid} tip ${sim.tip}, none of the possibilities ${possibleTips(o).join(" | ")}`
    )
}

/**
 * Settles the operations in doubt on `o`: what the simulator shows picks the possibility;
 * a request the history holds in doubt is resolved by an operator (`InDoubtResolution`)
 * as applied or not, as the simulator shows it; the model then takes the exact balance and
 * the ledger must agree with it. A request still in flight stays in doubt.
 */
export const settle = async (model: Model, real: Real, o: Original): Promise<void> => {
  if (o.doubts.length === 0) return
  const sim = await simulatorOf(real, o)
  checkPossible(o, sim)
  const history = await runEffect(
    real.tf,
    Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      return (yield* TransactionHistory.load(store, o.guid)).state
    })
  )
  if (Exit.isFailure(history))
    throw new Error(`reading the history of ${o.guid}: ${Cause.pretty(history.cause)}`)
  const pending = Option.getOrUndefined(history.value)?.pending
  if (pending !== undefined && !pending.inDoubt) return
  if (pending !== undefined) {
    const applied = sim.credited > o.credited || sim.tip !== o.tip
    const resolved = await runEffect(
      real.tf,
      InDoubtResolution.resolve({
        guid: o.guid,
        requestId: pending.requestId,
        resolution: applied ? "applied" : "notApplied",
        operator: "money-model",
        reason: `the simulator shows credited ${sim.credited}, tip ${sim.tip}`
      })
    )
    if (Exit.isFailure(resolved))
      throw new Error(`resolving ${pending.requestId} on ${o.guid}: ${Cause.pretty(resolved.cause)}`)
    model.log.push(
      `resolved ${pending.operation} ${pending.requestId} on ${o.guid}: ${applied ? "applied" : "not applied"}`
    )
  }
  o.credited = sim.credited
  o.tip = sim.tip
  o.doubts.length = 0
}

/** An operator settles what is in doubt on an original (`settle`). */
class Settle implements Cmd {
  constructor(readonly index: number) {}
  check = (model: Readonly<Model>) => model.originals.some((o) => o.doubts.length > 0)
  async run(model: Model, real: Real) {
    const doubtful = model.originals.filter((o) => o.doubts.length > 0)
    await settle(model, real, doubtful[this.index % doubtful.length] as Original)
  }
  toString = () => `settle(#${this.index})`
}

/** Settles every original in doubt (the end of a sequence). */
export const settleAll = async (model: Model, real: Real): Promise<void> => {
  for (const o of model.originals) await settle(model, real, o)
}

const opening = FastCheck.tuple(
  FastCheck.constantFrom("sale" as const, "motoSale" as const, "preAuthorization" as const),
  FastCheck.nat(3),
  amount
).map(([kind, t, minor]) => new OpenOriginal(kind, t, minor))

/** Every command, with its arbitrary (originals opened twice as often as the others run). */
export const commands = [
  opening,
  opening,
  amount.map((minor) => new OpenMotoTerminalLess(minor)),
  FastCheck.tuple(
    FastCheck.constantFrom("terminal" as const, "terminalLess" as const),
    FastCheck.nat(7),
    share
  ).map(([path, i, s]) => new Refund(path, i, s)),
  FastCheck.tuple(
    FastCheck.constantFrom("terminal" as const, "terminalLess" as const, "moto" as const),
    FastCheck.nat(7),
    FastCheck.constantFrom("none" as const, "all" as const, "half" as const, "over" as const)
  ).map(([path, i, s]) => new Reverse(path, i, s)),
  FastCheck.tuple(
    FastCheck.constantFrom("capture" as const, "increase" as const),
    FastCheck.constantFrom("terminal" as const, "terminalLess" as const),
    FastCheck.nat(7),
    amount
  ).map(([what, path, i, minor]) => new HoldOperation(what, path, i, minor)),
  FastCheck.tuple(FastCheck.nat(7), FastCheck.integer({ min: 50, max: 900 })).map(
    ([i, minor]) => new Tip(i, BigInt(minor))
  ),
  FastCheck.nat(3).map((t) => new CloseBatch(t)),
  FastCheck.constantFrom<FaultKind>(
    "error-after",
    "drop-response",
    "error-before",
    "error-after-status-down"
  ).map((k) => new Fault(k)),
  FastCheck.nat(7).map((i) => new Concurrent(i)),
  FastCheck.nat(7).map((i) => new Settle(i)),
  FastCheck.tuple(
    FastCheck.constantFrom("error-before" as const, "error-after-status-down" as const),
    FastCheck.constantFrom("refund" as const, "reversal" as const),
    FastCheck.nat(7),
    share
  ).map(([fault, what, i, s]) => new DoubtfulCredit(fault, what, i, s))
]

// ---------------------------------------------------------------------------------------
// The checks after every command

interface SimTransaction {
  readonly efttransactionID: string
  readonly operation: string
  readonly tipAmount?: number
  readonly capturedAmount?: number
  readonly approvedMinor: string
  readonly refundedMinor: string
  readonly reversedMinor: string
}

/** The simulator's net of an original: what it keeps charged (captured for a pre-authorization). */
const simulatorNet = (t: SimTransaction): { charged: bigint; credited: bigint } => {
  const isPreAuth = t.operation === "preAuthorization" || t.operation === "moToPreAuthorization"
  const charged = isPreAuth
    ? BigInt(t.capturedAmount ?? 0)
    : BigInt(t.approvedMinor) + BigInt(t.tipAmount ?? 0)
  return { charged, credited: BigInt(t.refundedMinor) + BigInt(t.reversedMinor) }
}

/** Reads the log's new events into the ledger's entries. */
const readLedger = (real: Real) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    for (;;) {
      const page = yield* store.readAll(real.ledger.checkpoint, { maxCount: 1000 })
      const { entries } = yield* Ledger.entriesOf(page.events, real.ledger.folds)
      real.ledger.entries.push(...entries)
      real.ledger.checkpoint = page.next
      if (page.caughtUp) return
    }
  })

/** The ledger's net of each original, in minor units. */
const ledgerNets = (entries: ReadonlyArray<Ledger.Entry>): Map<string, bigint> => {
  const nets = new Map<string, bigint>()
  for (const e of entries) {
    if (e.original === undefined || e.amount === undefined) continue
    nets.set(e.original, (nets.get(e.original) ?? 0n) + Ledger.netSign[e.kind] * e.amount.minorUnits)
  }
  return nets
}

/** tillflow's fold of an original: what it charged and credited back. */
const historyOf = (o: Original) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const loaded = yield* TransactionHistory.load(store, o.guid)
    return Option.map(loaded.state, (state) => ({
      charged: MoneyRules.charged(state).minorUnits,
      credited: MoneyRules.credited(state).minorUnits,
      version: loaded.version
    }))
  })

/** Checks the invariants of every original of the model; throws the first broken one. */
export const checkInvariants = async (model: Model, real: Real): Promise<void> => {
  const sims = new Map(
    ((await admin(real.tf, "GET", "/transactions")) as ReadonlyArray<SimTransaction>).map((t) => [
      t.efttransactionID,
      t
    ])
  )
  const versions = new Map<Original, number>()
  for (const o of model.originals) {
    // 1. Never credited above what was charged: in the reference model, at the simulator, at tillflow.
    if (o.credited > chargedOf(o))
      throw new Error(`model: ${o.guid} credited ${o.credited} > charged ${chargedOf(o)}`)
    const sim = sims.get(o.guid)
    if (sim === undefined) throw new Error(`the simulator does not know ${o.guid}`)
    const balance = simulatorNet(sim)
    if (o.kind !== "preAuthorization" && !o.inDoubt)
      checkPossible(o, { credited: balance.credited, tip: BigInt(sim.tipAmount ?? 0) }, sim)
    if (o.kind !== "preAuthorization" && balance.credited > balance.charged)
      throw new Error(`simulator: ${o.guid} credited ${balance.credited} > charged ${balance.charged}`)
    const history = await runEffect(real.tf, historyOf(o))
    if (Exit.isFailure(history))
      throw new Error(`reading the history of ${o.guid}: ${Cause.pretty(history.cause)}`)
    // A terminal's original opens its history when an operation on it first needs it.
    if (Option.isNone(history.value)) continue
    const { charged, credited, version } = history.value.value
    versions.set(o, version)
    if (o.kind !== "preAuthorization" && credited > charged)
      throw new Error(`tillflow: ${o.guid} credited ${credited} > charged ${charged}`)
  }
  // 2. The ledger's net of each original equals the simulator's balance (the log is read
  //    below the oldest open transaction of the cluster: it may show a fact a moment late).
  const settled = model.originals.filter((o) => !o.inDoubt && o.doubts.length === 0)
  let mismatch = ""
  await eventually(async () => {
    const read = await runEffect(real.tf, readLedger(real))
    if (Exit.isFailure(read)) throw new Error(`reading the log failed: ${Cause.pretty(read.cause)}`)
    const nets = ledgerNets(real.ledger.entries)
    const freshSims = new Map(
      ((await admin(real.tf, "GET", "/transactions")) as ReadonlyArray<SimTransaction>).map((t) => [
        t.efttransactionID,
        t
      ])
    )
    mismatch = ""
    for (const o of settled) {
      const sim = freshSims.get(o.guid)
      if (sim === undefined) continue
      const balance = simulatorNet(sim)
      const expected = balance.charged - balance.credited
      // The model's exact balance of a sale: what it charged, less what was credited back.
      if (o.kind !== "preAuthorization" && chargedOf(o) - o.credited !== expected) {
        mismatch = `the model's net of ${o.kind} ${o.guid} is ${chargedOf(o) - o.credited}, the simulator's balance ${expected} (${JSON.stringify(sim)})`
        return false
      }
      const net = nets.get(o.guid) ?? 0n
      if (net !== expected) {
        mismatch = `ledger net of ${o.kind} ${o.guid} is ${net}, the simulator's balance ${expected} (${JSON.stringify(sim)})`
        return false
      }
    }
    return true
  }, 8_000).catch(() => {
    throw new Error(mismatch)
  })
  // 3. The audit of every original's stream that grew since it was last verified (one that
  //    did not is as it was): its hash chain intact, its money conserved (the whole log is
  //    verified at the end of each sequence: `verifyAll`).
  for (const o of model.originals) {
    const version = versions.get(o)
    if (version !== undefined && version === o.verified) continue
    await verify(real, LifecycleEvent.transactionStream(o.guid))
    if (version !== undefined) o.verified = version
  }
}

const verify = async (real: Pick<Real, "tf">, streamId: string | undefined) => {
  const verified = (await real.tf.audit.verify(streamId)) as { readonly ok: boolean }
  if (!verified.ok) throw new Error(`audit verify ${streamId ?? ""}: ${JSON.stringify(verified)}`)
}

/** The audit of the whole log: every hash chain intact, every transaction's money conserved. */
export const verifyAll = (real: Pick<Real, "tf">): Promise<void> => verify(real, undefined)

/** A command that checks the invariants after the one it wraps. */
export const checked = (command: Cmd): Cmd => ({
  check: (model) => command.check(model),
  run: async (model, real) => {
    await command.run(model, real)
    const started = Date.now()
    await checkInvariants(model, real)
    model.log.push(`  checked (${Date.now() - started} ms)`)
  },
  toString: () => command.toString()
})

/** The arbitrary of sequences (each command checked after it runs). */
export const sequences = (maxCommands: number) =>
  FastCheck.commands(
    commands.map((arb) => arb.map(checked)),
    { maxCommands }
  )

/** A fresh model for a sequence. */
export const freshModel = (): Model => ({ originals: [], log: [] })
