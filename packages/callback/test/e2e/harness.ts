/**
 * The end-to-end harness: everything real but the clock. A fresh PostgreSQL database (the
 * event store and the execution queue of tillflow's engine), a worker, the HTTP
 * `TerminalCloud` talking over sockets to the simulator (served in-process, status host on
 * its own port), and the callback receiver on its own port, to which the simulator
 * delivers results. One `TestClock` drives the workflows, the engine and the simulator,
 * so "90 s later" takes no real time; faults and counters go through the simulator's
 * admin API under `/_sim`, over HTTP.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { CallbackHttp, CallbackReceiver } from "@tillflow/callback"
import { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import {
  CallbackRegistration,
  Identifiers,
  LinkedTerminalRules,
  PaymentProtocol,
  ProtocolSettings,
  type TerminalCloud
} from "@tillflow/core"
import { DurableEngine, EngineWorker, EventStore } from "@tillflow/engine"
import { HttpTerminalCloud, TerminalCloudConfig } from "@tillflow/http"
import { SimulatorServer } from "@tillflow/simulator"
import { SqlExecutionQueue, TestDatabase } from "@tillflow/store-sql"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import { createServer } from "node:http"
import { adminClient } from "@tillflow/simulator/testing"

/** Step timings of the simulated terminals (ms of simulated time). */
export const quick = {
  WaitingForCard: 1000,
  PinInput: 500,
  WaitingHostConnect: 100,
  WaitingHostSend: 100,
  WaitingHostReceive: 300,
  PrintingMerchantReceipt: 100,
  Reboot: 500
}

/** What a test needs besides the services. */
export interface E2E {
  readonly info: SimulatorServer.Info
  readonly callbackBaseUrl: string
  readonly terminal: {
    readonly serialNumber: Identifiers.SerialNumber
    readonly terminalType: Identifiers.TerminalType
  }
  /** Calls the simulator's admin API over HTTP. */
  readonly admin: (method: string, path: string, body?: unknown) => Effect.Effect<unknown>
  /** Approved charges the simulator counted on the terminal. */
  readonly charges: Effect.Effect<number>
}

export class Harness extends Context.Tag("test/E2E")<Harness, E2E>() {}

/** Options of the harness. */
export interface Options {
  readonly timings?: Partial<typeof quick>
  readonly settings?: Partial<ProtocolSettings.Settings>
  /** Start a worker (default true). */
  readonly worker?: boolean
  /** The receiver's process stops right after acknowledging: its results are never forwarded. */
  readonly loseForwarding?: boolean
  /** The lifecycles' money rules on linked operations (none: the protocol checks nothing). */
  readonly linkedRules?: LinkedTerminalRules.Options
}

/** The whole system, fresh per test. */
export const layer = (options: Options = {}) => {
  const start = Layer.effectDiscard(TestClock.setTime(Date.parse("2025-03-10T09:00:00Z")))
  const database = Layer.mergeAll(SqlExecutionQueue.layer).pipe(Layer.provideMerge(TestDatabase.layer))
  const engine = DurableEngine.layer({ pollInterval: "250 millis" })
  const simulator = SimulatorServer.layer({
    seed: 7,
    statusPort: 0,
    timings: { ...quick, ...options.timings }
  })
  const cloud: Layer.Layer<TerminalCloud.TerminalCloud, never, SimulatorServer.SimulatorInfo> =
    Layer.unwrapEffect(
      Effect.map(SimulatorServer.SimulatorInfo, (info) =>
        HttpTerminalCloud.layer(
          TerminalCloudConfig.make({
            apiKey: Redacted.make(info.apiKey),
            baseUrl: new URL(info.baseUrl),
            transactionsUrl: new URL(info.transactionsUrl),
            // The test clock runs far ahead of real time: no simulated timeout for real I/O.
            requestTimeout: Duration.hours(1)
          })
        )
      )
    )
  const receiverServer = NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })
  const receiver = HttpServer.serve(CallbackHttp.app).pipe(
    Layer.provide(
      options.loseForwarding === true
        ? CallbackReceiver.layer.pipe(
            Layer.provide(
              Layer.effect(
                WorkflowEngine,
                Effect.map(WorkflowEngine, (engine) => ({ ...engine, deferredDone: () => Effect.void }))
              )
            )
          )
        : CallbackReceiver.layer
    )
  )
  const harness = Layer.effect(
    Harness,
    Effect.gen(function* () {
      const info = yield* SimulatorServer.SimulatorInfo
      const server = yield* HttpServer.HttpServer
      const port = server.address._tag === "TcpAddress" ? server.address.port : 0
      const first = info.terminals[0]
      if (first === undefined) return yield* Effect.dieMessage("the simulator has no terminal")
      const admin = adminClient(info.adminUrl)
      const terminal = {
        serialNumber: Identifiers.SerialNumber.make(first.serial_number),
        terminalType: Identifiers.TerminalType.make(first.terminal_type)
      }
      return {
        info,
        callbackBaseUrl: `http://127.0.0.1:${port}/callbacks`,
        terminal,
        admin,
        charges: Effect.map(admin("GET", "/counters"), (counters) => {
          const c = counters as { readonly terminals: Record<string, { readonly charges: number }> }
          return c.terminals[first.serial_number]?.charges ?? 0
        })
      }
    })
  )
  const settings = Layer.unwrapEffect(
    Effect.map(Harness, (h) =>
      ProtocolSettings.layer({ callbackBaseUrl: Option.some(h.callbackBaseUrl), ...options.settings })
    )
  )
  const worker = options.worker === false ? Layer.empty : EngineWorker.layer({ pollInterval: "500 millis" })
  const protocol =
    options.linkedRules === undefined
      ? PaymentProtocol.layer
      : PaymentProtocol.layer.pipe(Layer.provide(LinkedTerminalRules.layer(options.linkedRules)))
  return Layer.mergeAll(protocol, worker, receiver).pipe(
    Layer.provideMerge(CallbackRegistration.registeredAttemptsLayer()),
    Layer.provideMerge(settings),
    Layer.provideMerge(harness),
    Layer.provideMerge(receiverServer),
    Layer.provideMerge(cloud),
    Layer.provideMerge(simulator),
    Layer.provideMerge(engine),
    Layer.provideMerge(database),
    Layer.provideMerge(start)
  )
}

const settle = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 3)))

/**
 * Runs an effect to its end, moving the test clock by `step` whenever the system has had a
 * few real milliseconds to do its I/O (PostgreSQL, HTTP).
 */
export const runToEnd = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  options: { readonly step?: Duration.DurationInput; readonly max?: Duration.DurationInput } = {}
): Effect.Effect<Exit.Exit<A, E>, never, R> =>
  Effect.gen(function* () {
    const fiber = yield* Effect.fork(effect)
    const step = Duration.toMillis(Duration.decode(options.step ?? "500 millis"))
    const max = Duration.toMillis(Duration.decode(options.max ?? "2 hours"))
    for (let elapsed = 0; ; elapsed += step) {
      for (let i = 0; i < 4; i++) yield* settle
      const done = yield* Fiber.poll(fiber)
      if (Option.isSome(done)) return done.value
      if (elapsed > max) return yield* Effect.dieMessage("did not end in time")
      yield* TestClock.adjust(Duration.millis(step))
    }
  })

/** Moves the test clock until `condition` holds. */
export const advanceUntil = <R>(
  condition: Effect.Effect<boolean, never, R>,
  max: Duration.DurationInput = "10 minutes"
) =>
  runToEnd(
    Effect.gen(function* () {
      while (!(yield* condition)) yield* Effect.sleep("500 millis")
    }),
    { max }
  )

/**
 * Every event of the streams the global log shows, each stream read whole. The global log
 * holds back what committed after a transaction still in flight (a worker's claim, a
 * receiver's forwarding): a stream read is not, so what a test has just seen end is there.
 */
const streamsRead = (keep: (streamId: string) => boolean) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.gen(function* () {
      const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 100_000 })
      const ids = [...new Set(page.events.map((e) => e.streamId))].filter(keep)
      const streams = yield* Effect.forEach(ids, (id) => store.readStream(id))
      return streams.flat().sort((a, b) => (a.globalPosition < b.globalPosition ? -1 : 1))
    }).pipe(Effect.orDie)
  )

/** The events of every payment stream. */
export const paymentEvents = streamsRead((id) => id.startsWith("payment-"))

/** Every event. */
export const everything = streamsRead(() => true)
