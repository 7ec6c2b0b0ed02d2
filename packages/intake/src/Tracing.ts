/**
 * Traces out of the worker: Effect's spans (an execution's run, its activities, the HTTP
 * calls to the terminal cloud, the intake's requests, the callback receipt) exported over
 * OTLP/HTTP by @effect/opentelemetry's exporter, configured by the standard `OTEL_*`
 * variables. Off unless an OTLP endpoint is given (or with `OTEL_TRACES_EXPORTER=none`,
 * `OTEL_SDK_DISABLED=true`): then no tracer is installed and spans cost what Effect's
 * default no-export tracer costs. The libraries only use Effect's tracer API; this module,
 * composed by `Program`, is the one place that knows an exporter exists.
 *
 * What is exported is decided here too: the sampler of `OTEL_TRACES_SAMPLER` (and its
 * ratio, `OTEL_TRACES_SAMPLER_ARG`), parent-based by default as the specification says, so a
 * payment's trace is kept or dropped whole; and the SQL driver's `sql.execute` spans (most
 * of a worker's spans) only with `TILLFLOW_TRACE_SQL=true`.
 */
import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Tracer from "effect/Tracer"

/** The OTLP protocols this exporter speaks (gRPC is not one of them). */
export const protocols = ["http/protobuf", "http/json"] as const
/** @see protocols */
export type Protocol = (typeof protocols)[number]

/** Where and how spans are exported. */
export interface Settings {
  /** The traces URL: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`. */
  readonly url: string
  readonly protocol: Protocol
  /** `OTEL_EXPORTER_OTLP_(TRACES_)HEADERS`: often an API key of the collector, so redacted. */
  readonly headers: Redacted.Redacted<Readonly<Record<string, string>>>
  /** `OTEL_SERVICE_NAME`, else `service.name` of `OTEL_RESOURCE_ATTRIBUTES`, else `tillflow`. */
  readonly serviceName: string
  /** `OTEL_BSP_SCHEDULE_DELAY` (milliseconds, 5000 by default): how often a batch is sent. */
  readonly exportInterval: Duration.Duration
  /** `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG` (default `parentbased_always_on`). */
  readonly sampler: Sampler
  /** `TILLFLOW_TRACE_SQL` (default false): whether the SQL driver's statement spans are exported. */
  readonly sqlSpans: boolean
}

/**
 * Which traces are exported, as `OTEL_TRACES_SAMPLER` names them: every one, none, or a
 * share of them chosen by trace id (so every span of a trace gets the same answer); parent
 * based, a span whose parent was sampled (or not) follows it, and only a root is decided by
 * the rule.
 */
export interface Sampler {
  readonly rule: "always_on" | "always_off" | "traceidratio"
  readonly parentBased: boolean
  /** The share of traces kept by `traceidratio`, 0 to 1. */
  readonly ratio: number
}

/** The samplers of the specification this worker honours. */
export const samplers = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio"
] as const

/** The default sampler of the specification. */
export const defaultSampler: Sampler = { rule: "always_on", parentBased: true, ratio: 1 }

/** The default service name. */
export const defaultServiceName = "tillflow"

const invalid = (path: string, message: string) => ConfigError.InvalidData([path], message)

/** `k1=v1,k2=v2` with URL-encoded values, as the OpenTelemetry specification writes headers. */
const parseHeaders = (text: string): Record<string, string> | undefined => {
  const out: Record<string, string> = {}
  for (const pair of text.split(",")) {
    if (pair.trim() === "") continue
    const at = pair.indexOf("=")
    if (at <= 0) return undefined
    try {
      out[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim())
    } catch {
      return undefined
    }
  }
  return out
}

const optional = (name: string) => Config.option(Config.string(name))

const decide = (c: {
  readonly disabled: boolean
  readonly exporter: string
  readonly tracesEndpoint: Option.Option<string>
  readonly endpoint: Option.Option<string>
  readonly protocol: Option.Option<string>
  readonly headers: Option.Option<Redacted.Redacted<string>>
  readonly serviceName: Option.Option<string>
  readonly resourceAttributes: Option.Option<string>
  readonly delay: number
  readonly sampler: Option.Option<string>
  readonly samplerArg: Option.Option<string>
  readonly sqlSpans: boolean
}): Either.Either<Option.Option<Settings>, ConfigError.ConfigError> => {
  const exporters = c.exporter.split(",").map((e) => e.trim())
  if (c.disabled || exporters.includes("none")) return Either.right(Option.none<Settings>())
  if (exporters.some((e) => e !== "otlp")) {
    return Either.left(
      invalid("OTEL_TRACES_EXPORTER", `"${c.exporter}" is not supported: use otlp (the default) or none`)
    )
  }
  const url = Option.orElse(c.tracesEndpoint, () =>
    Option.map(c.endpoint, (base) => `${base.replace(/\/+$/, "")}/v1/traces`)
  )
  if (Option.isNone(url)) return Either.right(Option.none<Settings>())
  if (!URL.canParse(url.value) || !/^https?:$/.test(new URL(url.value).protocol)) {
    return Either.left(
      invalid("OTEL_EXPORTER_OTLP_ENDPOINT", `"${url.value}" is not an http(s) URL of an OTLP/HTTP receiver`)
    )
  }
  const protocol = Option.getOrElse(c.protocol, () => "http/protobuf")
  if (!(protocols as ReadonlyArray<string>).includes(protocol)) {
    return Either.left(
      invalid(
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        `"${protocol}" is not supported: use ${protocols.join(" (the default) or ")}`
      )
    )
  }
  const headers = Option.match(c.headers, {
    onNone: () => ({}),
    onSome: (text) => parseHeaders(Redacted.value(text))
  })
  if (headers === undefined) {
    return Either.left(
      invalid(
        "OTEL_EXPORTER_OTLP_HEADERS",
        "expected name=value pairs separated by commas (values URL-encoded)"
      )
    )
  }
  if (c.delay <= 0) {
    return Either.left(invalid("OTEL_BSP_SCHEDULE_DELAY", "expected a positive number of milliseconds"))
  }
  const sampler = samplerOf(c.sampler, c.samplerArg)
  if (Either.isLeft(sampler)) return Either.left(sampler.left)
  const fromAttributes = Option.flatMap(c.resourceAttributes, (text) =>
    Option.fromNullable(/(?:^|,)\s*service\.name\s*=\s*([^,]+)/.exec(text)?.[1]?.trim())
  )
  return Either.right(
    Option.some<Settings>({
      url: url.value,
      protocol: protocol as Protocol,
      headers: Redacted.make(headers),
      serviceName: Option.getOrElse(
        Option.orElse(c.serviceName, () => fromAttributes),
        () => defaultServiceName
      ),
      exportInterval: Duration.millis(c.delay),
      sampler: sampler.right,
      sqlSpans: c.sqlSpans
    })
  )
}

/** The sampler named by `OTEL_TRACES_SAMPLER`, with the ratio of `OTEL_TRACES_SAMPLER_ARG`. */
const samplerOf = (
  name: Option.Option<string>,
  arg: Option.Option<string>
): Either.Either<Sampler, ConfigError.ConfigError> => {
  const chosen = Option.getOrElse(name, () => "parentbased_always_on")
    .trim()
    .toLowerCase()
  if (!(samplers as ReadonlyArray<string>).includes(chosen)) {
    return Either.left(
      invalid("OTEL_TRACES_SAMPLER", `"${chosen}" is not supported: use one of ${samplers.join(", ")}`)
    )
  }
  const parentBased = chosen.startsWith("parentbased_")
  const rule = chosen.replace("parentbased_", "") as Sampler["rule"]
  if (rule !== "traceidratio") return Either.right({ rule, parentBased, ratio: rule === "always_on" ? 1 : 0 })
  const ratio = Option.match(arg, { onNone: () => 1, onSome: (text) => Number(text.trim()) })
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1 || Option.exists(arg, (text) => text.trim() === "")) {
    return Either.left(
      invalid(
        "OTEL_TRACES_SAMPLER_ARG",
        `"${Option.getOrElse(arg, () => "")}" is not a ratio: expected a number from 0 to 1 (0.1 keeps one trace in ten)`
      )
    )
  }
  return Either.right({ rule, parentBased, ratio })
}

/** Whether the rule keeps the trace with this id (its last 13 hex digits read as a fraction). */
const keeps = (sampler: Sampler, traceId: string): boolean => {
  if (sampler.rule === "always_on") return true
  if (sampler.rule === "always_off") return false
  const digits = traceId.slice(-13)
  const fraction = /^[0-9a-f]{13}$/i.test(digits) ? parseInt(digits, 16) / 2 ** 52 : Math.random()
  return fraction < sampler.ratio
}

/** A span that is not exported: it keeps its ids so that its children stay in its trace. */
const unsampled = (span: Tracer.Span): Tracer.Span => ({
  _tag: "Span",
  name: span.name,
  spanId: span.spanId,
  traceId: span.traceId,
  parent: span.parent,
  context: span.context,
  status: span.status,
  attributes: new Map(),
  links: [],
  sampled: false,
  kind: span.kind,
  end: () => {},
  attribute: () => {},
  event: () => {},
  addLinks: () => {}
})

/** Whether a span is one of the SQL driver's statement spans. */
const isSql = (name: string): boolean => name.startsWith("sql.")

/**
 * `inner` (the exporting tracer) behind the sampler: a span it does not keep (or an SQL
 * statement's, unless `sqlSpans`) is never exported, the rest are exported by `inner`.
 */
export const sampling = (
  inner: Tracer.Tracer,
  options: { readonly sampler: Sampler; readonly sqlSpans: boolean }
): Tracer.Tracer =>
  Tracer.make({
    span(name, parent, context, links, startTime, kind) {
      const span = inner.span(name, parent, context, links, startTime, kind)
      const parentSampled = Option.map(parent, (p) => p.sampled)
      const sampled =
        options.sampler.parentBased && Option.isSome(parentSampled)
          ? parentSampled.value
          : keeps(options.sampler, span.traceId)
      return sampled && (options.sqlSpans || !isSql(name)) ? span : unsampled(span)
    },
    context: inner.context
  })

/**
 * The tracing settings from the `OTEL_*` variables: `None` when tracing is off. A protocol
 * or exporter this worker cannot honour is a configuration error naming what is allowed.
 */
export const settings: Config.Config<Option.Option<Settings>> = Config.all({
  disabled: Config.boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(false)),
  exporter: Config.string("OTEL_TRACES_EXPORTER").pipe(Config.withDefault("otlp")),
  tracesEndpoint: optional("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
  endpoint: optional("OTEL_EXPORTER_OTLP_ENDPOINT"),
  protocol: optional("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").pipe(
    Config.zipWith(optional("OTEL_EXPORTER_OTLP_PROTOCOL"), (traces, all) => Option.orElse(traces, () => all))
  ),
  headers: Config.option(Config.redacted("OTEL_EXPORTER_OTLP_TRACES_HEADERS")).pipe(
    Config.zipWith(Config.option(Config.redacted("OTEL_EXPORTER_OTLP_HEADERS")), (traces, all) =>
      Option.orElse(traces, () => all)
    )
  ),
  serviceName: optional("OTEL_SERVICE_NAME"),
  resourceAttributes: optional("OTEL_RESOURCE_ATTRIBUTES"),
  delay: Config.integer("OTEL_BSP_SCHEDULE_DELAY").pipe(Config.withDefault(5000)),
  sampler: optional("OTEL_TRACES_SAMPLER"),
  samplerArg: optional("OTEL_TRACES_SAMPLER_ARG"),
  sqlSpans: Config.boolean("TILLFLOW_TRACE_SQL").pipe(Config.withDefault(false))
}).pipe(Config.mapOrFail((c) => decide(c)))

/**
 * Installs the OTLP exporter as Effect's tracer for everything built after it (provide it
 * to the worker's layer); nothing when `settings` is `None`. The spans still buffered are
 * sent when the layer is released.
 */
export const layer = (options: Option.Option<Settings>): Layer.Layer<never> =>
  Option.match(options, {
    onNone: () => Layer.empty,
    onSome: (s) =>
      Layer.unwrapScoped(
        Effect.map(
          OtlpTracer.make({
            url: s.url,
            headers: Redacted.value(s.headers),
            resource: { serviceName: s.serviceName },
            exportInterval: s.exportInterval
          }),
          (exporting) => Layer.setTracer(sampling(exporting, s))
        )
      ).pipe(
        Layer.provide(
          s.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf
        ),
        Layer.provide(FetchHttpClient.layer)
      )
  })

/** {@link layer} from the `OTEL_*` variables of the current configuration provider. */
export const layerConfig: Layer.Layer<never, ConfigError.ConfigError> = Layer.unwrapEffect(
  Effect.map(settings, layer)
)
