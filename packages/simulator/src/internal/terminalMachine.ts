/**
 * A terminal running an operation: it walks the operation's steps, each lasting its
 * timing, until the host answers (`hostAnswer`) or something ends it early — a stop
 * request or the cancel button at a stoppable step, a forced reboot, the 80 s card-input
 * limit, the 90 s host window, the cashier cancelling a duplicate payment. Then the
 * TransactionResult is built and handed to the delivery.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type { Json } from "./service.js"
import * as Triggers from "../Triggers.js"
import * as Gateway from "./gateway.js"
import * as HostAnswer from "./hostAnswer.js"
import { type Card, type Merchant, type RunningOp, type Step, stoppable, type Terminal } from "./model.js"
import { chargeOps, stepsOf, typeOf } from "./operations.js"
import * as Results from "./results.js"
import type { Shared } from "./shared.js"
import * as StatusHost from "./statusHost.js"
import type * as Validate from "./validate.js"

// A terminal gives up waiting for a card (and PIN) this long after receiving the operation.
const CARD_INPUT_LIMIT_MS = 80_000

/**
 * The stop rule, shared by `stopCurrentTransaction` and the cancel button: only at a
 * stoppable step (WaitingForCard, PinInput). False when nothing can be stopped now.
 */
export const requestStop = (terminal: Terminal): boolean => {
  const op = terminal.current
  if (op === undefined || op.step === undefined || !stoppable.has(op.step)) return false
  op.cancelRequested = true
  Deferred.unsafeDone(op.wake, Effect.void)
  return true
}

/** Waits out a step; a stop, the cancel button or a forced reboot cut it short. */
const waitStep = (
  shared: Shared,
  op: RunningOp,
  terminal: Terminal,
  step: Step
): Effect.Effect<"done" | "limit"> =>
  Effect.suspend(() => {
    const duration = shared.store.timingsOf(terminal)[step]
    const end = shared.now() + duration
    const limited = stoppable.has(step) ? Math.min(end, op.startedAt + CARD_INPUT_LIMIT_MS) : end
    return Effect.raceFirst(shared.clock.sleepUntil(limited), Deferred.await(op.wake)).pipe(
      Effect.map(() => (limited < end && shared.now() >= limited ? "limit" : "done"))
    )
  })

/** Runs an operation on a terminal, step by step, then delivers its result. */
export const run = (
  shared: Shared,
  terminal: Terminal,
  merchant: Merchant,
  op: RunningOp,
  req: Validate.TransactionRequest,
  reference: string | undefined,
  deliver: (result: Json) => Effect.Effect<void>
): Effect.Effect<void> =>
  Effect.gen(function* () {
    let card: Card = { ...terminal.card }
    let ending: HostAnswer.Ending | undefined
    const isCharge = chargeOps.has(req.operation)
    const timeoutPending =
      isCharge &&
      req.amount !== undefined &&
      Triggers.outcomeFor(req.amount, req.exponent ?? 2)._tag === "AcquirerTimeout"
    const guid = shared.store.ids.uuidV1()
    // Linked operations are logged under their original's reference.
    const logReference =
      reference ??
      (req.originalTransactionId === undefined
        ? undefined
        : Gateway.find(shared.store, merchant.id, req.originalTransactionId)?.reference)
    for (const step of stepsOf(req.operation)) {
      op.step = step
      if (step === "WaitingHostSend") {
        // The gateway learns of the operation here, or never (the 90 s window).
        if (!StatusHost.mayReachGateway(shared, op.startedAt)) {
          ending = HostAnswer.ended("FAILED", "InputTimeout", "The terminal did not reach the host in time")
          break
        }
        terminal.counters.processed++
        StatusHost.logInProgress(shared, {
          reference: logReference,
          guid,
          merchantId: merchant.id,
          type: typeOf[req.operation],
          startedAt: op.startedAt,
          amount: req.amount,
          currency: req.currency
        })
      }
      const waited =
        step === "WaitingHostReceive" && timeoutPending
          ? yield* Effect.raceFirst(
              shared.clock.sleep(shared.store.timingsOf(terminal).AcquirerTimeout),
              Deferred.await(op.wake)
            ).pipe(Effect.as("done" as const))
          : yield* waitStep(shared, op, terminal, step)
      if (op.cancelRequested && stoppable.has(step)) {
        ending = HostAnswer.ended("CANCELLED", "UserCancelled", "The operation was cancelled", card)
        break
      }
      if (op.aborted && (stoppable.has(step) || step !== "PrintingMerchantReceipt")) {
        ending = HostAnswer.ended("FAILED", "Rebooting", "The terminal rebooted during the operation", card)
        break
      }
      if (waited === "limit") {
        ending = HostAnswer.ended("FAILED", "InputTimeout", "No card was presented in time", card)
        break
      }
      if (step === "WaitingForCard") {
        card = { ...terminal.card }
        if (cashierCancelsDuplicate(shared, terminal, merchant, req, card)) {
          ending = HostAnswer.ended(
            "CANCELLED",
            "DuplicatePayment",
            "Duplicate payment cancelled at the terminal",
            card
          )
          break
        }
      }
      if (step === "WaitingHostReceive") {
        ending = HostAnswer.answer(shared, terminal, merchant, req, card, guid, logReference)
      }
    }
    if (ending === undefined) {
      ending = HostAnswer.answer(shared, terminal, merchant, req, card, guid, logReference)
    }
    const result = finish(shared, terminal, op, req, reference, ending, card)
    yield* deliver(result)
  }).pipe(Effect.withSpan("Simulator.runOperation", { attributes: { operation: req.operation } }))

/** The duplicate check prompts at the terminal, and the simulated cashier cancels. */
const cashierCancelsDuplicate = (
  shared: Shared,
  terminal: Terminal,
  merchant: Merchant,
  req: Validate.TransactionRequest,
  card: Card
): boolean => {
  const kind = req.operation === "refund" ? "refund" : "charge"
  return (
    req.duplicateCheck &&
    req.amount !== undefined &&
    (chargeOps.has(req.operation) || req.operation === "refund") &&
    Gateway.isDuplicate(
      shared.store,
      merchant.id,
      card,
      kind,
      req.amount,
      req.currency ?? "",
      shared.now()
    ) &&
    terminal.duplicateAnswer === "cancel"
  )
}

/** The operation has ended: the terminal is free again, and its result is built. */
const finish = (
  shared: Shared,
  terminal: Terminal,
  op: RunningOp,
  req: Validate.TransactionRequest,
  reference: string | undefined,
  ending: HostAnswer.Ending,
  card: Card
): Json => {
  const extra: Json = { ...ending.extra }
  if (req.operation === "pingDevice") {
    if (req.returnDeviceInfo) extra.deviceStatus = Results.deviceStatus(terminal, true)
  }
  if (req.operation === "cardPan" && card.whitelisted) extra.unMaskedPan = card.pan
  if (ending.finStatus === "CANCELLED") terminal.counters.cancelled++
  if (ending.finStatus === "FAILED") terminal.counters.failed++
  terminal.current = undefined
  Deferred.unsafeDone(op.done, Effect.void)
  shared.operationEnded()
  return Results.terminalResult({
    store: shared.store,
    terminal,
    request: req.raw,
    operation: req.operation,
    type: typeOf[req.operation],
    finStatus: ending.finStatus,
    statusMessage: ending.statusMessage,
    errorMessage: ending.errorMessage,
    completedAt: shared.now(),
    reference,
    txn: ending.txn,
    card: ending.card,
    extra
  })
}
