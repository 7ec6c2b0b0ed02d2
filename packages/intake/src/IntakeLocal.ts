/**
 * The intake in this process: each operation is a call into the library — the
 * `PaymentProtocol` workflows on the engine, the engine's visibility, the event store,
 * `Ledger`/`LedgerProjection`/`OperationTimeline`/`OperationReport` for the audit. What
 * it adds is the edge: turning the JSON of a request into the typed request (with a fresh
 * transaction reference and the terminal's type when they are not given), refusing a
 * reused idempotency key for a different request, and shaping answers into views.
 */
import { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import type * as Workflow from "@effect/workflow/Workflow"
import { BatchWorkflow, DeferredTokenizationWorkflow, DeviceCommandWorkflow, DomainEvents, Identifiers, Ledger, LedgerProjection, LifecycleEvent, Money, MotoWorkflow, OperationReport, OperationTimeline, PaymentProtocol, PreAuthorizationWorkflow, type RemoteError, ReversalWorkflow, TerminalCloud, TerminalOutcomeRecorder, Timeline, TipAdjustmentWorkflow, TransactionRequest, TransactionResult } from "@tillflow/core"
import { DurableEngine, EngineEvent, EventStore, ExecutionQueue, HashChain } from "@tillflow/engine"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Intake from "./Intake.js"

/** `TerminalOperation` with the search attributes the intake lists by. */
export const TerminalOperation: typeof PaymentProtocol.TerminalOperation = DurableEngine.withSearchAttributes(
  PaymentProtocol.TerminalOperation,
  (payload) => {
    const request = payload.request
    const reference = Option.getOrUndefined(TransactionRequest.transactionReference(request))
    const original = Option.getOrUndefined(TransactionRequest.originalTransactionId(request))
    const amount = "amount" in request && request.amount instanceof Money.Money ? request.amount : undefined
    return {
      operation: request.operation,
      serialNumber: request.serialNumber,
      idempotencyKey: payload.idempotencyKey,
      ...(reference === undefined ? {} : { transactionReference: reference }),
      ...(original === undefined ? {} : { originalTransactionId: original }),
      ...(payload.originalTransactionReference === undefined
        ? {}
        : { originalTransactionReference: payload.originalTransactionReference }),
      ...(amount === undefined ? {} : { amount: Money.toMajorUnitsString(amount), currency: amount.currency })
    }
  }
)

/** `StopCurrentTransaction` with its search attributes. */
export const StopCurrentTransaction: typeof PaymentProtocol.StopCurrentTransaction =
  DurableEngine.withSearchAttributes(PaymentProtocol.StopCurrentTransaction, (payload) => ({
    operation: "stopCurrentTransaction",
    serialNumber: payload.serialNumber,
    idempotencyKey: payload.idempotencyKey
  }))

const decodeRequest = Schema.decodeUnknownEither(TransactionRequest.TransactionRequest)
const encodeRequest = Schema.encodeSync(TransactionRequest.TransactionRequest)
const decodeReference = Schema.decodeUnknownEither(Identifiers.TransactionReference)

type AnyWorkflow = Workflow.Workflow<string, Workflow.AnyStructSchema, Schema.Schema.Any, Schema.Schema.All>

/** The terminal-less workflows the intake starts by name, with the attributes it lists them by. */
export const lifecycleWorkflows: ReadonlyMap<string, AnyWorkflow> = new Map(
  [
    PreAuthorizationWorkflow.Increase,
    PreAuthorizationWorkflow.Decrease,
    PreAuthorizationWorkflow.Capture,
    ReversalWorkflow.Reverse,
    MotoWorkflow.Sale,
    MotoWorkflow.Refund,
    MotoWorkflow.Reverse,
    TipAdjustmentWorkflow.Adjust,
    DeferredTokenizationWorkflow.Tokenize,
    BatchWorkflow.Close,
    BatchWorkflow.ReadSummary,
    BatchWorkflow.ReadDetail,
    DeviceCommandWorkflow.Send
  ].map((workflow): readonly [string, AnyWorkflow] => [
    workflow.name,
    DurableEngine.withSearchAttributes(workflow as unknown as AnyWorkflow, (payload) => {
      const p = payload as Readonly<Record<string, unknown>>
      const attributes: Record<string, string> = { operation: workflow.name }
      for (const key of ["requestId", "originalGuid", "serialNumber", "transactionReference"]) {
        const value = p[key]
        if (typeof value === "string") attributes[key === "requestId" ? "idempotencyKey" : key] = value
      }
      return attributes
    })
  ])
)

/** The operations of `POST /transactions` (spec 2.2), as `request.operation` names them. */
const operations: ReadonlyArray<string> = [
  "sale",
  "saleAndTokenizeCard",
  "refund",
  "refundReversal",
  "saleReversal",
  "tokenizeCard",
  "printReceipt",
  "cardPan",
  "pingDevice",
  "moToSale",
  "moToRefund",
  "moToReversal",
  "moToPreAuthorization",
  "preAuthorization",
  "preAuthorizationIncrease",
  "preAuthorizationCapture",
  "preAuthorizationReversal",
  "stopCurrentTransaction"
]

/** Parses `transactionId:globalPosition`. */
export const parseCheckpoint = (text: string | undefined): Either.Either<EventStore.Checkpoint, string> => {
  if (text === undefined || text === "" || text === "start") return Either.right(EventStore.Checkpoint.start)
  const match = /^(\d+):(\d+)$/.exec(text)
  return match === null
    ? Either.left(`"${text}" is not a checkpoint: expected transactionId:position, e.g. 752:41 (or "start")`)
    : Either.right(
        new EventStore.Checkpoint({
          transactionId: BigInt(match[1] ?? "0"),
          globalPosition: BigInt(match[2] ?? "0")
        })
      )
}

/** The view of a stored event. */
export const eventView = (recorded: EventStore.RecordedEvent): Intake.EventView => ({
  position: Ledger.positionOf(recorded.checkpoint),
  streamId: recorded.streamId,
  version: recorded.version,
  type: recorded.type,
  schemaVersion: recorded.schemaVersion,
  recordedAt: new Date(recorded.recordedAt.epochMillis).toISOString(),
  data: recorded.data,
  metadata: recorded.metadata,
  hash: recorded.hash
})

const unavailable = (what: string) => (error: { readonly message: string }) =>
  new Intake.Unavailable({ message: `${what}: ${error.message}` })

const remoteFailure = (what: string) => (error: RemoteError.RemoteError) =>
  error._tag === "NotFound"
    ? new Intake.NotFound({ message: `${what}: not found at the service` })
    : error._tag === "OutcomeUnknown"
      ? new Intake.Unavailable({ message: `${what}: the service did not answer (${error.message})` })
      : new Intake.InvalidRequest({ message: `${what}: ${error.message}` })

const isFinished = (status: ExecutionQueue.ExecutionStatus): boolean =>
  ExecutionQueue.finishedStatuses.includes(status) || status === "stuck"

/** Options of the local intake. */
export interface Options {
  /** The merchant's MCC, to open the histories of pre-authorizations made on terminals. */
  readonly merchantMcc?: Option.Option<string> | undefined
}

/** Builds the intake over the engine, store and remote service in context. */
export const make = (options: Options = {}) =>
  Effect.gen(function* () {
    const engine = yield* DurableEngine.DurableEngine
    const workflowEngine = yield* WorkflowEngine
    const store = yield* EventStore.EventStore
    const cloud = yield* TerminalCloud.TerminalCloud

    const withEngine = <A, E>(effect: Effect.Effect<A, E, WorkflowEngine>) =>
      Effect.provideService(effect, WorkflowEngine, workflowEngine)

    const readStream = (streamId: string) =>
      store.readStream(streamId).pipe(Effect.mapError(unavailable("event store")))

    const report = (info: ExecutionQueue.ExecutionInfo, history: ReadonlyArray<EventStore.RecordedEvent>) => {
      const exit = OperationReport.completedExit(history)
      if (Option.isNone(exit)) return { exit: Option.none<EngineEvent.ExitJson>(), report: Option.none() }
      const decoded =
        info.workflowName === PaymentProtocol.TerminalOperation.name
          ? OperationReport.ofTerminalExit(exit.value)
          : info.workflowName === PaymentProtocol.StopCurrentTransaction.name
            ? OperationReport.ofStopExit(exit.value)
            : Option.some(OperationReport.ofLifecycleExit(info.workflowName, exit.value))
      return { exit, report: decoded }
    }

    const view = (
      info: ExecutionQueue.ExecutionInfo
    ): Effect.Effect<Intake.ExecutionView, Intake.IntakeError> =>
      Effect.gen(function* () {
        const base = {
          executionId: info.executionId,
          workflow: info.workflowName,
          status: info.status,
          attributes: info.attributes,
          createdAt: info.createdAt,
          updatedAt: info.updatedAt
        }
        if (isFinished(info.status)) {
          const history = yield* readStream(EngineEvent.streamId(info.executionId))
          const { exit, report: r } = report(info, history)
          return {
            ...base,
            ...(Option.isSome(r) ? { report: r.value } : {}),
            ...(Option.isSome(exit) ? { result: exit.value } : {})
          }
        }
        if (
          info.workflowName !== PaymentProtocol.TerminalOperation.name &&
          info.workflowName !== PaymentProtocol.StopCurrentTransaction.name
        ) {
          return {
            ...base,
            progress: { phase: "sending" as const, attempt: 0, waitingFor: "the service's answer" }
          }
        }
        const business = yield* readStream(DomainEvents.paymentStream(info.executionId))
        return { ...base, progress: yield* OperationReport.progressOf(business) }
      })

    const getInfo = (executionId: string) =>
      engine.get(executionId).pipe(
        Effect.mapError(unavailable("execution queue")),
        Effect.flatMap(
          Option.match({
            onNone: () => Effect.fail(new Intake.NotFound({ message: `no execution ${executionId}` })),
            onSome: Effect.succeed
          })
        )
      )

    const awaitView = (executionId: string, waitSeconds: number | undefined) =>
      Effect.gen(function* () {
        const until = (yield* Clock.currentTimeMillis) + Math.max(0, waitSeconds ?? 0) * 1000
        while (true) {
          const info = yield* getInfo(executionId)
          if (isFinished(info.status) || (yield* Clock.currentTimeMillis) >= until) return yield* view(info)
          yield* Effect.sleep("150 millis")
        }
      })

    const devices = cloud.listDevices.pipe(
      Effect.mapError(remoteFailure("device list")),
      Effect.map((list) =>
        list.map((d): Intake.DeviceView => ({
          serialNumber: d.serialNumber,
          terminalType: d.terminalType,
          merchant: d.merchantIdAlpha
        }))
      )
    )

    const terminalTypeOf = (serial: string) =>
      Effect.gen(function* () {
        const list = yield* devices
        const device = list.find((d) => d.serialNumber === serial)
        if (device === undefined) {
          return yield* new Intake.InvalidRequest({
            message: `unknown terminal serial ${serial}: the service lists ${
              list.length === 0
                ? "no terminal"
                : list.map((d) => `${d.serialNumber} (${d.terminalType})`).join(", ")
            }`
          })
        }
        return device.terminalType
      })

    const formatIssues = (error: ParseResult.ParseError) =>
      ParseResult.ArrayFormatter.formatErrorSync(error)
        .map(
          (issue) =>
            `${issue.path.length === 0 ? "request" : `request.${issue.path.join(".")}`}: ${issue.message}`
        )
        .join("; ")

    /** The typed request of a JSON one, and whether its reference was generated here. */
    const prepare = (raw: Readonly<Record<string, unknown>>) =>
      Effect.gen(function* () {
        if ("callbackUrl" in raw || "token" in raw) {
          return yield* new Intake.InvalidRequest({
            message:
              "request.callbackUrl and request.token are set by tillflow for each attempt: leave them out"
          })
        }
        const operation = raw["operation"]
        if (typeof operation !== "string" || !operations.includes(operation)) {
          return yield* new Intake.InvalidRequest({
            message: `request.operation must be one of ${operations.filter((o) => o !== "stopCurrentTransaction").join(", ")}`
          })
        }
        if (operation === "stopCurrentTransaction") {
          return yield* new Intake.InvalidRequest({
            message: "stopCurrentTransaction has its own endpoint: POST /v1/terminals/{serialNumber}/stop"
          })
        }
        let json: Record<string, unknown> = { ...raw }
        const serial = raw["serial_number"]
        if (raw["terminal_type"] === undefined && typeof serial === "string" && serial.length > 0) {
          json = { ...json, terminal_type: yield* terminalTypeOf(serial) }
        }
        const first = decodeRequest(json)
        if (Either.isRight(first)) return { request: first.right, generated: false }
        if (json["transactionReference"] === undefined) {
          const reference = yield* Identifiers.makeTransactionReference
          const second = decodeRequest({ ...json, transactionReference: reference })
          if (Either.isRight(second)) return { request: second.right, generated: true }
          const message = formatIssues(second.left)
          if (!message.includes("transactionReference")) return yield* new Intake.InvalidRequest({ message })
        }
        return yield* new Intake.InvalidRequest({ message: formatIssues(first.left) })
      })

    const comparable = (encoded: unknown, dropReference: boolean): string => {
      const { transactionReference: _reference, ...rest } = encoded as Record<string, unknown>
      const canonical = HashChain.canonicalJson(dropReference ? rest : encoded)
      return Either.isRight(canonical) ? canonical.right : JSON.stringify(encoded)
    }

    /** The stored payload of an execution, encoded (from its WorkflowStarted event). */
    const storedPayload = (executionId: string) =>
      Effect.map(storedRequest(executionId, true), (payload) => payload)

    /** The stored request of an execution, encoded (from its WorkflowStarted event). */
    const storedRequest = (executionId: string, whole = false) =>
      Effect.map(readStream(EngineEvent.streamId(executionId)), (history) => {
        const first = history[0]
        if (first === undefined) return undefined
        const decoded = EngineEvent.fromStored(first)
        if (
          Option.isNone(decoded) ||
          decoded.value._tag === "Left" ||
          decoded.value.right._tag !== "WorkflowStarted"
        ) {
          return undefined
        }
        const payload = decoded.value.right.payload as { readonly request?: unknown }
        return whole ? payload : payload.request
      })

    const start = (input: Intake.StartOperation) =>
      Effect.gen(function* () {
        const { request, generated } = yield* prepare(input.request)
        let originalTransactionReference: Identifiers.TransactionReference | undefined
        if (input.originalTransactionReference !== undefined) {
          const parsed = decodeReference(input.originalTransactionReference)
          if (Either.isLeft(parsed)) {
            return yield* new Intake.InvalidRequest({
              message: "originalTransactionReference must be a UUID v4"
            })
          }
          originalTransactionReference = parsed.right
        }
        const requestedAt = yield* Clock.currentTimeMillis
        const payload: PaymentProtocol.Payload = {
          idempotencyKey: input.idempotencyKey,
          request,
          requestedAt,
          ...(input.delivery === undefined ? {} : { delivery: input.delivery }),
          ...(input.deadlineSeconds === undefined
            ? {}
            : { deadlineAt: requestedAt + input.deadlineSeconds * 1000 }),
          ...(input.retryNotCharged === undefined ? {} : { retryNotCharged: input.retryNotCharged }),
          ...(originalTransactionReference === undefined ? {} : { originalTransactionReference })
        }
        const executionId = yield* TerminalOperation.executionId(payload)
        const existing = yield* engine.get(executionId).pipe(Effect.mapError(unavailable("execution queue")))
        if (Option.isSome(existing)) {
          const stored = yield* storedRequest(executionId)
          if (
            stored !== undefined &&
            comparable(stored, generated) !== comparable(encodeRequest(request), generated)
          ) {
            return yield* new Intake.IdempotencyConflict({
              executionId,
              message: `idempotency key "${input.idempotencyKey}" was used for a different request (execution ${executionId}); use a new key for a new operation`
            })
          }
        } else {
          yield* withEngine(TerminalOperation.execute(payload, { discard: true }))
        }
        return yield* awaitView(executionId, input.waitSeconds)
      }).pipe(Effect.withSpan("Intake.start"))

    const stop = (input: Intake.StopOperation) =>
      Effect.gen(function* () {
        const terminalType = input.terminalType ?? (yield* terminalTypeOf(input.serialNumber))
        const idempotencyKey = input.idempotencyKey ?? `stop-${globalThis.crypto.randomUUID()}`
        const payload = {
          idempotencyKey,
          serialNumber: Identifiers.SerialNumber.make(input.serialNumber),
          terminalType: Identifiers.TerminalType.make(terminalType),
          requestedAt: yield* Clock.currentTimeMillis
        }
        const executionId = yield* StopCurrentTransaction.executionId(payload)
        yield* withEngine(StopCurrentTransaction.execute(payload, { discard: true }))
        return yield* awaitView(executionId, input.waitSeconds)
      }).pipe(Effect.withSpan("Intake.stop"))

    const lifecycle = (name: string, input: Intake.StartLifecycle) =>
      Effect.gen(function* () {
        const workflow = lifecycleWorkflows.get(name)
        if (workflow === undefined) {
          return yield* new Intake.NotFound({
            message: `no terminal-less workflow "${name}": use one of ${Array.from(lifecycleWorkflows.keys()).join(", ")}`
          })
        }
        // Terminal operations approved so far become histories the lifecycles can act on.
        yield* provideStore(
          TerminalOutcomeRecorder.catchUp({ mcc: options.merchantMcc ?? Option.none() })
        ).pipe(Effect.mapError(unavailable("event store")))
        const json = { requestId: `req-${globalThis.crypto.randomUUID()}`, ...input.payload }
        const decoded = Schema.decodeUnknownEither(
          workflow.payloadSchema as unknown as Schema.Schema<object, unknown>
        )(json)
        if (Either.isLeft(decoded)) {
          return yield* new Intake.InvalidRequest({
            message: ParseResult.ArrayFormatter.formatErrorSync(decoded.left)
              .map((i) => `payload${i.path.length === 0 ? "" : `.${i.path.join(".")}`}: ${i.message}`)
              .join("; ")
          })
        }
        const payload = decoded.right
        const executionId = yield* workflow.executionId(payload)
        const existing = yield* engine.get(executionId).pipe(Effect.mapError(unavailable("execution queue")))
        if (Option.isSome(existing)) {
          const stored = yield* storedPayload(executionId)
          if (stored !== undefined && comparable(stored, false) !== comparable(json, false)) {
            return yield* new Intake.IdempotencyConflict({
              executionId,
              message: `requestId "${String(json.requestId)}" was used for a different ${name} (execution ${executionId})`
            })
          }
        } else {
          yield* withEngine(
            workflow.execute(payload, { discard: true }) as Effect.Effect<string, never, WorkflowEngine>
          )
        }
        return yield* awaitView(executionId, input.waitSeconds)
      }).pipe(Effect.withSpan("Intake.lifecycle"))

    const history = (executionId: string) =>
      Effect.gen(function* () {
        yield* getInfo(executionId)
        const engineEvents = yield* readStream(EngineEvent.streamId(executionId))
        const business = yield* readStream(DomainEvents.paymentStream(executionId))
        return { executionId, engine: engineEvents.map(eventView), business: business.map(eventView) }
      })

    const list = (query: Intake.ListQuery) =>
      Effect.gen(function* () {
        const attributes: Record<string, string> = {}
        if (query.serialNumber !== undefined) attributes["serialNumber"] = query.serialNumber
        if (query.operation !== undefined) attributes["operation"] = query.operation
        if (query.transactionReference !== undefined)
          attributes["transactionReference"] = query.transactionReference
        if (query.idempotencyKey !== undefined) attributes["idempotencyKey"] = query.idempotencyKey
        const found = yield* engine
          .list({
            ...(query.workflow === undefined ? {} : { workflowName: query.workflow }),
            ...(query.status === undefined ? {} : { status: query.status }),
            attributes
          })
          .pipe(Effect.mapError(unavailable("execution queue")))
        // Newest first, the most recent `limit`.
        const newest = [...found].reverse().slice(0, query.limit ?? 50)
        return yield* Effect.forEach(newest, view)
      })

    const transactionStatus = (reference: string, selector: string) =>
      Effect.gen(function* () {
        const ref = decodeReference(reference)
        if (Either.isLeft(ref)) {
          return yield* new Intake.InvalidRequest({
            message: `"${reference}" is not a transactionReference (a UUID v4)`
          })
        }
        const parsed =
          selector === "first" || selector === "last" || selector === "all"
            ? selector
            : /^[1-9][0-9]*$/.test(selector)
              ? Number(selector)
              : undefined
        if (parsed === undefined) {
          return yield* new Intake.InvalidRequest({
            message: `selector "${selector}" is not allowed: use first, last, all or a position from 1`
          })
        }
        const entries = yield* cloud
          .transactionStatus(ref.right, parsed)
          .pipe(Effect.mapError(remoteFailure(`status of ${reference}`)))
        return entries.map((e) => Schema.encodeSync(TransactionResult.TransactionStatusResult)(e) as unknown)
      })

    const checkpointOf = (text: string | undefined) =>
      Either.match(parseCheckpoint(text), {
        onLeft: (message) => Effect.fail(new Intake.InvalidRequest({ message })),
        onRight: Effect.succeed
      })

    const events = (after: string | undefined, limit: number) =>
      Effect.gen(function* () {
        const from = yield* checkpointOf(after)
        const page = yield* store
          .readAll(from, { maxCount: Math.max(1, Math.min(limit, 10_000)) })
          .pipe(Effect.mapError(unavailable("event store")))
        return {
          events: page.events.map(eventView),
          next: Ledger.positionOf(page.next),
          caughtUp: page.caughtUp
        }
      })

    const verify = (streamId: string | undefined) =>
      Effect.map(store.verify(streamId).pipe(Effect.mapError(unavailable("event store"))), (r) => ({
        ok: r.ok,
        streamsChecked: r.streamsChecked,
        eventsChecked: r.eventsChecked,
        broken: r.broken.map((b) => ({
          streamId: b.streamId,
          version: b.version,
          kind: b.kind,
          expected: b.expected,
          found: b.found
        }))
      }))

    const ledgerView = (
      ledger: Ledger.Ledger,
      source: "replay" | "live",
      from: EventStore.Checkpoint
    ): Intake.LedgerView => ({
      source,
      from: Ledger.positionOf(from),
      checkpoint: Ledger.positionOf(ledger.checkpoint),
      eventsRead: ledger.eventsRead,
      entries: ledger.entries,
      undecodable: ledger.undecodable,
      rows: Ledger.summarize(ledger, ["day", "terminal", "merchant"])
    })

    const provideStore = <A, E>(effect: Effect.Effect<A, E, EventStore.EventStore>) =>
      Effect.provideService(effect, EventStore.EventStore, store)

    const ledger = (options: { readonly source: "replay" | "live"; readonly from?: string | undefined }) =>
      Effect.gen(function* () {
        if (options.source === "live") {
          const live = yield* provideStore(LedgerProjection.latest).pipe(
            Effect.mapError(unavailable("event store"))
          )
          if (Option.isNone(live)) {
            return yield* new Intake.NotFound({
              message: "no live ledger snapshot yet: a worker writes one a few seconds after it starts"
            })
          }
          return ledgerView(live.value, "live", EventStore.Checkpoint.start)
        }
        const from = yield* checkpointOf(options.from)
        const replayed = yield* provideStore(
          LedgerProjection.replay({ from: { ...Ledger.empty, checkpoint: from } })
        ).pipe(Effect.mapError(unavailable("event store")))
        return ledgerView(replayed, "replay", from)
      })

    const entries = (fromText: string | undefined, limit: number) =>
      Effect.gen(function* () {
        let checkpoint = yield* checkpointOf(fromText)
        const out: Array<Intake.EntriesView["entries"][number]> = []
        while (out.length < limit) {
          const page = yield* store
            .readAll(checkpoint, { maxCount: 1000 })
            .pipe(Effect.mapError(unavailable("event store")))
          const { entries: found } = yield* Ledger.entriesOf(page.events)
          for (const e of found) {
            out.push({
              position: e.position,
              at: e.at,
              day: e.day,
              kind: e.kind,
              operation: e.operation,
              finStatus: e.finStatus,
              ...(e.amount === undefined
                ? {}
                : { amount: Money.toMajorUnitsString(e.amount), currency: e.amount.currency }),
              terminal: e.terminal,
              merchant: e.merchant,
              ...(e.transactionReference === undefined
                ? {}
                : { transactionReference: e.transactionReference }),
              reconciled: e.reconciled,
              streamId: e.streamId,
              eventType: e.eventType
            })
          }
          checkpoint = page.next
          if (page.caughtUp) break
        }
        return { entries: out, checkpoint: Ledger.positionOf(checkpoint) }
      })

    const rebuild = Effect.gen(function* () {
      const compared = yield* provideStore(LedgerProjection.compareWithLive).pipe(
        Effect.mapError(unavailable("event store"))
      )
      if (Option.isNone(compared)) {
        const rebuilt = yield* provideStore(LedgerProjection.rebuild()).pipe(
          Effect.mapError(unavailable("event store"))
        )
        return {
          compared: false,
          equal: false,
          checkpoint: Ledger.positionOf(rebuilt.checkpoint),
          eventsRead: rebuilt.eventsRead,
          liveDigest: "",
          rebuiltDigest: yield* Ledger.digest(rebuilt),
          differences: []
        }
      }
      const c = compared.value
      return {
        compared: true,
        equal: c.differences.length === 0,
        checkpoint: Ledger.positionOf(c.live.checkpoint),
        eventsRead: c.rebuilt.eventsRead,
        liveDigest: c.liveDigest,
        rebuiltDigest: c.rebuiltDigest,
        differences: c.differences.map((d) => ({ row: d.row, live: d.left, rebuilt: d.right }))
      }
    })

    /** An execution id from an id, a transaction reference or an idempotency key. */
    const resolve = (reference: string) =>
      Effect.gen(function* () {
        const direct = yield* engine.get(reference).pipe(Effect.mapError(unavailable("execution queue")))
        if (Option.isSome(direct)) return reference
        for (const key of ["transactionReference", "idempotencyKey"]) {
          const found = yield* engine
            .list({
              attributes: { [key]: key === "transactionReference" ? reference.toLowerCase() : reference }
            })
            .pipe(Effect.mapError(unavailable("execution queue")))
          const last = found[found.length - 1]
          if (last !== undefined) return last.executionId
        }
        return yield* new Intake.NotFound({
          message: `no execution, transaction reference or idempotency key "${reference}" is known`
        })
      })

    /** The lifecycle stream an execution acted on (its payload's guid, MOTO reference, terminal). */
    const lifecycleStreamOf = (executionId: string, workflowName: string) =>
      Effect.map(storedPayload(executionId), (payload): string | undefined => {
        const p = (payload ?? {}) as Readonly<Record<string, unknown>>
        const text = (key: string) => (typeof p[key] === "string" ? (p[key] as string) : undefined)
        if (workflowName === PaymentProtocol.TerminalOperation.name) return undefined
        if (workflowName.startsWith("Batch.")) {
          const serial = text("serialNumber")
          return serial === undefined ? undefined : LifecycleEvent.batchStream(serial)
        }
        if (workflowName.startsWith("DeviceCommand.")) {
          const serial = text("serialNumber")
          return serial === undefined ? undefined : LifecycleEvent.deviceStream(serial)
        }
        const guid = text("originalGuid")
        if (guid !== undefined) return LifecycleEvent.transactionStream(guid)
        const reference = text("transactionReference")
        return reference === undefined ? undefined : LifecycleEvent.motoSaleStream(reference)
      })

    /** The gateway guid of a finished terminal operation (its outcome's efttransactionID). */
    const guidOf = (executionId: string) =>
      Effect.map(readStream(EngineEvent.streamId(executionId)), (history) =>
        Option.flatMap(OperationReport.completedExit(history), (exit) => {
          if (exit._tag !== "Success") return Option.none()
          const value = exit.value as { readonly facts?: { readonly efttransactionID?: unknown } } | null
          const guid = value?.facts?.efttransactionID
          return typeof guid === "string" ? Option.some(guid) : Option.none()
        })
      )

    /** The rendered story of a lifecycle stream, if it has events. */
    const lifecycleLines = (streamId: string, title: string) =>
      Effect.gen(function* () {
        const version = yield* store.streamVersion(streamId).pipe(Effect.mapError(unavailable("event store")))
        if (version === 0) return []
        const lines = yield* provideStore(Timeline.read(streamId)).pipe(
          Effect.mapError((error) => new Intake.Unavailable({ message: `${streamId}: ${error.message}` }))
        )
        return [title, ...lines.map((line) => `  ${line}`)]
      })

    const timeline = (reference: string) =>
      Effect.gen(function* () {
        const resolved = yield* Effect.either(resolve(reference))
        if (Either.isLeft(resolved)) {
          // A gateway guid: the transaction's terminal-less history.
          const lines = yield* lifecycleLines(
            LifecycleEvent.transactionStream(reference),
            `transaction ${reference}:`
          )
          if (lines.length === 0) return yield* resolved.left
          return { executionId: LifecycleEvent.transactionStream(reference), lines }
        }
        const executionId = resolved.right
        const info = yield* getInfo(executionId)
        const lines = [
          ...(yield* provideStore(OperationTimeline.read(executionId)).pipe(
            Effect.mapError(unavailable("event store"))
          ))
        ]
        const stream = yield* lifecycleStreamOf(executionId, info.workflowName)
        if (stream !== undefined) lines.push(...(yield* lifecycleLines(stream, `${stream}:`)))
        const guid = yield* guidOf(executionId)
        if (Option.isSome(guid)) {
          lines.push(
            ...(yield* lifecycleLines(
              LifecycleEvent.transactionStream(guid.value),
              `afterwards, without the terminal (transaction ${guid.value}):`
            ))
          )
        }
        return { executionId, lines }
      })

    const ready = Effect.gen(function* () {
      const storeOk = yield* Effect.either(store.streamVersion(LedgerProjection.snapshotStream))
      const names = yield* engine.workflowNames
      const engineOk = yield* Effect.either(engine.list({ limit: 1 }))
      const storeText = Either.isRight(storeOk) ? "ok" : storeOk.left.message
      const engineText = Either.isLeft(engineOk)
        ? engineOk.left.message
        : names.length === 0
          ? "no workflow registered"
          : `ok (${names.join(", ")})`
      return {
        ready: Either.isRight(storeOk) && Either.isRight(engineOk) && names.length > 0,
        store: storeText,
        engine: engineText
      }
    })

    return Intake.Intake.of({
      devices,
      start,
      stop,
      lifecycle,
      execution: (executionId, waitSeconds) => awaitView(executionId, waitSeconds),
      history,
      list,
      transactionStatus,
      events,
      verify,
      ledger,
      entries,
      rebuild,
      timeline,
      ready
    })
  })

/** The intake over the engine, store and remote service in context. */
export const layer = (
  options: Options = {}
): Layer.Layer<
  Intake.Intake,
  never,
  DurableEngine.DurableEngine | WorkflowEngine | EventStore.EventStore | TerminalCloud.TerminalCloud
> => Layer.effect(Intake.Intake, make(options))
