import { describe, expect, it } from "@effect/vitest"
import { Prometheus, Worker, WorkerConfig } from "@tillflow/intake"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as LogLevel from "effect/LogLevel"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const withEnv = (env: Record<string, string>, file?: Record<string, unknown>) => {
  let path: string | undefined
  if (file !== undefined) {
    path = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-config-")), "tillflow.config.json")
    Fs.writeFileSync(path, JSON.stringify(file))
  }
  const envProvider = ConfigProvider.fromMap(new Map(Object.entries(env)), { pathDelim: "_" })
  const provider =
    path === undefined
      ? envProvider
      : envProvider.pipe(
          ConfigProvider.orElse(() =>
            ConfigProvider.fromMap(WorkerConfig.readConfigFile(path), { pathDelim: "_" })
          )
        )
  return Effect.withConfigProvider(WorkerConfig.load, provider)
}

describe("WorkerConfig", () => {
  it.effect(
    "the console's operators come from TILLFLOW_OPERATORS or the file TILLFLOW_OPERATORS_FILE names; a bad one is refused, naming the key",
    () =>
      Effect.gen(function* () {
        expect((yield* withEnv({})).intake.operators.operators.size).toBe(0)
        const hash = `pbkdf2-sha256$1000$${"a".repeat(22)}$${"b".repeat(43)}`
        const entries = JSON.stringify([{ name: "ana", role: "operator", secret: hash }])
        expect([
          ...(yield* withEnv({ TILLFLOW_OPERATORS: entries })).intake.operators.operators.keys()
        ]).toEqual(["ana"])
        const file = Path.join(
          Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-operators-")),
          "operators.json"
        )
        Fs.writeFileSync(file, entries)
        expect((yield* withEnv({ TILLFLOW_OPERATORS_FILE: file })).intake.operators.operators.size).toBe(1)
        const clear = yield* Effect.flip(
          withEnv({
            TILLFLOW_OPERATORS: JSON.stringify([{ name: "ana", role: "operator", secret: "hunter2" }])
          })
        )
        expect(String(clear)).toContain("TILLFLOW_OPERATORS")
        expect(String(clear)).toContain("never the secret itself")
        const missing = yield* Effect.flip(withEnv({ TILLFLOW_OPERATORS_FILE: `${file}.missing` }))
        expect(String(missing)).toContain("cannot read")
        expect(String(missing)).toContain("ENOENT")
      })
  )

  it.effect(
    "merchants' own tokens come from TILLFLOW_INTAKE_TOKENS, each limited to its merchants; a token given instead of its SHA-256, or no merchant, is refused naming the key",
    () =>
      Effect.gen(function* () {
        expect((yield* withEnv({})).intake.tokens.bySha256.size).toBe(0)
        const sha256 = "a".repeat(64)
        const tokens = (yield* withEnv({
          TILLFLOW_INTAKE_TOKENS: JSON.stringify([
            { name: "cafe-pos", role: "operator", merchants: ["cafe-sol"], sha256 }
          ])
        })).intake.tokens
        expect(tokens.bySha256.get(sha256)).toEqual({
          name: "cafe-pos",
          role: "operator",
          via: "token",
          merchants: ["cafe-sol"]
        })
        const clear = yield* Effect.flip(
          withEnv({
            TILLFLOW_INTAKE_TOKENS: JSON.stringify([
              { name: "cafe-pos", role: "operator", merchants: ["cafe-sol"], sha256: "cafe-pos-token-1234" }
            ])
          })
        )
        expect(String(clear)).toContain("TILLFLOW_INTAKE_TOKENS")
        expect(String(clear)).toContain("never the token itself")
        const unlimited = yield* Effect.flip(
          withEnv({
            TILLFLOW_INTAKE_TOKENS: JSON.stringify([
              { name: "cafe-pos", role: "operator", merchants: [], sha256 }
            ])
          })
        )
        expect(String(unlimited)).toContain("TILLFLOW_INTAKE_TOKENS")
      })
  )

  it.effect(
    "a merchant's fair share comes from TILLFLOW_MERCHANT_CONCURRENCY; none by default, 0 refused",
    () =>
      Effect.gen(function* () {
        expect((yield* withEnv({})).worker.merchantConcurrency).toEqual(Option.none())
        expect((yield* withEnv({ TILLFLOW_MERCHANT_CONCURRENCY: "4" })).worker.merchantConcurrency).toEqual(
          Option.some(4)
        )
        const zero = yield* Effect.flip(withEnv({ TILLFLOW_MERCHANT_CONCURRENCY: "0" }))
        expect(String(zero)).toContain("TILLFLOW_MERCHANT_CONCURRENCY must be 1 to 1000")
      })
  )

  it.effect(
    "a merchant's rate limit comes from TILLFLOW_MERCHANT_RATE_LIMIT and _BURST (also from the file); none by default; bad values refused, saying what is allowed",
    () =>
      Effect.gen(function* () {
        expect((yield* withEnv({})).worker.merchantRateLimit).toEqual(Option.none())
        expect((yield* withEnv({ TILLFLOW_MERCHANT_RATE_LIMIT: "20/s" })).worker.merchantRateLimit).toEqual(
          Option.some({ count: 20, intervalMillis: 1_000, burst: 20 })
        )
        expect(
          (yield* withEnv({ TILLFLOW_MERCHANT_RATE_LIMIT: "600/min", TILLFLOW_MERCHANT_RATE_BURST: "50" }))
            .worker.merchantRateLimit
        ).toEqual(Option.some({ count: 600, intervalMillis: 60_000, burst: 50 }))
        expect((yield* withEnv({}, { TILLFLOW_MERCHANT_RATE_LIMIT: 5 })).worker.merchantRateLimit).toEqual(
          Option.some({ count: 5, intervalMillis: 1_000, burst: 5 })
        )
        const zero = String(yield* Effect.flip(withEnv({ TILLFLOW_MERCHANT_RATE_LIMIT: "0/s" })))
        expect(zero).toContain(
          "TILLFLOW_MERCHANT_RATE_LIMIT must be operations started per second or per minute"
        )
        expect(zero).toContain('got "0/s"')
        const hourly = String(yield* Effect.flip(withEnv({ TILLFLOW_MERCHANT_RATE_LIMIT: "20/h" })))
        expect(hourly).toContain("as 20/s, 600/min or 20 (per second)")
        const burst = String(
          yield* Effect.flip(
            withEnv({ TILLFLOW_MERCHANT_RATE_LIMIT: "20/s", TILLFLOW_MERCHANT_RATE_BURST: "0" })
          )
        )
        expect(burst).toContain(
          "TILLFLOW_MERCHANT_RATE_BURST must be a whole number of operations from 1 to 100000"
        )
        const alone = String(yield* Effect.flip(withEnv({ TILLFLOW_MERCHANT_RATE_BURST: "10" })))
        expect(alone).toContain("TILLFLOW_MERCHANT_RATE_BURST needs TILLFLOW_MERCHANT_RATE_LIMIT")
      })
  )

  it.effect(
    "the merchant's virtual terminal comes from TILLFLOW_MOTO_TERMINAL; a blank one is refused, naming the key",
    () =>
      Effect.gen(function* () {
        expect((yield* withEnv({})).motoTerminal).toEqual(Option.none())
        expect((yield* withEnv({ TILLFLOW_MOTO_TERMINAL: "V-0001" })).motoTerminal).toEqual(
          Option.some("V-0001")
        )
        const blank = yield* Effect.flip(withEnv({ TILLFLOW_MOTO_TERMINAL: "  " }))
        expect(String(blank)).toContain("TILLFLOW_MOTO_TERMINAL must be a terminal serial number")
      })
  )

  it.effect("the web console is served unless TILLFLOW_CONSOLE turns it off; the banner names its URL", () =>
    Effect.gen(function* () {
      expect((yield* withEnv({})).intake.console).toBe(true)
      expect((yield* withEnv({ TILLFLOW_CONSOLE: "false" })).intake.console).toBe(false)
      const refused = yield* Effect.exit(withEnv({ TILLFLOW_CONSOLE: "maybe" }))
      expect(Exit.isFailure(refused)).toBe(true)
      const info = {
        intakeUrl: "http://127.0.0.1:8080",
        token: Option.none(),
        store: { kind: "embedded" as const, dataDir: ".tillflow/data" },
        cloud: { kind: "remote" as const, baseUrl: "https://x", transactionsUrl: "https://y", terminals: [] },
        workerId: "w",
        concurrency: 1,
        callbackBase: Option.none()
      }
      expect(Worker.banner({ ...info, console: true })).toContain(
        "  console     http://127.0.0.1:8080/console  (log in with the token; TILLFLOW_CONSOLE=false turns it off)"
      )
      expect(Worker.banner({ ...info, console: false }).some((line) => line.includes("/console"))).toBe(false)
    })
  )

  it.effect(
    "nothing configured: the embedded store under .tillflow/data, the simulator, port 8080, no token yet",
    () =>
      Effect.gen(function* () {
        const config = yield* withEnv({})
        expect(config.store).toEqual({ _tag: "Embedded", dataDir: ".tillflow/data" })
        expect(config.cloud).toMatchObject({ _tag: "Simulator", seed: 1, port: 0 })
        expect(config.intake).toMatchObject({ host: "127.0.0.1", port: 8080 })
        expect(Option.isNone(config.intake.token)).toBe(true)
        expect(config.logFormat).toBe("json")
        expect(config.logLevel).toBe(LogLevel.Info)
      })
  )

  it.effect(
    "DATABASE_URL and the service's key and URLs switch to PostgreSQL and the real service, secrets redacted",
    () =>
      Effect.gen(function* () {
        const config = yield* withEnv({
          DATABASE_URL: "postgres://user:secret@db/tillflow",
          DATABASE_POOL_SIZE: "5",
          TERMINAL_CLOUD_API_KEY: "key-123",
          TERMINAL_CLOUD_BASE_URL: "https://cloud.example",
          TERMINAL_CLOUD_TRANSACTIONS_URL: "https://status.cloud.example",
          TILLFLOW_INTAKE_TOKEN: "0123456789abcdef-token"
        })
        expect(config.store._tag).toBe("Postgres")
        if (config.store._tag === "Postgres") {
          expect(String(config.store.url)).not.toContain("secret")
          expect(Redacted.value(config.store.url)).toContain("secret")
          expect(config.store.poolSize).toBe(5)
        }
        expect(config.cloud._tag).toBe("Remote")
        if (config.cloud._tag === "Remote") {
          expect(config.cloud.config.baseUrl.toString()).toBe("https://cloud.example/")
          expect(String(config.cloud.config.apiKey)).not.toContain("key-123")
        }
        expect(Option.map(config.intake.token, Redacted.value)).toEqual(Option.some("0123456789abcdef-token"))
      })
  )

  it.effect("the configuration file fills what the environment leaves out; the environment wins", () =>
    Effect.gen(function* () {
      const config = yield* withEnv(
        { TILLFLOW_INTAKE_PORT: "9090" },
        {
          TILLFLOW_INTAKE_PORT: 7000,
          TILLFLOW_DATA_DIR: "/var/lib/tillflow",
          TILLFLOW_LOG_LEVEL: "warn",
          TILLFLOW_WORKER_CONCURRENCY: 4
        }
      )
      expect(config.intake.port).toBe(9090)
      expect(config.store).toEqual({ _tag: "Embedded", dataDir: "/var/lib/tillflow" })
      expect(config.logLevel).toBe(LogLevel.Warning)
      expect(config.worker.concurrency).toBe(4)
    })
  )

  it.effect("bad values are refused with the key and what is allowed", () =>
    Effect.gen(function* () {
      const port = yield* Effect.exit(withEnv({ TILLFLOW_INTAKE_PORT: "70000" }))
      expect(Exit.isFailure(port) && String(port.cause)).toContain(
        "TILLFLOW_INTAKE_PORT must be a port from 0 to 65535"
      )
      const token = yield* Effect.exit(withEnv({ TILLFLOW_INTAKE_TOKEN: "short" }))
      expect(Exit.isFailure(token) && String(token.cause)).toContain("at least 16 characters")
      const level = yield* Effect.exit(withEnv({ TILLFLOW_LOG_LEVEL: "loud" }))
      expect(Exit.isFailure(level) && String(level.cause)).toContain("expected one of")
      expect(() => WorkerConfig.readConfigFile("/nonexistent/tillflow.config.json")).toThrow(/nonexistent/)
    })
  )

  it.effect(
    "personal data is kept per field as TILLFLOW_RETENTION_PERSONAL_FIELDS says; a bad value names it",
    () =>
      Effect.gen(function* () {
        expect((yield* withEnv({})).personalRetention).toEqual({ days: 180, fields: {} })
        const configured = yield* withEnv({
          TILLFLOW_RETENTION_PERSONAL_DAYS: "90",
          TILLFLOW_RETENTION_PERSONAL_FIELDS: "cardHolderName:30, billing:365"
        })
        expect(configured.personalRetention).toEqual({
          days: 90,
          fields: { cardHolderName: 30, billing: 365 }
        })
        for (const bad of [
          "cardHolderName",
          "cardHolderName:-1",
          "billing:36501",
          "a.b:3",
          "billing:3,billing:4"
        ]) {
          const refused = yield* Effect.exit(withEnv({ TILLFLOW_RETENTION_PERSONAL_FIELDS: bad }))
          expect(Exit.isFailure(refused) && String(refused.cause), bad).toContain(
            "TILLFLOW_RETENTION_PERSONAL_FIELDS must be name:days pairs"
          )
        }
      })
  )
})

describe("Prometheus", () => {
  it.effect(
    "counters, gauges and histograms in the text format, labels escaped, buckets cumulative with +Inf",
    () =>
      Effect.gen(function* () {
        const counter = Metric.counter("test_things_total", { description: "things", incremental: true })
        const gauge = Metric.gauge("test_level")
        const histogram = Metric.histogram("test_seconds", MetricBoundaries.fromIterable([1, 5]), "durations")
        yield* Effect.forEach([0.5, 3, 10], (v) => Metric.update(histogram, v), { discard: true })
        yield* Metric.increment(Metric.tagged(counter, "kind", 'a "quoted"\nvalue'))
        yield* Metric.set(Metric.tagged(gauge, "status", "ok"), 3)
        const text = Prometheus.render(yield* Metric.snapshot)
        expect(text).toContain("# HELP test_things_total things")
        expect(text).toContain("# TYPE test_things_total counter")
        expect(text).toContain('test_things_total{kind="a \\"quoted\\"\\nvalue"} 1')
        expect(text).toContain('test_level{status="ok"} 3')
        expect(text).toContain("# TYPE test_seconds histogram")
        expect(text).toContain('test_seconds_bucket{le="1"} 1')
        expect(text).toContain('test_seconds_bucket{le="5"} 2')
        expect(text).toContain('test_seconds_bucket{le="+Inf"} 3')
        expect(text).toContain("test_seconds_sum 13.5")
        expect(text).toContain("test_seconds_count 3")
      })
  )
})
