/**
 * `tillflow login --worker URL --operator NAME` and `tillflow logout`: a named operator's
 * session on a running worker (its console's sessions), so that what later commands do
 * through that worker is done, and recorded, as that operator, within what their role allows
 * (a viewer's action is refused: "forbidden", exit 8). The secret comes from
 * `TILLFLOW_OPERATOR_SECRET`, a prompt without echo, or standard input — never an argument
 * — and is never printed nor saved: the session the worker answers with is saved
 * (`OperatorSessions`, mode 0600), or printed for `TILLFLOW_OPERATOR_SESSION` with
 * `--print-session`.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { ConsoleSessions } from "@tillflow/console"
import * as IntakeClient from "@tillflow/intake/IntakeClient"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Backend from "../Backend.js"
import * as Handler from "../Handler.js"
import * as OperatorSessions from "../OperatorSessions.js"
import * as Output from "../Output.js"
import { common } from "../internal/options.js"
import * as Secret from "../internal/secret.js"

/** The worker a login is for: `--worker`, else `TILLFLOW_WORKER_URL`. */
const workerOf = (options: { readonly worker: Option.Option<string> }) =>
  Effect.gen(function* () {
    const fromEnv = yield* Config.option(Config.nonEmptyString("TILLFLOW_WORKER_URL")).pipe(
      Effect.mapError((error) => new Backend.BackendError({ message: `configuration: ${error.message}` }))
    )
    const url = Option.orElse(options.worker, () => fromEnv)
    if (Option.isNone(url)) {
      return yield* new Output.UsageError({
        message: "which worker? name it with --worker URL (or TILLFLOW_WORKER_URL)"
      })
    }
    return url.value
  })

const login = Command.make(
  "login",
  {
    ...common,
    operator: Options.text("operator").pipe(
      Options.withDescription("the operator's name, as the worker's TILLFLOW_OPERATORS names them")
    ),
    printSession: Options.boolean("print-session").pipe(
      Options.withDescription(
        "print the session on stdout (for TILLFLOW_OPERATOR_SESSION) instead of saving it in a file"
      )
    )
  },
  Handler.make((o) =>
    Effect.gen(function* () {
      const url = yield* workerOf(o)
      const secret = yield* Secret.read(`operator ${o.operator}'s secret`, "TILLFLOW_OPERATOR_SECRET")
      if (Redacted.value(secret) === "") {
        return yield* new Output.UsageError({
          message: `no secret for ${o.operator}: set TILLFLOW_OPERATOR_SECRET, type it when asked, or give it on standard input`
        })
      }
      const session = yield* IntakeClient.login(url, o.operator, secret)
      const hours = Duration.toHours(ConsoleSessions.ttl)
      const who = `${session.operator} (${session.role})`
      if (o.printSession) {
        yield* Output.note(
          `tillflow: logged in to ${url} as ${who} for ${hours} h: set TILLFLOW_OPERATOR_SESSION to the session printed`
        )
        yield* Output.print(
          o.json,
          {
            worker: url,
            operator: session.operator,
            role: session.role,
            session: Redacted.value(session.session)
          },
          () => [Redacted.value(session.session)]
        )
        return Output.ExitCode.ok
      }
      const file = OperatorSessions.file()
      yield* OperatorSessions.save(
        url,
        {
          operator: session.operator,
          role: session.role,
          session: Redacted.value(session.session),
          at: new Date().toISOString()
        },
        file
      )
      yield* Output.print(
        o.json,
        { worker: url, operator: session.operator, role: session.role, file },
        () => [
          `logged in to ${url} as ${who} for ${hours} h; the session is in ${file} (mode 0600) until tillflow logout`
        ]
      )
      return Output.ExitCode.ok
    })
  )
).pipe(
  Command.withDescription(
    "logs a named operator in to a worker (secret from TILLFLOW_OPERATOR_SECRET, a prompt or standard input): later commands through it act as that operator"
  )
)

const logout = Command.make(
  "logout",
  { ...common },
  Handler.make((o) =>
    Effect.gen(function* () {
      const url = yield* workerOf(o)
      const credential = yield* Backend.operatorSession(url)
      if (Option.isNone(credential) || credential.value._tag !== "Session") {
        yield* Output.print(o.json, { worker: url, loggedOut: false }, () => [`not logged in to ${url}`])
        return Output.ExitCode.ok
      }
      // Ended on the worker first; forgotten here whatever the worker says.
      const ended = yield* Effect.either(IntakeClient.logout(url, credential.value.session))
      yield* OperatorSessions.remove(url)
      if (ended._tag === "Left") {
        yield* Output.note(
          `tillflow: ${ended.left.message}: the session is forgotten here, and ends on the worker within ${Duration.toHours(ConsoleSessions.ttl)} h`
        )
      }
      const who =
        credential.value.operator === ""
          ? "the operator of TILLFLOW_OPERATOR_SESSION"
          : credential.value.operator
      yield* Output.print(
        o.json,
        { worker: url, loggedOut: true, operator: credential.value.operator },
        () => [`logged ${who} out of ${url}`]
      )
      return Output.ExitCode.ok
    })
  )
).pipe(
  Command.withDescription("ends the operator's session on a worker and forgets it (tillflow login's file)")
)

export { login, logout }
