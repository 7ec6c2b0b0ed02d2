/**
 * The worker's configuration, read through Effect's `Config` from the environment and,
 * second, from a JSON file (`TILLFLOW_CONFIG`, or `tillflow.config.json` in the working
 * directory when present) whose keys are the same names as the environment's. Nothing is
 * required: without `DATABASE_URL` the store is the embedded PGlite under
 * `TILLFLOW_DATA_DIR`; without `TERMINAL_CLOUD_API_KEY` the remote service is the built-in
 * simulator. Secrets (database URL, API key, intake token) are `Redacted` from the moment
 * they are read. docs/operations.md is the reference of every key.
 */
// The module, not the package: the command line reads the configuration without loading the HTTP client.
import * as Operators from "@tillflow/console/Operators"
import * as TerminalCloudConfig from "@tillflow/http/TerminalCloudConfig"
// The module, not the package: reading the configuration loads no database driver.
import * as EventArchive from "@tillflow/store-sql/EventArchive"
import * as PgUrl from "@tillflow/store-sql/PgUrl"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as MerchantRateLimit from "./MerchantRateLimit.js"

/** Where events and executions are stored. */
export type StoreConfig =
  | { readonly _tag: "Postgres"; readonly url: Redacted.Redacted; readonly poolSize: number }
  | { readonly _tag: "Embedded"; readonly dataDir: string }

/** What the remote service is. */
export type CloudConfig =
  | { readonly _tag: "Remote"; readonly config: TerminalCloudConfig.TerminalCloudConfig }
  | { readonly _tag: "Simulator"; readonly seed: number; readonly port: number; readonly fast: boolean }

/** Everything the worker (and the command line, which shares it) is configured with. */
export interface WorkerConfig {
  readonly store: StoreConfig
  readonly cloud: CloudConfig
  readonly intake: {
    readonly host: string
    readonly port: number
    /** The bearer token of the intake API; generated at start when unset. */
    readonly token: Option.Option<Redacted.Redacted>
    /** The web console at `/console` (`TILLFLOW_CONSOLE`, on by default). */
    readonly console: boolean
    /**
     * The console's operators (`TILLFLOW_OPERATORS`: a JSON array, or the file
     * `TILLFLOW_OPERATORS_FILE` names): none means the console is logged into with the token.
     */
    readonly operators: Operators.Registry
    /**
     * Bearer tokens of merchants' own backends (`TILLFLOW_INTAKE_TOKENS`: a JSON array of
     * `{name, role, merchants, sha256}`), each limited to its merchants.
     */
    readonly tokens: Operators.Tokens
  }
  readonly worker: {
    readonly id: Option.Option<string>
    readonly concurrency: number
    readonly lease: Duration.Duration
    readonly shutdownTimeout: Duration.Duration
    /**
     * A merchant's fair share (`TILLFLOW_MERCHANT_CONCURRENCY`): at most this many of one
     * merchant's executions run on a worker at a time, so one merchant's burst cannot take
     * every slot. None: no cap.
     */
    readonly merchantConcurrency: Option.Option<number>
    /**
     * A merchant's rate limit (`TILLFLOW_MERCHANT_RATE_LIMIT`, `TILLFLOW_MERCHANT_RATE_BURST`):
     * at most so many operations started per second (or minute) by one merchant, on each
     * worker. None: no limit.
     */
    readonly merchantRateLimit: Option.Option<MerchantRateLimit.RateLimit>
  }
  /** The merchant's category code (capture rules of pre-authorizations made on terminals). */
  readonly merchantMcc: Option.Option<string>
  /**
   * The serial of the merchant's virtual terminal (`TILLFLOW_MOTO_TERMINAL`), on which
   * terminal-less MOTO sales are booked; the built-in simulator's when unset.
   */
  readonly motoTerminal: Option.Option<string>
  /**
   * What the merchant's acquirer supports, which the spec leaves to it: partial reversals
   * (`TILLFLOW_ACQUIRER_PARTIAL_REVERSAL`, default false) and reversing a capture before
   * settlement (`TILLFLOW_ACQUIRER_CAPTURE_REVERSAL`, default true).
   */
  readonly acquirer: { readonly partialReversal: boolean; readonly captureReversal: boolean }
  /**
   * How long personal data is kept (`EventArchive`): `TILLFLOW_RETENTION_PERSONAL_DAYS`
   * (default 180), and the fields named in `TILLFLOW_RETENTION_PERSONAL_FIELDS`
   * (`cardHolderName:30,billing:365`) for their own days. Read here so that a bad value
   * stops the start naming its variable; the worker's periodic run reads the same.
   */
  readonly personalRetention: {
    readonly days: number
    readonly fields: Readonly<Record<string, number>>
  }
  readonly logFormat: "json" | "pretty"
  readonly logLevel: LogLevel.LogLevel
}

const logLevels: Readonly<Record<string, LogLevel.LogLevel>> = {
  all: LogLevel.All,
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warn: LogLevel.Warning,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

/** The default data directory of the embedded store (relative to the working directory). */
export const defaultDataDir = ".tillflow/data"

/** The default port of the intake API. */
export const defaultIntakePort = 8080

const port = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({
      message: `${name} must be a port from 0 to 65535`,
      validation: (n) => n >= 0 && n <= 65535
    })
  )

const store: Effect.Effect<StoreConfig, ConfigError.ConfigError> = Effect.gen(function* () {
  const url = yield* Config.option(
    Config.redacted("DATABASE_URL").pipe(
      Config.withDescription("PostgreSQL connection URL"),
      Config.mapOrFail((value) => {
        const problem = PgUrl.problem(Redacted.value(value))
        return problem === undefined
          ? Either.right(value)
          : Either.left(ConfigError.InvalidData(["DATABASE_URL"], `DATABASE_URL ${problem}`))
      })
    )
  )
  if (Option.isSome(url)) {
    const poolSize = yield* Config.integer("DATABASE_POOL_SIZE").pipe(
      Config.withDefault(10),
      Config.validate({
        message: "DATABASE_POOL_SIZE must be 1 to 1000",
        validation: (n) => n >= 1 && n <= 1000
      })
    )
    return { _tag: "Postgres", url: url.value, poolSize } as const
  }
  const dataDir = yield* Config.string("TILLFLOW_DATA_DIR").pipe(Config.withDefault(defaultDataDir))
  return { _tag: "Embedded", dataDir } as const
})

const cloud: Effect.Effect<CloudConfig, ConfigError.ConfigError> = Effect.gen(function* () {
  const key = yield* Config.option(Config.redacted("TERMINAL_CLOUD_API_KEY"))
  if (Option.isSome(key)) return { _tag: "Remote", config: yield* TerminalCloudConfig.config } as const
  const sim = yield* Config.all({
    seed: Config.integer("TILLFLOW_SIMULATOR_SEED").pipe(Config.withDefault(1)),
    port: port("TILLFLOW_SIMULATOR_PORT", 0),
    fast: Config.boolean("TILLFLOW_SIMULATOR_FAST").pipe(Config.withDefault(false))
  })
  return { _tag: "Simulator", ...sim } as const
})

/** The operators of `TILLFLOW_OPERATORS` (JSON) or of the file `TILLFLOW_OPERATORS_FILE` names. */
const operatorsConfig: Config.Config<Operators.Registry> = Config.all({
  inline: Config.option(Config.string("TILLFLOW_OPERATORS")),
  file: Config.option(Config.string("TILLFLOW_OPERATORS_FILE"))
}).pipe(
  Config.mapOrFail(({ file, inline }) => {
    if (Option.isSome(inline) && Option.isSome(file))
      return Either.left(
        ConfigError.InvalidData(
          ["TILLFLOW_OPERATORS"],
          "set TILLFLOW_OPERATORS or TILLFLOW_OPERATORS_FILE, not both"
        )
      )
    if (Option.isSome(inline))
      return Either.mapLeft(Operators.parse(inline.value), (error) =>
        ConfigError.InvalidData(["TILLFLOW_OPERATORS"], error.message)
      )
    if (Option.isNone(file)) return Either.right(Operators.none)
    let text: string
    try {
      text = Fs.readFileSync(file.value, "utf8")
    } catch (error) {
      return Either.left(
        ConfigError.InvalidData(
          ["TILLFLOW_OPERATORS_FILE"],
          `cannot read ${file.value}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`
        )
      )
    }
    return Either.mapLeft(Operators.parse(text), (error) =>
      ConfigError.InvalidData(["TILLFLOW_OPERATORS_FILE"], `${file.value}: ${error.message}`)
    )
  })
)

/** A merchant's rate limit: `TILLFLOW_MERCHANT_RATE_LIMIT` (`20/s`, `600/min`), `TILLFLOW_MERCHANT_RATE_BURST`. */
const merchantRateLimitConfig: Config.Config<Option.Option<MerchantRateLimit.RateLimit>> = Config.all({
  limit: Config.option(Config.string("TILLFLOW_MERCHANT_RATE_LIMIT")),
  burst: Config.option(Config.string("TILLFLOW_MERCHANT_RATE_BURST"))
}).pipe(
  Config.mapOrFail(({ burst, limit }) => {
    if (Option.isNone(limit)) {
      return Option.isNone(burst)
        ? Either.right(Option.none())
        : Either.left(
            ConfigError.InvalidData(
              ["TILLFLOW_MERCHANT_RATE_BURST"],
              "TILLFLOW_MERCHANT_RATE_BURST needs TILLFLOW_MERCHANT_RATE_LIMIT (the rate the burst is of)"
            )
          )
    }
    return MerchantRateLimit.parse(limit.value, Option.getOrUndefined(burst)).pipe(
      Either.map(Option.some),
      Either.mapLeft((message) =>
        ConfigError.InvalidData(
          [
            message.startsWith("TILLFLOW_MERCHANT_RATE_BURST")
              ? "TILLFLOW_MERCHANT_RATE_BURST"
              : "TILLFLOW_MERCHANT_RATE_LIMIT"
          ],
          message
        )
      )
    )
  })
)

/** Reads the configuration. */
export const load: Effect.Effect<WorkerConfig, ConfigError.ConfigError> = Effect.gen(function* () {
  const rest = yield* Config.all({
    intake: Config.all({
      host: Config.string("TILLFLOW_INTAKE_HOST").pipe(Config.withDefault("127.0.0.1")),
      port: port("TILLFLOW_INTAKE_PORT", defaultIntakePort),
      token: Config.option(
        Config.redacted("TILLFLOW_INTAKE_TOKEN").pipe(
          Config.validate({
            message: "TILLFLOW_INTAKE_TOKEN must be at least 16 characters",
            validation: (t) => Redacted.value(t).length >= 16
          })
        )
      ),
      console: Config.boolean("TILLFLOW_CONSOLE").pipe(
        Config.withDefault(true),
        Config.withDescription("serve the web console at /console (false turns it off)")
      ),
      operators: operatorsConfig,
      tokens: Config.option(Config.string("TILLFLOW_INTAKE_TOKENS")).pipe(
        Config.mapOrFail((text) =>
          Option.isNone(text)
            ? Either.right(Operators.noTokens)
            : Either.mapLeft(Operators.parseTokens(text.value), (error) =>
                ConfigError.InvalidData(["TILLFLOW_INTAKE_TOKENS"], error.message)
              )
        )
      )
    }),
    worker: Config.all({
      id: Config.option(Config.nonEmptyString("TILLFLOW_WORKER_ID")),
      concurrency: Config.integer("TILLFLOW_WORKER_CONCURRENCY").pipe(
        Config.withDefault(16),
        Config.validate({
          message: "TILLFLOW_WORKER_CONCURRENCY must be 1 to 1000",
          validation: (n) => n >= 1 && n <= 1000
        })
      ),
      lease: Config.duration("TILLFLOW_LEASE").pipe(Config.withDefault(Duration.seconds(30))),
      shutdownTimeout: Config.duration("TILLFLOW_SHUTDOWN_TIMEOUT").pipe(
        Config.withDefault(Duration.seconds(10))
      ),
      merchantConcurrency: Config.option(
        Config.integer("TILLFLOW_MERCHANT_CONCURRENCY").pipe(
          Config.validate({
            message: "TILLFLOW_MERCHANT_CONCURRENCY must be 1 to 1000",
            validation: (n) => n >= 1 && n <= 1000
          })
        )
      ),
      merchantRateLimit: merchantRateLimitConfig
    }),
    logFormat: Config.literal(
      "json",
      "pretty"
    )("TILLFLOW_LOG_FORMAT").pipe(Config.withDefault("json" as const)),
    logLevel: Config.string("TILLFLOW_LOG_LEVEL").pipe(
      Config.withDefault("info"),
      Config.mapOrFail((text) => {
        const level = logLevels[text.toLowerCase()]
        return level === undefined
          ? Either.left(
              ConfigError.InvalidData(
                ["TILLFLOW_LOG_LEVEL"],
                `expected one of ${Object.keys(logLevels).join(", ")}, got "${text}"`
              )
            )
          : Either.right(level)
      })
    )
  })
  const cloudConfig = yield* cloud
  const mcc = yield* Config.option(
    Config.string("TILLFLOW_MERCHANT_MCC").pipe(
      Config.validate({
        message: "TILLFLOW_MERCHANT_MCC must be 4 digits",
        validation: (m) => /^\d{4}$/.test(m)
      })
    )
  )
  // The built-in simulator's merchant is a hotel (MCC 7011) unless configured otherwise.
  const merchantMcc = cloudConfig._tag === "Simulator" ? Option.orElse(mcc, () => Option.some("7011")) : mcc
  const motoTerminal = yield* Config.option(
    Config.string("TILLFLOW_MOTO_TERMINAL").pipe(
      Config.validate({
        message: "TILLFLOW_MOTO_TERMINAL must be a terminal serial number (not blank)",
        validation: (serial) => serial.trim().length > 0
      })
    )
  )
  const acquirer = yield* Config.all({
    partialReversal: Config.boolean("TILLFLOW_ACQUIRER_PARTIAL_REVERSAL").pipe(Config.withDefault(false)),
    captureReversal: Config.boolean("TILLFLOW_ACQUIRER_CAPTURE_REVERSAL").pipe(Config.withDefault(true))
  })
  const personalRetention = yield* Config.all({
    days: EventArchive.personalDays,
    fields: EventArchive.personalFields
  })
  return {
    store: yield* store,
    cloud: cloudConfig,
    merchantMcc,
    motoTerminal,
    acquirer,
    personalRetention,
    ...rest
  }
})

/** The configuration file in use: `TILLFLOW_CONFIG`, else `tillflow.config.json` when it exists. */
export const configFile = (env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const named = env["TILLFLOW_CONFIG"]
  if (named !== undefined && named.length > 0) return Path.resolve(named)
  const local = Path.resolve("tillflow.config.json")
  return Fs.existsSync(local) ? local : undefined
}

/** A configuration file that cannot be used. */
export class ConfigFileError extends Error {
  readonly _tag = "ConfigFileError"
}

/**
 * Reads a configuration file: a JSON object whose keys are the environment's names and
 * whose values are strings, numbers or booleans.
 */
export const readConfigFile = (path: string): Map<string, string> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(Fs.readFileSync(path, "utf8"))
  } catch (error) {
    throw new ConfigFileError(`${path}: ${error instanceof Error ? error.message : String(error)}`)
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ConfigFileError(`${path}: expected a JSON object of configuration keys`)
  }
  const map = new Map<string, string>()
  for (const [key, value] of Object.entries(parsed)) {
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
      map.set(key, String(value))
    } else {
      throw new ConfigFileError(`${path}: "${key}" must be a string, a number or a boolean`)
    }
  }
  return map
}

/** The environment first, then the configuration file (when there is one). */
export const provider = (file: string | undefined = configFile()): ConfigProvider.ConfigProvider => {
  const env = ConfigProvider.fromEnv()
  if (file === undefined) return env
  return env.pipe(
    ConfigProvider.orElse(() => ConfigProvider.fromMap(readConfigFile(file), { pathDelim: "_" }))
  )
}

/** Installs {@link provider} as the configuration of everything built under it. */
export const layerProvider = (file?: string): Layer.Layer<never> =>
  Layer.unwrapEffect(Effect.sync(() => Layer.setConfigProvider(provider(file ?? configFile()))))
