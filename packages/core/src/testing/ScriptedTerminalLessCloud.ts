/**
 * An in-memory `TerminalCloud` for tests of the terminal-less lifecycles: a small model of the
 * gateway's terminal-less endpoints and of the status endpoint, a log of every call, and
 * scripted faults (refuse the next call with an error, or answer 5xx after applying it or
 * without applying it). Responses and status rows are built as JSON and decoded with the
 * contract's schemas, as the HTTP client would. Terminal operations are not modelled.
 * Tests only: the simulator (`@tillflow/simulator`) is the full model of the service, and
 * `ScriptedTerminalCloud` scripts the terminal operations.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type * as Currency from "../model/Currency.js"
import { BatchDetailResponse, BatchSummaryResponse } from "../model/Batch.js"
import { DeferredTokenizationResponse } from "../model/DeferredTokenization.js"
import type * as Enumerations from "../model/Enumerations.js"
import * as Money from "../model/Money.js"
import { MotoResponse } from "../model/Moto.js"
import { PreAuthorizationResponse } from "../model/PreAuthorization.js"
import * as RemoteError from "../model/RemoteError.js"
import { ReversalResponse } from "../model/Reversal.js"
import * as TerminalCloud from "../model/TerminalCloud.js"
import { TipAdjustmentResponse } from "../model/TipAdjustment.js"
import { TransactionStatusResult } from "../model/TransactionResult.js"

/** The endpoints the double answers. */
export type Endpoint =
  | "preAuthorizationIncrease"
  | "preAuthorizationCapture"
  | "reversal"
  | "motoSale"
  | "motoRefund"
  | "motoReversal"
  | "tipAdjustment"
  | "deferredToken"
  | "transactionStatus"
  | "deviceCommand"
  | "batchClose"
  | "batchSummary"
  | "batchDetail"

/** What the next call to an endpoint does instead of answering normally. */
export type Fault =
  /** Fails with this error; nothing is applied. */
  | { readonly _tag: "Fail"; readonly error: RemoteError.RemoteError }
  /** Applies the request, then answers 503 (the response was lost). */
  | { readonly _tag: "AppliedThen503" }
  /** Answers 503 without applying anything. */
  | { readonly _tag: "NotApplied503" }

/** A transaction the gateway knows. */
export interface Txn {
  readonly guid: string
  readonly kind: string
  readonly currency: Currency.Currency
  /** Minor units. */
  amount: bigint
  readonly reference: string | undefined
  finStatus: string
  hold: bigint
  captured: bigint | undefined
  tip: bigint
  refunded: bigint
  reversed: bigint
  readonly originalGuid: string | undefined
  /** Rows of linked operations, reported by the status endpoint under the same reference. */
  readonly rows: Array<Record<string, unknown>>
}

/** One call, with the request as the port received it. */
export interface Call {
  readonly endpoint: Endpoint
  readonly request: unknown
}

/** What a test sets and reads. */
export interface Control {
  /** Adds a transaction the gateway knows (a pre-authorization, a sale …). */
  readonly seed: (txn: {
    readonly guid: string
    readonly kind: string
    readonly amount: Money.Money
    readonly reference?: string | undefined
    readonly originalGuid?: string | undefined
  }) => Effect.Effect<void>
  readonly txn: (guid: string) => Effect.Effect<Txn | undefined>
  /** Every call so far, in order. */
  readonly calls: Effect.Effect<ReadonlyArray<Call>>
  /** How many calls an endpoint received. */
  readonly count: (endpoint: Endpoint) => Effect.Effect<number>
  /** Scripts the next call of an endpoint (faults queue up). */
  readonly next: (endpoint: Endpoint, fault: Fault) => Effect.Effect<void>
  /** Every MOTO sale is answered with 3107 while set (an account that requires the CVV). */
  readonly requireSecurityCode: (required: boolean) => Effect.Effect<void>
  /** The body `batchSummary` and `batchDetail` answer with. */
  readonly batchAnswers: (answers: {
    readonly summary?: unknown
    readonly detail?: unknown
  }) => Effect.Effect<void>
}

/** The double's control handle. */
export class ScriptedControl extends Context.Tag("tillflow/ScriptedTerminalLessCloud/Control")<
  ScriptedControl,
  Control
>() {}

const decode = <A, I>(schema: Schema.Schema<A, I>) => Schema.decodeUnknownSync(schema)

/**
 * A status row's `type` as the service writes it: a value of the spec's `TransactionType`.
 * The spec has none for pre-authorizations: like the simulator, their rows (the hold, its
 * increases and its capture) say `SALE`, a MOTO one `MOTO_SALE`.
 */
const specTypes: Readonly<Record<string, Enumerations.TransactionType>> = {
  sale: "SALE",
  refund: "REFUND",
  preAuthorization: "SALE",
  preAuthorizationIncrease: "SALE",
  preAuthorizationCapture: "SALE",
  moToSale: "MOTO_SALE",
  moToPreAuthorization: "MOTO_SALE",
  moToRefund: "MOTO_REFUND"
}
const specType = (kind: string): Enumerations.TransactionType => specTypes[kind] ?? "UNDEFINED"

const gatewayError = (message: string) =>
  new RemoteError.GatewayRejected({
    message: `rejected by the gateway (400): ${message}`,
    status: 400,
    body: JSON.stringify({ error: { statusCode: 400, name: "BadRequestError", message } })
  })

const unknown503 = () =>
  new RemoteError.OutcomeUnknown({
    message: "the service answered 503: the outcome is unknown",
    reason: "ServerError",
    status: 503
  })

/** What the double knows and has been told, shared by its endpoint groups and its control. */
interface Gateway {
  readonly txns: Map<string, Txn>
  readonly calls: Ref.Ref<ReadonlyArray<Call>>
  readonly faults: Map<Endpoint, Array<Fault>>
  securityCodeRequired: boolean
  summary: unknown
  detail: unknown
  /** How many guids were handed out (the next one is derived from it). */
  counter: number
}

const newGuid = (gateway: Gateway) => {
  gateway.counter += 1
  return `00000000-0000-1000-8000-${gateway.counter.toString(16).padStart(12, "0")}`
}

const major = (money: bigint, currency: Currency.Currency) =>
  Money.toMajorUnitsString(Money.make(money, currency))

const parse = (text: string | undefined, currency: Currency.Currency): bigint => {
  if (text === undefined) return 0n
  const read = Money.fromMajorUnitsString(text, currency)
  return Either.isRight(read) ? read.right.minorUnits : 0n
}

const find = (gateway: Gateway, guid: string) =>
  gateway.txns.has(guid)
    ? Effect.succeed(gateway.txns.get(guid) as Txn)
    : Effect.fail(gatewayError(`Original transaction ${guid} not found`))

/** Logs the call, plays a scripted fault, else runs `apply`. */
const endpoint = <A>(
  gateway: Gateway,
  name: Endpoint,
  request: unknown,
  apply: Effect.Effect<A, RemoteError.RemoteError>
): Effect.Effect<A, RemoteError.RemoteError> =>
  Effect.gen(function* () {
    yield* Ref.update(gateway.calls, (all) => [...all, { endpoint: name, request }])
    const fault = gateway.faults.get(name)?.shift()
    if (fault === undefined) return yield* apply
    switch (fault._tag) {
      case "Fail":
        return yield* Effect.fail(fault.error)
      case "NotApplied503":
        return yield* Effect.fail(unknown503())
      case "AppliedThen503":
        yield* apply
        return yield* Effect.fail(unknown503())
    }
  })

/** A new authorised transaction, nothing held, captured, tipped, refunded or reversed yet. */
const authorised = (txn: {
  readonly guid: string
  readonly kind: string
  readonly currency: Currency.Currency
  readonly amount: bigint
  readonly reference: string | undefined
  readonly originalGuid: string | undefined
  readonly hold?: bigint
}): Txn => ({
  guid: txn.guid,
  kind: txn.kind,
  currency: txn.currency,
  amount: txn.amount,
  reference: txn.reference,
  finStatus: "AUTHORISED",
  hold: txn.hold ?? 0n,
  captured: undefined,
  tip: 0n,
  refunded: 0n,
  reversed: 0n,
  originalGuid: txn.originalGuid,
  rows: []
})

/** A linked transaction (a capture, a refund) the gateway knows by its own guid too. */
const child = (gateway: Gateway, original: Txn, guid: string, kind: string, amount: bigint) =>
  gateway.txns.set(
    guid,
    authorised({
      guid,
      kind,
      currency: original.currency,
      amount,
      reference: original.reference,
      originalGuid: original.guid
    })
  )

const addRow = (original: Txn, row: Record<string, unknown>) =>
  original.rows.push({ transactionReference: original.reference, ...row })

/** The status endpoint, and the terminal operations the double does not model. */
const statusEndpoints = (
  gateway: Gateway
): Pick<
  TerminalCloud.Service,
  "listDevices" | "sendTransaction" | "transactionResult" | "transactionStatus" | "deviceCommand"
> => ({
  listDevices: Effect.succeed([]),
  sendTransaction: () => Effect.die("ScriptedTerminalCloud does not model terminal operations"),
  transactionResult: () => Effect.die("ScriptedTerminalCloud does not model terminal operations"),
  transactionStatus: (reference, selector) =>
    endpoint(
      gateway,
      "transactionStatus",
      { reference, selector },
      Effect.suspend(() => {
        const first = [...gateway.txns.values()].find(
          (t) => t.reference === reference && t.originalGuid === undefined
        )
        if (first === undefined)
          return Effect.fail(new RemoteError.NotFound({ message: `not found: ${reference}`, body: "" }))
        const head = {
          transactionReference: reference,
          efttransactionID: first.guid,
          finStatus: first.finStatus,
          type: specType(first.kind),
          currency: first.currency,
          totalAmount: Number(first.amount),
          holdAmount: Number(first.hold),
          ...(first.captured === undefined ? {} : { capturedAmount: Number(first.captured) }),
          tipAmount: Number(first.tip)
        }
        const rows = [head, ...first.rows].map((row) => decode(TransactionStatusResult)(row))
        return Effect.succeed(selector === "all" ? rows : rows.slice(0, 1))
      })
    ),
  deviceCommand: (deviceType, serialNumber, command) =>
    endpoint(gateway, "deviceCommand", { deviceType, serialNumber, command }, Effect.void)
})

/** Tip adjustment, deferred tokenization and reversal of a known transaction. */
const transactionEndpoints = (
  gateway: Gateway
): Pick<TerminalCloud.Service, "tipAdjustment" | "deferredToken" | "reversal"> => ({
  tipAdjustment: (guid, body) =>
    endpoint(
      gateway,
      "tipAdjustment",
      { guid, body },
      Effect.gen(function* () {
        const sale = yield* find(gateway, guid)
        sale.tip = parse(body.amount, sale.currency)
        return decode(TipAdjustmentResponse)({ statusMessage: "Tip adjusted" })
      })
    ),
  deferredToken: (guid) =>
    endpoint(
      gateway,
      "deferredToken",
      { guid },
      Effect.gen(function* () {
        yield* find(gateway, guid)
        return decode(DeferredTokenizationResponse)({
          cardToken: `tok_${guid.slice(-6)}`,
          cardTokenizationGuid: newGuid(gateway),
          maskedCardNumber: "476173******0119",
          transactionReference: guid
        })
      })
    ),
  reversal: (request) =>
    endpoint(
      gateway,
      "reversal",
      request,
      Effect.gen(function* () {
        const original = yield* find(gateway, request.originalGuid)
        const guid = newGuid(gateway)
        if (original.kind.toLowerCase().includes("preauthorization")) {
          if (original.captured !== undefined) {
            original.captured = undefined
            original.finStatus = "AUTHORISED"
          } else {
            original.hold = 0n
            original.finStatus = "CANCELLED"
          }
        } else {
          const amount = request.amount?.minorUnits ?? original.amount - original.reversed
          original.reversed += amount
          if (original.reversed >= original.amount) original.finStatus = "CANCELLED"
        }
        addRow(original, { efttransactionID: guid, type: "CANCEL_TRX", finStatus: "AUTHORISED" })
        return decode(ReversalResponse)({
          transactionReference: original.guid,
          cardTokenizationGuid: guid
        })
      })
    )
})

/** Increase, decrease and capture of a pre-authorization's hold. */
const preAuthorizationEndpoints = (
  gateway: Gateway
): Pick<TerminalCloud.Service, "preAuthorizationIncrease" | "preAuthorizationCapture"> => ({
  preAuthorizationIncrease: (request) =>
    endpoint(
      gateway,
      "preAuthorizationIncrease",
      request,
      Effect.gen(function* () {
        const original = yield* find(gateway, request.originalGuid)
        const delta =
          parse(request.increaseAmount, original.currency) + parse(request.tipAmount, original.currency)
        original.hold = request.subtract === true ? original.hold - delta : original.hold + delta
        const guid = newGuid(gateway)
        addRow(original, {
          efttransactionID: guid,
          type: specType("preAuthorizationIncrease"),
          finStatus: "AUTHORISED"
        })
        return decode(PreAuthorizationResponse)({
          httpStatus: 200,
          preAuthorizationGuid: original.guid,
          preAuthorizationIncreaseGuid: guid,
          holdAmount: major(original.hold, original.currency),
          increaseAmount: major(delta, original.currency),
          currency: original.currency
        })
      })
    ),
  preAuthorizationCapture: (request) =>
    endpoint(
      gateway,
      "preAuthorizationCapture",
      request,
      Effect.gen(function* () {
        const original = yield* find(gateway, request.originalGuid)
        if (original.captured !== undefined) return yield* Effect.fail(gatewayError("already captured"))
        const total =
          parse(request.capturedAmount, original.currency) + parse(request.tipAmount, original.currency)
        original.captured = total
        original.finStatus = "CAPTURED"
        const guid = newGuid(gateway)
        child(gateway, original, guid, "preAuthorizationCapture", total)
        addRow(original, {
          efttransactionID: guid,
          type: specType("preAuthorizationCapture"),
          finStatus: "AUTHORISED"
        })
        return decode(PreAuthorizationResponse)({
          httpStatus: 200,
          preAuthorizationGuid: original.guid,
          preAuthorizationCaptureGuid: guid,
          capturedAmount: major(total, original.currency),
          currency: original.currency
        })
      })
    )
})

/** The 3107 answer of an account that requires the security code. */
const securityCodeRequired = () =>
  RemoteError.fromResponse(
    400,
    JSON.stringify({
      error: {
        statusCode: 400,
        name: "BadRequestError",
        message: "Security code required",
        code: "3107",
        details: { errorCode: "3107", description: "Security code required", httpStatus: "400" }
      }
    })
  )

/** MOTO sale, refund and reversal. */
const motoEndpoints = (
  gateway: Gateway
): Pick<TerminalCloud.Service, "motoSale" | "motoRefund" | "motoReversal"> => ({
  motoSale: (request) =>
    endpoint(
      gateway,
      "motoSale",
      request,
      Effect.gen(function* () {
        if (gateway.securityCodeRequired) return yield* Effect.fail(securityCodeRequired())
        const guid = newGuid(gateway)
        gateway.txns.set(
          guid,
          authorised({
            guid,
            kind: "moToSale",
            currency: request.amount.currency,
            amount: request.amount.minorUnits,
            reference: request.transactionReference,
            originalGuid: undefined
          })
        )
        return decode(MotoResponse)({
          guid,
          amount: Money.toMajorUnitsString(request.amount),
          currency: request.amount.currency,
          finStatus: "AUTHORISED",
          approvalCode: "123456",
          transactionReference: request.transactionReference
        })
      })
    ),
  motoRefund: (request) =>
    endpoint(
      gateway,
      "motoRefund",
      request,
      Effect.gen(function* () {
        const original = yield* find(gateway, request.originalGuid)
        if (request.amount.currency !== original.currency)
          return yield* Effect.fail(gatewayError("currency mismatch"))
        if (original.refunded + request.amount.minorUnits > original.amount)
          return yield* Effect.fail(gatewayError("refund above the original sale"))
        original.refunded += request.amount.minorUnits
        original.finStatus = "REFUNDED"
        const guid = newGuid(gateway)
        child(gateway, original, guid, "moToRefund", request.amount.minorUnits)
        addRow(original, {
          efttransactionID: guid,
          type: "MOTO_REFUND",
          finStatus: "AUTHORISED",
          totalAmount: Number(request.amount.minorUnits)
        })
        return decode(MotoResponse)({
          guid,
          originalGuid: original.guid,
          amount: Money.toMajorUnitsString(request.amount),
          currency: original.currency,
          approvalCode: "654321"
        })
      })
    ),
  motoReversal: (request) =>
    endpoint(
      gateway,
      "motoReversal",
      request,
      Effect.gen(function* () {
        const original = yield* find(gateway, request.originalGuid)
        original.reversed = original.amount
        original.finStatus = "CANCELLED"
        const guid = newGuid(gateway)
        addRow(original, { efttransactionID: guid, type: "MOTO_REVERSAL", finStatus: "AUTHORISED" })
        return decode(MotoResponse)({ guid, originalGuid: original.guid })
      })
    )
})

/** Batch close, and the summary and detail a test set (`batchAnswers`). */
const batchEndpoints = (
  gateway: Gateway
): Pick<TerminalCloud.Service, "batchClose" | "batchSummary" | "batchDetail"> => ({
  batchClose: (request) =>
    endpoint(
      gateway,
      "batchClose",
      request,
      Effect.succeed({ batchNumber: request.batchNumber, batchStatus: "CLOSED" })
    ),
  batchSummary: (request) =>
    endpoint(
      gateway,
      "batchSummary",
      request,
      Effect.sync(() => decode(BatchSummaryResponse)(gateway.summary))
    ),
  batchDetail: (request) =>
    endpoint(
      gateway,
      "batchDetail",
      request,
      Effect.sync(() => decode(BatchDetailResponse)(gateway.detail))
    )
})

/** What a test sets and reads of the double. */
const controlOf = (gateway: Gateway): Control => ({
  seed: (txn) =>
    Effect.sync(() => {
      const preAuth = txn.kind.toLowerCase().includes("preauthorization")
      gateway.txns.set(
        txn.guid,
        authorised({
          guid: txn.guid,
          kind: txn.kind,
          currency: txn.amount.currency,
          amount: txn.amount.minorUnits,
          reference: txn.reference,
          originalGuid: txn.originalGuid,
          hold: preAuth ? txn.amount.minorUnits : 0n
        })
      )
    }),
  txn: (guid) => Effect.sync(() => gateway.txns.get(guid)),
  calls: Ref.get(gateway.calls),
  count: (name) => Effect.map(Ref.get(gateway.calls), (all) => all.filter((c) => c.endpoint === name).length),
  next: (name, fault) =>
    Effect.sync(() => {
      const queue = gateway.faults.get(name) ?? []
      queue.push(fault)
      gateway.faults.set(name, queue)
    }),
  requireSecurityCode: (required) =>
    Effect.sync(() => {
      gateway.securityCodeRequired = required
    }),
  batchAnswers: (answers) =>
    Effect.sync(() => {
      if (answers.summary !== undefined) gateway.summary = answers.summary
      if (answers.detail !== undefined) gateway.detail = answers.detail
    })
})

/** Builds the double and its control. */
export const make: Effect.Effect<{ readonly service: TerminalCloud.Service; readonly control: Control }> =
  Effect.gen(function* () {
    const gateway: Gateway = {
      txns: new Map(),
      calls: yield* Ref.make<ReadonlyArray<Call>>([]),
      faults: new Map(),
      securityCodeRequired: false,
      summary: {},
      detail: {},
      counter: 0
    }
    const service: TerminalCloud.Service = {
      ...statusEndpoints(gateway),
      ...transactionEndpoints(gateway),
      ...preAuthorizationEndpoints(gateway),
      ...motoEndpoints(gateway),
      ...batchEndpoints(gateway)
    }
    return { service, control: controlOf(gateway) }
  })

/** The double as the `TerminalCloud`, with its `ScriptedControl`. */
export const layer: Layer.Layer<TerminalCloud.TerminalCloud | ScriptedControl> = Layer.effectContext(
  Effect.map(make, ({ control, service }) =>
    Context.make(TerminalCloud.TerminalCloud, service).pipe(Context.add(ScriptedControl, control))
  )
)
