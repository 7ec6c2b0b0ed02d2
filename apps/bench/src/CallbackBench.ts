/**
 * The callback receiver under load from another process: requests per second answered
 * 200 only after the result is durably appended (and the waiting workflow's deferred
 * resolved), and their p99 latency, beside a `node:http` server doing one insert per
 * request on the same database. Each request is a distinct registered attempt with its
 * own token, as the terminals deliver them.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { CallbackHttp, CallbackReceiver } from "@tillflow/callback"
import { CallbackRegistration, PaymentEvents, RemoteApi, ResultRedaction } from "@tillflow/core"
import { DurableEngine, EventStore, Redaction } from "@tillflow/engine"
import { PgEventStore, SqlExecutionQueue } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import * as Child from "./internal/Child.js"
import * as Measure from "./internal/Measure.js"
import * as Raw from "./internal/Raw.js"
import * as Scratch from "./internal/Scratch.js"
import type * as Section from "./internal/Section.js"

const connections = 16
const poolSize = 8

/** A terminal's result as the receiver gets it (decodes as a `TransactionResult`). */
const resultBody = (i: number) =>
  JSON.stringify({
    finStatus: "AUTHORISED",
    transactionReference: globalThis.crypto.randomUUID(),
    serialNumber: "0821032398",
    terminalType: "A920",
    totalAmount: 1000 + i,
    currency: "EUR",
    maskedCardNumber: "476173******0119",
    cardScheme: "VISA",
    authorisationCode: "A1B2C3",
    efttimestamp: 1615374961000 + i,
    transactionType: "SALE",
    recoveredTransaction: false
  })

interface LoadResult {
  readonly sent: number
  readonly ok: number
  readonly statuses: Readonly<Record<string, number>>
  readonly seconds: number
  readonly p50: number
  readonly p99: number
  readonly max: number
}

/**
 * The receiver on its lean path (`CallbackHttp.layerServer`, a plain `node:http` listener):
 * engine, queue and store on PostgreSQL. `multiStreamGroupCommit: false` sends each of the
 * store's multi-stream appends alone (the one-write reply's A/B; on by default).
 */
const receiverRuntime = (url: string, multiStreamGroupCommit: boolean) =>
  ManagedRuntime.make(
    CallbackHttp.layerServer({ port: 0, host: "127.0.0.1" }).pipe(
      Layer.provideMerge(CallbackReceiver.layer),
      Layer.provideMerge(DurableEngine.layer()),
      // The attempts this process registered, shared by the workflows and the receiver.
      Layer.provideMerge(CallbackRegistration.registeredAttemptsLayer()),
      Layer.provideMerge(SqlExecutionQueue.layerWith({ streamVersions: true })),
      Layer.provideMerge(
        PgEventStore.layer({
          url: Redacted.make(url),
          maxConnections: poolSize,
          applicationName: "bench-receiver",
          multiStreamGroupCommit
        })
      ),
      // The receiver's per-request info line is off, as the baseline logs nothing.
      Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
    )
  )

/** The baseline: node:http, body read and parsed, one insert into an events-shaped table, 200. */
const baselineServer = async (url: string) => {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, application_name: "bench-baseline" })
  await pool.query(Raw.rawTable)
  let version = 0
  const server = http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown
      pool
        .query(Raw.multiRowInsert(1), [
          request.url ?? "",
          ++version,
          globalThis.crypto.randomUUID(),
          "ResultReceived",
          1,
          JSON.stringify(body),
          "{}",
          "0".repeat(64)
        ])
        .then(
          () => {
            response.writeHead(200, { "content-type": "application/json" })
            response.end('{"received":true}')
          },
          () => {
            response.writeHead(503)
            response.end()
          }
        )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await pool.end()
    }
  }
}

type ReceiverRuntime = ReturnType<typeof receiverRuntime>

/** Where the requests of a file go: the receiver (attempts noted in its memory or not) or the baseline. */
type Target = "receiver" | "receiver-unknown" | "baseline"

/**
 * Random values drawn again because the store's card-number rule would refuse them: the
 * rule now passes UUIDs and digit runs touching a letter (hex digests), so this stays 0
 * unless it regresses (see "Findings" in docs/performance.md).
 */
interface Redraws {
  count: number
}

const draw = <A>(redraws: Redraws, make: () => A, refused: (a: A) => boolean): A => {
  const value = make()
  if (!refused(value)) return value
  redraws.count++
  return draw(redraws, make, refused)
}

/** A result body whose hash the store's card-number rule lets through. */
const bodyFor = (redraws: Redraws, i: number) =>
  Effect.gen(function* () {
    while (true) {
      const body = resultBody(i)
      const hash = yield* CallbackRegistration.resultHash(
        ResultRedaction.sanitise(JSON.parse(body) as Record<string, unknown>).value
      )
      if (!Redaction.containsCardNumber(hash)) return body
      redraws.count++
    }
  })

/** A callback token and its hash, which the store's card-number rule lets through. */
const tokenFor = (redraws: Redraws) =>
  Effect.gen(function* () {
    let token = `bench-token-${globalThis.crypto.randomUUID()}`
    let tokenHash = yield* CallbackRegistration.hashToken(token)
    while (Redaction.containsCardNumber(tokenHash)) {
      redraws.count++
      token = `bench-token-${globalThis.crypto.randomUUID()}`
      tokenHash = yield* CallbackRegistration.hashToken(token)
    }
    return { token, tokenHash }
  })

/**
 * Registers attempt `i` as the protocol does (token hash in the attempt's stream, the
 * payment's stream as a sale's holds when its result comes) and returns the delivery of
 * its result.
 */
const registerAttempt = (redraws: Redraws, i: number, notedInMemory: boolean) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const attemptId = draw(
      redraws,
      () => globalThis.crypto.randomUUID(),
      (id) => Redaction.containsCardNumber(CallbackRegistration.attemptStream(id))
    )
    const { token, tokenHash } = yield* tokenFor(redraws)
    const registration = CallbackRegistration.AttemptRegistered.make({
      attemptId,
      attempt: 1,
      workflowName: "TerminalOperation",
      executionId: `bench-execution-${i}`,
      paymentStream: `payment-bench-${i}`,
      deferredName: CallbackRegistration.resultDeferred(attemptId).name,
      operation: "sale",
      serialNumber: "0821032398",
      delivery: "callback",
      tokenHash,
      registeredAt: Date.now()
    })
    const event = yield* CallbackRegistration.events.encode(registration)
    yield* store.append(CallbackRegistration.attemptStream(attemptId), EventStore.NoStream, [event])
    // The payment's stream as a sale's holds when its result comes: what the
    // forwarding reads to tell a late result.
    const at = Date.now()
    const attemptFields = { attempt: 1, attemptId, at }
    yield* store.append(
      registration.data.paymentStream,
      EventStore.NoStream,
      yield* PaymentEvents.events.encodeAll([
        PaymentEvents.OperationRequested.make({
          executionId: registration.data.executionId,
          operation: "sale",
          serialNumber: "0821032398",
          terminalType: "A920",
          delivery: "callback",
          requestedAt: at,
          deadlineAt: at + 300_000,
          at
        }),
        PaymentEvents.AttemptRecorded.make({
          ...attemptFields,
          transactionReference: globalThis.crypto.randomUUID()
        }),
        PaymentEvents.AttemptAccepted.make({
          ...attemptFields,
          transactionResultId: `0821032398-${at}`
        })
      ])
    )
    // As the protocol's send step does once the registration is stored.
    if (notedInMemory) {
      const attempts = yield* CallbackRegistration.RegisteredAttempts
      attempts.note({ registration: registration.data, version: 1, resultHashes: [] })
    }
    return {
      path: `/callbacks/${attemptId}`,
      headers: { [RemoteApi.AUTH_TOKEN_HEADER]: token },
      body: yield* bodyFor(redraws, i)
    }
  })

/** Files of requests for the load generator, the receiver's to attempts registered beforehand. */
const requestFiles = (runtime: ReceiverRuntime, dir: string, firstIndex = 0) => {
  let registered = firstIndex
  const redraws: Redraws = { count: 0 }
  const register = (count: number, notedInMemory: boolean) =>
    runtime.runPromise(
      Effect.forEach(
        Array.from({ length: count }, () => registered++),
        (i) => registerAttempt(redraws, i, notedInMemory),
        { concurrency: poolSize }
      )
    )
  const write = async (name: string, count: number, target: Target) => {
    const file = path.join(dir, `${name}.json`)
    const requests =
      target !== "baseline"
        ? await register(count, target === "receiver")
        : Array.from({ length: count }, (_, i) => ({
            path: `/callbacks/${globalThis.crypto.randomUUID()}`,
            headers: { [RemoteApi.AUTH_TOKEN_HEADER]: "baseline" },
            body: resultBody(i)
          }))
    fs.writeFileSync(file, JSON.stringify(requests))
    return file
  }
  return { write, registered: () => registered - firstIndex, redrawn: () => redraws.count }
}

/** Has the load generator send a file's requests to `url`; every one must be acknowledged. */
const fire = async (load: Child.Child, url: string, file: string): Promise<LoadResult> => {
  load.send({ run: { url, file, connections, maxSeconds: 120 } })
  const answer = await load.next(
    (m) => Child.field<LoadResult>("result")(m) ?? Child.field<string>("failed")(m)
  )
  if (typeof answer === "string") throw new Error(`load generator: ${answer}`)
  if (answer.ok !== answer.sent) {
    throw new Error(
      `${answer.sent - answer.ok} of ${answer.sent} requests not acknowledged: ${JSON.stringify(answer.statuses)}`
    )
  }
  return answer
}

/** The servers under load and the load generator, ready. */
interface Rig {
  readonly load: Child.Child
  readonly receiverUrl: string
  /** The same receiver through @effect/platform's server (`HttpServer.serve(CallbackHttp.app)`'s handler). */
  readonly platformUrl: string
  /** The receiver whose store coalesces multi-stream appends (`multiStreamGroupCommit`). */
  readonly coalescedUrl: string
  /** Its A/B twin: a runtime of its own as well, whose store sends each one alone (the path before). */
  readonly aloneUrl: string
  readonly close: () => Promise<void>
  readonly baselineUrl: string
  /** Waits until the receiver has forwarded every result it acknowledged. */
  readonly forwarded: () => Promise<void>
}

const serverUrl = async (runtime: ReceiverRuntime) => {
  const server = await runtime.runPromise(HttpServer.HttpServer)
  return `http://127.0.0.1:${server.address._tag === "TcpAddress" ? server.address.port : 0}`
}

const ready = async (
  runtime: ReceiverRuntime,
  coalesced: ReceiverRuntime,
  alone: ReceiverRuntime,
  baselineUrl: string,
  load: Child.Child
): Promise<Rig> => {
  const server = await runtime.runPromise(HttpServer.HttpServer)
  const coalescedUrl = await serverUrl(coalesced)
  const aloneUrl = await serverUrl(alone)
  const forwarded = () =>
    Promise.all(
      [runtime, coalesced, alone].map((r) =>
        r.runPromise(Effect.flatMap(CallbackReceiver.CallbackReceiver, (receiver) => receiver.forwarded))
      )
    ).then(() => undefined)
  const port = server.address._tag === "TcpAddress" ? server.address.port : 0
  const receiverUrl = `http://127.0.0.1:${port}`
  // The platform's path to the same receiver, for the A/B in the same rounds.
  const handler = await runtime.runPromise(NodeHttpServer.makeHandler(CallbackHttp.app))
  const platform = http.createServer(handler)
  await new Promise<void>((resolve) => platform.listen(0, "127.0.0.1", resolve))
  const address = platform.address()
  const platformUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
  const close = () =>
    new Promise<void>((resolve) => {
      platform.close(() => resolve())
      platform.closeIdleConnections()
    })
  await load.next(Child.field("ready"), 60_000)
  return { load, receiverUrl, platformUrl, coalescedUrl, aloneUrl, close, baselineUrl, forwarded }
}

/** What the rounds measured, by server. */
interface Measured {
  readonly results: {
    readonly receiver: Array<LoadResult>
    readonly platform: Array<LoadResult>
    readonly unknown: Array<LoadResult>
    readonly coalesced: Array<LoadResult>
    readonly alone: Array<LoadResult>
    readonly baseline: Array<LoadResult>
  }
  /**
   * This process's CPU per acknowledged request (the servers run here; the load does not),
   * the receiver's including the forwarding of the results it finishes after its replies.
   */
  readonly cpuPerRequest: {
    readonly receiver: Array<number>
    readonly platform: Array<number>
    readonly unknown: Array<number>
    readonly coalesced: Array<number>
    readonly alone: Array<number>
    readonly baseline: Array<number>
  }
  /** How long after the last reply the last forwarding ended. */
  readonly drainMillis: Array<number>
  /** The rate counting the forwarding. */
  readonly forwardedRate: {
    readonly receiver: Array<number>
    readonly platform: Array<number>
    readonly unknown: Array<number>
    readonly coalesced: Array<number>
    readonly alone: Array<number>
  }
}

/** The measured rounds: requests written beforehand, a warm-up, then the three cases interleaved. */
const measure = async (
  context: Section.Context,
  rig: Rig,
  files: ReturnType<typeof requestFiles>,
  coalescedFiles: ReturnType<typeof requestFiles>,
  aloneFiles: ReturnType<typeof requestFiles>,
  perRound: number
): Promise<Measured> => {
  context.log(`callback: registering ${perRound * context.rounds} attempts`)
  const rounds: Array<{
    readonly receiver: string
    readonly platform: string
    readonly unknown: string
    readonly coalesced: string
    readonly alone: string
    readonly baseline: string
  }> = []
  for (let round = 0; round < context.rounds; round++) {
    rounds.push({
      receiver: await files.write(`receiver-${round}`, perRound, "receiver"),
      platform: await files.write(`platform-${round}`, perRound, "receiver"),
      unknown: await files.write(`unknown-${round}`, perRound, "receiver-unknown"),
      coalesced: await coalescedFiles.write(`coalesced-${round}`, perRound, "receiver"),
      alone: await aloneFiles.write(`alone-${round}`, perRound, "receiver"),
      baseline: await files.write(`baseline-${round}`, perRound, "baseline")
    })
  }
  // Warm-up of both servers (JIT, pools).
  await fire(rig.load, rig.receiverUrl, await files.write("warm-receiver", 100, "receiver"))
  await fire(rig.load, rig.platformUrl, await files.write("warm-platform", 100, "receiver"))
  await fire(rig.load, rig.coalescedUrl, await coalescedFiles.write("warm-coalesced", 100, "receiver"))
  await fire(rig.load, rig.aloneUrl, await aloneFiles.write("warm-alone", 100, "receiver"))
  await fire(rig.load, rig.baselineUrl, await files.write("warm-baseline", 100, "baseline"))
  await rig.forwarded()

  const measured: Measured = {
    results: { receiver: [], platform: [], unknown: [], coalesced: [], alone: [], baseline: [] },
    cpuPerRequest: { receiver: [], platform: [], unknown: [], coalesced: [], alone: [], baseline: [] },
    drainMillis: [],
    forwardedRate: { receiver: [], platform: [], unknown: [], coalesced: [], alone: [] }
  }
  const fireReceiver = async (
    file: string,
    kind: "receiver" | "platform" | "unknown" | "coalesced" | "alone"
  ) => {
    const cpu = process.cpuUsage()
    const url =
      kind === "platform"
        ? rig.platformUrl
        : kind === "coalesced"
          ? rig.coalescedUrl
          : kind === "alone"
            ? rig.aloneUrl
            : rig.receiverUrl
    const r = await fire(rig.load, url, file)
    const end = performance.now()
    await rig.forwarded()
    const drain = performance.now() - end
    if (kind === "receiver") measured.drainMillis.push(drain)
    measured.forwardedRate[kind].push(r.ok / (r.seconds + drain / 1000))
    const used = process.cpuUsage(cpu)
    measured.cpuPerRequest[kind].push((used.user + used.system) / 1000 / Math.max(1, r.ok))
    measured.results[kind].push(r)
    return r.ok / r.seconds
  }
  context.log(`callback: ${perRound} requests per round over ${connections} connections`)
  const after: Measure.Case = {
    name: "receiver",
    run: (round) => fireReceiver(rounds[round]?.receiver ?? "", "receiver")
  }
  const coalesced: Measure.Case = {
    name: "receiver, multi-stream appends coalesced",
    run: (round) => fireReceiver(rounds[round]?.coalesced ?? "", "coalesced")
  }
  const alone: Measure.Case = {
    name: "receiver, multi-stream appends alone (the A/B's twin)",
    run: (round) => fireReceiver(rounds[round]?.alone ?? "", "alone")
  }
  await Measure.interleave(
    context.rounds,
    [
      {
        name: "node:http + one insert",
        run: async (round) => {
          const cpu = process.cpuUsage()
          const r = await fire(rig.load, rig.baselineUrl, rounds[round]?.baseline ?? "")
          const used = process.cpuUsage(cpu)
          measured.cpuPerRequest.baseline.push((used.user + used.system) / 1000 / Math.max(1, r.ok))
          measured.results.baseline.push(r)
          return r.ok / r.seconds
        }
      },
      after,
      // The A/B of the multi-stream group commit: two runtimes that serve nothing else, in
      // either order (CALLBACK_COALESCED_FIRST=1), to tell the change from the place in the round.
      ...(process.env.CALLBACK_COALESCED_FIRST === "1" ? [coalesced, alone] : [alone, coalesced]),
      {
        name: "receiver on @effect/platform's server",
        run: (round) => fireReceiver(rounds[round]?.platform ?? "", "platform")
      },
      {
        name: "receiver, attempts registered elsewhere",
        run: (round) => fireReceiver(rounds[round]?.unknown ?? "", "unknown")
      }
    ],
    context.log
  )
  return measured
}

/** Every acknowledged delivery must be a recorded result (not a refusal, not undecodable), forwarded. */
const checkRecorded = async (url: string, results: Measured["results"]) => {
  const check = new pg.Client({ connectionString: url })
  await check.connect()
  const recorded = Number(
    (await check.query("SELECT count(*) AS n FROM events WHERE type = 'ResultReceived'")).rows[0]?.n ?? 0
  )
  // Every one of them forwarded to its workflow, after the reply.
  const resolved = Number(
    (await check.query("SELECT count(*) AS n FROM events WHERE type = 'DeferredResolved'")).rows[0]?.n ?? 0
  )
  await check.end()
  if (resolved !== recorded) throw new Error(`${resolved} results forwarded for ${recorded} recorded`)
  const expected =
    [
      ...results.receiver,
      ...results.platform,
      ...results.unknown,
      ...results.coalesced,
      ...results.alone
    ].reduce((sum, r) => sum + r.ok, 0) + 400
  if (recorded !== expected) throw new Error(`${recorded} results recorded for ${expected} acknowledged`)
}

/** The figures and the Markdown details of the section. */
const report = (
  measured: Measured,
  perRound: number,
  attempts: { readonly registered: number; readonly redrawn: number }
): Section.Result => {
  const { results, cpuPerRequest, drainMillis, forwardedRate } = measured
  const figures: Array<Measure.Figure> = [
    {
      section: "callback",
      name: "acknowledged after durable append",
      unit: "req/s",
      rounds: results.receiver.map((r) => r.ok / r.seconds),
      baseline: {
        name: "node:http + one INSERT per request",
        rounds: results.baseline.map((r) => r.ok / r.seconds)
      },
      target: { _tag: "RatioAtLeast", ratio: 0.7 }
    },
    {
      section: "callback",
      name: "p99 latency of those requests",
      unit: "ms",
      rounds: results.receiver.map((r) => r.p99),
      baseline: { name: "p99 of node:http + one INSERT", rounds: results.baseline.map((r) => r.p99) },
      target: { _tag: "RatioAtMost", ratio: 2 }
    }
  ]
  const details = [
    `Per round: ${perRound} deliveries from a separate load-generator process (\`processes/LoadGenerator.ts\`, ` +
      `node:http keep-alive, ${connections} connections, each sending its next request when the answer is in), each to ` +
      "a distinct attempt registered beforehand (its `AttemptRegistered` with the token's hash), with the token in " +
      "`AUTH-TOKEN` and a ~350-byte JSON result. The receiver: `CallbackHttp.layerServer` (the route on a plain " +
      "`node:http` listener, the lean path), `CallbackReceiver` over the PostgreSQL event store, the SQL execution queue and the durable " +
      `engine, on a pool of ${poolSize}. The attempts are registered as the protocol's send step does (the ` +
      "registration appended, then noted in the process's `RegisteredAttempts`); per delivery the receiver checks " +
      "the token against the noted hash (node:crypto), appends `ResultReceived` at the noted version and answers " +
      "200; after the reply one of its forwarders (16) looks for a settled outcome in the payment's stream (holding " +
      "`OperationRequested`, `AttemptRecorded` and `AttemptAccepted`, as a sale's does when its result comes) and " +
      "resolves the workflow's deferred (appends `DeferredResolved` without reading the execution's stream, wakes " +
      "the execution): three statements. A round ends when " +
      "the last forwarding has too (its CPU counted in the receiver's). The executions are not running (nothing is " +
      "woken): the receiver's cost alone. Logging at Warning (the per-request " +
      `info line off). Baseline: \`node:http\`, body read and \`JSON.parse\`d, one INSERT into an events-shaped table ` +
      `through a \`pg.Pool\` of ${poolSize}, then 200. After the run the suite checks that every acknowledged delivery ` +
      "is a `ResultReceived` in the store.",
    "",
    `CPU of the server process per acknowledged request, forwarding included: receiver ${Measure.median(cpuPerRequest.receiver).toFixed(2)} ms, ` +
      `baseline ${Measure.median(cpuPerRequest.baseline).toFixed(2)} ms (medians of the rounds). The last forwarding ` +
      `ended a median ${Measure.formatNumber(Measure.median(drainMillis))} ms after the last reply of a round: ` +
      `acknowledged and forwarded, ${Measure.formatNumber(Measure.median(forwardedRate.receiver))} req/s ` +
      `(${(Measure.median(forwardedRate.receiver) / Measure.median(results.baseline.map((r) => r.ok / r.seconds))).toFixed(2)}× ` +
      "the baseline's median), the rate a sustained load would get.",
    "",
    "Group commit of the one-write reply's multi-stream appends, in the same rounds: the same receiver whose " +
      "store coalesces them (`multiStreamGroupCommit: true`, `tillflow_append_groups`, the default; a runtime that serves only this case): " +
      `${Measure.formatNumber(Measure.median(results.coalesced.map((r) => r.ok / r.seconds)))} req/s ` +
      `(${Measure.ratioOfRounds(
        results.coalesced.map((r) => r.ok / r.seconds),
        results.baseline.map((r) => r.ok / r.seconds)
      ).toFixed(
        2
      )}× the baseline), p99 ${Measure.formatNumber(Measure.median(results.coalesced.map((r) => r.p99)))} ms, ` +
      `${Measure.median(cpuPerRequest.coalesced).toFixed(2)} ms of CPU per request, acknowledged and forwarded ` +
      `${Measure.formatNumber(Measure.median(forwardedRate.coalesced))} req/s; against its twin alone (\`multiStreamGroupCommit: false\`, the path before; its own runtime too: ` +
      `${Measure.formatNumber(Measure.median(results.alone.map((r) => r.ok / r.seconds)))} req/s, ` +
      `${Measure.median(cpuPerRequest.alone).toFixed(2)} ms of CPU per request), coalesced ÷ alone: ` +
      `${Measure.ratioOfRounds(
        results.coalesced.map((r) => r.ok / r.seconds),
        results.alone.map((r) => r.ok / r.seconds)
      ).toFixed(2)}× the rate, ` +
      `${Measure.ratioOfRounds(
        results.coalesced.map((r) => r.p99),
        results.alone.map((r) => r.p99)
      ).toFixed(2)}× the p99, ` +
      `${Measure.ratioOfRounds(cpuPerRequest.coalesced, cpuPerRequest.alone).toFixed(2)}× the CPU per request ` +
      "(medians of per-round ratios).",
    "",
    "The same receiver through @effect/platform's server (`NodeHttpServer`'s handler of `CallbackHttp.app`, " +
      `measured in the same rounds): ${Measure.formatNumber(Measure.median(results.platform.map((r) => r.ok / r.seconds)))} req/s, ` +
      `p99 ${Measure.formatNumber(Measure.median(results.platform.map((r) => r.p99)))} ms, ` +
      `${Measure.median(cpuPerRequest.platform).toFixed(2)} ms of CPU per request; lean path against it: ` +
      `${Measure.median(results.receiver.map((r, i) => r.ok / r.seconds / ((results.platform[i]?.ok ?? 0) / (results.platform[i]?.seconds ?? 1)))).toFixed(2)}× ` +
      "(median of per-round ratios).",
    "",
    "Attempts registered by another process (not in this one's memory; the receiver reads the attempt's stream " +
      `first): ${Measure.formatNumber(Measure.median(results.unknown.map((r) => r.ok / r.seconds)))} req/s, ` +
      `p99 ${Measure.formatNumber(Measure.median(results.unknown.map((r) => r.p99)))} ms, ` +
      `${Measure.median(cpuPerRequest.unknown).toFixed(2)} ms of CPU per request (medians of the rounds).`,
    "",
    `Random attempt ids, token hashes or result hashes drawn again because the store's card-number rule refuses ` +
      `them: ${attempts.redrawn} for ${attempts.registered} attempts (see "Findings").`,
    "",
    "| round | receiver req/s | p50 ms | p99 ms | max ms | baseline req/s | p50 ms | p99 ms | max ms |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...results.receiver.map((r, i) => {
      const b = results.baseline[i]
      const f = Measure.formatNumber
      return `| ${i + 1} | ${f(r.ok / r.seconds)} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.max)} | ${b === undefined ? "" : `${f(b.ok / b.seconds)} | ${f(b.p50)} | ${f(b.p99)} | ${f(b.max)}`} |`
    }),
    "",
    Measure.roundsTable(figures)
  ].join("\n")
  return { figures, details }
}

/** The section. */
export const section: Section.Section = {
  name: "callback",
  title: "Callback receiver",
  run: (context) =>
    Scratch.using("callback", async (scratch) => {
      const perRound = context.quick ? 400 : 800
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tillflow-bench-callback-"))
      const runtime = receiverRuntime(scratch.url, true)
      const coalesced = receiverRuntime(scratch.url, true)
      const alone = receiverRuntime(scratch.url, false)
      const baseline = await baselineServer(scratch.url)
      const load = Child.start("apps/bench/src/processes/LoadGenerator.ts", {
        profileDir: context.profileDir,
        label: "load"
      })
      let rig: Rig | undefined
      try {
        rig = await ready(runtime, coalesced, alone, baseline.url, load)
        const files = requestFiles(runtime, dir)
        const coalescedFiles = requestFiles(coalesced, dir, 1_000_000)
        const aloneFiles = requestFiles(alone, dir, 2_000_000)
        const measured = await measure(context, rig, files, coalescedFiles, aloneFiles, perRound)
        await checkRecorded(scratch.url, measured.results)
        const result = report(measured, perRound, {
          registered: files.registered() + coalescedFiles.registered() + aloneFiles.registered(),
          redrawn: files.redrawn()
        })
        for (const line of result.details.split("\n").slice(2, 9)) if (line !== "") context.log(line)
        return result
      } finally {
        await load.stop()
        await rig?.close()
        await baseline.close()
        await runtime.dispose()
        await coalesced.dispose()
        await alone.dispose()
        fs.rmSync(dir, { recursive: true, force: true })
      }
    })
}
