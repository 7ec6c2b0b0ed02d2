/**
 * The console's sessions: a person logs in once — with their operator name and secret when
 * the deployment configures operators (`Operators`), else with the intake's bearer token —
 * and gets a random session id in an HttpOnly, SameSite=Strict cookie, so no credential sits
 * in the page's script (where an injected script could read it) and every request the page
 * makes to the intake API carries it without script help. A session knows who it is (the
 * operator and their role), so what is done through it is attributed to them. Wrong logins
 * are slowed down by `LoginLimiter`. Sessions are held in this process's memory, expire
 * after `ttl`, and end at logout or when the worker stops; the id itself is never logged.
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as LoginLimiter from "./LoginLimiter.js"
import * as Operators from "./Operators.js"

/** The name of the session cookie. */
export const cookieName = "tillflow_console"

/** How long a session lasts after login. */
export const ttl: Duration.Duration = Duration.hours(8)

/** The most sessions held at once; the oldest is forgotten first. */
export const maxSessions = 1000

/** What a login presents: a name and secret, or (no name) the intake's token. */
export interface Credentials {
  readonly name?: string | undefined
  readonly secret: string
}

/** How a login ended. */
export type LoginResult =
  | { readonly _tag: "LoggedIn"; readonly id: string; readonly operator: Operators.Operator }
  | { readonly _tag: "Refused"; readonly message: string }
  | { readonly _tag: "LockedOut"; readonly until: number; readonly message: string }

/** The console's sessions. */
export interface Service {
  /** Whether operators are configured (the login asks for a name). */
  readonly named: boolean
  /** A login from the client at `client` (its address, for the lock-out). */
  readonly login: (credentials: Credentials, client: string) => Effect.Effect<LoginResult>
  /** The operator of a cookie's session id, while it is live. */
  readonly check: (sessionId: string) => Effect.Effect<Option.Option<Operators.Operator>>
  /** Ends a session. */
  readonly logout: (sessionId: string) => Effect.Effect<void>
}

/** The sessions of the console. */
export class ConsoleSessions extends Context.Tag("tillflow/console/ConsoleSessions")<
  ConsoleSessions,
  Service
>() {}

const encoder = new TextEncoder()

const digest = (text: string): Promise<Uint8Array> =>
  globalThis.crypto.subtle.digest("SHA-256", encoder.encode(text)).then((buffer) => new Uint8Array(buffer))

/** Compares two strings through their SHA-256 digests, in time independent of where they differ. */
export const sameSecret = (a: string, b: string): Effect.Effect<boolean> =>
  Effect.promise(async () => {
    const [x, y] = await Promise.all([digest(a), digest(b)])
    let difference = 0
    for (let i = 0; i < x.length; i++) difference |= (x[i] ?? 0) ^ (y[i] ?? 0)
    return difference === 0
  })

const freshId = (): string => {
  const bytes = new Uint8Array(32)
  globalThis.crypto.getRandomValues(bytes)
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")
}

/** Sessions over `registry` (or, without operators, `token`), with a clock in milliseconds (for tests). */
export const make = (
  token: Redacted.Redacted<string>,
  registry: Operators.Registry = Operators.none,
  now: () => number = Date.now,
  limiter: LoginLimiter.Service = LoginLimiter.make(now)
): Service => {
  // Keyed by the id's digest: a heap dump shows no usable cookie.
  const sessions = new Map<string, { readonly operator: Operators.Operator; readonly expiresAt: number }>()
  const keyOf = (id: string) =>
    Effect.promise(() => digest(id)).pipe(
      Effect.map((bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(""))
    )
  const named = registry.operators.size > 0
  const open = (operator: Operators.Operator) =>
    Effect.gen(function* () {
      const id = freshId()
      const key = yield* keyOf(id)
      if (sessions.size >= maxSessions) {
        const oldest = sessions.keys().next()
        if (oldest.done !== true) sessions.delete(oldest.value)
      }
      sessions.set(key, { operator, expiresAt: now() + Duration.toMillis(ttl) })
      return { _tag: "LoggedIn", id, operator } as const
    })
  const authenticate = (credentials: Credentials): Effect.Effect<Option.Option<Operators.Operator>> => {
    const name = credentials.name?.trim() ?? ""
    if (named) {
      return name === ""
        ? Effect.succeed(Option.none())
        : Operators.authenticate(registry, name, credentials.secret)
    }
    return name !== ""
      ? Effect.succeed(Option.none())
      : Effect.map(sameSecret(credentials.secret, Redacted.value(token)), (ok) =>
          ok ? Option.some(Operators.tokenOperator) : Option.none()
        )
  }
  const wrong = named
    ? "wrong name or secret: log in with your operator name and secret (the intake's token is for machines)"
    : "wrong token: use the intake's bearer token (TILLFLOW_INTAKE_TOKEN)"
  return {
    named,
    login: (credentials, client) =>
      Effect.gen(function* () {
        const attempt = { name: credentials.name?.trim() ?? "", client }
        const locked = yield* limiter.lockedUntil(attempt)
        const lockedOut = (until: number): LoginResult => ({
          _tag: "LockedOut",
          until,
          message: `too many wrong logins: try again after ${new Date(until).toISOString()}`
        })
        if (locked !== undefined) return lockedOut(locked)
        const operator = yield* authenticate(credentials)
        if (Option.isNone(operator)) {
          const started = yield* limiter.failed(attempt)
          return started === undefined ? { _tag: "Refused", message: wrong } : lockedOut(started)
        }
        yield* limiter.succeeded(attempt)
        return yield* open(operator.value)
      }),
    check: (sessionId) =>
      Effect.gen(function* () {
        if (!/^[0-9a-f]{64}$/.test(sessionId)) return Option.none()
        const key = yield* keyOf(sessionId)
        const session = sessions.get(key)
        if (session === undefined) return Option.none()
        if (session.expiresAt <= now()) {
          sessions.delete(key)
          return Option.none()
        }
        return Option.some(session.operator)
      }),
    logout: (sessionId) =>
      Effect.gen(function* () {
        sessions.delete(yield* keyOf(sessionId))
      })
  }
}

/** The sessions of a worker whose intake token is `token`, and whose operators are `registry`. */
export const layer = (
  token: Redacted.Redacted<string>,
  registry: Operators.Registry = Operators.none
): Layer.Layer<ConsoleSessions> => Layer.sync(ConsoleSessions, () => make(token, registry))
