/**
 * Traces: the `OTEL_*` variables read as the OpenTelemetry specification writes them, and
 * the worker's spans of one sale received by a local OTLP/HTTP endpoint (a node:http
 * server on loopback taking JSON), checked as a tree: the execution's run, its step, the
 * step's POST to the terminal cloud.
 */
import { describe, expect, it } from "@effect/vitest"
import { Tracing, Worker, WorkerConfig } from "@tillflow/intake"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Tracer from "effect/Tracer"
import * as Fs from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"

const settingsOf = (env: Record<string, string>) =>
  Effect.either(
    Effect.withConfigProvider(Tracing.settings, ConfigProvider.fromMap(new Map(Object.entries(env))))
  )

describe("tracing settings from the OTEL_* variables", () => {
  it.effect("off when no endpoint is set, or with OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true", () =>
    Effect.gen(function* () {
      expect(yield* settingsOf({})).toEqual(Either.right(Option.none()))
      expect(yield* settingsOf({ OTEL_SERVICE_NAME: "x" })).toEqual(Either.right(Option.none()))
      const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }
      expect(yield* settingsOf({ ...endpoint, OTEL_TRACES_EXPORTER: "none" })).toEqual(
        Either.right(Option.none())
      )
      expect(yield* settingsOf({ ...endpoint, OTEL_SDK_DISABLED: "true" })).toEqual(
        Either.right(Option.none())
      )
    })
  )

  it.effect("the traces URL, protocol, headers and service name as the specification says", () =>
    Effect.gen(function* () {
      const base = yield* settingsOf({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/",
        OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=abc%3D1,tenant=t1",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test,service.name=from-attributes"
      })
      const s = Option.getOrThrow(Either.getOrThrow(base))
      expect(s.url).toBe("http://collector:4318/v1/traces")
      expect(s.protocol).toBe("http/protobuf")
      expect(Redacted.value(s.headers)).toEqual({ "x-api-key": "abc=1", tenant: "t1" })
      // The collector's key is redacted wherever the settings are printed.
      expect(String(s.headers)).not.toContain("abc")
      expect(s.serviceName).toBe("from-attributes")
      expect(Duration.toMillis(s.exportInterval)).toBe(5000)

      const specific = yield* settingsOf({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://traces:9999/custom",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_SERVICE_NAME: "tills",
        OTEL_BSP_SCHEDULE_DELAY: "250"
      })
      const t = Option.getOrThrow(Either.getOrThrow(specific))
      expect(t.url).toBe("http://traces:9999/custom")
      expect(t.protocol).toBe("http/json")
      expect(t.serviceName).toBe("tills")
      expect(Duration.toMillis(t.exportInterval)).toBe(250)
    })
  )

  it.effect("what cannot be honoured is refused, saying what is allowed", () =>
    Effect.gen(function* () {
      const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }
      const grpc = yield* settingsOf({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })
      expect(Either.isLeft(grpc) && String(grpc.left)).toContain('"grpc" is not supported: use http/protobuf')
      const zipkin = yield* settingsOf({ ...endpoint, OTEL_TRACES_EXPORTER: "zipkin" })
      expect(Either.isLeft(zipkin) && String(zipkin.left)).toContain("use otlp (the default) or none")
      const notUrl = yield* settingsOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })
      expect(Either.isLeft(notUrl) && String(notUrl.left)).toContain("not an http(s) URL")
    })
  )
})

describe("what is exported: the sampler of OTEL_TRACES_SAMPLER, SQL spans only when asked", () => {
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }
  const samplerOf = (env: Record<string, string>) =>
    Effect.map(settingsOf({ ...endpoint, ...env }), (s) => Either.map(s, (o) => Option.getOrThrow(o).sampler))

  it.effect(
    "parent-based always-on by default; the specification's samplers and ratio; the rest refused",
    () =>
      Effect.gen(function* () {
        expect(yield* samplerOf({})).toEqual(Either.right(Tracing.defaultSampler))
        expect(
          yield* samplerOf({
            OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
            OTEL_TRACES_SAMPLER_ARG: "0.25"
          })
        ).toEqual(Either.right({ rule: "traceidratio", parentBased: true, ratio: 0.25 }))
        expect(yield* samplerOf({ OTEL_TRACES_SAMPLER: "always_off" })).toEqual(
          Either.right({ rule: "always_off", parentBased: false, ratio: 0 })
        )
        const jaeger = yield* samplerOf({ OTEL_TRACES_SAMPLER: "jaeger_remote" })
        expect(Either.isLeft(jaeger) && String(jaeger.left)).toContain(
          '"jaeger_remote" is not supported: use one of'
        )
        const tooMuch = yield* samplerOf({
          OTEL_TRACES_SAMPLER: "traceidratio",
          OTEL_TRACES_SAMPLER_ARG: "1.5"
        })
        expect(Either.isLeft(tooMuch) && String(tooMuch.left)).toContain("expected a number from 0 to 1")
        const sql = yield* settingsOf({ ...endpoint, TILLFLOW_TRACE_SQL: "true" })
        expect(Option.getOrThrow(Either.getOrThrow(sql)).sqlSpans).toBe(true)
        expect(Option.getOrThrow(Either.getOrThrow(yield* settingsOf(endpoint))).sqlSpans).toBe(false)
      })
  )

  /** The spans `program` ends, as the sampler lets them through to the exporting tracer. */
  const exported = (
    options: { readonly sampler: Tracing.Sampler; readonly sqlSpans: boolean },
    program: Effect.Effect<unknown>
  ) =>
    Effect.gen(function* () {
      const ended: Array<{ readonly name: string; readonly traceId: string }> = []
      const native = yield* Effect.tracer
      const inner = Tracer.make({
        span: (...args) => {
          const span = native.span(...args)
          const end = span.end.bind(span)
          return Object.assign(span, {
            end: (endTime: bigint, exit: Exit.Exit<unknown, unknown>) => {
              ended.push({ name: span.name, traceId: span.traceId })
              end(endTime, exit)
            }
          })
        },
        context: native.context
      })
      yield* program.pipe(Effect.withTracer(Tracing.sampling(inner, options)))
      return ended
    })

  const payment = (i: number) =>
    Effect.void.pipe(
      Effect.withSpan("sql.execute"),
      Effect.zipRight(Effect.void.pipe(Effect.withSpan("attempt-1/send"))),
      Effect.withSpan(`payment-${i}`)
    )

  it.effect("a trace is kept or dropped whole; SQL statement spans are left out unless asked for", () =>
    Effect.gen(function* () {
      const all = yield* exported({ sampler: Tracing.defaultSampler, sqlSpans: false }, payment(0))
      expect(all.map((s) => s.name).sort()).toEqual(["attempt-1/send", "payment-0"])
      const withSql = yield* exported({ sampler: Tracing.defaultSampler, sqlSpans: true }, payment(0))
      expect(withSql.map((s) => s.name).sort()).toEqual(["attempt-1/send", "payment-0", "sql.execute"])
      const none = yield* exported(
        { sampler: { rule: "always_off", parentBased: true, ratio: 0 }, sqlSpans: true },
        payment(0)
      )
      expect(none).toEqual([])

      // A quarter of 400 payments, each whole (its two spans in one trace) or not at all.
      const quarter = yield* exported(
        { sampler: { rule: "traceidratio", parentBased: true, ratio: 0.25 }, sqlSpans: false },
        Effect.forEach(
          Array.from({ length: 400 }, (_, i) => i),
          payment,
          { discard: true }
        )
      )
      const traces = new Map<string, Array<string>>()
      for (const span of quarter) traces.set(span.traceId, [...(traces.get(span.traceId) ?? []), span.name])
      expect(traces.size).toBeGreaterThan(60)
      expect(traces.size).toBeLessThan(140)
      for (const names of traces.values()) expect(names).toHaveLength(2)
    })
  )
})

// ---------------------------------------------------------------------------------------

interface Span {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: Record<string, unknown> }>
}

/** A local OTLP/HTTP JSON endpoint: every span posted to `/v1/traces`. */
const collector = Effect.acquireRelease(
  Effect.async<{
    readonly server: Server
    readonly spans: Array<Span>
    readonly bodies: Array<string>
    readonly contentTypes: Array<string>
  }>((resume) => {
    const spans: Array<Span> = []
    const bodies: Array<string> = []
    const contentTypes: Array<string> = []
    const server = createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8")
        contentTypes.push(String(request.headers["content-type"]))
        if (
          request.method === "POST" &&
          request.url === "/v1/traces" &&
          request.headers["content-type"] === "application/json"
        ) {
          bodies.push(body)
          const data = JSON.parse(body) as {
            resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<Span> }> }>
          }
          for (const rs of data.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans)
        }
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ server, spans, bodies, contentTypes })))
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.close(() => resume(Effect.void))
    })
)

const freePort = Effect.async<number>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as AddressInfo).port
    server.close(() => resume(Effect.succeed(port)))
  })
})

const token = "tracing-test-token-0123456789"

const http = (url: string, init: RequestInit = {}) =>
  Effect.promise(async () => {
    const response = await fetch(url, {
      ...init,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }
    })
    return { status: response.status, body: (await response.json()) as unknown }
  })

const attribute = (span: Span, key: string): unknown => {
  const value = span.attributes.find((a) => a.key === key)?.value
  return value === undefined ? undefined : Object.values(value)[0]
}

describe("the OTLP exporter", () => {
  it.scopedLive("sends protobuf by default, and what it holds when released", () =>
    Effect.gen(function* () {
      const received = yield* collector
      const port = (received.server.address() as AddressInfo).port
      const settings = yield* Effect.withConfigProvider(
        Tracing.settings,
        ConfigProvider.fromMap(new Map([["OTEL_EXPORTER_OTLP_ENDPOINT", `http://127.0.0.1:${port}`]]))
      )
      // The layer is released when the effect ends: the span buffered is sent then.
      yield* Effect.void.pipe(Effect.withSpan("probe"), Effect.provide(Tracing.layer(settings)))
      expect(received.contentTypes).toContain("application/x-protobuf")
    })
  )
})

describe("the worker's traces", () => {
  it.scopedLive(
    "one sale's spans reach a local OTLP endpoint as a tree: the execution's run, its step, the POST to the terminal cloud",
    () =>
      Effect.gen(function* () {
        const received = yield* collector
        const folder = Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-tracing-"))
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => Fs.rmSync(folder, { recursive: true, force: true }))
        )
        const port = yield* freePort
        const collectorPort = (received.server.address() as AddressInfo).port
        const provider = ConfigProvider.fromMap(
          new Map([
            ["TILLFLOW_DATA_DIR", Path.join(folder, "data")],
            ["TILLFLOW_INTAKE_PORT", String(port)],
            ["TILLFLOW_INTAKE_TOKEN", token],
            ["TILLFLOW_SIMULATOR_FAST", "true"],
            ["OTEL_EXPORTER_OTLP_ENDPOINT", `http://127.0.0.1:${collectorPort}`],
            ["OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"],
            ["OTEL_SERVICE_NAME", "tillflow-test"]
          ])
        )
        const config = yield* Effect.withConfigProvider(WorkerConfig.load, provider)
        const tracing = yield* Effect.withConfigProvider(Tracing.settings, provider)
        const intake = `http://127.0.0.1:${port}`

        const view = yield* Effect.scoped(
          Effect.gen(function* () {
            yield* Layer.build(Worker.layer(config).pipe(Layer.provide(Tracing.layer(tracing))))
            const devices = (yield* http(`${intake}/v1/devices`)).body as Array<{ serialNumber: string }>
            const serial = devices[0]?.serialNumber ?? ""
            const sale = yield* http(`${intake}/v1/operations`, {
              method: "POST",
              body: JSON.stringify({
                idempotencyKey: "traced-sale",
                request: { operation: "sale", serial_number: serial, amount: "1050", currency: "EUR" },
                waitSeconds: 120
              })
            })
            expect(sale.status).toBe(200)
            return sale.body as { executionId: string; status: string }
          }).pipe(Effect.withConfigProvider(provider))
        ).pipe(Effect.provide(Logger.minimumLogLevel(LogLevel.Warning)))
        // Released: the exporter sent what it held.
        expect(view.status).toBe("succeeded")

        const spans = received.spans
        const byId = new Map(spans.map((s) => [s.spanId, s]))
        const ancestors = (span: Span): Array<Span> => {
          const out: Array<Span> = []
          for (
            let p = byId.get(span.parentSpanId ?? "");
            p !== undefined;
            p = byId.get(p.parentSpanId ?? "")
          ) {
            out.push(p)
          }
          return out
        }
        // The POST of the sale to the terminal host, under its step, under the execution's run.
        const post = spans.find(
          (s) => s.name === "http.client POST" && String(attribute(s, "url.path")).endsWith("/transactions")
        )
        expect(post).toBeDefined()
        const chain = ancestors(post as Span).map((s) => s.name)
        const run = chain.indexOf("DurableEngine.run")
        expect(run).toBeGreaterThan(0)
        expect(chain.slice(0, run)).toContain("TerminalCloud.sendTransaction")
        const runSpan = ancestors(post as Span)[run] as Span
        expect(attribute(runSpan, "executionId")).toBe(view.executionId)
        expect(attribute(runSpan, "workflow")).toBe("TerminalOperation")
        // The step: the activity that sends the first attempt, between the run and the call.
        expect(chain.slice(0, run)).toContain("attempt-1/send")
        // The result's receipt by callback, and the step that settles the outcome.
        expect(spans.some((s) => s.name === "CallbackReceiver.receive")).toBe(true)
        expect(spans.some((s) => s.name === "attempt-1/settle")).toBe(true)
        // The intake's request, and no secret anywhere in what was exported.
        expect(spans.some((s) => s.name === "Intake.start")).toBe(true)
        // One trace from the request to the outcome: every run of the execution (the one that
        // sends, the one that settles once the result came) continues the request's trace.
        const start = spans.find((s) => s.name === "Intake.start") as Span
        const runs = spans.filter(
          (s) => s.name === "DurableEngine.run" && attribute(s, "executionId") === view.executionId
        )
        expect(runs.length).toBeGreaterThan(1)
        expect(new Set(runs.map((s) => s.traceId))).toEqual(new Set([start.traceId]))
        const settle = spans.find((s) => s.name === "attempt-1/settle") as Span
        expect(settle.traceId).toBe(start.traceId)
        // The callback's receipt too, named by its execution.
        const recorded = spans.find((s) => s.name === "CallbackReceiver.record") as Span
        expect(recorded.traceId).toBe(start.traceId)
        expect(attribute(recorded, "executionId")).toBe(view.executionId)
        const exported = received.bodies.join("\n")
        expect(exported).not.toContain(token)
        // The service's API key and each attempt's callback token are redacted in every HTTP
        // span, the built-in simulator's own server and client spans included.
        const secretHeaders = spans.flatMap((s) =>
          s.attributes
            .filter((a) => /^http\.request\.header\.(apikeycloud|auth-token|authorization)$/.test(a.key))
            .map((a) => `${s.name} ${a.key}=${String(Object.values(a.value)[0])}`)
        )
        expect(secretHeaders.length).toBeGreaterThan(0)
        expect(secretHeaders.filter((h) => !h.endsWith("=<redacted>"))).toEqual([])
        expect(exported).toContain("tillflow-test")
        // The SQL driver's statement spans stay out unless TILLFLOW_TRACE_SQL asks for them.
        expect(spans.filter((s) => s.name.startsWith("sql.")).map((s) => s.name)).toEqual([])
      }),
    120_000
  )
})
