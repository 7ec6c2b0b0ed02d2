/**
 * What `createTillflow` is configured with. Every option is one of the worker's
 * configuration keys (docs/operations.md), which an option overrides; a key the options do
 * not set is read from the environment, then from the configuration file (`TILLFLOW_CONFIG`,
 * or `tillflow.config.json`), exactly as the worker reads it. So nothing is required: without
 * a database the store is the embedded PGlite under `.tillflow/data`; without an API key the
 * remote service is the built-in simulator.
 */
import { WorkerConfig } from "@tillflow/intake"
import * as ConfigProvider from "effect/ConfigProvider"

/** Where events and executions are stored. */
export type DatabaseOption =
  /** A PostgreSQL URL (`postgres://user@host:5432/db`): `DATABASE_URL`. */
  | string
  | {
      /** A PostgreSQL URL: `DATABASE_URL`. */
      readonly url: string
      /** Connections of the pool: `DATABASE_POOL_SIZE` (default 10). */
      readonly poolSize?: number
    }
  | {
      /** The embedded PGlite store's directory: `TILLFLOW_DATA_DIR` (default `.tillflow/data`). */
      readonly dataDir: string
    }

/** The remote service: the real one, or the built-in simulator. */
export type TerminalCloudOption =
  | {
      /** The merchant's API key: `TERMINAL_CLOUD_API_KEY`. Never logged, never stored. */
      readonly apiKey: string
      /** `{base_url}`: `TERMINAL_CLOUD_BASE_URL`. */
      readonly baseUrl: string
      /** `{transactions_url}`, the status host: `TERMINAL_CLOUD_TRANSACTIONS_URL`. */
      readonly transactionsUrl: string
      /** e.g. `"30 seconds"`: `TERMINAL_CLOUD_REQUEST_TIMEOUT`. */
      readonly requestTimeout?: string
    }
  | {
      /** The built-in simulator, in this process (no real payment is made). */
      readonly simulator: {
        /** `TILLFLOW_SIMULATOR_SEED` (default 1). */
        readonly seed?: number
        /** `TILLFLOW_SIMULATOR_PORT` (default 0: a free port). */
        readonly port?: number
        /** Steps take no time: `TILLFLOW_SIMULATOR_FAST` (default false). */
        readonly fast?: boolean
      }
    }

/** How results come back from terminals. */
export interface CallbacksOption {
  /**
   * The public address at which `tf.callbackHandler` is mounted, ending in the path the
   * handler serves (e.g. `https://pos.example.com/callbacks`): `TILLFLOW_CALLBACK_BASE_URL`.
   * Without it, results are polled.
   */
  readonly baseUrl: string
  /** The default delivery (`callback` when `baseUrl` is set): `TILLFLOW_DELIVERY`. */
  readonly delivery?: "callback" | "polling"
}

/** The options of `createTillflow`. All are optional. */
export interface TillflowOptions {
  /** Where events and executions are stored (default: the embedded PGlite store). */
  readonly database?: DatabaseOption
  /** The remote service (default: the built-in simulator). */
  readonly terminalCloud?: TerminalCloudOption
  /** Result delivery by callback to `tf.callbackHandler` (default: polling). */
  readonly callbacks?: CallbacksOption
  /** The engine worker of this process. */
  readonly worker?: {
    /** `TILLFLOW_WORKER_ID` (default: a fresh one). */
    readonly id?: string
    /** Executions run at a time: `TILLFLOW_WORKER_CONCURRENCY` (default 16). */
    readonly concurrency?: number
  }
  /** The merchant's category code, for the capture rules: `TILLFLOW_MERCHANT_MCC`. */
  readonly merchantMcc?: string
  /**
   * The serial of the merchant's virtual terminal, on which terminal-less MOTO sales are
   * booked (their reversal is refused once its batch closed): `TILLFLOW_MOTO_TERMINAL`
   * (default: the built-in simulator's; none against the real service).
   */
  readonly motoTerminal?: string
  /**
   * What the merchant's acquirer supports, which the spec leaves to it: partial reversals
   * (`TILLFLOW_ACQUIRER_PARTIAL_REVERSAL`, default false) and reversing a capture before
   * settlement (`TILLFLOW_ACQUIRER_CAPTURE_REVERSAL`, default true).
   */
  readonly acquirer?: { readonly partialReversal?: boolean; readonly captureReversal?: boolean }
  /** The log level of the library (JSON lines on stdout): `TILLFLOW_LOG_LEVEL` (default `warn`). */
  readonly logLevel?: "all" | "trace" | "debug" | "info" | "warn" | "error" | "fatal" | "none"
  /** Any other configuration key (`TILLFLOW_TERMINAL_WAIT: "2 minutes"` …), as strings. */
  readonly settings?: Readonly<Record<string, string>>
  /** Whether the environment and configuration file are read under the options (default true). */
  readonly readEnvironment?: boolean
}

/** The options as configuration keys. */
export const toConfigMap = (options: TillflowOptions): Map<string, string> => {
  const map = new Map<string, string>(Object.entries(options.settings ?? {}))
  const set = (key: string, value: string | number | boolean | undefined) => {
    if (value !== undefined) map.set(key, String(value))
  }
  const db = options.database
  if (typeof db === "string") set("DATABASE_URL", db)
  else if (db !== undefined && "url" in db) {
    set("DATABASE_URL", db.url)
    set("DATABASE_POOL_SIZE", db.poolSize)
  } else if (db !== undefined) set("TILLFLOW_DATA_DIR", db.dataDir)
  const cloud = options.terminalCloud
  if (cloud !== undefined && "apiKey" in cloud) {
    set("TERMINAL_CLOUD_API_KEY", cloud.apiKey)
    set("TERMINAL_CLOUD_BASE_URL", cloud.baseUrl)
    set("TERMINAL_CLOUD_TRANSACTIONS_URL", cloud.transactionsUrl)
    set("TERMINAL_CLOUD_REQUEST_TIMEOUT", cloud.requestTimeout)
  } else if (cloud !== undefined) {
    set("TILLFLOW_SIMULATOR_SEED", cloud.simulator.seed)
    set("TILLFLOW_SIMULATOR_PORT", cloud.simulator.port)
    set("TILLFLOW_SIMULATOR_FAST", cloud.simulator.fast)
  }
  set("TILLFLOW_CALLBACK_BASE_URL", options.callbacks?.baseUrl)
  set("TILLFLOW_DELIVERY", options.callbacks?.delivery)
  set("TILLFLOW_WORKER_ID", options.worker?.id)
  set("TILLFLOW_WORKER_CONCURRENCY", options.worker?.concurrency)
  set("TILLFLOW_MERCHANT_MCC", options.merchantMcc)
  set("TILLFLOW_MOTO_TERMINAL", options.motoTerminal)
  set("TILLFLOW_ACQUIRER_PARTIAL_REVERSAL", options.acquirer?.partialReversal)
  set("TILLFLOW_ACQUIRER_CAPTURE_REVERSAL", options.acquirer?.captureReversal)
  set("TILLFLOW_LOG_LEVEL", options.logLevel)
  return map
}

/**
 * The configuration of an instance: the options first, then (unless `readEnvironment` is
 * false) the environment and the configuration file, as the worker reads them (the file
 * is read here, and a file that cannot be read throws); the log
 * level `warn` when none of them sets one (a library does not narrate a host's requests).
 */
export const provider = (options: TillflowOptions): ConfigProvider.ConfigProvider => {
  const map = toConfigMap(options)
  const fromOptions = ConfigProvider.fromMap(map, { pathDelim: "_" })
  const quiet = ConfigProvider.fromMap(new Map([["TILLFLOW_LOG_LEVEL", "warn"]]), { pathDelim: "_" })
  if (options.readEnvironment === false) return fromOptions.pipe(ConfigProvider.orElse(() => quiet))
  // The worker's order, environment then file; the file read now, so that one that cannot be
  // read is said at once (`ConfigFileError`) rather than while the layers load.
  const file = WorkerConfig.configFile()
  const fromFile = file === undefined ? undefined : WorkerConfig.readConfigFile(file)
  const environment = ConfigProvider.fromEnv().pipe(
    ConfigProvider.orElse(() => ConfigProvider.fromMap(fromFile ?? new Map(), { pathDelim: "_" }))
  )
  const base = fromOptions.pipe(ConfigProvider.orElse(() => environment))
  return base.pipe(ConfigProvider.orElse(() => quiet))
}
