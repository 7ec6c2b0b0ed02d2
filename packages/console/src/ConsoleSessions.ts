/**
 * The console's sessions: a person logs in with the intake's bearer token once, and gets a
 * random session id in an HttpOnly, SameSite=Strict cookie, so the token never sits in the
 * page's script (where an injected script could read it) and every request the page makes
 * to the intake API carries the credential without script help. Sessions are held in this
 * process's memory, expire after `ttl`, and end at logout or when the worker stops; the
 * id itself is never logged.
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"

/** The name of the session cookie. */
export const cookieName = "tillflow_console"

/** How long a session lasts after login. */
export const ttl: Duration.Duration = Duration.hours(8)

/** The most sessions held at once; the oldest is forgotten first. */
export const maxSessions = 1000

/** The console's sessions. */
export interface Service {
  /** A new session id for a presented token, when it is the intake's token. */
  readonly login: (presented: string) => Effect.Effect<string | undefined>
  /** Whether a cookie's session id is a live session. */
  readonly check: (sessionId: string) => Effect.Effect<boolean>
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

/** Sessions that accept `token`, with a clock in milliseconds (for tests). */
export const make = (token: Redacted.Redacted<string>, now: () => number = Date.now): Service => {
  // Keyed by the id's digest: a heap dump shows no usable cookie.
  const sessions = new Map<string, number>()
  const keyOf = (id: string) =>
    Effect.promise(() => digest(id)).pipe(
      Effect.map((bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(""))
    )
  return {
    login: (presented) =>
      Effect.gen(function* () {
        if (!(yield* sameSecret(presented, Redacted.value(token)))) return undefined
        const id = freshId()
        const key = yield* keyOf(id)
        if (sessions.size >= maxSessions) {
          const oldest = sessions.keys().next()
          if (oldest.done !== true) sessions.delete(oldest.value)
        }
        sessions.set(key, now() + Duration.toMillis(ttl))
        return id
      }),
    check: (sessionId) =>
      Effect.gen(function* () {
        if (!/^[0-9a-f]{64}$/.test(sessionId)) return false
        const key = yield* keyOf(sessionId)
        const expiresAt = sessions.get(key)
        if (expiresAt === undefined) return false
        if (expiresAt <= now()) {
          sessions.delete(key)
          return false
        }
        return true
      }),
    logout: (sessionId) =>
      Effect.gen(function* () {
        sessions.delete(yield* keyOf(sessionId))
      })
  }
}

/** The sessions of a worker whose intake token is `token`. */
export const layer = (token: Redacted.Redacted<string>): Layer.Layer<ConsoleSessions> =>
  Layer.sync(ConsoleSessions, () => make(token))
