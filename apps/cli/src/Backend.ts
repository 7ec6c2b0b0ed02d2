/**
 * Where a command runs. The `Intake` a command uses is either a running worker's, over
 * HTTP — when `--worker`/`TILLFLOW_WORKER_URL` names one, or when a live worker holds the
 * embedded store (PGlite allows one process per data directory; the worker publishes its
 * address in the directory's lock) — or the library in this process (`LocalBackend`, loaded
 * only then), on the configured store and remote service, with an engine worker of its own
 * while the command runs. Commands that only read the store never start the remote service.
 */
import * as IntakeClient from "@tillflow/intake/IntakeClient"
import type * as Intake from "@tillflow/intake/Intake"
import type * as Stack from "@tillflow/intake/Stack"
import * as WorkerConfig from "@tillflow/intake/WorkerConfig"
import * as PgliteLock from "@tillflow/store-sql/PgliteLock"
// The module, not the package: the command line loads no engine to name a merchant.
import * as Tenant from "@tillflow/engine/Tenant"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Path from "node:path"
import * as OperatorSessions from "./OperatorSessions.js"
import * as Output from "./Output.js"

/** What the command runs against, said on stderr. */
export class BackendInfo extends Context.Tag("tillflow/cli/BackendInfo")<
  BackendInfo,
  {
    readonly description: string
    /** A running worker's intake, over HTTP. */
    readonly remote: boolean
    /** The built-in simulator in this process: what it knows ends with the process. */
    readonly simulator: boolean
    /**
     * Whom a worker records this command's actions under, when the command line knows: the
     * operator of the session saved by `tillflow login`. Unknown with the token, with
     * `TILLFLOW_OPERATOR_SESSION` alone, and in this process.
     */
    readonly operator?: string | undefined
  }
>() {}

/** What a command needs. */
export interface Needs {
  /** The remote service (operations, devices, status). */
  readonly cloud: boolean
  /** An engine worker in this process (operations in local mode). */
  readonly worker: boolean
}

/** The command line cannot reach what it runs against (exit 1). */
export class BackendError extends Schema.TaggedError<BackendError>()("BackendError", {
  message: Schema.String
}) {}

/** Who a credential acts as, said with the worker's address. */
const actingAs = (credential: IntakeClient.Credential): string =>
  credential._tag === "Token"
    ? "with the intake token"
    : credential.operator === ""
      ? "as the operator of TILLFLOW_OPERATOR_SESSION"
      : `as operator ${credential.operator}`

const remote = (running: RunningWorker) =>
  Layer.merge(
    IntakeClient.layer({ baseUrl: running.baseUrl, credential: running.credential }),
    Layer.succeed(BackendInfo, {
      description: `the worker at ${running.baseUrl} (${running.why}) ${actingAs(running.credential)}`,
      remote: true,
      simulator: false,
      operator:
        running.credential._tag === "Session" && running.credential.operator !== ""
          ? running.credential.operator
          : undefined
    })
  )

/**
 * The operator a resolution is recorded in the name of: through a worker with a named
 * operator's session, that operator (a different `--operator` is refused by the worker, so
 * it is said here first); else the `--operator` given — required through a worker with its
 * token or an unnamed session, whose credential names no one — and in this process, the
 * given one or the login name.
 */
export const resolvingOperator = (
  given: Option.Option<string>
): Effect.Effect<string, Output.UsageError, BackendInfo> =>
  Effect.gen(function* () {
    const info = yield* BackendInfo
    if (info.operator !== undefined) {
      if (Option.isSome(given) && given.value !== info.operator) {
        return yield* new Output.UsageError({
          message: `--operator ${given.value}: a worker records a resolution in the name of the operator logged in (${info.operator}); leave it out, or log in as ${given.value}`
        })
      }
      return info.operator
    }
    if (Option.isSome(given)) return given.value
    if (info.remote) {
      return yield* new Output.UsageError({
        message:
          "--operator: name who resolves it (this worker's credential names no operator; or log in with tillflow login)"
      })
    }
    return process.env["USER"] ?? "cli"
  })

/**
 * Says, through a worker, that `--operator` is not what it records: the operator logged in,
 * else its token (an action is attributed to the credential that asks, never to a name given).
 */
export const noteOperatorIgnored = (given: Option.Option<string>): Effect.Effect<void, never, BackendInfo> =>
  Effect.gen(function* () {
    const info = yield* BackendInfo
    if (!info.remote || Option.isNone(given)) return
    yield* Output.note(
      `tillflow: --operator ${given.value} is not recorded by a worker: it records ${info.operator === undefined ? "the credential this command uses (its token, or the session's operator)" : `the operator logged in, ${info.operator}`}`
    )
  })

/** A running worker to talk to, why it is the one, and how a command authenticates to it. */
export interface RunningWorker {
  readonly baseUrl: string
  readonly credential: IntakeClient.Credential
  readonly why: string
}

/**
 * The session a command sends to the worker at `baseUrl`, if any: `TILLFLOW_OPERATOR_SESSION`,
 * else the one `tillflow login` saved for that worker (`OperatorSessions`). An operator's
 * session goes before the intake token: what is done is then attributed to the operator.
 */
export const operatorSession = (
  baseUrl: string
): Effect.Effect<Option.Option<IntakeClient.Credential>, BackendError> =>
  Effect.gen(function* () {
    const fromEnv = yield* Config.option(
      Config.redacted(Config.nonEmptyString("TILLFLOW_OPERATOR_SESSION"))
    ).pipe(Effect.mapError((error) => new BackendError({ message: `configuration: ${error.message}` })))
    if (Option.isSome(fromEnv)) {
      return Option.some<IntakeClient.Credential>({ _tag: "Session", operator: "", session: fromEnv.value })
    }
    const saved = yield* OperatorSessions.read(baseUrl)
    return Option.map(saved, (saved): IntakeClient.Credential => ({
      _tag: "Session",
      operator: saved.operator,
      session: Redacted.make(saved.session)
    }))
  })

/** An operator's session for the worker at `baseUrl`, else its token. */
const credentialFor = (baseUrl: string, token: Option.Option<string>) =>
  Effect.map(operatorSession(baseUrl), (session) =>
    Option.orElse(session, () =>
      Option.map(token, (token): IntakeClient.Credential => ({ _tag: "Token", token: Redacted.make(token) }))
    )
  )

/**
 * The running worker a command goes through, if any: the one `--worker` or
 * `TILLFLOW_WORKER_URL` names, or the live worker holding the embedded store.
 */
export const runningWorker = (options: {
  readonly worker: Option.Option<string>
}): Effect.Effect<Option.Option<RunningWorker>, BackendError> =>
  Effect.gen(function* () {
    const config = yield* WorkerConfig.load.pipe(
      Effect.mapError((error) => new BackendError({ message: `configuration: ${error.message}` }))
    )
    const fromEnv = yield* Config.option(Config.nonEmptyString("TILLFLOW_WORKER_URL")).pipe(
      Effect.mapError((error) => new BackendError({ message: `configuration: ${error.message}` }))
    )
    const workerUrl = Option.orElse(options.worker, () => fromEnv)
    const token = Option.map(config.intake.token, Redacted.value)
    if (Option.isSome(workerUrl)) {
      const credential = yield* credentialFor(workerUrl.value, token)
      if (Option.isNone(credential)) {
        return yield* new BackendError({
          message:
            `talking to the worker at ${workerUrl.value} needs an operator's session ` +
            `(tillflow login --worker ${workerUrl.value} --operator NAME) or its token (TILLFLOW_INTAKE_TOKEN)`
        })
      }
      return Option.some({
        baseUrl: workerUrl.value,
        credential: credential.value,
        why: "--worker / TILLFLOW_WORKER_URL"
      })
    }
    if (config.store._tag === "Embedded") {
      const dataDir = Path.resolve(config.store.dataDir)
      const holder = yield* PgliteLock.holder(dataDir)
      if (Option.isSome(holder)) {
        const url = holder.value.details["intakeUrl"]
        const published = holder.value.details["token"]
        const usable =
          url === undefined
            ? Option.none()
            : yield* credentialFor(
                url,
                Option.orElse(token, () => Option.fromNullable(published))
              )
        if (url !== undefined && Option.isSome(usable)) {
          return Option.some({ baseUrl: url, credential: usable.value, why: `it holds ${dataDir}` })
        }
        return yield* new BackendError({
          message:
            `${new PgliteLock.DataDirLocked({ dataDir, holder: holder.value }).message}. ` +
            (url === undefined
              ? "Stop it, or use another TILLFLOW_DATA_DIR."
              : `Set TILLFLOW_INTAKE_TOKEN to that worker's token to go through it.`)
        })
      }
    }
    return Option.none()
  })

/** The intake for a command, chosen as the module says. */
export const layer = (
  options: { readonly worker: Option.Option<string> },
  needs: Needs
): Layer.Layer<Intake.Intake | BackendInfo, BackendError | Stack.StartupError> =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const running = yield* runningWorker(options)
      if (Option.isSome(running)) return remote(running.value)
      const config = yield* WorkerConfig.load.pipe(
        Effect.mapError((error) => new BackendError({ message: `configuration: ${error.message}` }))
      )
      const local = yield* Effect.promise(() => import("./internal/LocalBackend.js"))
      return local.layer(config, needs)
    })
  )

/**
 * Runs a command's body on its intake. Which one it is is said on stderr when it is this
 * process (its store and, for operations, which remote service), and for a worker only
 * with `--verbose` or `TILLFLOW_VERBOSE=1`: a script or a shell calling a worker again
 * and again is not told the same address every time.
 */
export const provide = <A, E>(
  options: { readonly worker: Option.Option<string>; readonly verbose?: boolean },
  needs: Needs,
  body: Effect.Effect<A, E, Intake.Intake | BackendInfo>
): Effect.Effect<A, E | BackendError | Stack.StartupError> =>
  Effect.gen(function* () {
    const info = yield* BackendInfo
    const verbose = options.verbose === true || (process.env["TILLFLOW_VERBOSE"] ?? "") === "1"
    if (!info.remote || verbose) yield* Output.note(`tillflow: running against ${info.description}`)
    // For the merchant TILLFLOW_MERCHANT names (a platform's): its keys, terminals, executions.
    const merchant = process.env["TILLFLOW_MERCHANT"]
    if (merchant === undefined || merchant === "") return yield* body
    if (!Tenant.isTenant(merchant)) {
      return yield* new BackendError({
        message: `TILLFLOW_MERCHANT must be a merchant id (1 to 64 letters, digits, '.', '_' or '-'), got "${merchant}"`
      })
    }
    return yield* Tenant.within(merchant)(body)
  }).pipe(Effect.provide(layer({ worker: options.worker }, needs)))
