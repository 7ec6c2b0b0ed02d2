/**
 * The worker of the end-to-end benchmark, in its own process so its memory is its own:
 * tillflow's engine and worker on PostgreSQL (DATABASE_URL), the payment protocol, the
 * HTTP client to the simulator (SIM_* variables) and the callback receiver on a loopback
 * port the simulator delivers results to. On `{"run": {…}}` it keeps `inFlight` sales
 * going (one at a time per terminal, callback delivery) until `maxSeconds` have passed
 * (or each terminal made `paymentsPerTerminal`), and answers `{"report": {…}}` with a timeline of completed payments and memory.
 * Completions are seen by one query every 100 ms over the executions in flight (awaiting
 * each one with `execute` would poll the queue once per payment).
 *
 * Many merchants (the `e2e-merchants` section): with SIM_MERCHANTS_FILE (the simulator's
 * added merchants, each with its API key and terminals) and TILLFLOW_KEK, the worker's calls
 * take their keys from the merchant registry on its store (`MerchantKeys.fromRegistry` over
 * `SqlMerchantRegistry`, keys sealed with `KeyWrapper`), each merchant registered with its
 * key at start; a run with `merchants` drives those merchants' terminals, each sale started
 * within `MerchantKeys.forMerchant(id)`, and may add a `flood` of one merchant's sales queued
 * at once on its terminals, or a `motoFlood` of its terminal-less MOTO sales (`Moto.Sale`
 * on a card token the merchant's first terminal tokenized once: no terminal holds them
 * back, only the merchant's share). TENANT_CONCURRENCY sets the worker's `tenantConcurrency`.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as SqlClient from "@effect/sql/SqlClient"
import { CallbackHttp, CallbackReceiver } from "@tillflow/callback"
import {
  CallbackRegistration,
  Identifiers,
  KeyWrapper,
  MerchantKeys,
  MerchantRegistry,
  Money,
  MotoWorkflow,
  PaymentProtocol,
  ProtocolSettings,
  TerminalOperations
} from "@tillflow/core"
import { DurableEngine, EngineWorker, type EventStore } from "@tillflow/engine"
import { HttpTerminalCloud, TerminalCloudConfig } from "@tillflow/http"
import { PgEventStore, SqlExecutionQueue, SqlMerchantRegistry } from "@tillflow/store-sql"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as fs from "node:fs"
import * as v8 from "node:v8"
import { performance } from "node:perf_hooks"
import pg from "pg"
import * as Child from "../internal/Child.js"

interface Run {
  readonly inFlight: number
  /** Stops after this long: loops still waiting are interrupted (the payments stay in flight). */
  readonly maxSeconds: number
  /** Each terminal stops after this many payments (unbounded when absent). */
  readonly paymentsPerTerminal?: number | undefined
  /** Prefix of the idempotency keys (a fresh one per run). */
  readonly prefix: string
  /** Seconds into the run at which the heap is measured after a full GC. */
  readonly checkpoints: ReadonlyArray<number>
  /** Completed payments at which the heap is measured after a full GC (the history run). */
  readonly checkpointsCompleted?: ReadonlyArray<number> | undefined
  /** No payment is started once this many have been (the history run); those in flight finish. */
  readonly totalPayments?: number | undefined
  /** A payment not finished after this long is given up (its terminal stays blocked). */
  readonly giveUpSeconds: number
  /** Counts the SQL statements the worker sends during the run, by kind. */
  readonly census?: boolean | undefined
  /**
   * Drives the merchants of SIM_MERCHANTS_FILE instead of the default merchant's terminals:
   * their terminals in turn (`inFlight` of them), each sale within `forMerchant`; those of
   * `skip` left idle.
   */
  readonly merchants?: { readonly skip?: ReadonlyArray<string> | undefined } | undefined
  /** Also `sales` sales of `merchant` started at once, round robin on its terminals. */
  readonly flood?: { readonly merchant: string; readonly sales: number } | undefined
  /**
   * Also `sales` terminal-less MOTO sales of `merchant` started at once, each of its own
   * amount (the simulator refuses the same card and amount twice in a row as a duplicate).
   */
  readonly motoFlood?: { readonly merchant: string; readonly sales: number } | undefined
}

// The statement census: every query the `pg` driver sends (the pool's clients and the
// LISTEN connection alike) is counted by its first words while a census run is on.
let census: Map<string, number> | undefined
const statementKind = (text: string): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  const cte = /^WITH (\w+) AS \(\s*(\w+)/i.exec(flat)
  if (cte !== null)
    return `WITH ${cte[1]} AS (${cte[2]} …) ${/\)\s*(INSERT INTO \w+|SELECT|UPDATE \w+)/i.exec(flat)?.[1] ?? ""}`
  const words = /^(SELECT .*? FROM \w+|SELECT \w+\(|INSERT INTO \w+|UPDATE \w+|DELETE FROM \w+|\w+)/i.exec(
    flat
  )
  return (words?.[1] ?? flat.slice(0, 40)).slice(0, 70)
}
const originalQuery = pg.Client.prototype.query as (...args: Array<unknown>) => unknown
pg.Client.prototype.query = function (this: pg.Client, ...args: Array<unknown>) {
  if (census !== undefined) {
    const first = args[0]
    const text =
      typeof first === "string"
        ? first
        : typeof first === "object" && first !== null && "text" in first && typeof first.text === "string"
          ? first.text
          : "(other)"
    const kind = statementKind(text)
    // The driver's own queries (the watcher, the counts) are not the worker's work.
    if (!text.includes("/* bench */")) census.set(kind, (census.get(kind) ?? 0) + 1)
  }
  return originalQuery.apply(this, args)
} as typeof pg.Client.prototype.query

const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined) throw new Error(`${name} is not set`)
  return value
}

const terminals = JSON.parse(fs.readFileSync(env("SIM_TERMINALS_FILE"), "utf8")) as ReadonlyArray<{
  readonly serial_number: string
  readonly terminal_type: string
}>
/** The simulator's added merchants (the many-merchants bench), when given. */
const merchantsFile = process.env["SIM_MERCHANTS_FILE"]
const merchants = (
  merchantsFile === undefined ? [] : JSON.parse(fs.readFileSync(merchantsFile, "utf8"))
) as ReadonlyArray<{
  readonly id: string
  readonly apiKey: string
  readonly terminals: ReadonlyArray<{ readonly serial_number: string; readonly terminal_type: string }>
}>
const tenantConcurrency =
  process.env["TENANT_CONCURRENCY"] === undefined ? undefined : Number(process.env["TENANT_CONCURRENCY"])
const concurrency = Number(process.env["WORKER_CONCURRENCY"] ?? "64")
const poolSize = Number(process.env["POOL_SIZE"] ?? "10")

// The callback route as the worker serves it: `CallbackHttp`'s plain listener (the lean path).
const receiverServer = CallbackHttp.layerServer({ port: 0, host: "127.0.0.1" })
const settings = Layer.unwrapEffect(
  Effect.map(HttpServer.HttpServer, (server) =>
    ProtocolSettings.layer({
      defaultDelivery: "callback",
      callbackBaseUrl: Option.some(
        `http://127.0.0.1:${server.address._tag === "TcpAddress" ? server.address.port : 0}/callbacks`
      )
    })
  )
)
const cloud = HttpTerminalCloud.layer(
  TerminalCloudConfig.make({
    apiKey: Redacted.make(env("SIM_API_KEY")),
    baseUrl: new URL(env("SIM_BASE_URL")),
    transactionsUrl: new URL(env("SIM_TRANSACTIONS_URL"))
  })
)
// With merchants, each call's key from the registry (what the intake's `merchantsLayer`
// composes when TILLFLOW_KEK is set); else the configured key alone.
const keys: Layer.Layer<never, never, SqlClient.SqlClient | EventStore.EventStore> =
  merchantsFile === undefined
    ? Layer.empty
    : MerchantKeys.layerFromRegistry(Redacted.make(env("SIM_API_KEY"))).pipe(
        Layer.provideMerge(SqlMerchantRegistry.layer),
        Layer.provide(KeyWrapper.layerConfig),
        Layer.orDie
      )
const app = Layer.mergeAll(
  PaymentProtocol.layer,
  MotoWorkflow.layer,
  EngineWorker.layer({ workerId: "bench-e2e", concurrency, pollInterval: "200 millis", tenantConcurrency })
).pipe(
  Layer.provideMerge(settings),
  Layer.provideMerge(receiverServer),
  Layer.provideMerge(CallbackReceiver.layer),
  Layer.provideMerge(CallbackRegistration.registeredAttemptsLayer()),
  Layer.provideMerge(cloud),
  Layer.provideMerge(keys),
  // Completions are watched by the driver's own query: callers' polling stays rare.
  Layer.provideMerge(DurableEngine.layer({ pollInterval: "10 seconds" })),
  Layer.provideMerge(SqlExecutionQueue.layerWith({ streamVersions: true })),
  Layer.provideMerge(
    PgEventStore.layer({
      url: Redacted.make(env("DATABASE_URL")),
      maxConnections: poolSize,
      applicationName: "bench-e2e"
    })
  ),
  // Per-payment info lines off; warnings and errors stay.
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

const runtime = ManagedRuntime.make(app)

const memory = () => {
  const usage = process.memoryUsage()
  return { rss: usage.rss, heapUsed: usage.heapUsed, external: usage.external }
}

/**
 * Where the resident memory is at one moment (issue 29, peak RSS): the process's figures and
 * each V8 heap space's committed and used size, in bytes.
 */
const breakdown = () => {
  const usage = process.memoryUsage()
  return {
    rss: usage.rss,
    heapTotal: usage.heapTotal,
    heapUsed: usage.heapUsed,
    external: usage.external,
    arrayBuffers: usage.arrayBuffers,
    spaces: v8.getHeapSpaceStatistics().map((space) => ({
      name: space.space_name,
      size: space.space_size,
      used: space.space_used_size
    }))
  }
}

const gc = (globalThis as { readonly gc?: () => void }).gc

/** Each flooding merchant's card token for its MOTO sales, once tokenized. */
const motoTokens = new Map<string, Identifiers.CardToken>()

/**
 * A card token of `merchant` (a MOTO sale needs one): a `saleAndTokenizeCard` on its first
 * terminal, once per merchant and before any run's clock starts.
 */
const motoTokenOf = (merchantId: string) =>
  Effect.gen(function* () {
    const known = motoTokens.get(merchantId)
    if (known !== undefined) return known
    const merchant = merchants.find((m) => m.id === merchantId)
    const terminal = merchant?.terminals[0]
    if (terminal === undefined) return yield* Effect.dieMessage(`merchant ${merchantId} has no terminal`)
    const outcome = yield* TerminalOperations.saleAndTokenizeCard(
      {
        serialNumber: Identifiers.SerialNumber.make(terminal.serial_number),
        terminalType: Identifiers.TerminalType.make(terminal.terminal_type),
        amount: Money.make(999n, "EUR")
      },
      { idempotencyKey: `moto-token-${merchantId}`, delivery: "callback" }
    ).pipe(MerchantKeys.forMerchant(merchantId), Effect.orDie)
    const token = outcome._tag === "Approved" ? outcome.facts.cardToken : undefined
    if (token === undefined || token === "")
      return yield* Effect.dieMessage(
        `merchant ${merchantId}: the tokenizing sale gave no card token (${outcome._tag})`
      )
    const cardToken = Identifiers.CardToken.make(token)
    motoTokens.set(merchantId, cardToken)
    return cardToken
  })

const drive = (run: Run) =>
  runtime.runPromise(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const motoToken = run.motoFlood === undefined ? undefined : yield* motoTokenOf(run.motoFlood.merchant)
      // The executions in flight: the deferred their terminal's loop awaits, and when it gives up.
      const waiting = new Map<
        string,
        { readonly deferred: Deferred.Deferred<string | null>; readonly giveUpAt: number }
      >()
      const startBreakdown = breakdown()
      const started = performance.now()
      const cpu = process.cpuUsage()
      const deadline = started + run.maxSeconds * 1000
      const elapsed = () => (performance.now() - started) / 1000
      const statuses: Record<string, number> = {}
      // The first executions that did not succeed, explained in the report by their events.
      const unsuccessful: Array<{ readonly executionId: string; readonly status: string }> = []
      let completed = 0
      let givenUp = 0
      // Each completed sale's time from its start to its outcome seen (ms), by merchant ("" = own).
      const durations: Record<string, Array<number>> = {}
      let floodCompleted = 0
      // The flood's executions by status (a MOTO sale declined still ends its execution succeeded).
      const floodStatuses: Record<string, number> = {}
      const timeline: Array<{
        readonly t: number
        readonly completed: number
        readonly rss: number
        readonly heapUsed: number
        readonly external: number
      }> = []
      const checkpoints: Array<{
        readonly completed: number
        readonly events: number
        readonly t: number
        readonly rss: number
        readonly heapUsed: number
        readonly afterRun: boolean
      }> = []
      const pendingCheckpoints = [...run.checkpoints].sort((a, b) => a - b)
      const pendingCompleted = [...(run.checkpointsCompleted ?? [])].sort((a, b) => a - b)
      let startedPayments = 0
      if (run.census === true) census = new Map()
      const eventsStored = Effect.map(
        sql<{ readonly n: string }>`/* bench */ SELECT count(*)::text AS n FROM events`,
        (rows) => Number(rows[0]?.n ?? 0)
      )
      // The heap after a full GC, with what the store holds by then.
      const checkpoint = (afterRun: boolean) =>
        Effect.gen(function* () {
          gc?.()
          const after = memory()
          checkpoints.push({
            completed,
            events: yield* eventsStored,
            t: elapsed(),
            rss: after.rss,
            heapUsed: after.heapUsed,
            afterRun
          })
          // Also on disk as it is taken, so that a long run cut short keeps its checkpoints.
          const progress = process.env["E2E_PROGRESS_FILE"]
          if (progress !== undefined) fs.appendFileSync(progress, `${JSON.stringify(checkpoints.at(-1))}\n`)
        }).pipe(Effect.orDie)

      // Watches the executions in flight; one query for all of them. It also gives up on
      // those past their time (null), so a terminal's loop needs no timer and fiber of its own.
      const watch = Effect.gen(function* () {
        while (true) {
          yield* Effect.sleep("100 millis")
          const ids = Array.from(waiting.keys())
          if (ids.length > 0) {
            const rows = yield* sql<{ readonly execution_id: string; readonly status: string }>`
              /* bench */ SELECT execution_id, status FROM tillflow_executions
              WHERE ${sql.in("execution_id", ids)} AND status IN ('succeeded', 'failed', 'interrupted', 'stuck')`
            for (const row of rows) {
              const entry = waiting.get(row.execution_id)
              waiting.delete(row.execution_id)
              if (entry !== undefined) yield* Deferred.succeed(entry.deferred, row.status)
            }
            const time = performance.now()
            for (const [id, entry] of waiting) {
              if (entry.giveUpAt > time) continue
              waiting.delete(id)
              yield* Deferred.succeed(entry.deferred, null)
            }
          }
        }
      }).pipe(Effect.orDie)
      const watcher = yield* Effect.fork(watch)
      // The memory breakdown at the highest resident memory sampled.
      let peak: ReturnType<typeof breakdown> | undefined
      // One sample a second, on a timer of its own (the watcher's query may take longer).
      const sample = Effect.gen(function* () {
        while (true) {
          const m = memory()
          if (m.rss > (peak?.rss ?? 0)) peak = breakdown()
          timeline.push({ t: elapsed(), completed, rss: m.rss, heapUsed: m.heapUsed, external: m.external })
          const next = pendingCheckpoints[0]
          if (next !== undefined && elapsed() >= next) {
            pendingCheckpoints.shift()
            yield* checkpoint(false)
          }
          const nextCompleted = pendingCompleted[0]
          if (nextCompleted !== undefined && completed >= nextCompleted) {
            while ((pendingCompleted[0] ?? Number.POSITIVE_INFINITY) <= completed) pendingCompleted.shift()
            yield* checkpoint(false)
          }
          yield* Effect.sleep("1 second")
        }
      })
      const sampler = yield* Effect.fork(sample)

      const terminalLoop = (
        terminal: (typeof terminals)[number],
        index: number,
        merchant: string | undefined
      ) =>
        Effect.gen(function* () {
          for (let n = 0; n < (run.paymentsPerTerminal ?? Number.POSITIVE_INFINITY); n++) {
            if (startedPayments >= (run.totalPayments ?? Number.POSITIVE_INFINITY)) return
            startedPayments++
            const request = {
              operation: "sale" as const,
              serialNumber: Identifiers.SerialNumber.make(terminal.serial_number),
              terminalType: Identifiers.TerminalType.make(terminal.terminal_type),
              amount: Money.make(BigInt(1000 + ((index + n) % 500)), "EUR"),
              transactionReference: yield* Identifiers.makeTransactionReference
            }
            const deferred = yield* Deferred.make<string | null>()
            const startedAt = performance.now()
            const executionId = yield* TerminalOperations.start(request, {
              idempotencyKey: `${run.prefix}-${terminal.serial_number}-${n}`,
              delivery: "callback"
            }).pipe(MerchantKeys.forMerchant(merchant))
            waiting.set(executionId, { deferred, giveUpAt: performance.now() + run.giveUpSeconds * 1000 })
            const status = yield* Deferred.await(deferred)
            if (status !== null) (durations[merchant ?? ""] ??= []).push(performance.now() - startedAt)
            if (status === null) {
              // Its terminal stays held by the unfinished execution: this terminal is done.
              givenUp++
              return
            }
            statuses[status] = (statuses[status] ?? 0) + 1
            if (status !== "succeeded" && unsuccessful.length < 5) unsuccessful.push({ executionId, status })
            completed++
          }
        })

      // The terminals driven, each with the merchant its sales are started for.
      const skip = new Set(run.merchants?.skip ?? [])
      const driven: ReadonlyArray<{
        readonly terminal: (typeof terminals)[number]
        readonly merchant: string | undefined
      }> =
        run.merchants === undefined
          ? terminals.map((terminal) => ({ terminal, merchant: undefined }))
          : merchants
              .filter((m) => !skip.has(m.id))
              .flatMap((m) => m.terminals.map((terminal) => ({ terminal, merchant: m.id })))
      // A flood sale started: wait for its outcome (or give up), and count it.
      const tallyFlood = (executionId: string, deferred: Deferred.Deferred<string | null>) =>
        Effect.gen(function* () {
          waiting.set(executionId, { deferred, giveUpAt: performance.now() + run.giveUpSeconds * 1000 })
          const status = yield* Deferred.await(deferred)
          if (status !== null) floodCompleted++
          floodStatuses[status ?? "given up"] = (floodStatuses[status ?? "given up"] ?? 0) + 1
        })
      // The flood: its sales started at once, queued behind each other on the merchant's terminals.
      const flood = run.flood
      const floodMerchant = flood === undefined ? undefined : merchants.find((m) => m.id === flood.merchant)
      const floodSales =
        flood === undefined || floodMerchant === undefined
          ? Effect.void
          : Effect.forEach(
              Array.from({ length: flood.sales }, (_, i) => i),
              (i) =>
                Effect.gen(function* () {
                  const terminal = floodMerchant.terminals[i % floodMerchant.terminals.length]
                  if (terminal === undefined) return
                  const deferred = yield* Deferred.make<string | null>()
                  const executionId = yield* TerminalOperations.start(
                    {
                      operation: "sale" as const,
                      serialNumber: Identifiers.SerialNumber.make(terminal.serial_number),
                      terminalType: Identifiers.TerminalType.make(terminal.terminal_type),
                      amount: Money.make(BigInt(2000 + i), "EUR"),
                      transactionReference: yield* Identifiers.makeTransactionReference
                    },
                    { idempotencyKey: `${run.prefix}-flood-${i}`, delivery: "callback" }
                  ).pipe(MerchantKeys.forMerchant(floodMerchant.id))
                  yield* tallyFlood(executionId, deferred)
                }),
              { concurrency: "unbounded", discard: true }
            )
      // The MOTO flood: its sales started at once, tied to no terminal (only the merchant's share holds them).
      const motoFlood = run.motoFlood
      const motoFloodSales =
        motoFlood === undefined || motoToken === undefined
          ? Effect.void
          : Effect.forEach(
              Array.from({ length: motoFlood.sales }, (_, i) => i),
              (i) =>
                Effect.gen(function* () {
                  const deferred = yield* Deferred.make<string | null>()
                  const executionId = yield* MotoWorkflow.Sale.execute(
                    {
                      requestId: `${run.prefix}-moto-${i}`,
                      cardToken: motoToken,
                      amount: Money.make(BigInt(5000 + i), "EUR")
                    },
                    { discard: true }
                  ).pipe(MerchantKeys.forMerchant(motoFlood.merchant))
                  yield* tallyFlood(executionId, deferred)
                }),
              { concurrency: "unbounded", discard: true }
            )
      yield* Effect.all(
        [
          floodSales,
          motoFloodSales,
          Effect.forEach(
            driven.slice(0, run.inFlight),
            ({ terminal, merchant }, index) => terminalLoop(terminal, index, merchant),
            { concurrency: "unbounded", discard: true }
          )
        ],
        { concurrency: "unbounded", discard: true }
      ).pipe(Effect.timeout(Math.max(0, deadline - performance.now())), Effect.option)
      const seconds = elapsed()
      const used = process.cpuUsage(cpu)
      timeline.push({ t: seconds, completed, ...memory() })
      const final = memory()
      yield* Fiber.interrupt(watcher)
      yield* Fiber.interrupt(sampler)
      const statements = census === undefined ? [] : [...census.entries()].sort((a, b) => b[1] - a[1])
      census = undefined
      yield* checkpoint(true)
      // Each one's execution stream, as event types, and the data of its last event (the
      // store holds nothing secret: it refuses card numbers and keeps no token).
      const explained = yield* Effect.forEach(unsuccessful, ({ executionId, status }) =>
        Effect.map(
          sql<{ readonly type: string; readonly data: unknown }>`
            /* bench */ SELECT e.type, e.data FROM events e
            JOIN tillflow_executions x ON x.stream_id = e.stream_id
            WHERE x.execution_id = ${executionId} ORDER BY e.version`,
          (rows) => ({
            executionId,
            status,
            types: rows.map((row) => row.type),
            last: JSON.stringify(rows[rows.length - 1]?.data ?? null).slice(0, 600)
          })
        )
      ).pipe(Effect.orDie)
      return {
        unsuccessful: explained,
        seconds,
        completed,
        inFlightAtEnd: waiting.size,
        cpuMs: (used.user + used.system) / 1000,
        givenUp,
        statuses,
        timeline,
        checkpoints,
        peakRss: Math.max(final.rss, ...timeline.map((s) => s.rss)),
        peakBreakdown: peak,
        startBreakdown,
        statements,
        durations,
        floodCompleted,
        floodStatuses
      }
    })
  )

// The merchants registered with their keys, sealed under TILLFLOW_KEK (a fresh store each time).
const registerMerchants = (registry: MerchantRegistry.Service) =>
  Effect.gen(function* () {
    for (const merchant of merchants) {
      yield* registry.register({ id: merchant.id, name: merchant.id, mcc: "5812" })
      yield* registry.addKey(merchant.id, "merchant", Redacted.make(merchant.apiKey))
    }
  })

runtime
  .runPromise(
    Effect.flatMap(Effect.serviceOption(MerchantRegistry.MerchantRegistry), (registry) =>
      Option.isNone(registry) || merchants.length === 0 ? Effect.void : registerMerchants(registry.value)
    )
  )
  .then(() => {
    Child.tell({ ready: true })
    Child.onCommand((command) => {
      const body = Child.field<Run>("run")(command)
      if (body === undefined) return
      drive(body).then(
        (report) => Child.tell({ report }),
        (error: unknown) => Child.tell({ failed: String(error) })
      )
    })
  })
  .catch((error: unknown) => {
    process.stderr.write(`end-to-end worker failed to start: ${String(error)}\n`)
    process.exit(1)
  })

const stop = () => {
  runtime.dispose().finally(() => process.exit(0))
}
process.once("SIGTERM", stop)
process.once("SIGINT", stop)
