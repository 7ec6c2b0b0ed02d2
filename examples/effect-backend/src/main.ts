/**
 * A commerce backend written with Effect that embeds tillflow: an `HttpApi` whose
 * `POST /sales` sells on a terminal and answers with the outcome, and whose `POST /refunds`
 * refunds such a sale on its terminal (a refund linked to the sale's guid). tillflow is one
 * layer (`Stack.layerConfig`: with nothing configured, the embedded store under
 * `.tillflow/data` and the built-in simulator, the worker's defaults; `DATABASE_URL` and
 * `TERMINAL_CLOUD_API_KEY` … for production). `PORT` chooses the port (default 3000).
 *
 *   curl -X POST localhost:3000/sales -H 'content-type: application/json' \
 *     -d '{"amount":"10.50","currency":"EUR"}'
 */
// #region effect-example
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiSchema,
  HttpServer
} from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import {
  Currency,
  Identifiers,
  Money,
  OperationOutcome,
  TerminalCloud,
  TerminalOperations
} from "@tillflow/core"
import { Stack } from "@tillflow/intake"
import { Config, Console, Effect, Layer, Schema } from "effect"
import { createServer } from "node:http"

// The backend's own contract: what it accepts and answers.
const SaleRequest = Schema.Struct({
  amount: Schema.String,
  currency: Currency.Currency.annotations({ message: () => "an ISO 4217 currency code, such as EUR" }),
  serialNumber: Schema.optional(Schema.String)
})
const SaleResponse = Schema.Struct({
  outcome: Schema.String,
  transactionReference: Schema.optional(Schema.String),
  /** The gateway's guid of the sale: what a linked refund names. */
  efttransactionID: Schema.optional(Schema.String),
  serialNumber: Schema.String
})
const RefundRequest = Schema.Struct({
  originalTransactionId: Schema.String,
  amount: Schema.String,
  currency: Currency.Currency,
  serialNumber: Schema.optional(Schema.String)
})
class SaleFailed extends Schema.TaggedError<SaleFailed>()(
  "SaleFailed",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 422 })
) {}

class ShopApi extends HttpApi.make("shop").add(
  HttpApiGroup.make("sales")
    .add(
      HttpApiEndpoint.post("sell", "/sales")
        .setPayload(SaleRequest)
        .setHeaders(Schema.Struct({ "idempotency-key": Schema.optional(Schema.String) }))
        .addSuccess(SaleResponse)
        .addError(SaleFailed)
    )
    .add(
      HttpApiEndpoint.post("refund", "/refunds")
        .setPayload(RefundRequest)
        .setHeaders(Schema.Struct({ "idempotency-key": Schema.optional(Schema.String) }))
        .addSuccess(SaleResponse)
        .addError(SaleFailed)
    )
) {}

// tillflow: one layer, and operations on a terminal waited for to their outcome.
const Tillflow = Stack.layerConfig({ holder: "effect-backend" })

/** The terminal asked for, or the first one the service lists. */
const terminal = Effect.fn("Shop.terminal")(function* (serialNumber: string | undefined) {
  const devices = yield* (yield* TerminalCloud.TerminalCloud).listDevices
  const device = devices.find((d) => d.serialNumber === (serialNumber ?? d.serialNumber))
  if (device === undefined) return yield* new SaleFailed({ message: `no terminal ${serialNumber}` })
  return device
})

const answer = (outcome: OperationOutcome.Outcome, serialNumber: string) => ({
  outcome: outcome._tag.charAt(0).toLowerCase() + outcome._tag.slice(1),
  transactionReference: outcome.facts.transactionReference,
  efttransactionID: outcome.facts.efttransactionID,
  serialNumber
})

const sell = Effect.fn("Shop.sell")(function* (request: typeof SaleRequest.Type, idempotencyKey: string) {
  const amount = yield* Money.fromMajorUnitsString(request.amount, request.currency)
  const device = yield* terminal(request.serialNumber)
  const outcome = yield* TerminalOperations.sale(
    { serialNumber: device.serialNumber, terminalType: device.terminalType, amount },
    { idempotencyKey }
  )
  return answer(outcome, device.serialNumber)
})

const refund = Effect.fn("Shop.refund")(function* (
  request: typeof RefundRequest.Type,
  idempotencyKey: string
) {
  const amount = yield* Money.fromMajorUnitsString(request.amount, request.currency)
  // The sale's guid, checked and branded: a linked refund names its original by it.
  const originalTransactionId = yield* Identifiers.guid(request.originalTransactionId)
  const device = yield* terminal(request.serialNumber)
  const outcome = yield* TerminalOperations.linkedRefund(
    { serialNumber: device.serialNumber, terminalType: device.terminalType, amount, originalTransactionId },
    { idempotencyKey }
  )
  return answer(outcome, device.serialNumber)
})

const SalesLive = HttpApiBuilder.group(ShopApi, "sales", (handlers) =>
  handlers
    .handle("sell", ({ headers, payload }) =>
      sell(payload, headers["idempotency-key"] ?? crypto.randomUUID()).pipe(
        Effect.catchAll((error) => Effect.fail(new SaleFailed({ message: error.message })))
      )
    )
    .handle("refund", ({ headers, payload }) =>
      refund(payload, headers["idempotency-key"] ?? crypto.randomUUID()).pipe(
        Effect.catchAll((error) => Effect.fail(new SaleFailed({ message: error.message })))
      )
    )
)

const announce = Layer.effectDiscard(
  HttpServer.addressFormattedWith((address) => Console.log(`effect-backend listening on ${address}`))
)

const ServerLive = Layer.unwrapEffect(
  Effect.map(Config.integer("PORT").pipe(Config.withDefault(3000)), (port) =>
    NodeHttpServer.layer(createServer, { port, host: "127.0.0.1" })
  )
)

const Main = announce.pipe(
  Layer.provide(HttpApiBuilder.serve()),
  Layer.provide(HttpApiBuilder.api(ShopApi).pipe(Layer.provide(SalesLive))),
  Layer.provide(Tillflow),
  Layer.provideMerge(ServerLive)
)

NodeRuntime.runMain(Layer.launch(Main))
// #endregion
