/**
 * Secrets never reach spans or logs: calls that succeed and calls that fail (5xx,
 * dropped connection, business errors, undecodable answers) run under a recording
 * Tracer and Logger, and every span name, attribute, event and end state, every log
 * message, annotation and cause is searched for the API key, the callback token, the
 * terminal's ssk and a full card number.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Inspectable from "effect/Inspectable"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { Redaction } from "@tillflow/http"
import * as F from "./Fixtures.js"
import * as Server from "./ScriptedServer.js"

const jsonText = (u: unknown): string =>
  JSON.stringify(u, (_, v: unknown) => (typeof v === "bigint" ? v.toString() : v)) ?? String(u)

/**
 * A span's end state as text: a failure as an exporter records it (the pretty cause)
 * and as JSON; a success value only for our own spans — the platform's HTTP span ends
 * with the live response, whose rendering would read (consume) its body.
 */
const renderExit = (name: string, exit: Exit.Exit<unknown, unknown>): string =>
  Exit.isFailure(exit)
    ? `${Cause.pretty(exit.cause)}\n${jsonText(exit)}`
    : name.startsWith("TerminalCloud.")
      ? jsonText(exit)
      : ""

let ids = 0

class RecordingSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly spanId = `span-${++ids}`
  readonly traceId = "trace-1"
  readonly sampled = true
  status: Tracer.SpanStatus
  readonly attributes = new Map<string, unknown>()
  readonly events: Array<{
    readonly name: string
    readonly attributes?: Record<string, unknown> | undefined
  }> = []
  links: Array<Tracer.SpanLink>
  ended = ""

  constructor(
    readonly name: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    readonly context: Tracer.Span["context"],
    links: ReadonlyArray<Tracer.SpanLink>,
    startTime: bigint,
    readonly kind: Tracer.SpanKind
  ) {
    this.status = { _tag: "Started", startTime }
    this.links = [...links]
  }

  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
    this.ended = renderExit(this.name, exit)
  }

  attribute(key: string, value: unknown): void {
    this.attributes.set(key, value)
  }

  event(name: string, _startTime: bigint, attributes?: Record<string, unknown>): void {
    this.events.push({ name, attributes })
  }

  addLinks(links: ReadonlyArray<Tracer.SpanLink>): void {
    this.links.push(...links)
  }
}

const recordingTracer = (spans: Array<RecordingSpan>) =>
  Tracer.make({
    span(name, parent, context, links, startTime, kind) {
      const span = new RecordingSpan(name, parent, context, links, startTime, kind)
      spans.push(span)
      return span
    },
    context: (f) => f()
  })

interface LogLine {
  readonly level: string
  readonly message: string
  readonly annotations: string
  readonly cause: string
}

const recordingLogger = (lines: Array<LogLine>) =>
  Logger.make<unknown, void>(({ annotations, cause, logLevel, message }) => {
    lines.push({
      level: logLevel.label,
      message: Inspectable.format(message),
      annotations: jsonText(Object.fromEntries(annotations)),
      cause: Cause.isEmpty(cause) ? "" : Cause.pretty(cause)
    })
  })

const secrets = [F.API_KEY, F.CALLBACK_TOKEN, F.SSK, F.UNMASKED_PAN]

describe("secrets in spans and logs", () => {
  it.scopedLive(
    "the API key, callback token, ssk and full card number appear in no span and no log line",
    () =>
      Effect.gen(function* () {
        const spans: Array<RecordingSpan> = []
        const lines: Array<LogLine> = []
        const script = yield* Server.makeScript(F.API_KEY)
        const cloud = yield* F.client(yield* Server.start(script), { readRetries: 1 })
        script
          .answer("listDevices", Server.respond(503), Server.respond(200, F.devicesBody))
          .answer(
            "sendTransaction",
            Server.respond(202, F.acceptedBody),
            Server.respond(500, { error: "internal" }),
            Server.drop,
            Server.respond(400, F.numberedError(1001, "Device is busy"))
          )
          .answer(
            "transactionResult",
            Server.respond(200, { ...F.resultBody, unMaskedPan: F.UNMASKED_PAN }),
            Server.respond(200, { ...F.resultBody, totalAmount: "nope", unMaskedPan: F.UNMASKED_PAN })
          )
          .answer("motoSale", Server.respond(403, ""), Server.respond(503))

        const calls = Effect.all(
          [
            Effect.either(cloud.listDevices),
            Effect.either(cloud.sendTransaction(F.sale)),
            Effect.either(cloud.sendTransaction(F.sale)),
            Effect.either(cloud.sendTransaction(F.sale)),
            Effect.either(cloud.sendTransaction(F.sale)),
            Effect.either(cloud.transactionResult(F.resultId)),
            Effect.either(cloud.transactionResult(F.resultId)),
            Effect.either(cloud.motoSale(F.motoSale)),
            Effect.either(cloud.motoSale(F.motoSale))
          ],
          { concurrency: 1 }
        )
        const outcomes = yield* calls.pipe(
          Effect.withTracer(recordingTracer(spans)),
          Effect.provide(Logger.replace(Logger.defaultLogger, recordingLogger(lines))),
          Logger.withMinimumLogLevel(LogLevel.All)
        )

        // The calls did what the test needs: successes and each kind of failure.
        expect(outcomes.map((o) => (o._tag === "Right" ? "ok" : o.left._tag))).toEqual([
          "ok",
          "ok",
          "OutcomeUnknown",
          "OutcomeUnknown",
          "DeviceBusy",
          "ok",
          "OutcomeUnknown",
          "Forbidden",
          "OutcomeUnknown"
        ])
        // The recorders saw them: our spans, the platform's HTTP spans, the warnings.
        expect(spans.filter((s) => s.name === "TerminalCloud.sendTransaction")).toHaveLength(4)
        const httpSpans = spans.filter((s) => s.kind === "client" && s.name.startsWith("http.client"))
        expect(httpSpans.length).toBeGreaterThanOrEqual(10)
        for (const span of httpSpans) {
          expect(span.attributes.get("http.request.header.apikeycloud")).toBe("<redacted>")
        }
        expect(lines.some((l) => l.message.includes("outcome unknown"))).toBe(true)
        expect(lines.some((l) => l.level === "DEBUG")).toBe(true)
        // The secrets really travelled (so their absence below means something).
        expect(script.to("sendTransaction")[0]!.body).toContain(F.CALLBACK_TOKEN)
        expect(script.to("sendTransaction")[0]!.headers["apikeycloud"]).toBe(F.API_KEY)

        const spanText = spans
          .map((span) =>
            [
              span.name,
              jsonText(Object.fromEntries([...span.attributes].map(([k, v]) => [k, String(v)]))),
              jsonText(span.events),
              span.ended,
              // rendered again now, outside the calls, as a late exporter would
              span.status._tag === "Ended" ? renderExit(span.name, span.status.exit) : ""
            ].join("\n")
          )
          .join("\n")
        const logText = lines.map((l) => [l.message, l.annotations, l.cause].join("\n")).join("\n")
        for (const secret of secrets) {
          expect(spanText).not.toContain(secret)
          expect(logText).not.toContain(secret)
        }
      })
  )

  it("scrubs secret keys from JSON and from text that is not JSON", () => {
    const body = { token: "t0k", nested: { ssk: "s", cardToken: "kept" }, list: [{ unMaskedPan: "4111" }] }
    expect(JSON.parse(Redaction.scrubText(JSON.stringify(body)))).toEqual({
      token: "<redacted>",
      nested: { ssk: "<redacted>", cardToken: "kept" },
      list: [{ unMaskedPan: "<redacted>" }]
    })
    const truncated = '{"serial_number":"1","ssk":"s3cr3t","AUTH-TOKEN":"x"'
    const scrubbed = Redaction.scrubText(truncated)
    expect(scrubbed).not.toContain("s3cr3t")
    expect(scrubbed).toContain('"serial_number":"1"')
    expect(scrubbed).toContain('"AUTH-TOKEN":"<redacted>"')
  })
})
