/**
 * The admin API of the simulator, under `/_sim` and apart from the service routes (no API
 * key): add merchants, keys and terminals, take terminals offline, press the cancel
 * button, set step timing, inject faults, read counters and deliveries, move the clock,
 * reset. Every route is listed in docs/simulator.md.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Simulator from "./Simulator.js"
import * as SimulatorError from "./SimulatorError.js"
import { errorResponse, json } from "./SimulatorHttp.js"

const Flags = Schema.Struct({
  securityCodeRequired: Schema.optional(Schema.Boolean),
  partialReversalAllowed: Schema.optional(Schema.Boolean),
  captureReversalAllowed: Schema.optional(Schema.Boolean)
})

const AddMerchant = Schema.Struct({
  id: Schema.optional(Schema.NonEmptyString),
  name: Schema.optional(Schema.String),
  mcc: Schema.optional(Schema.String.pipe(Schema.pattern(/^[0-9]{4}$/))),
  apiKey: Schema.optional(Schema.NonEmptyString),
  flags: Schema.optional(Flags)
})

const UpdateMerchant = Schema.Struct({
  mcc: Schema.optional(Schema.String.pipe(Schema.pattern(/^[0-9]{4}$/))),
  flags: Schema.optional(Flags)
})

const AddKey = Schema.Struct({
  kind: Schema.optionalWith(Schema.Literal("merchant", "partner"), { default: () => "merchant" as const }),
  key: Schema.optional(Schema.NonEmptyString)
})

const AddTerminal = Schema.Struct({
  serial_number: Schema.optional(Schema.NonEmptyString),
  terminal_type: Schema.optional(Schema.NonEmptyString),
  online: Schema.optional(Schema.Boolean)
})

const Timings = Schema.Record({ key: Schema.String, value: Schema.Number })

const PatchTerminal = Schema.Struct({
  online: Schema.optional(Schema.Boolean),
  listening: Schema.optional(Schema.Boolean),
  timings: Schema.optional(Timings),
  card: Schema.optional(
    Schema.Struct({
      pan: Schema.optional(Schema.String),
      scheme: Schema.optional(Schema.String),
      expiryMMYY: Schema.optional(Schema.String),
      holder: Schema.optional(Schema.String),
      tender: Schema.optional(Schema.Literal("CREDIT", "DEBIT")),
      whitelisted: Schema.optional(Schema.Boolean)
    })
  ),
  duplicateAnswer: Schema.optional(Schema.Literal("cancel", "continue")),
  tipMinor: Schema.optional(Schema.String),
  receiptsInline: Schema.optional(Schema.Boolean)
})

const AddFault = Schema.Struct({
  kind: Schema.Literal("drop-response", "error-after", "error-before", "delay", "misreport"),
  method: Schema.optional(Schema.String),
  path: Schema.optional(Schema.String),
  operation: Schema.optional(Schema.String),
  host: Schema.optional(Schema.Literal("main", "status")),
  status: Schema.optional(Schema.Int),
  delayMs: Schema.optional(Schema.NonNegativeInt),
  finStatus: Schema.optional(Schema.String),
  times: Schema.optional(Schema.NonNegativeInt)
})

const Milliseconds = Schema.Struct({ ms: Schema.NonNegative })
const Settle = Schema.Struct({
  timeoutMs: Schema.optionalWith(Schema.NonNegative, { default: () => 10_000 })
})

/** The admin router (mounted under /_sim). */
export const router = Effect.gen(function* () {
  const sim = yield* Simulator.Simulator
  const admin = sim.admin

  const body = <A, I>(schema: Schema.Schema<A, I>) =>
    HttpServerRequest.HttpServerRequest.pipe(
      Effect.flatMap((request) => request.text),
      Effect.mapError(() => new SimulatorError.ValidationFailed({ message: "Unreadable body" })),
      Effect.flatMap((text) =>
        Schema.decodeUnknown(Schema.parseJson(schema))(text === "" ? "{}" : text).pipe(
          Effect.mapError((e) => new SimulatorError.ValidationFailed({ message: e.message }))
        )
      )
    )

  const param = (name: string) =>
    Effect.map(HttpRouter.params, (params) => decodeURIComponent(params[name] ?? ""))

  const respond = <A>(
    effect: Effect.Effect<
      A,
      SimulatorError.SimulatorError,
      HttpServerRequest.HttpServerRequest | HttpRouter.RouteContext
    >,
    status = 200
  ): Effect.Effect<
    HttpServerResponse.HttpServerResponse,
    never,
    HttpServerRequest.HttpServerRequest | HttpRouter.RouteContext
  > =>
    effect.pipe(
      Effect.map((a) => json(a ?? { ok: true }, status)),
      Effect.catchAll((e) => errorResponse(sim, e))
    )

  return HttpRouter.empty
    .pipe(
      HttpRouter.get("/state", respond(admin.state)),
      HttpRouter.post("/reset", respond(Effect.as(admin.reset, { reset: true }))),
      HttpRouter.get("/clock", respond(admin.clock)),
      HttpRouter.post(
        "/clock/advance",
        respond(Effect.flatMap(body(Milliseconds), (b) => admin.advanceClock(b.ms)))
      ),
      HttpRouter.post("/merchants", respond(Effect.flatMap(body(AddMerchant), admin.addMerchant), 201)),
      HttpRouter.patch(
        "/merchants/:merchantId",
        respond(
          Effect.flatMap(Effect.zip(param("merchantId"), body(UpdateMerchant)), ([id, b]) =>
            admin.updateMerchant(id, b)
          )
        )
      ),
      HttpRouter.post(
        "/merchants/:merchantId/keys",
        respond(
          Effect.flatMap(Effect.zip(param("merchantId"), body(AddKey)), ([id, b]) =>
            admin.addKey(id, b.kind, b.key)
          ),
          201
        )
      ),
      HttpRouter.del("/keys/:key", respond(Effect.flatMap(param("key"), admin.revokeKey))),
      HttpRouter.post(
        "/merchants/:merchantId/terminals",
        respond(
          Effect.flatMap(Effect.zip(param("merchantId"), body(AddTerminal)), ([id, b]) =>
            admin.addTerminal(id, b)
          ),
          201
        )
      ),
      HttpRouter.get("/terminals", respond(admin.terminals))
    )
    .pipe(
      HttpRouter.get("/terminals/:serial", respond(Effect.flatMap(param("serial"), admin.terminal))),
      HttpRouter.patch(
        "/terminals/:serial",
        respond(
          Effect.flatMap(Effect.zip(param("serial"), body(PatchTerminal)), ([serial, b]) =>
            admin.updateTerminal(serial, b)
          )
        )
      ),
      HttpRouter.post(
        "/terminals/:serial/offline",
        respond(Effect.flatMap(param("serial"), (serial) => admin.updateTerminal(serial, { online: false })))
      ),
      HttpRouter.post(
        "/terminals/:serial/online",
        respond(Effect.flatMap(param("serial"), (serial) => admin.updateTerminal(serial, { online: true })))
      ),
      HttpRouter.post(
        "/terminals/:serial/cancel",
        respond(
          Effect.flatMap(param("serial"), (serial) =>
            Effect.as(admin.pressCancel(serial), { cancelled: true })
          )
        )
      ),
      HttpRouter.post(
        "/terminals/:serial/recovery",
        respond(
          Effect.flatMap(param("serial"), (serial) =>
            Effect.map(admin.startRecovery(serial), (kicked) => ({ kicked }))
          )
        )
      ),
      HttpRouter.post(
        "/recovery",
        respond(Effect.map(admin.startRecovery(undefined), (kicked) => ({ kicked })))
      ),
      HttpRouter.get("/timings", respond(Effect.map(admin.state, (s) => s.timings))),
      HttpRouter.put("/timings", respond(Effect.flatMap(body(Timings), admin.setTimings))),
      HttpRouter.post("/faults", respond(Effect.flatMap(body(AddFault), admin.addFault), 201)),
      HttpRouter.get("/faults", respond(admin.faults)),
      HttpRouter.del("/faults", respond(Effect.as(admin.clearFaults(undefined), { cleared: true }))),
      HttpRouter.del(
        "/faults/:id",
        respond(Effect.flatMap(param("id"), (id) => Effect.as(admin.clearFaults(id), { cleared: true })))
      ),
      HttpRouter.post(
        "/faults/callback-outage",
        respond(
          Effect.flatMap(body(Milliseconds), (b) =>
            Effect.map(admin.callbackOutage(b.ms), (until) => ({ until: until ?? null }))
          )
        )
      ),
      HttpRouter.get("/callbacks", respond(admin.deliveries)),
      HttpRouter.get("/counters", respond(admin.counters)),
      HttpRouter.get("/transactions", respond(admin.transactions)),
      HttpRouter.post(
        "/settle",
        respond(
          Effect.flatMap(body(Settle), (b) => Effect.map(admin.settle(b.timeoutMs), (idle) => ({ idle })))
        )
      )
    )
})
