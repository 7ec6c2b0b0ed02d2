/**
 * How the HTTP client reaches the remote service: the API key (kept `Redacted` from the
 * moment it is read), the two hosts (`{base_url}` for everything, `{transactions_url}`
 * for the status endpoint only), timeouts and the bounded retry of reads.
 *
 * No named presets for production and development: the real hosts are not known to us
 * (the spec only names them `{base_url}` and `{transactions_url}`), and a preset with a
 * guessed address would send payments to the wrong place. Both URLs are required.
 */
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import type * as Redacted from "effect/Redacted"

/** The settings of the HTTP `TerminalCloud`. */
export interface TerminalCloudConfig {
  /** The merchant's API key, sent in the `ApiKeyCloud` header. */
  readonly apiKey: Redacted.Redacted<string>
  /** `{base_url}`: devices, transactions, results, commands, terminal-less operations. */
  readonly baseUrl: URL
  /** `{transactions_url}`: the transaction status endpoint only. */
  readonly transactionsUrl: URL
  /** Longest wait for a TCP/TLS connection (Node transport only). */
  readonly connectTimeout: Duration.Duration
  /** Longest wait for one attempt, from sending to the last byte of the answer. */
  readonly requestTimeout: Duration.Duration
  /** How many times a read (GET) is retried on 5xx, network error or timeout. */
  readonly readRetries: number
  /** The first delay between read retries (doubling, with jitter). */
  readonly readRetryDelay: Duration.Duration
}

/** Defaults of everything but the key and the URLs. */
export const defaults = {
  connectTimeout: Duration.seconds(5),
  requestTimeout: Duration.seconds(30),
  readRetries: 2,
  readRetryDelay: Duration.millis(200)
} as const

/**
 * Builds a configuration from the required parts, the rest from `defaults`.
 *
 * @example
 * const config = TerminalCloudConfig.make({
 *   apiKey: Redacted.make(key),
 *   baseUrl: new URL("https://cloud.example"),
 *   transactionsUrl: new URL("https://transactions.cloud.example")
 * })
 */
export const make = (
  options: Pick<TerminalCloudConfig, "apiKey" | "baseUrl" | "transactionsUrl"> &
    Partial<Omit<TerminalCloudConfig, "apiKey" | "baseUrl" | "transactionsUrl">>
): TerminalCloudConfig => ({ ...defaults, ...options })

/**
 * The configuration read through `Config`, every key under `TERMINAL_CLOUD`:
 *
 * | key | meaning | default |
 * |---|---|---|
 * | `TERMINAL_CLOUD_API_KEY` | API key (redacted) | required |
 * | `TERMINAL_CLOUD_BASE_URL` | `{base_url}` | required |
 * | `TERMINAL_CLOUD_TRANSACTIONS_URL` | `{transactions_url}` | required |
 * | `TERMINAL_CLOUD_CONNECT_TIMEOUT` | e.g. `5 seconds` | 5 s |
 * | `TERMINAL_CLOUD_REQUEST_TIMEOUT` | e.g. `30 seconds` | 30 s |
 * | `TERMINAL_CLOUD_READ_RETRIES` | retries of a GET | 2 |
 * | `TERMINAL_CLOUD_READ_RETRY_DELAY` | first retry delay | 200 millis |
 */
export const config: Config.Config<TerminalCloudConfig> = Config.all({
  apiKey: Config.redacted("API_KEY").pipe(Config.withDescription("the merchant's API key (ApiKeyCloud)")),
  baseUrl: Config.url("BASE_URL").pipe(Config.withDescription("{base_url}, the main host of the service")),
  transactionsUrl: Config.url("TRANSACTIONS_URL").pipe(
    Config.withDescription("{transactions_url}, the host of the transaction status endpoint")
  ),
  connectTimeout: Config.duration("CONNECT_TIMEOUT").pipe(
    Config.withDefault(defaults.connectTimeout),
    Config.withDescription("longest wait for a connection")
  ),
  requestTimeout: Config.duration("REQUEST_TIMEOUT").pipe(
    Config.withDefault(defaults.requestTimeout),
    Config.withDescription("longest wait for one attempt of a request")
  ),
  readRetries: Config.integer("READ_RETRIES").pipe(
    Config.withDefault(defaults.readRetries),
    Config.validate({
      message: "READ_RETRIES must be between 0 and 10",
      validation: (n) => n >= 0 && n <= 10
    }),
    Config.withDescription("retries of a GET on 5xx, network error or timeout")
  ),
  readRetryDelay: Config.duration("READ_RETRY_DELAY").pipe(
    Config.withDefault(defaults.readRetryDelay),
    Config.withDescription("first delay between retries of a GET")
  )
}).pipe(Config.nested("TERMINAL_CLOUD"))
