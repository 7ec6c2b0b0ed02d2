/**
 * A `TerminalCloud` for unit tests of the payment protocol: a small, scripted model of the
 * service. Each POST of an operation consumes the next script, which says what the POST
 * answers (202, 1001, 403, a 5xx …), whether the terminal processed it anyway, what its
 * result is and how long it takes. Results are then served the way the service serves
 * them — polled (204 until ready, then 200), delivered to the callback address with the
 * request's token, and listed by the status endpoint (IN_PROGRESS until ready, 404 for
 * what never reached the gateway) — on Effect's clock, so `TestClock` drives it. A second
 * operation while one is in flight on the same terminal gets 1001, and a stop cancels a
 * stoppable operation (else 1003), as on a real terminal. Every call is recorded.
 *
 * The simulator (`@tillflow/simulator`) is the full model; this one is small enough to
 * script each branch of the protocol exactly.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { Accepted } from "../model/Accepted.js"
import * as Identifiers from "../model/Identifiers.js"
import * as Money from "../model/Money.js"
import type { StatusSelector } from "../model/RemoteApi.js"
import * as RemoteError from "../model/RemoteError.js"
import * as TerminalCloud from "../model/TerminalCloud.js"
import * as TransactionRequest from "../model/TransactionRequest.js"
import { TransactionResult, TransactionStatusResult } from "../model/TransactionResult.js"

/** What one POST of an operation does. */
export interface Script {
  /** What the POST answers: 202 (default) or an error. */
  readonly answer?: "accept" | RemoteError.RemoteError | undefined
  /** Whether the terminal processed it (default: when accepted). A 5xx with `processed` is a dropped response. */
  readonly processed?: boolean | undefined
  /** Fields of the result (JSON form) over the defaults (AUTHORISED, the amount, a masked card). */
  readonly result?: Record<string, unknown> | undefined
  /** How long until the result is ready (default 5 s). */
  readonly takes?: Duration.DurationInput | undefined
  /** Fields the status endpoint shows over the result (e.g. the final status of an UNDEFINED result). */
  readonly statusResult?: Record<string, unknown> | undefined
  /** Status answers still IN_PROGRESS after the result is ready. */
  readonly inProgressChecks?: number | undefined
  /** Deliver the result to the callback address (default: when the request has one). */
  readonly deliver?: boolean | undefined
  /** When the first delivery to the callback happens after the result is ready (default 0). */
  readonly deliveryDelay?: Duration.DurationInput | undefined
  /** How many times the result is delivered (the recovery loop resends it; default 1). */
  readonly deliveries?: number | undefined
  /** Whether a stop is accepted while this operation is in flight (default false: 1003). */
  readonly stoppable?: boolean | undefined
  /** For a linked operation: the original's reference, under which its entry is listed. */
  readonly underReference?: string | undefined
  /** The POST never answers (a worker killed while waiting for it); the terminal processed it. */
  readonly hang?: boolean | undefined
  /** The polled result id is forgotten (404) after this many polls. */
  readonly forgetAfterPolls?: number | undefined
}

/** A result delivery to a callback address. */
export interface Delivery {
  readonly callbackUrl: string
  readonly token: string
  readonly body: Record<string, unknown>
  readonly recovered: boolean
}

/** One transaction as the model holds it. */
interface Txn {
  readonly request: TransactionRequest.TransactionRequest
  readonly script: Script
  readonly resultId: string
  readonly sentAt: number
  readyAt: number
  result: Record<string, unknown>
  processed: boolean
  polls: number
  statusChecks: number
}

/** What the model recorded. */
export interface Recorded {
  readonly sends: Array<{ readonly request: TransactionRequest.TransactionRequest; readonly at: number }>
  readonly polls: Array<{ readonly id: string; readonly at: number }>
  readonly statusQueries: Array<{
    readonly reference: string
    readonly selector: string
    readonly at: number
  }>
  readonly deliveries: Array<Delivery & { readonly at: number }>
  /** Operations the terminal processed (a charge for financial ones). */
  readonly processed: Array<TransactionRequest.TransactionRequest>
  /** 1001 answers given because the terminal was busy with another operation. */
  busyAnswers: number
}

/** The double: the service, what it recorded, and controls. */
export interface Handle {
  readonly service: TerminalCloud.Service
  readonly recorded: Recorded
  /** Adds scripts for the next POSTs. */
  readonly script: (...scripts: ReadonlyArray<Script>) => void
  /** Lists an entry under a reference of the status endpoint (e.g. an original sale). */
  readonly seedStatus: (reference: string, entry: Record<string, unknown>) => void
}

/** Options of the double. */
export interface Options<R> {
  readonly scripts?: ReadonlyArray<Script> | undefined
  /** Called for each delivery to a callback address (the receiver, in a test). */
  readonly deliver?: ((delivery: Delivery) => Effect.Effect<void, never, R>) | undefined
}

/**
 * A body the model serves, read as the HTTP adapter reads it: one that does not decode is
 * an `OutcomeUnknown` of reason `UndecodableResponse` carrying the body, as over the wire.
 */
const decodeAnswer =
  <A, I>(schema: Schema.Schema<A, I>) =>
  (body: Record<string, unknown>): Effect.Effect<A, RemoteError.OutcomeUnknown> =>
    Effect.mapError(
      Schema.decodeUnknown(schema)(body),
      (error) =>
        new RemoteError.OutcomeUnknown({
          message: `the answer (200) could not be decoded: ${error.message}`,
          reason: "UndecodableResponse",
          status: 200,
          body: JSON.stringify(body)
        })
    )
const decodeResult = decodeAnswer(TransactionResult)
const decodeStatus = decodeAnswer(TransactionStatusResult)

const defaultResult = (request: TransactionRequest.TransactionRequest, txn: { resultId: string }) => {
  const amount = "amount" in request && request.amount instanceof Money.Money ? request.amount : undefined
  const reference = Option.getOrUndefined(TransactionRequest.transactionReference(request))
  return {
    finStatus: TransactionRequest.isFinancial(request) ? "AUTHORISED" : "PROCESSED",
    statusMessage: "Transaction approved",
    ...(amount === undefined
      ? {}
      : {
          requestedAmount: amount.minorUnits.toString(),
          totalAmount: amount.minorUnits.toString(),
          currency: amount.currency
        }),
    maskedCardNumber: "411111******1111",
    cardSchemeName: "Visa",
    authorisationCode: "A1B2C3",
    efttransactionID: `eft-${txn.resultId}`,
    transactionID: `eft-${txn.resultId}`,
    ...(reference === undefined ? {} : { transactionReference: reference }),
    ...("originalTransactionId" in request ? { originalEFTTransactionID: request.originalTransactionId } : {})
  }
}

/** Builds the double. It forks its delivery fibers in the scope. */
export const make = <R = never>(options: Options<R> = {}): Effect.Effect<Handle, never, Scope.Scope | R> =>
  Effect.gen(function* () {
    const context = yield* Effect.context<R>()
    const scope = yield* Effect.scope
    const scripts: Array<Script> = [...(options.scripts ?? [])]
    const txns: Array<Txn> = []
    const byResultId = new Map<string, Txn>()
    const seeded = new Map<string, Array<Record<string, unknown>>>()
    const recorded: Recorded = {
      sends: [],
      polls: [],
      statusQueries: [],
      deliveries: [],
      processed: [],
      busyAnswers: 0
    }
    let counter = 0

    const inFlight = (serial: string, at: number): Txn | undefined =>
      txns.find((t) => t.processed && t.request.serialNumber === serial && at < t.readyAt)

    const deliverResult = (txn: Txn, callbackUrl: string, token: string) =>
      Effect.gen(function* () {
        const deliveries = Math.max(1, txn.script.deliveries ?? 1)
        const readyIn = txn.readyAt - (yield* Clock.currentTimeMillis)
        yield* Effect.sleep(Duration.millis(Math.max(0, readyIn)))
        yield* Effect.sleep(txn.script.deliveryDelay ?? Duration.zero)
        for (let i = 0; i < deliveries; i++) {
          if (i > 0) yield* Effect.sleep("5 seconds")
          const delivery: Delivery = {
            callbackUrl,
            token,
            body: { ...txn.result, ...(i > 0 ? { recoveredTransaction: true } : {}) },
            recovered: i > 0
          }
          const at = yield* Clock.currentTimeMillis
          recorded.deliveries.push({ ...delivery, at })
          if (options.deliver !== undefined) {
            yield* Effect.provide(options.deliver(delivery), context)
          }
        }
      })

    const sendTransaction = (request: TransactionRequest.TransactionRequest) =>
      Effect.gen(function* () {
        const at = yield* Clock.currentTimeMillis
        recorded.sends.push({ request, at })
        if (request.operation === "stopCurrentTransaction") {
          const current = inFlight(request.serialNumber, at)
          if (current === undefined || current.script.stoppable !== true) {
            return yield* new RemoteError.CancelNotAllowed({
              message: "the operation cannot be stopped at its present step",
              body: ""
            })
          }
          current.result = { ...current.result, finStatus: "CANCELLED", statusMessage: "Cancelled" }
          current.readyAt = at + 1_000
          const stopped: Accepted = { statusMessage: "stop accepted" }
          return stopped
        }
        const script = scripts.shift() ?? {}
        if (script.answer === undefined && inFlight(request.serialNumber, at) !== undefined) {
          recorded.busyAnswers++
          return yield* new RemoteError.DeviceBusy({ message: "terminal busy", body: "" })
        }
        const answer = script.answer ?? "accept"
        const processed = script.processed ?? answer === "accept"
        const resultId = `${request.serialNumber}-${at}-${++counter}`
        const txn: Txn = {
          request,
          script,
          resultId,
          sentAt: at,
          readyAt: at + Duration.toMillis(Duration.decode(script.takes ?? "5 seconds")),
          result: {},
          processed,
          polls: 0,
          statusChecks: 0
        }
        txn.result = { ...defaultResult(request, txn), ...script.result }
        if (processed) {
          txns.push(txn)
          byResultId.set(resultId, txn)
          recorded.processed.push(request)
          const delivery = "delivery" in request ? request.delivery : undefined
          if (delivery !== undefined && script.deliver !== false) {
            yield* Effect.forkIn(
              deliverResult(txn, delivery.callbackUrl, Redacted.value(delivery.token)),
              scope
            )
          }
        }
        if (script.hang === true) return yield* Effect.never
        if (answer !== "accept") return yield* Effect.fail(answer)
        const reference = Option.getOrUndefined(TransactionRequest.transactionReference(request))
        const accepted: Accepted = {
          statusMessage: "accepted",
          transactionReference: reference ?? "00000000-0000-0000-0000-000000000000",
          ...("delivery" in request && request.delivery !== undefined
            ? {}
            : { transactionResultId: Identifiers.TransactionResultId.make(resultId) })
        }
        return accepted
      })

    const transactionResult = (id: Identifiers.TransactionResultId) =>
      Effect.gen(function* () {
        const at = yield* Clock.currentTimeMillis
        recorded.polls.push({ id, at })
        const txn = byResultId.get(id)
        if (txn === undefined) return new TerminalCloud.Unknown({ message: "unknown id" })
        txn.polls++
        if (txn.script.forgetAfterPolls !== undefined && txn.polls > txn.script.forgetAfterPolls) {
          return new TerminalCloud.Unknown({ message: "expired" })
        }
        if (at < txn.readyAt) return new TerminalCloud.Pending()
        return new TerminalCloud.Ready({ result: yield* decodeResult(txn.result) })
      })

    const statusEntry = (txn: Txn, at: number): Record<string, unknown> => {
      const { efttimestamp: _terminalClock, ...rest } = txn.result
      if (at < txn.readyAt || txn.statusChecks <= (txn.script.inProgressChecks ?? 0)) {
        return { ...rest, finStatus: "IN_PROGRESS" }
      }
      return { ...rest, ...txn.script.statusResult }
    }

    const transactionStatus = (reference: Identifiers.TransactionReference, selector?: StatusSelector) =>
      Effect.gen(function* () {
        const at = yield* Clock.currentTimeMillis
        recorded.statusQueries.push({ reference, selector: String(selector ?? "first"), at })
        const own = txns.filter(
          (t) =>
            Option.getOrUndefined(TransactionRequest.transactionReference(t.request)) === reference ||
            t.script.underReference === reference
        )
        for (const t of own) t.statusChecks++
        const entries = [...(seeded.get(reference) ?? []), ...own.map((t) => statusEntry(t, at))]
        if (entries.length === 0) {
          return yield* new RemoteError.NotFound({ message: "reference not found", body: "" })
        }
        const chosen =
          selector === "all" ? entries : selector === "last" ? entries.slice(-1) : entries.slice(0, 1)
        return yield* Effect.forEach(chosen, decodeStatus)
      })

    const unsupported = (what: string) => Effect.dieMessage(`ScriptedTerminalCloud: ${what} is not scripted`)

    const service: TerminalCloud.Service = {
      listDevices: Effect.succeed([]),
      sendTransaction,
      transactionResult,
      transactionStatus,
      deviceCommand: () => unsupported("deviceCommand"),
      tipAdjustment: () => unsupported("tipAdjustment"),
      deferredToken: () => unsupported("deferredToken"),
      reversal: () => unsupported("reversal"),
      preAuthorizationIncrease: () => unsupported("preAuthorizationIncrease"),
      preAuthorizationCapture: () => unsupported("preAuthorizationCapture"),
      motoSale: () => unsupported("motoSale"),
      motoRefund: () => unsupported("motoRefund"),
      motoReversal: () => unsupported("motoReversal"),
      batchClose: () => unsupported("batchClose"),
      batchSummary: () => unsupported("batchSummary"),
      batchDetail: () => unsupported("batchDetail")
    }

    return {
      service,
      recorded,
      script: (...more) => void scripts.push(...more),
      seedStatus: (reference, entry) => {
        const list = seeded.get(reference) ?? []
        list.push(entry)
        seeded.set(reference, list)
      }
    }
  })
