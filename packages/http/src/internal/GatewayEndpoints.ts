/**
 * The `TerminalCloud` operations the gateway answers without a terminal, on the terminal
 * host: follow-ups on an earlier transaction (tip adjustment, deferred token, reversal,
 * pre-authorisation increase and capture), MOTO and batches. Each may change something at
 * the gateway, so each is sent once.
 */
import {
  type Batch,
  Identifiers,
  type Moto,
  type PreAuthorization,
  type Reversal,
  type TerminalCloud,
  type TipAdjustment
} from "@tillflow/core"
import * as Effect from "effect/Effect"
import type { Call } from "./Call.js"
import type { Failure } from "./Failure.js"
import { segment, type TerminalHost } from "./Hosts.js"

type GatewayOperation =
  | "tipAdjustment"
  | "deferredToken"
  | "reversal"
  | "preAuthorizationIncrease"
  | "preAuthorizationCapture"
  | "motoSale"
  | "motoRefund"
  | "motoReversal"
  | "batchClose"
  | "batchSummary"
  | "batchDetail"

const original = (request: { readonly originalGuid: Identifiers.Guid }) => ({
  "tillflow.original_guid": request.originalGuid
})
const batch = (request: { readonly serialNumber: string; readonly batchNumber: string }) => ({
  "tillflow.serial_number": request.serialNumber,
  "tillflow.batch_number": request.batchNumber
})

/** The gateway operations over the terminal host's client. */
export const make = (
  terminal: TerminalHost,
  { once }: { readonly once: Call }
): Pick<TerminalCloud.Service, GatewayOperation> => {
  const guidCall = <A>(
    name: string,
    guid: Identifiers.Guid,
    call: (path: { readonly guid: Identifiers.Guid }) => Effect.Effect<A, Failure>
  ) =>
    Effect.annotateCurrentSpan({ "tillflow.endpoint": name, "tillflow.original_guid": guid }).pipe(
      // Percent-encoded for the path (a no-op for a guid that decoded): not checked again.
      Effect.andThen(
        once(
          name,
          call({ guid: segment((s) => Identifiers.Guid.make(s, { disableValidation: true }), guid) })
        )
      )
    )

  const tipAdjustment = Effect.fn("TerminalCloud.tipAdjustment")(function* (
    guid: Identifiers.Guid,
    body: TipAdjustment.TipAdjustment
  ) {
    return yield* guidCall("tipAdjustment", guid, (path) => terminal.tipAdjustment({ path, payload: body }))
  })

  // `GET /transactions/{guid}/token` is a GET but not a pure read: each call asks the
  // gateway to mint a token (a new cardTokenizationGuid and agreement for the card), so
  // a retry after a lost answer could leave two agreements. Sent once, like a POST; the
  // workflow decides whether to ask again.
  const deferredToken = Effect.fn("TerminalCloud.deferredToken")(function* (guid: Identifiers.Guid) {
    return yield* guidCall("deferredToken", guid, (path) => terminal.deferredToken({ path }))
  })

  const post = <I, A>(
    name: string,
    attributes: (request: NoInfer<I>) => Record<string, unknown>,
    call: (request: I) => Effect.Effect<A, Failure>
  ) =>
    Effect.fn(`TerminalCloud.${name}`)(function* (request: I) {
      yield* Effect.annotateCurrentSpan({ "tillflow.endpoint": name, ...attributes(request) })
      return yield* once(name, call(request))
    })

  return {
    tipAdjustment,
    deferredToken,
    reversal: post("reversal", original, (payload: Reversal.ReversalRequest) =>
      terminal.reversal({ payload })
    ),
    preAuthorizationIncrease: post(
      "preAuthorizationIncrease",
      original,
      (payload: PreAuthorization.PreAuthorizationIncreaseRequest) =>
        terminal.preAuthorizationIncrease({ payload })
    ),
    preAuthorizationCapture: post(
      "preAuthorizationCapture",
      original,
      (payload: PreAuthorization.PreAuthorizationCaptureRequest) =>
        terminal.preAuthorizationCapture({ payload })
    ),
    motoSale: post(
      "motoSale",
      (r: Moto.MotoSaleRequest) =>
        r.transactionReference === undefined
          ? {}
          : { "tillflow.transaction_reference": r.transactionReference },
      (payload: Moto.MotoSaleRequest) => terminal.motoSale({ payload })
    ),
    motoRefund: post("motoRefund", original, (payload: Moto.MotoRefundRequest) =>
      terminal.motoRefund({ payload })
    ),
    motoReversal: post("motoReversal", original, (payload: Moto.MotoReversalRequest) =>
      terminal.motoReversal({ payload })
    ),
    batchClose: post("batchClose", batch, (payload: Batch.BatchRequest) => terminal.batchClose({ payload })),
    batchSummary: post("batchSummary", batch, (payload: Batch.BatchRequest) =>
      terminal.batchSummary({ payload })
    ),
    batchDetail: post("batchDetail", batch, (payload: Batch.BatchDetailRequest) =>
      terminal.batchDetail({ payload })
    )
  }
}
