/**
 * The knobs of the payment protocol: how results are delivered by default (callback or
 * polling), where the callback receiver is reachable, how long to wait for a callback
 * before reconciling, how often to poll, how long a caller is prepared to wait for a busy
 * or offline terminal, whether a not-charged attempt may be followed by a new one. A
 * workflow reads them once, in its first activity, so a change of settings never changes
 * the path of an execution already running. Defaults work without any layer.
 */
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as CallbackRegistration from "./CallbackRegistration.js"
import * as Reconciliation from "./Reconciliation.js"
import * as RecoverySchedule from "./RecoverySchedule.js"

/** The settings. */
export interface Settings {
  /** Delivery mode of a call that does not choose one. */
  readonly defaultDelivery: CallbackRegistration.Delivery
  /**
   * The receiver's base address (`https://pos.example.com/callbacks`); each attempt gets
   * `<base>/<attemptId>`. Without it, callback mode falls back to polling. Terminals run
   * Android 5–10: use a TLS certificate those versions trust.
   */
  readonly callbackBaseUrl: Option.Option<string>
  /** How long to wait for a callback before asking the status endpoint. */
  readonly callbackFallback: Duration.Duration
  /** Pause between two polls of `transaction-result`. */
  readonly pollInterval: Duration.Duration
  /** Longest wait for a result (by polling or callback) before reconciling or giving up. */
  readonly resultTimeout: Duration.Duration
  /** Default deadline for getting an operation accepted by a busy/offline/queued terminal. */
  readonly terminalWait: Duration.Duration
  /** Whether a new attempt follows one proved not charged (the caller may override). */
  readonly retryNotCharged: boolean
  /** NOT FOUND after this long since the attempt means not charged (spec: 90 s). */
  readonly notFoundWindow: Duration.Duration
  /** The longest single wait of the recovery rhythm. */
  readonly maxWait: Duration.Duration
  /** How long reconciliation may go on before the outcome is declared unresolved. */
  readonly reconcileTimeout: Duration.Duration
  /** How long a POST may take before its outcome counts as unknown. */
  readonly requestTimeout: Duration.Duration
  /**
   * How long the service's answers about an attempt may stay undecodable (a result or a
   * status it sends that tillflow cannot read) before the outcome is declared unresolved:
   * such an answer does not mend itself by asking for a day. The raw answers are stored.
   */
  readonly undecodableGrace: Duration.Duration
  /**
   * How long a terminal-less request whose outcome is unknown is reconciled (the status
   * endpoint, a batch's summary) before it is recorded in doubt (`RecoverySchedule`: 3
   * minutes, past the NOT FOUND window so "not applied" can be concluded). Shorter only to
   * make doubts happen in tests.
   */
  readonly terminalLessBudget: Duration.Duration
}

/** The defaults. */
export const defaults: Settings = {
  defaultDelivery: "polling",
  callbackBaseUrl: Option.none(),
  callbackFallback: Duration.minutes(2),
  pollInterval: Duration.seconds(2),
  resultTimeout: Duration.minutes(10),
  terminalWait: Duration.minutes(5),
  retryNotCharged: true,
  notFoundWindow: Reconciliation.notFoundWindow,
  maxWait: Duration.minutes(5),
  reconcileTimeout: Duration.hours(24),
  requestTimeout: Duration.seconds(30),
  undecodableGrace: Duration.minutes(3),
  terminalLessBudget: RecoverySchedule.terminalLessBudget
}

/** The settings as a service, with the defaults when none is provided. */
export class ProtocolSettings extends Context.Reference<ProtocolSettings>()("tillflow/ProtocolSettings", {
  defaultValue: (): Settings => defaults
}) {}

/** Settings from the defaults and the given overrides. */
export const layer = (overrides: Partial<Settings>): Layer.Layer<ProtocolSettings> =>
  Layer.succeed(ProtocolSettings, { ...defaults, ...overrides })

/**
 * Settings from configuration: `TILLFLOW_DELIVERY` (callback|polling),
 * `TILLFLOW_CALLBACK_BASE_URL`, `TILLFLOW_CALLBACK_FALLBACK`, `TILLFLOW_POLL_INTERVAL`,
 * `TILLFLOW_RESULT_TIMEOUT`, `TILLFLOW_TERMINAL_WAIT`, `TILLFLOW_RETRY_NOT_CHARGED`,
 * `TILLFLOW_TERMINAL_LESS_BUDGET` (durations as "90 seconds", "2 minutes").
 */
export const config: Config.Config<Settings> = Config.all({
  defaultDelivery: Config.literal(
    "callback",
    "polling"
  )("TILLFLOW_DELIVERY").pipe(
    Config.withDefault(defaults.defaultDelivery),
    Config.withDescription("result delivery when a call does not choose")
  ),
  callbackBaseUrl: Config.option(
    Config.string("TILLFLOW_CALLBACK_BASE_URL").pipe(
      Config.withDescription(
        "public base address of the callback receiver, e.g. https://pos.example.com/callbacks"
      )
    )
  ),
  callbackFallback: Config.duration("TILLFLOW_CALLBACK_FALLBACK").pipe(
    Config.withDefault(defaults.callbackFallback)
  ),
  pollInterval: Config.duration("TILLFLOW_POLL_INTERVAL").pipe(Config.withDefault(defaults.pollInterval)),
  resultTimeout: Config.duration("TILLFLOW_RESULT_TIMEOUT").pipe(Config.withDefault(defaults.resultTimeout)),
  terminalWait: Config.duration("TILLFLOW_TERMINAL_WAIT").pipe(Config.withDefault(defaults.terminalWait)),
  retryNotCharged: Config.boolean("TILLFLOW_RETRY_NOT_CHARGED").pipe(
    Config.withDefault(defaults.retryNotCharged)
  ),
  notFoundWindow: Config.succeed(defaults.notFoundWindow),
  maxWait: Config.duration("TILLFLOW_MAX_WAIT").pipe(Config.withDefault(defaults.maxWait)),
  reconcileTimeout: Config.duration("TILLFLOW_RECONCILE_TIMEOUT").pipe(
    Config.withDefault(defaults.reconcileTimeout)
  ),
  requestTimeout: Config.duration("TILLFLOW_REQUEST_TIMEOUT").pipe(
    Config.withDefault(defaults.requestTimeout)
  ),
  undecodableGrace: Config.duration("TILLFLOW_UNDECODABLE_GRACE").pipe(
    Config.withDefault(defaults.undecodableGrace),
    Config.withDescription("how long answers that cannot be decoded are asked again before unresolved")
  ),
  terminalLessBudget: Config.duration("TILLFLOW_TERMINAL_LESS_BUDGET").pipe(
    Config.withDefault(defaults.terminalLessBudget),
    Config.withDescription(
      "how long a terminal-less request's unknown outcome is reconciled before it is in doubt"
    )
  )
})

/** Settings read from configuration. */
export const layerConfig: Layer.Layer<ProtocolSettings, ConfigError.ConfigError> = Layer.effect(
  ProtocolSettings,
  Effect.map(config, (settings) => settings)
)
