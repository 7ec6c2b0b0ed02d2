/**
 * The Promise API: `createTillflow(options)` builds the library's layers once (one
 * `ManagedRuntime`, composed as the worker composes them) and answers a `Tillflow` whose
 * methods start operations through the local intake and await them. It is a shell: every
 * decision (idempotency, the payment protocol, the lifecycle rules, reconciliation) is the
 * Effect API's, and so are the results and errors, made plain objects and error classes.
 *
 * @example
 * import { createTillflow, DeviceBusy } from "@tillflow/node"
 *
 * const tf = await createTillflow() // embedded store + built-in simulator
 * const [terminal] = await tf.devices()
 * const sale = await tf.sale(
 *   { serialNumber: terminal.serialNumber, amount: { amount: "10.50", currency: "EUR" } },
 *   { idempotencyKey: "order-42" }
 * )
 * console.log(sale.outcome) // "approved"
 * await tf.close()
 */
import { Intake } from "@tillflow/intake"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { Stack } from "@tillflow/intake"
import * as Errors from "./Errors.js"
import * as CallbackHandler from "./internal/CallbackHandler.js"
import { fromCause } from "./internal/Failures.js"
import * as Plain from "./internal/Plain.js"
import { payloadOf, requestOf } from "./internal/Requests.js"
import * as Services from "./internal/Services.js"
import * as Shapes from "./internal/Shapes.js"
import * as TillflowOptions from "./TillflowOptions.js"
import { type Progress, TillflowOperation } from "./TillflowOperation.js"
import type * as Types from "./Types.js"

/** The runtime of an instance, for Effect code that shares it (`tf.runtime.runPromise(…)`). */
export type Runtime = ManagedRuntime.ManagedRuntime<Services.Services, Stack.StartupError>

/** How often a followed operation is read again. */
const followEveryMillis = 200

const sleep = (millis: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(done, millis)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener("abort", done)
      resolve()
    }
    signal.addEventListener("abort", done, { once: true })
  })

/**
 * A tillflow instance: terminal operations, terminal-less operations, devices, status,
 * audit, the callback handler, and `close()`. Made by `createTillflow`.
 */
export class Tillflow {
  /** The runtime every call runs on: for Effect code that calls the library beside this API. */
  readonly runtime: Runtime
  /** What this instance runs on. */
  readonly info: Types.InstanceInfo
  /**
   * The callback receiver as a `node:http` handler, for the host's server: mount it at the
   * path of `callbacks.baseUrl`, before any body parser.
   *
   * @example
   * app.post("/callbacks/:attemptId", tf.callbackHandler) // Express
   * http.createServer((req, res) => req.url?.startsWith("/callbacks/") ? tf.callbackHandler(req, res) : …)
   */
  readonly callbackHandler: CallbackHandler.NodeHandler
  /** The audit: an operation's story, the ledger, the hash chains. */
  readonly audit: Types.Audit

  private readonly lifetime = new AbortController()
  private closing: Promise<void> | undefined

  /** @internal Use `createTillflow`. */
  constructor(runtime: Runtime, info: Types.InstanceInfo, handler: CallbackHandler.NodeHandler) {
    this.runtime = runtime
    this.info = info
    this.callbackHandler = CallbackHandler.mountable(handler)
    this.audit = {
      timeline: (reference) => this.call((intake) => intake.timeline(reference)),
      ledger: (options = {}) =>
        this.call((intake) =>
          Effect.map(
            intake.ledger({ source: options.source ?? "replay", from: options.from }),
            Shapes.ledgerJson
          )
        ),
      entries: (options = {}) => this.call((intake) => intake.entries(options.from, options.limit ?? 100)),
      verify: (streamId) => this.call((intake) => intake.verify(streamId)),
      rebuild: () => this.call((intake) => intake.rebuild)
    }
  }

  // -------------------------------------------------------------------------------------
  // Running

  private async call<A>(body: (intake: Intake.Service) => Effect.Effect<A, Intake.IntakeError>): Promise<A> {
    if (this.lifetime.signal.aborted) throw new Errors.Closed("Closed", "this tillflow instance is closed")
    const exit = await this.runtime.runPromiseExit(Effect.flatMap(Intake.Intake, body), {
      signal: this.lifetime.signal
    })
    if (Exit.isSuccess(exit)) return exit.value
    throw fromCause(exit.cause)
  }

  /** Starts an execution, follows it (reporting its progress) and settles it. */
  private follow(
    start: (intake: Intake.Service) => Effect.Effect<Intake.ExecutionView, Intake.IntakeError>
  ): TillflowOperation<Record<string, unknown>> {
    return new TillflowOperation(async (reporter) => {
      let view = Shapes.viewJson(await this.call(start))
      reporter.started(view.executionId)
      let last = ""
      while (!Shapes.isFinished(view)) {
        if (view.progress !== undefined) {
          const progress: Progress = { ...view.progress, status: view.status }
          const key = JSON.stringify(progress)
          if (key !== last) {
            last = key
            reporter.progress(progress)
          }
        }
        await sleep(followEveryMillis, this.lifetime.signal)
        const id = view.executionId
        view = Shapes.viewJson(await this.call((intake) => intake.execution(id, 0)))
      }
      return Shapes.settle(view)
    })
  }

  private key(options: Types.RequestOptions | undefined, prefix: string): string {
    return options?.idempotencyKey ?? `${prefix}-${globalThis.crypto.randomUUID()}`
  }

  /** Any terminal operation by the service's name (`sale`, `moToRefund` …), with its spec fields. */
  terminalOperation(
    operation: string,
    input: Types.TerminalInput,
    options?: Types.RequestOptions
  ): TillflowOperation<Types.OperationResult> {
    const idempotencyKey = this.key(options, "node")
    return this.follow((intake) =>
      Effect.suspend(() => {
        const request = requestOf(operation, input)
        return intake.start({
          idempotencyKey,
          request,
          ...(options?.delivery === undefined ? {} : { delivery: options.delivery }),
          ...(options?.deadlineSeconds === undefined ? {} : { deadlineSeconds: options.deadlineSeconds }),
          ...(options?.retryNotCharged === undefined ? {} : { retryNotCharged: options.retryNotCharged }),
          ...(options?.originalTransactionReference === undefined
            ? {}
            : { originalTransactionReference: options.originalTransactionReference }),
          waitSeconds: 0
        })
      })
    ) as TillflowOperation<Types.OperationResult>
  }

  /** Any terminal-less workflow by name (`TipAdjustment.Adjust` …), its payload's amounts in major units. */
  lifecycle(
    workflow: string,
    payload: Readonly<Record<string, unknown>>,
    options?: Types.RequestOptions
  ): TillflowOperation<Types.LifecycleResult> {
    const requestId = this.key(options, "node")
    return this.follow((intake) =>
      Effect.suspend(() =>
        intake.lifecycle(workflow, { payload: { ...payloadOf(payload), requestId }, waitSeconds: 0 })
      )
    ) as TillflowOperation<Types.LifecycleResult>
  }

  // -------------------------------------------------------------------------------------
  // Terminal operations

  /**
   * A card payment on a terminal.
   *
   * @example
   * const op = tf.sale({ serialNumber: "0821032398", amount: { amount: "10.50", currency: "EUR" } }, { idempotencyKey: "order-42" })
   * for await (const p of op.progress) console.log(p.waitingFor)
   * const { outcome, totalAmount } = await op
   */
  sale(input: Types.AmountInput, options?: Types.RequestOptions) {
    return this.terminalOperation("sale", input, options)
  }
  /** A card payment that also returns a card token. */
  saleAndTokenizeCard(input: Types.AmountInput, options?: Types.RequestOptions) {
    return this.terminalOperation("saleAndTokenizeCard", input, options)
  }
  /** A refund: unlinked, or linked to its sale with `originalTransactionId`. */
  refund(input: Types.AmountInput, options?: Types.RequestOptions) {
    return this.terminalOperation("refund", input, options)
  }
  /** Reverses a sale through the terminal (`originalTransactionId`). */
  saleReversal(input: Types.LinkedInput, options?: Types.RequestOptions) {
    return this.terminalOperation("saleReversal", input, options)
  }
  /** Reverses a refund through the terminal (`originalTransactionId`). */
  refundReversal(input: Types.LinkedInput, options?: Types.RequestOptions) {
    return this.terminalOperation("refundReversal", input, options)
  }
  /** Opens a pre-authorization (a hold) on a terminal. */
  preAuthorization(input: Types.AmountInput, options?: Types.RequestOptions) {
    return this.terminalOperation("preAuthorization", input, options)
  }
  /** A MOTO pre-authorization keyed on a terminal. */
  motoPreAuthorization(input: Types.AmountInput, options?: Types.RequestOptions) {
    return this.terminalOperation("moToPreAuthorization", input, options)
  }
  /** Releases a pre-authorization, or reverses its capture, through the terminal. */
  preAuthorizationReversal(input: Types.LinkedInput, options?: Types.RequestOptions) {
    return this.terminalOperation("preAuthorizationReversal", input, options)
  }
  /** Reads a card and returns its token. */
  tokenizeCard(input: Types.TerminalInput, options?: Types.RequestOptions) {
    return this.terminalOperation("tokenizeCard", input, options)
  }
  /** Reads a whitelisted card's number (the result carries it masked). */
  cardPan(input: Types.TerminalInput, options?: Types.RequestOptions) {
    return this.terminalOperation("cardPan", input, options)
  }
  /** Prints a receipt (`receipt`). */
  printReceipt(input: Types.TerminalInput & { readonly receipt: string }, options?: Types.RequestOptions) {
    return this.terminalOperation("printReceipt", input, options)
  }
  /** Checks that a terminal answers. */
  pingDevice(input: Types.TerminalInput, options?: Types.RequestOptions) {
    return this.terminalOperation("pingDevice", input, options)
  }
  /** Stops the operation in flight on a terminal (`StopRefused` at a step that cannot be stopped). */
  stopCurrentTransaction(
    input: { readonly serialNumber: string; readonly terminalType?: string },
    options?: Pick<Types.RequestOptions, "idempotencyKey">
  ): TillflowOperation<Types.LifecycleResult> {
    const idempotencyKey = this.key(options, "stop")
    return this.follow((intake) =>
      intake.stop({
        serialNumber: input.serialNumber,
        ...(input.terminalType === undefined ? {} : { terminalType: input.terminalType }),
        idempotencyKey,
        waitSeconds: 0
      })
    ) as TillflowOperation<Types.LifecycleResult>
  }

  // -------------------------------------------------------------------------------------
  // Through a terminal with `serialNumber`, else terminal-less

  /**
   * Increases a pre-authorization's hold (a negative amount decreases it): through the
   * terminal with `serialNumber`, else terminal-less on `originalTransactionId`.
   */
  preAuthorizationIncrease(input: Types.PreAuthorizationChange, options?: Types.RequestOptions) {
    if (input.serialNumber !== undefined) {
      return this.terminalOperation("preAuthorizationIncrease", input as Types.TerminalInput, options)
    }
    const decrease = input.amount.amount.startsWith("-")
    return this.lifecycle(
      decrease ? "PreAuthorization.Decrease" : "PreAuthorization.Increase",
      {
        originalGuid: input.originalTransactionId,
        amount: decrease ? { ...input.amount, amount: input.amount.amount.slice(1) } : input.amount,
        ...(input.tip === undefined || decrease ? {} : { tip: input.tip }),
        ...(input.customerReference === undefined ? {} : { customerReference: input.customerReference })
      },
      options
    )
  }

  /**
   * Captures a pre-authorization, once, checked against its scheme's window and tolerance:
   * through the terminal with `serialNumber`, else terminal-less (`amount` required).
   */
  preAuthorizationCapture(input: Types.PreAuthorizationCapture, options?: Types.RequestOptions) {
    if (input.serialNumber !== undefined) {
      return this.terminalOperation("preAuthorizationCapture", input as Types.TerminalInput, options)
    }
    const { originalTransactionId, ...rest } = input
    return this.lifecycle(
      "PreAuthorization.Capture",
      { originalGuid: originalTransactionId, ...rest },
      options
    )
  }

  /** A MOTO sale: keyed on the terminal with `serialNumber`, else terminal-less on a `cardToken`. */
  motoSale(input: Types.MotoSale, options?: Types.RequestOptions) {
    if (input.serialNumber !== undefined) {
      return this.terminalOperation("moToSale", input as Types.TerminalInput, options)
    }
    return this.lifecycle("Moto.Sale", input, options)
  }

  /** A MOTO refund: on the terminal with `serialNumber`, else terminal-less on `originalTransactionId`. */
  motoRefund(input: Types.MotoRefund, options?: Types.RequestOptions) {
    if (input.serialNumber !== undefined) {
      return this.terminalOperation("moToRefund", input as Types.TerminalInput, options)
    }
    const { originalTransactionId, ...rest } = input
    return this.lifecycle("Moto.Refund", { originalGuid: originalTransactionId, ...rest }, options)
  }

  /** A MOTO reversal (within 24 h): on the terminal with `serialNumber`, else terminal-less. */
  motoReversal(input: Types.MotoReversal, options?: Types.RequestOptions) {
    if (input.serialNumber !== undefined) {
      return this.terminalOperation("moToReversal", input as Types.TerminalInput, options)
    }
    return this.lifecycle("Moto.Reverse", { originalGuid: input.originalTransactionId }, options)
  }

  // -------------------------------------------------------------------------------------
  // Terminal-less operations

  /** Adjusts the tip of a sale (`POST /tip-adjustment`). */
  tipAdjustment(
    input: { readonly originalTransactionId: string; readonly tip: Types.Amount },
    options?: Types.RequestOptions
  ) {
    return this.lifecycle(
      "TipAdjustment.Adjust",
      { originalGuid: input.originalTransactionId, tip: input.tip },
      options
    )
  }

  /** Tokenizes the card of a past transaction (deferred tokenization, within 12 months). */
  tokenize(input: { readonly originalTransactionId: string }, options?: Types.RequestOptions) {
    return this.lifecycle(
      "DeferredTokenization.Tokenize",
      { originalGuid: input.originalTransactionId },
      options
    )
  }

  /** Reverses a transaction terminal-less (`POST /reversal`): in full, or `amount` where allowed. */
  reversal(
    input: {
      readonly originalTransactionId: string
      readonly amount?: Types.Amount
      readonly messageReasonCode?: string
    },
    options?: Types.RequestOptions
  ) {
    const { originalTransactionId, ...rest } = input
    return this.lifecycle("Reversal.Reverse", { originalGuid: originalTransactionId, ...rest }, options)
  }

  /** Closes a terminal's batch (`batchNumber`, as the terminal's receipts show it), once. */
  async batchClose(input: Types.BatchRef, options?: Types.RequestOptions): Promise<Types.LifecycleResult> {
    return this.lifecycle("Batch.Close", await this.withType(input), options)
  }

  /** A terminal's batch summary in a currency. */
  async batchSummary(
    input: Types.BatchRef & { readonly currency: string },
    options?: Types.RequestOptions
  ): Promise<Types.LifecycleResult> {
    return this.lifecycle("Batch.Summary", await this.withType(input), options)
  }

  /** A terminal's batch detail in a currency (optionally one `rrn` or `customerReference`). */
  async batchDetail(
    input: Types.BatchRef & {
      readonly currency: string
      readonly rrn?: string
      readonly customerReference?: string
    },
    options?: Types.RequestOptions
  ): Promise<Types.LifecycleResult> {
    return this.lifecycle("Batch.Detail", await this.withType(input), options)
  }

  /**
   * Sends a device command (`reboot`, `set-locale`, `set-screen-brightness` …) with its body.
   *
   * @example
   * await tf.deviceCommand({ serialNumber, command: "set-screen-brightness", body: { brightness: 80 } })
   */
  async deviceCommand(
    input: Types.TerminalRef & {
      readonly command: string
      readonly body?: Readonly<Record<string, unknown>>
    },
    options?: Types.RequestOptions
  ): Promise<Types.LifecycleResult> {
    const withType = await this.withType(input)
    return this.lifecycle("DeviceCommand.Send", { ...withType, body: input.body ?? {} }, options)
  }

  private async withType(input: Types.TerminalRef): Promise<Record<string, unknown>> {
    if (input.terminalType !== undefined) return { ...input }
    const devices = await this.devices()
    const found = devices.find((d) => d.serialNumber === input.serialNumber)
    if (found === undefined) {
      throw new Errors.InvalidRequest(
        "InvalidRequest",
        `unknown terminal serial ${input.serialNumber}: the service lists ${
          devices.length === 0 ? "no terminal" : devices.map((d) => d.serialNumber).join(", ")
        }`
      )
    }
    return { ...input, terminalType: found.terminalType }
  }

  // -------------------------------------------------------------------------------------
  // Reading

  /** The merchant's terminals, as the service lists them. */
  devices(): Promise<ReadonlyArray<Types.Device>> {
    return this.call((intake) => intake.devices)
  }

  /**
   * A transaction's status at the service (the spec's status endpoint), by its
   * `transactionReference`: `first`, `last` (default), `all`, or a position. Records are the
   * service's own (amounts in minor units, as it sends them).
   */
  status(transactionReference: string, selector = "last"): Promise<ReadonlyArray<unknown>> {
    return this.call((intake) => intake.transactionStatus(transactionReference, selector))
  }

  /** An execution as it stands (its status, progress, and once ended, its report and result). */
  async execution(executionId: string): Promise<Types.Execution> {
    const view = Shapes.viewJson(await this.call((intake) => intake.execution(executionId, 0)))
    return Plain.plain(view) as Types.Execution
  }

  /** Resumes awaiting an execution started earlier (by this process or another): its result, or its error. */
  retrieve(executionId: string): TillflowOperation<Record<string, unknown>> {
    return this.follow((intake) => intake.execution(executionId, 0))
  }

  /**
   * Releases everything: the engine worker stops claiming (runs in flight finish within the
   * shutdown timeout; the rest resume with the next instance on the same store), the
   * simulator and the store close. Operations followed here reject with `Closed`; they are
   * not lost: `retrieve(executionId)` on the next instance answers them.
   */
  close(): Promise<void> {
    if (this.closing === undefined) {
      this.lifetime.abort()
      this.closing = this.runtime.dispose()
    }
    return this.closing
  }
}

/**
 * Builds an instance: reads the configuration (the options, then the environment and the
 * configuration file, as the worker does), opens the store, starts the remote service or
 * the built-in simulator and an engine worker. Rejects with `StartupError` saying what
 * could not start.
 *
 * @example
 * // the defaults: embedded PGlite in .tillflow/data and the built-in simulator
 * const tf = await createTillflow()
 * // production: PostgreSQL, the real service, results by callback to tf.callbackHandler
 * const tf = await createTillflow({
 *   database: process.env.DATABASE_URL,
 *   terminalCloud: { apiKey, baseUrl, transactionsUrl },
 *   callbacks: { baseUrl: "https://pos.example.com/callbacks" }
 * })
 */
export const createTillflow = async (options: TillflowOptions.TillflowOptions = {}): Promise<Tillflow> => {
  let provider: ReturnType<typeof TillflowOptions.provider>
  try {
    provider = TillflowOptions.provider(options)
  } catch (error) {
    // A configuration file that cannot be read (not JSON, a value that is not a scalar).
    throw new Errors.StartupError(
      "StartupError",
      `configuration: ${error instanceof Error ? error.message : String(error)}`
    )
  }
  const layer = Services.layer.pipe(Layer.provide(Layer.setConfigProvider(provider)))
  const runtime: Runtime = ManagedRuntime.make(layer)
  const started = await runtime.runPromiseExit(
    Effect.gen(function* () {
      const store = yield* Stack.Store
      const cloud = yield* Stack.Cloud
      const handler = yield* CallbackHandler.make
      const info: Types.InstanceInfo = {
        store: store.kind,
        ...(store.dataDir === undefined ? {} : { dataDir: store.dataDir }),
        ...(store.warning === undefined ? {} : { storeWarning: store.warning }),
        service: cloud.kind,
        baseUrl: cloud.baseUrl,
        transactionsUrl: cloud.transactionsUrl,
        ...(cloud.adminUrl === undefined ? {} : { simulatorAdminUrl: cloud.adminUrl })
      }
      return { info, handler }
    })
  )
  if (Exit.isFailure(started)) {
    await runtime.dispose()
    const error = fromCause(started.cause)
    throw error.code === "StartupError" ? new Errors.StartupError("StartupError", error.message) : error
  }
  return new Tillflow(runtime, started.value.info, started.value.handler)
}
