/**
 * The port through which the rest of tillflow talks to the remote service: one method per
 * endpoint, typed inputs (the strict request types) and outputs, errors from
 * `RemoteError`. The HTTP adapter implements it over `RemoteApi`; tests may implement it
 * directly. Polling a result never fails on 204/404: it answers a `ResultOutcome`.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Accepted } from "./Accepted.js"
import type { BatchDetailRequest, BatchDetailResponse, BatchRequest, BatchSummaryResponse } from "./Batch.js"
import type { DeferredTokenizationResponse } from "./DeferredTokenization.js"
import type { Device } from "./Device.js"
import type { DeviceCommand } from "./DeviceCommand.js"
import type * as Identifiers from "./Identifiers.js"
import type { MotoRefundRequest, MotoResponse, MotoReversalRequest, MotoSaleRequest } from "./Moto.js"
import type {
  PreAuthorizationCaptureRequest,
  PreAuthorizationIncreaseRequest,
  PreAuthorizationResponse
} from "./PreAuthorization.js"
import type { StatusSelector } from "./RemoteApi.js"
import type { RemoteError } from "./RemoteError.js"
import type { ReversalRequest, ReversalResponse } from "./Reversal.js"
import type { TipAdjustment, TipAdjustmentResponse } from "./TipAdjustment.js"
import type { TransactionRequest } from "./TransactionRequest.js"
import { TransactionResult, type TransactionStatusResult } from "./TransactionResult.js"

/** 204: the id is known, the result is not there yet. Ask again. */
export class Pending extends Schema.TaggedClass<Pending>()("Pending", {}) {}

/** 200: the result. */
export class Ready extends Schema.TaggedClass<Ready>()("Ready", { result: TransactionResult }) {}

/** 404: the id is unknown to the service (expired, or never existed). Reconcile. */
export class Unknown extends Schema.TaggedClass<Unknown>()("Unknown", { message: Schema.String }) {}

/** The outcome of polling `GET /transaction-result/{id}`. */
export const ResultOutcome = Schema.Union(Pending, Ready, Unknown)
/** @see ResultOutcome */
export type ResultOutcome = typeof ResultOutcome.Type

/** The operations of the remote service. */
export interface Service {
  /** `GET /devices`. */
  readonly listDevices: Effect.Effect<ReadonlyArray<Device>, RemoteError>
  /** `POST /transactions`: 202 Accepted, or DeviceBusy/DeviceOffline/CancelNotAllowed … */
  readonly sendTransaction: (request: TransactionRequest) => Effect.Effect<Accepted, RemoteError>
  /** `GET /transaction-result/{id}`: Pending (204), Ready (200) or Unknown (404). */
  readonly transactionResult: (
    id: Identifiers.TransactionResultId
  ) => Effect.Effect<ResultOutcome, RemoteError>
  /**
   * `GET {transactions_url}/transactions/{reference}/status[/{selector}]`, always as a
   * list (one element unless the selector is `all`). 404 fails with `NotFound`.
   */
  readonly transactionStatus: (
    reference: Identifiers.TransactionReference,
    selector?: StatusSelector
  ) => Effect.Effect<ReadonlyArray<TransactionStatusResult>, RemoteError>
  /** `POST /devices/{deviceType}/{serialNumber}/{command}`: 202 with no body. */
  readonly deviceCommand: (
    deviceType: Identifiers.TerminalType,
    serialNumber: Identifiers.SerialNumber,
    command: DeviceCommand
  ) => Effect.Effect<void, RemoteError>
  /** `POST /transactions/{guid}/tip-adjustment`. */
  readonly tipAdjustment: (
    guid: Identifiers.Guid,
    body: TipAdjustment
  ) => Effect.Effect<TipAdjustmentResponse, RemoteError>
  /** `GET /transactions/{guid}/token`. */
  readonly deferredToken: (guid: Identifiers.Guid) => Effect.Effect<DeferredTokenizationResponse, RemoteError>
  /** `POST /reversal`. */
  readonly reversal: (request: ReversalRequest) => Effect.Effect<ReversalResponse, RemoteError>
  /** `POST /preauthorization/increase`. */
  readonly preAuthorizationIncrease: (
    request: PreAuthorizationIncreaseRequest
  ) => Effect.Effect<PreAuthorizationResponse, RemoteError>
  /** `POST /preauthorization/capture`. */
  readonly preAuthorizationCapture: (
    request: PreAuthorizationCaptureRequest
  ) => Effect.Effect<PreAuthorizationResponse, RemoteError>
  /** `POST /moto/sale`. */
  readonly motoSale: (request: MotoSaleRequest) => Effect.Effect<MotoResponse, RemoteError>
  /** `POST /moto/refund`. */
  readonly motoRefund: (request: MotoRefundRequest) => Effect.Effect<MotoResponse, RemoteError>
  /** `POST /moto/reversal`. */
  readonly motoReversal: (request: MotoReversalRequest) => Effect.Effect<MotoResponse, RemoteError>
  /** `POST /batch/close` (answer not shown in the spec: kept as is). */
  readonly batchClose: (request: BatchRequest) => Effect.Effect<unknown, RemoteError>
  /** `POST /batch/summary`. */
  readonly batchSummary: (request: BatchRequest) => Effect.Effect<BatchSummaryResponse, RemoteError>
  /** `POST /batch/detail`. */
  readonly batchDetail: (request: BatchDetailRequest) => Effect.Effect<BatchDetailResponse, RemoteError>
}

/** The remote service, as a port. */
export class TerminalCloud extends Context.Tag("tillflow/TerminalCloud")<TerminalCloud, Service>() {}
