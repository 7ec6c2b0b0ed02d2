/**
 * An operator's action on a transaction (refund, reverse, capture, increase, release, tip),
 * started as the same operation any caller would start — a refund of a terminal sale as the
 * terminal `refund` of `start`, the others as the terminal-less workflows of `lifecycle` —
 * so every rule of the operation holds. What the action adds:
 *
 * - its idempotency key, derived from the action (`keyOf`): the same kind, transaction,
 *   amount, currency and `repeat` are the same action, so a double click or a retried
 *   request answers the first's execution;
 * - the amount and currency the operator confirmed, checked against the transaction's
 *   currency (400 naming the field);
 * - the operation's own money rule checked first, with the functions its workflow decides
 *   by (`MoneyRules.decideRefund`, `PreAuthorizationRules.decideCapture` …): a refusal is
 *   422 with the rule and its message, and nothing is started or recorded (the workflow
 *   still decides again when it runs: the rule is never skipped);
 * - `OperatorActionRequested` on the transaction's history, once per key (appended at the
 *   version read, so of two requests racing exactly one records it), with the operator, the
 *   time and the reason.
 */
import {
  LifecycleEvent,
  MerchantKeys,
  MerchantRegistry,
  Money,
  MoneyRules,
  MotoRules,
  PreAuthorizationRules,
  ReversalWorkflow,
  TerminalOutcomeRecorder,
  TipAdjustmentWorkflow,
  TransactionHistory
} from "@tillflow/core"
import { EventStore, HashChain } from "@tillflow/engine"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Intake from "../Intake.js"
import type * as Commands from "./Commands.js"
import { unavailable } from "./Failures.js"

/** What the actions are. */
export type Actions = Pick<Intake.Service, "act">

/** The actions whose amount the operator must give (and confirm). */
const amountRequired: ReadonlySet<LifecycleEvent.OperatorAction> = new Set([
  "refund",
  "capture",
  "increase",
  "tip"
])

/**
 * The idempotency key of an action: `action-<kind>-` and the first 32 hex digits of the
 * SHA-256 of `kind|guid|minor units|currency|repeat` (`-` for an absent amount, repeat 1 by
 * default). Nothing secret goes in; the same action is always the same key.
 */
export const keyOf = (input: {
  readonly action: LifecycleEvent.OperatorAction
  readonly guid: string
  readonly amount: Money.Money | undefined
  readonly currency: string
  readonly repeat: number
}): Effect.Effect<string> =>
  Effect.map(
    HashChain.sha256Hex(
      [
        input.action,
        input.guid,
        input.amount?.minorUnits.toString() ?? "-",
        input.currency,
        input.repeat
      ].join("|")
    ),
    (digest) => `action-${input.action}-${digest.slice(0, 32)}`
  )

const ruleOf = (refusal: { readonly _tag: string; readonly message: string }): Intake.ActionRefused =>
  new Intake.ActionRefused({
    rule: "rule" in refusal && typeof refusal.rule === "string" ? refusal.rule : refusal._tag,
    message: refusal.message
  })

/**
 * The operation's own rule for the action on the transaction as it stands, by the function
 * its workflow decides with; `undefined` when it may be sent. A reversal or release is
 * decided as its workflow decides it (`ReversalWorkflow.decideTarget` with the acquirer's
 * capabilities, `MotoRules.decideReversal` for a MOTO transaction); the batch rules, read
 * from the terminal's batch history, are left to the workflow, which decides again anyway.
 */
const refusalOf = (
  action: LifecycleEvent.OperatorAction,
  state: TransactionHistory.State,
  amount: Money.Money | undefined,
  requestId: string,
  now: DateTime.Utc,
  capabilities: ReversalWorkflow.AcquirerCapabilities["Type"]
): Intake.ActionRefused | undefined => {
  const refused = (r: Option.Option<{ readonly _tag: string; readonly message: string }>) =>
    Option.isSome(r) ? ruleOf(r.value) : undefined
  const decided = <A>(e: Either.Either<A, { readonly _tag: string; readonly message: string }>) =>
    Either.isLeft(e) ? ruleOf(e.left) : undefined
  switch (action) {
    case "refund":
      return amount === undefined
        ? undefined
        : refused(MoneyRules.decideRefund(state, amount, state.kind === "moToSale" ? "motoRefund" : "refund"))
    case "capture":
      return amount === undefined
        ? undefined
        : decided(
            PreAuthorizationRules.decideCapture(state, { requestId, amount, enforcement: "refuse" }, now)
          )
    case "increase":
      return amount === undefined
        ? undefined
        : decided(PreAuthorizationRules.decideHoldChange(state, "increase", { requestId, amount }, now))
    case "tip":
      return amount === undefined ? undefined : refused(TipAdjustmentWorkflow.decideTip(state, amount))
    case "release":
      return state.preAuthorization?.status === "AUTHORISED"
        ? decided(ReversalWorkflow.decideTarget(state, undefined, capabilities, now))
        : new Intake.ActionRefused({
            rule: "release-an-open-pre-authorization",
            message:
              state.preAuthorization === undefined
                ? `a release applies to a pre-authorization; ${state.guid} is a ${state.kind}`
                : `pre-authorization ${state.guid} is ${state.preAuthorization.status}: only an open (AUTHORISED) hold is released`
          })
    case "reverse":
      return state.kind === "moToSale" || state.kind === "moToRefund"
        ? refused(MotoRules.decideReversal(state, now))
        : decided(ReversalWorkflow.decideTarget(state, amount, capabilities, now))
  }
}

const minor = (m: Money.Money) => ({ amount: Money.toMinorUnitsString(m), currency: m.currency })

/** The actions over the store in context, started through `commands`. */
export const make = (
  commands: Commands.Commands,
  merchantMcc: Option.Option<string>,
  acquirer?: ReversalWorkflow.AcquirerCapabilities["Type"]
): Effect.Effect<Actions, never, EventStore.EventStore> =>
  Effect.gen(function* () {
    // Each merchant's pre-authorizations open with its MCC (the registry's, when in context).
    const mccOf = yield* MerchantRegistry.mccOfInContext
    // What the reversal workflows decide with: the deployment's, else their default; for a
    // merchant, what the registry holds for its acquirer over it.
    const capabilitiesFor = yield* ReversalWorkflow.capabilitiesOf.pipe(
      Effect.provideService(
        ReversalWorkflow.AcquirerCapabilities,
        acquirer ?? (yield* ReversalWorkflow.AcquirerCapabilities)
      ),
      Effect.provideService(ReversalWorkflow.MerchantAcquirers, {
        of: yield* MerchantRegistry.acquirerOfInContext
      })
    )
    const store = yield* EventStore.EventStore

    // The terminal operations approved so far become histories first (a sale made on a
    // terminal has one once the recorder read its outcome), as `lifecycle` does.
    const load = (guid: string) =>
      TerminalOutcomeRecorder.catchUpFor({ mcc: merchantMcc, mccOf }, guid).pipe(
        Effect.zipRight(TransactionHistory.load(store, guid)),
        Effect.provideService(EventStore.EventStore, store),
        Effect.mapError(unavailable("event store"))
      )

    /** The amount the operator confirmed, in the transaction's currency, or the field that does not fit. */
    const confirmed = (state: TransactionHistory.State, input: Intake.ActOnTransaction) =>
      Effect.gen(function* () {
        const currency = state.amount.currency
        const invalid = (message: string) => Effect.fail(new Intake.InvalidRequest({ message }))
        if (input.currency !== undefined && input.currency !== currency) {
          return yield* invalid(
            `currency: ${input.currency} is not the currency of transaction ${state.guid} (${currency}); an action is made in its transaction's currency`
          )
        }
        if (input.amount === undefined) {
          if (amountRequired.has(input.action)) {
            return yield* invalid(
              `amount: a ${input.action} needs the amount, in major units with currency ${currency} (e.g. "${Money.toMajorUnitsString(state.amount)}")`
            )
          }
          return undefined
        }
        if (input.action === "release") {
          return yield* invalid("amount: a release undoes the whole hold; send no amount")
        }
        if (input.currency === undefined) {
          return yield* invalid(`currency: confirm the amount's currency (${currency}) with it`)
        }
        const parsed = Money.fromMajorUnitsString(input.amount, currency)
        if (Either.isLeft(parsed)) return yield* invalid(`amount: ${parsed.left.message}`)
        return parsed.right
      })

    /** The operation the action starts, under `requestId`: the same call any caller makes. */
    const started = (
      state: TransactionHistory.State,
      action: LifecycleEvent.OperatorAction,
      amount: Money.Money | undefined,
      requestId: string,
      waitSeconds: number | undefined
    ): {
      readonly workflow: string
      readonly start: Effect.Effect<Intake.ExecutionView, Intake.IntakeError>
    } => {
      const originalGuid = state.guid
      const lifecycle = (workflow: string, payload: Record<string, unknown>) => ({
        workflow,
        start: commands.lifecycle(workflow, {
          payload: { requestId, originalGuid, ...payload },
          ...(waitSeconds === undefined ? {} : { waitSeconds })
        })
      })
      const moto = state.kind === "moToSale" || state.kind === "moToRefund"
      switch (action) {
        case "refund": {
          if (moto || amount === undefined)
            return lifecycle("Moto.Refund", { amount: amount && minor(amount) })
          return {
            workflow: "TerminalOperation",
            start:
              state.serialNumber === undefined
                ? Effect.fail(
                    new Intake.InvalidRequest({
                      message: `transaction ${originalGuid} names no terminal: a refund of a terminal sale is made on its terminal`
                    })
                  )
                : commands.start({
                    idempotencyKey: requestId,
                    request: {
                      operation: "refund",
                      serial_number: state.serialNumber,
                      ...(state.terminalType === undefined ? {} : { terminal_type: state.terminalType }),
                      originalTransactionId: originalGuid,
                      amount: Money.toMinorUnitsString(amount),
                      currency: amount.currency
                    },
                    ...(state.transactionReference === undefined
                      ? {}
                      : { originalTransactionReference: state.transactionReference }),
                    ...(waitSeconds === undefined ? {} : { waitSeconds })
                  })
          }
        }
        case "reverse":
          return moto
            ? lifecycle("Moto.Reverse", {})
            : lifecycle("Reversal.Reverse", amount === undefined ? {} : { amount: minor(amount) })
        case "release":
          return lifecycle("Reversal.Reverse", {})
        case "capture":
          return lifecycle("PreAuthorization.Capture", { amount: amount && minor(amount) })
        case "increase":
          return lifecycle("PreAuthorization.Increase", { amount: amount && minor(amount) })
        case "tip":
          return lifecycle("TipAdjustment.Adjust", { tip: amount && minor(amount) })
      }
    }

    const act = (guid: string, input: Intake.ActOnTransaction, actor: Intake.Actor) =>
      Effect.gen(function* () {
        // Read, check, append at the version read: a lost race reads again and finds the winner's.
        for (let round = 0; ; round++) {
          const loaded = yield* load(guid)
          if (Option.isNone(loaded.state)) {
            return yield* new Intake.NotFound({ message: `no transaction ${guid} in the history` })
          }
          const state = loaded.state.value
          const amount = yield* confirmed(state, input)
          const requestId = yield* keyOf({
            action: input.action,
            guid,
            amount,
            currency: state.amount.currency,
            repeat: input.repeat ?? 1
          })
          const operation = started(state, input.action, amount, requestId, input.waitSeconds)
          const recorded = loaded.events.some(
            (e) => e.type === "OperatorActionRequested" && e.data.requestId === requestId
          )
          // Asked before: the same action, whatever the rules say of the state it left.
          if (recorded) return yield* operation.start
          const now = yield* DateTime.now
          const capabilities = yield* Effect.flatMap(MerchantKeys.currentMerchant, capabilitiesFor)
          const refusal = refusalOf(input.action, state, amount, requestId, now, capabilities)
          if (refusal !== undefined) return yield* refusal
          const encoded = yield* LifecycleEvent.registry
            .encodeAll([
              LifecycleEvent.OperatorActionRequested.make({
                requestId,
                at: now,
                action: input.action,
                operator: actor.name,
                via: actor.via,
                reason: input.reason.trim(),
                ...(amount === undefined ? {} : { amount }),
                workflow: operation.workflow
              })
            ])
            .pipe(Effect.orDie)
          const appended = yield* store
            .append(LifecycleEvent.transactionStream(guid), EventStore.exactVersion(loaded.version), encoded)
            .pipe(
              Effect.as(true),
              Effect.catchTag("ConcurrencyConflict", (conflict) =>
                round < 20 ? Effect.succeed(false) : Effect.fail(unavailable("event store")(conflict))
              ),
              Effect.mapError((error) =>
                error._tag === "Unavailable" ? error : unavailable("event store")(error)
              )
            )
          if (appended) return yield* operation.start
        }
      }).pipe(Effect.withSpan("Intake.act", { attributes: { "tillflow.action": input.action } }))

    return { act }
  })
