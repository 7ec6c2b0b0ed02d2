/**
 * The sessions `tillflow login` keeps: one per worker URL, in `tillflow/sessions.json` under
 * the user's configuration folder (`$XDG_CONFIG_HOME`, else `~/.config`; `%APPDATA%` on
 * Windows), written with mode 0600 in a folder of mode 0700, as a session id is as good as
 * the operator's secret for as long as it lasts. The secret itself is never written: only
 * what the worker answered the login with. `TILLFLOW_OPERATOR_SESSION`, when set, is used
 * instead of the file (a script or a container that should hold no file).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

/** A saved session: who it is, on which worker, since when. */
export const Saved = Schema.Struct({
  operator: Schema.String,
  role: Schema.String,
  session: Schema.String,
  /** When the login was made (ISO 8601, UTC). */
  at: Schema.String
})
/** @see Saved */
export type Saved = typeof Saved.Type

const SessionsFile = Schema.Struct({ sessions: Schema.Record({ key: Schema.String, value: Saved }) })
type SessionsFile = typeof SessionsFile.Type

/** The file the sessions are kept in, for the environment `env`. */
export const file = (env: NodeJS.ProcessEnv = process.env): string => {
  const xdg = env["XDG_CONFIG_HOME"] ?? ""
  const appData = env["APPDATA"] ?? ""
  const base =
    xdg !== ""
      ? xdg
      : process.platform === "win32" && appData !== ""
        ? appData
        : Path.join(Os.homedir(), ".config")
  return Path.join(base, "tillflow", "sessions.json")
}

/** A worker's URL as the file keys it: without trailing slashes. */
export const keyOf = (workerUrl: string): string => workerUrl.replace(/\/+$/, "")

const readAll = (path: string): Effect.Effect<SessionsFile> =>
  Effect.sync(() => {
    let text: string
    try {
      text = Fs.readFileSync(path, "utf8")
    } catch {
      return { sessions: {} }
    }
    // A file that is not ours (edited by hand, an older format) is as if empty: a login rewrites it.
    return Option.getOrElse(Schema.decodeUnknownOption(Schema.parseJson(SessionsFile))(text), () => ({
      sessions: {}
    }))
  })

const writeAll = (path: string, contents: SessionsFile): Effect.Effect<void> =>
  Effect.sync(() => {
    Fs.mkdirSync(Path.dirname(path), { recursive: true, mode: 0o700 })
    // Written whole with mode 0600 from its first byte, then renamed over the old file.
    const temporary = `${path}.${process.pid}.tmp`
    Fs.writeFileSync(temporary, `${JSON.stringify(contents, null, 2)}\n`, { mode: 0o600 })
    Fs.chmodSync(temporary, 0o600)
    Fs.renameSync(temporary, path)
  })

/** The session saved for the worker at `workerUrl`, if any. */
export const read = (workerUrl: string, path: string = file()): Effect.Effect<Option.Option<Saved>> =>
  Effect.map(readAll(path), (all) => Option.fromNullable(all.sessions[keyOf(workerUrl)]))

/** Saves the session for the worker at `workerUrl` (replacing the one saved before). */
export const save = (workerUrl: string, saved: Saved, path: string = file()): Effect.Effect<void> =>
  Effect.flatMap(readAll(path), (all) =>
    writeAll(path, { sessions: { ...all.sessions, [keyOf(workerUrl)]: saved } })
  )

/** Forgets the session saved for the worker at `workerUrl`: the one it was, if any. */
export const remove = (workerUrl: string, path: string = file()): Effect.Effect<Option.Option<Saved>> =>
  Effect.gen(function* () {
    const all = yield* readAll(path)
    const key = keyOf(workerUrl)
    const saved = Option.fromNullable(all.sessions[key])
    if (Option.isNone(saved)) return saved
    const { [key]: _removed, ...rest } = all.sessions
    yield* writeAll(path, { sessions: rest })
    return saved
  })
